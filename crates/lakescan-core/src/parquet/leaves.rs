//! Which Parquet leaves hold which subfields: [`FileLeaves`] (subfield pruning on Parquet).
//!
//! Every leaf column of a file gets its *logical path* below its root column
//! (`PathStep`s): struct members by name, and the `LIST` / `MAP` wrapper levels of the
//! Parquet encoding folded into `<element>` / `<key>` / `<value>` (including the legacy
//! two-level lists of the Parquet format's backward-compatibility rules). A scan's
//! `RequiredSubfields` then select leaves by path prefix:
//!
//! ```text
//!  m MAP<VARCHAR, ROW(x, y)>          leaves            logical path
//!    m.key_value.key                  3                 <key>
//!    m.key_value.value.x              4                 <value>.x
//!    m.key_value.value.y              5                 <value>.y
//!  map_keys(m) → {<key>} → leaf 3;  m['k']['x'] → {<key>, <value>.x} → leaves 3, 4
//! ```
//!
//! The Parquet arrow reader cannot project a map's keys without any value leaf (nor values
//! without keys): it fails with "partial projection of MapArray is not supported". For such
//! maps, [`reannotate_maps`] rewrites the file schema so the map group reads as a `LIST` of
//! its key/value struct (same leaves, same levels: only the group's annotation changes);
//! the assembler turns the list back into a map (`format::adapt`). This is hand-written
//! because no library offers keys-only decoding; DataFusion's own Parquet scan reads whole
//! maps here.

use std::collections::BTreeSet;
use std::sync::Arc;

use datafusion::common::{Result, internal_err};
use parquet::basic::{ConvertedType, LogicalType, Repetition};
use parquet::file::metadata::{FileMetaData, KeyValue, ParquetMetaData};
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};

use super::field_ids::{is_repeated, wraps_element};
use crate::required::{PathStep, RequiredSubfields, SubfieldPath};

/// The key of the Arrow schema a Parquet writer embeds in the file metadata.
const ARROW_SCHEMA_KEY: &str = "ARROW:schema";

/// The leaves of one file with their root column and logical path.
#[derive(Debug, Clone)]
pub struct FileLeaves {
    /// Per leaf (in file order): root column index and logical path below it.
    leaves: Vec<(usize, SubfieldPath)>,
    /// Groups annotated `MAP`: their physical path (names from the root).
    maps: Vec<MapGroup>,
}

/// A map group of the file schema and the leaves below its key and its value.
#[derive(Debug, Clone)]
struct MapGroup {
    physical_path: Vec<String>,
    key_leaves: Vec<usize>,
    value_leaves: Vec<usize>,
}

impl FileLeaves {
    /// Walks the file schema.
    pub fn new(descr: &SchemaDescriptor) -> Self {
        let mut walk = Walk::default();
        for (root, field) in descr.root_schema().get_fields().iter().enumerate() {
            walk.visit(
                root,
                field,
                &mut vec![],
                &mut vec![field.name().to_string()],
            );
        }
        Self {
            leaves: walk.leaves,
            maps: walk.maps,
        }
    }

    /// Leaves of root column `root` that hold `required` (none for `Nothing`).
    pub fn select(&self, root: usize, required: &RequiredSubfields) -> Vec<usize> {
        match required {
            RequiredSubfields::Nothing => vec![],
            RequiredSubfields::Whole => self.under(root, &[]).collect(),
            RequiredSubfields::Paths(paths) => {
                let mut out = BTreeSet::new();
                for path in paths {
                    out.extend(self.leaves_for(root, path));
                }
                out.into_iter().collect()
            }
        }
    }

    /// The root column of leaf `leaf`.
    pub fn root_of(&self, leaf: usize) -> usize {
        self.leaves.get(leaf).map_or(usize::MAX, |(root, _)| *root)
    }

    /// Leaves of root column `root` below the struct members `names`.
    pub fn struct_member(&self, root: usize, names: &[String]) -> Vec<usize> {
        let path: SubfieldPath = names.iter().cloned().map(PathStep::Field).collect();
        self.under(root, &path).collect()
    }

    /// Leaves for one path; `<size>` takes the first leaf below (offsets only).
    fn leaves_for(&self, root: usize, path: &[PathStep]) -> Vec<usize> {
        match path.iter().position(|s| *s == PathStep::Size) {
            Some(at) => self.under(root, &path[..at]).take(1).collect(),
            None => self.under(root, path).collect(),
        }
    }

