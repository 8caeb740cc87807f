//! The ORC columns a split decodes: its top-level columns and, below them, only the struct
//! members the scan reads (subfield pruning on ORC).
//!
//! ```text
//!  s STRUCT<a INT, b STRING, c STRUCT<x, y>>    columns 1 (s), 2 (a), 3 (b), 4 (c), 5 (x), 6 (y)
//!  SELECT s['a'], s['c']['y']  → decode as STRUCT<a, c STRUCT<y>>  → columns 1, 2, 4, 6
//! ```
//!
//! Each decoded root's type is already pruned to the members its filters and outputs read
//! ([`crate::required::prune_type`]: struct members only, also inside list elements and map
//! values). Here the file's type tree is pruned the same way: each struct type keeps the
//! subtypes of the members its pruned Arrow type keeps, found by position in the file's
//! Arrow type (whose names are the table's, after renaming by field id or position). The
//! pruned tree is given to `orc-rust` as the footer of a synthetic tail, because its
//! `RootDataType` can only be built from a footer and its `project` keeps or drops whole
//! top-level columns. Column indices do not change, so the stripe's streams and encodings
//! still match; only the streams of the columns kept are fetched and decoded, and each
//! struct decoder builds the members kept.

use arrow::datatypes::DataType;
use datafusion::common::Result;
use orc_rust::proto;
use orc_rust::schema::RootDataType;

use super::errors::orc_error;
use super::file::OrcFile;
use super::synthetic_tail::read_synthetic_tail;

/// A file column decoded for the split.
pub struct DecodedRoot {
    /// Its position among the file's top-level columns.
    pub root: usize,
    /// Its name in decoded batches (the file schema's).
    pub name: String,
    /// The Arrow type it is decoded in: only the struct members the scan reads
    /// (this module).
    pub decode_as: DataType,
    /// The Arrow type of the whole column, decoded.
    pub whole_as: DataType,
}

/// The type tree of `file` with only the top-level columns of `roots` and, below them, the
/// members their decode types keep. A root whose pruned type does not fit the file's tree
/// (which its derivation rules out) is decoded whole: its `decode_as` becomes `whole_as`.
pub fn projected_types(
    path: &str,
    file: &OrcFile,
    roots: &mut [DecodedRoot],
) -> Result<RootDataType> {
    let mut types = file.footer.types.clone();
    let top = types
        .first()
        .map(|t| t.subtypes.clone())
        .unwrap_or_default();
    let mut pruned_any = false;
    for root in roots.iter_mut() {
        if root.decode_as == root.whole_as {
            continue;
        }
        let index = top.get(root.root).map(|&i| i as usize);
        let mut attempt = types.clone();
        match index.and_then(|i| prune(&mut attempt, i, &root.whole_as, &root.decode_as)) {
            Some(()) => {
                types = attempt;
                pruned_any = true;
            }
            None => root.decode_as = root.whole_as.clone(),
        }
    }
    let metadata = match pruned_any {
        true => read_types(path, types)?,
        false => file.metadata.root_data_type().clone(),
    };
    let ids: Vec<usize> = roots
        .iter()
        .filter_map(|r| metadata.children().get(r.root))
        .map(|c| c.data_type().column_index())
        .collect();
    let mask = orc_rust::projection::ProjectionMask::roots(&metadata, ids);
    let projected = metadata.project(&mask);
    // The decoders pair a struct's ORC members with its Arrow members by position: a
    // mismatch would put one member's values under another's name.
    for root in roots.iter() {
        let column = metadata.children().get(root.root);
        if !column.is_some_and(|c| fits(c.data_type(), &root.decode_as)) {
            return Err(orc_error(
                path,
                format!(
                    "column '{}' does not project to {} (internal error)",
                    root.name, root.decode_as
                ),
            ));
        }
    }
    Ok(projected)
}

/// Prunes the type at `index` of `types` (decoded whole as `whole`) to the members
/// `pruned` keeps; `None` when `pruned` is not a pruning of `whole` over that type.
fn prune(
    types: &mut [proto::Type],
    index: usize,
    whole: &DataType,
    pruned: &DataType,
) -> Option<()> {
    let subtypes = types.get(index)?.subtypes.clone();
    match (whole, pruned) {
        (DataType::Struct(all), DataType::Struct(kept)) => {
            let names = types[index].field_names.clone();
            if subtypes.len() != all.len() || names.len() != all.len() {
                return None;
            }
            let positions = kept
                .iter()
                .map(|member| all.iter().position(|f| f.name() == member.name()))
                .collect::<Option<Vec<usize>>>()?;
            for (&i, member) in positions.iter().zip(kept) {
                prune(
                    types,
                    subtypes[i] as usize,
                    all[i].data_type(),
                    member.data_type(),
                )?;
            }
            types[index].subtypes = positions.iter().map(|&i| subtypes[i]).collect();
            types[index].field_names = positions.iter().map(|&i| names[i].clone()).collect();
            Some(())
        }
        (DataType::List(all), DataType::List(kept)) => prune(
            types,
            *subtypes.first()? as usize,
            all.data_type(),
            kept.data_type(),
        ),
        (DataType::Map(all, _), DataType::Map(kept, _)) => {
            match (all.data_type(), kept.data_type()) {
                (DataType::Struct(all), DataType::Struct(kept))
                    if all.len() == 2 && kept.len() == 2 =>
                {
                    prune(
                        types,
                        *subtypes.get(1)? as usize,
                        all[1].data_type(),
                        kept[1].data_type(),
                    )
                }
                _ => None,
            }
        }
        (whole, pruned) => (whole == pruned).then_some(()),
    }
}

/// Whether the ORC type `orc` has the shape of `arrow`: as many struct members, list
/// elements and map entries at every level.
fn fits(orc: &orc_rust::schema::DataType, arrow: &DataType) -> bool {
    use orc_rust::schema::DataType as Orc;
    match (orc, arrow) {
        (Orc::Struct { children, .. }, DataType::Struct(fields)) => {
            children.len() == fields.len()
                && children
                    .iter()
                    .zip(fields.iter())
                    .all(|(c, f)| fits(c.data_type(), f.data_type()))
        }
        (Orc::List { child, .. }, DataType::List(item)) => fits(child, item.data_type()),
        (Orc::Map { key, value, .. }, DataType::Map(entries, _)) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                fits(key, kv[0].data_type()) && fits(value, kv[1].data_type())
            }
            _ => false,
        },
        (Orc::Struct { .. } | Orc::List { .. } | Orc::Map { .. }, _) => false,
        (_, DataType::Struct(_) | DataType::List(_) | DataType::Map(..)) => false,
        _ => true,
    }
}

/// `orc-rust`'s type tree of `types`: read from a synthetic uncompressed tail whose footer
/// holds them.
fn read_types(path: &str, types: Vec<proto::Type>) -> Result<RootDataType> {
    let footer = proto::Footer {
        types,
        number_of_rows: Some(0),
        ..Default::default()
    };
    read_synthetic_tail(path, &footer, &proto::PostScript::default())?
        .map(|m| m.root_data_type().clone())
        .map_err(|e| orc_error(path, format!("its projected column types do not read: {e}")))
}