    fn under<'a>(
        &'a self,
        root: usize,
        prefix: &'a [PathStep],
    ) -> impl Iterator<Item = usize> + 'a {
        self.leaves
            .iter()
            .enumerate()
            .filter(move |(_, (r, path))| *r == root && path.starts_with(prefix))
            .map(|(i, _)| i)
    }

    /// The maps that `selected` projects partially (keys without values or values without
    /// keys): the groups [`reannotate_maps`] must turn into lists.
    pub fn partial_maps(&self, selected: &BTreeSet<usize>) -> Vec<Vec<String>> {
        self.maps
            .iter()
            .filter(|m| {
                let keys = m.key_leaves.iter().any(|l| selected.contains(l));
                let values = m.value_leaves.iter().any(|l| selected.contains(l));
                keys != values
            })
            .map(|m| m.physical_path.clone())
            .collect()
    }
}

#[derive(Default)]
struct Walk {
    leaves: Vec<(usize, SubfieldPath)>,
    maps: Vec<MapGroup>,
}

impl Walk {
    /// Visits `t` (at logical path `logical`, physical path `physical`) below root `root`.
    fn visit(
        &mut self,
        root: usize,
        t: &TypePtr,
        logical: &mut SubfieldPath,
        physical: &mut Vec<String>,
    ) {
        if t.is_primitive() {
            self.leaves.push((root, logical.clone()));
            return;
        }
        let info = t.get_basic_info();
        let fields = t.get_fields();
        let is_list = matches!(info.logical_type_ref(), Some(LogicalType::List))
            || info.converted_type() == ConvertedType::LIST;
        let is_map = matches!(info.logical_type_ref(), Some(LogicalType::Map))
            || matches!(
                info.converted_type(),
                ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE
            );
        match fields {
            [repeated]
                if is_list && repeated.get_basic_info().repetition() == Repetition::REPEATED =>
            {
                self.visit_list_element(root, t, repeated, logical, physical);
            }
            [repeated] if is_map && repeated.is_group() => {
                self.visit_map(root, repeated, logical, physical);
            }
            _ => {
                for field in fields {
                    // A bare repeated field outside a LIST reads as a list of it.
                    let step = if is_repeated(field) {
                        vec![PathStep::Field(field.name().to_string()), PathStep::Element]
                    } else {
                        vec![PathStep::Field(field.name().to_string())]
                    };
                    let depth = logical.len();
                    logical.extend(step);
                    physical.push(field.name().to_string());
                    self.visit(root, field, logical, physical);
                    physical.pop();
                    logical.truncate(depth);
                }
            }
        }
    }

    /// The element of a `LIST` group whose repeated child is `repeated` (Parquet format,
    /// LogicalTypes.md, "backward-compatibility rules").
    fn visit_list_element(
        &mut self,
        root: usize,
        list: &Type,
        repeated: &TypePtr,
        logical: &mut SubfieldPath,
        physical: &mut Vec<String>,
    ) {
        logical.push(PathStep::Element);
        physical.push(repeated.name().to_string());
        // `get_fields` is for groups only (it panics on a primitive).
        let children: &[TypePtr] = if repeated.is_group() {
            repeated.get_fields()
        } else {
            &[]
        };
        if !wraps_element(list, repeated) {
            self.visit_struct_or_leaf(root, repeated, logical, physical);
        } else if let Some(element) = children.first() {
            physical.push(element.name().to_string());
            self.visit(root, element, logical, physical);
            physical.pop();
        }
        physical.pop();
        logical.pop();
    }

    /// A repeated group that is itself the element: its members are struct members.
    fn visit_struct_or_leaf(
        &mut self,
        root: usize,
        t: &TypePtr,
        logical: &mut SubfieldPath,
        physical: &mut Vec<String>,
    ) {
        if t.is_primitive() {
            self.leaves.push((root, logical.clone()));
            return;
        }
        for field in t.get_fields() {
            logical.push(PathStep::Field(field.name().to_string()));
            physical.push(field.name().to_string());
            self.visit(root, field, logical, physical);
            physical.pop();
            logical.pop();
        }
    }

    /// The repeated key/value group of a `MAP`: first child the key, second the value.
    fn visit_map(
        &mut self,
        root: usize,
        key_value: &TypePtr,
        logical: &mut SubfieldPath,
        physical: &mut Vec<String>,
    ) {
        let map_path = physical.clone();
        physical.push(key_value.name().to_string());
        let mut group = MapGroup {
            physical_path: map_path,
            key_leaves: vec![],
            value_leaves: vec![],
        };
        for (i, child) in key_value.get_fields().iter().enumerate() {
            let step = if i == 0 {
                PathStep::MapKey
            } else {
                PathStep::MapValue
            };
            let first = self.leaves.len();
            logical.push(step);
            physical.push(child.name().to_string());
            self.visit(root, child, logical, physical);
            physical.pop();
            logical.pop();
            let leaves = first..self.leaves.len();
            if i == 0 {
                group.key_leaves.extend(leaves);
            } else {
                group.value_leaves.extend(leaves);
            }
        }
        physical.pop();
        self.maps.push(group);
    }
}

/// The file metadata with the map groups at `paths` annotated as lists of their key/value
/// struct (see the module docs). The embedded Arrow schema is dropped: it describes the
/// maps as maps.
pub fn reannotate_maps(
    metadata: &ParquetMetaData,
    paths: &[Vec<String>],
) -> Result<ParquetMetaData> {
    let file = metadata.file_metadata();
    let root = file.schema_descr().root_schema_ptr();
    let rewritten = rewrite(&root, &mut vec![], paths)?;
    Ok(with_schema(metadata, rewritten))
}

/// Whether `metadata` embeds its writer's Arrow schema (`ARROW:schema`).
pub fn has_arrow_hint(metadata: &ParquetMetaData) -> bool {
    metadata
        .file_metadata()
        .key_value_metadata()
        .is_some_and(|kvs| kvs.iter().any(|kv| kv.key == ARROW_SCHEMA_KEY))
}

/// `metadata` over another schema of the same leaves (renamed or re-annotated), without the
/// embedded Arrow schema (it describes the old one); row groups and page indexes are kept.
pub fn with_schema(metadata: &ParquetMetaData, root: TypePtr) -> ParquetMetaData {
    with_schema_and_hint(metadata, root, None)
}

/// [`with_schema`], with `hint` (an encoded Arrow schema of the new names) embedded in
/// place of the old one.
pub fn with_schema_and_hint(
    metadata: &ParquetMetaData,
    root: TypePtr,
    hint: Option<String>,
) -> ParquetMetaData {
    let file = metadata.file_metadata();
    let descr = Arc::new(SchemaDescriptor::new(root));
    let key_values: Option<Vec<KeyValue>> = file.key_value_metadata().map(|kvs| {
        let kept = kvs.iter().filter(|kv| kv.key != ARROW_SCHEMA_KEY).cloned();
        let hint = hint
            .clone()
            .map(|h| KeyValue::new(ARROW_SCHEMA_KEY.to_string(), h));
        kept.chain(hint).collect()
    });
    let file_metadata = FileMetaData::new(
        file.version(),
        file.num_rows(),
        file.created_by().map(str::to_string),
        key_values,
        descr,
        file.column_orders().cloned(),
    );
    with_file_metadata(metadata, file_metadata)
}

/// `metadata` with `file_metadata` in place of its own; row groups and page indexes kept.
pub fn with_file_metadata(
    metadata: &ParquetMetaData,
    file_metadata: FileMetaData,
) -> ParquetMetaData {
    let mut builder = metadata.clone().into_builder();
    let row_groups = builder.take_row_groups();
    ParquetMetaData::new(file_metadata, row_groups)
        .into_builder()
        .set_column_index(builder.take_column_index())
        .set_offset_index(builder.take_offset_index())
        .build()
}

fn rewrite(t: &TypePtr, path: &mut Vec<String>, maps: &[Vec<String>]) -> Result<TypePtr> {
    if t.is_primitive() {
        return Ok(Arc::clone(t));
    }
    let mut fields = Vec::with_capacity(t.get_fields().len());
    for field in t.get_fields() {
        path.push(field.name().to_string());
        fields.push(rewrite(field, path, maps)?);
        path.pop();
    }
    let info = t.get_basic_info();
    let is_target = !path.is_empty() && maps.iter().any(|m| m == path);
    let mut builder = Type::group_type_builder(t.name()).with_fields(fields);
    if info.has_repetition() {
        builder = builder.with_repetition(info.repetition());
    }
    if info.has_id() {
        builder = builder.with_id(Some(info.id()));
    }
    builder = if is_target {
        builder
            .with_converted_type(ConvertedType::LIST)
            .with_logical_type(Some(LogicalType::List))
    } else {
        builder
            .with_converted_type(info.converted_type())
            .with_logical_type(info.logical_type_ref().cloned())
    };
    match builder.build() {
        Ok(t) => Ok(Arc::new(t)),
        Err(e) => internal_err!("rewriting the Parquet schema at {}: {e}", path.join(".")),
    }
}

#[cfg(test)]
mod tests;
