//! The Iceberg copies of `lineitem`: four tables over the same `flat/lineitem` files (the
//! data files are registered, not copied), written with lakescan's Iceberg table writer
//! (`lakescan_iceberg_writer::TableWriter`).
//!
//! | table | directory | format | deletes (committed after the data, a later sequence number) |
//! |---|---|---|---|
//! | `lineitem_ice` | `iceberg/lineitem` | v2 | none |
//! | `lineitem_ice_pos` | `iceberg/lineitem_pos` | v2 | every 10th row of each file (`pos % 10 = 7`), one position-delete file per data file |
//! | `lineitem_ice_dv` | `iceberg/lineitem_dv` | v3 | the same rows as deletion vectors, one Puffin file per data file |
//! | `lineitem_ice_eq` | `iceberg/lineitem_eq` | v2 | an equality-delete file of `10 000 × scale` `l_orderkey` values (every n-th order key), about 4 rows each |
//!
//! The table schema is the files' Arrow schema with the field ids the files carry, else ids
//! 1, 2, … and a `schema.name-mapping.default` mapping each id to its column name (what
//! Iceberg's `add_files` of files written elsewhere does). Every table has a
//! `metadata/version-hint.text`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use arrow::array::{Array, ArrayRef, Int64Array};
use arrow::datatypes::{DataType, Schema as ArrowSchema};
use datafusion::prelude::SessionContext;
use iceberg::spec::{FormatVersion, NestedField, PrimitiveType, Schema, Struct, Type};
use lakescan_iceberg_writer::TableWriter;
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::dataset::Dataset;
use crate::dataset::parquet_files;

/// The deletes of one variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletes {
    /// No delete files.
    None,
    /// Position-delete files.
    Positions,
    /// Deletion vectors (a v3 table).
    Vectors,
    /// An equality-delete file on `l_orderkey`.
    EqualityKeys,
}

/// One Iceberg table of the benchmark.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// The table's name in every engine.
    pub table: &'static str,
    /// Its directory under `iceberg/`.
    pub dir: &'static str,
    /// Its deletes.
    pub deletes: Deletes,
}

/// The four tables.
pub const VARIANTS: [Variant; 4] = [
    Variant {
        table: "lineitem_ice",
        dir: "lineitem",
        deletes: Deletes::None,
    },
    Variant {
        table: "lineitem_ice_pos",
        dir: "lineitem_pos",
        deletes: Deletes::Positions,
    },
    Variant {
        table: "lineitem_ice_dv",
        dir: "lineitem_dv",
        deletes: Deletes::Vectors,
    },
    Variant {
        table: "lineitem_ice_eq",
        dir: "lineitem_eq",
        deletes: Deletes::EqualityKeys,
    },
];

/// Positions of a data file's deleted rows in the position and vector variants.
pub fn deleted_position(pos: u64) -> bool {
    pos % 10 == 7
}

/// Equality-delete keys at `scale`.
pub fn equality_keys(scale: f64) -> usize {
    ((10_000.0 * scale).round() as usize).max(10)
}

impl Dataset {
    /// `iceberg/<variant>`.
    pub fn iceberg_table(&self, v: Variant) -> PathBuf {
        self.root.join("iceberg").join(v.dir)
    }

    /// The current metadata file of a variant (from its `version-hint.text`).
    pub fn iceberg_metadata(&self, v: Variant) -> Result<PathBuf> {
        let metadata = self.iceberg_table(v).join("metadata");
        let hint = std::fs::read_to_string(metadata.join("version-hint.text"))
            .with_context(|| format!("{}: no version-hint.text", metadata.display()))?;
        Ok(metadata.join(format!("v{}.metadata.json", hint.trim())))
    }
}

/// Writes the four tables of `dataset` (its `flat/lineitem` files must exist).
pub async fn write(dataset: &Dataset, ctx: &SessionContext) -> Result<()> {
    let files = parquet_files(&dataset.flat_lineitem())?;
    let Some(first) = files.first() else {
        bail!("no lineitem files in {}", dataset.flat_lineitem().display());
    };
    let arrow_schema = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(first)?)?
        .schema()
        .clone();
    let (schema, name_mapping) = iceberg_schema(&arrow_schema)?;
    let orderkey_id = schema
        .field_id_by_name("l_orderkey")
        .context("lineitem has no l_orderkey")?;
    let keys = equality_delete_keys(ctx, equality_keys(dataset.scale)).await?;
    for v in VARIANTS {
        let root = dataset.iceberg_table(v);
        if root.exists() {
            std::fs::remove_dir_all(&root)?;
        }
        let version = match v.deletes {
            Deletes::Vectors => FormatVersion::V3,
            _ => FormatVersion::V2,
        };
        let mut t = TableWriter::new(&root, schema.clone())?.with_format_version(version)?;
        if let Some(mapping) = &name_mapping {
            t.set_property("schema.name-mapping.default", mapping);
        }
        let mut data = vec![];
        for f in &files {
            data.push(t.existing_data_file(f, Struct::empty())?);
        }
        let rows: HashMap<String, u64> = data
            .iter()
            .map(|d| (d.file_path().to_string(), d.record_count()))
            .collect();
        let mut metadata = t.commit(data, vec![]).await?;
        let mut deletes = vec![];
        for f in &files {
            let path = f.display().to_string();
            let positions: Vec<u64> = (0..rows[&path]).filter(|p| deleted_position(*p)).collect();
            match v.deletes {
                Deletes::Positions => {
                    let rows = positions
                        .iter()
                        .map(|p| (path.as_str(), *p as i64))
                        .collect();
                    deletes.push(t.position_delete_file(rows)?);
                }
                Deletes::Vectors => deletes.push(t.deletion_vector(&path, &path, &positions)?),
                Deletes::None | Deletes::EqualityKeys => {}
            }
        }
        if v.deletes == Deletes::EqualityKeys {
            let values: ArrayRef = Arc::new(Int64Array::from(keys.clone()));
            deletes.push(t.equality_delete_file(
                vec![orderkey_id],
                vec![("l_orderkey", orderkey_id, values)],
            )?);
        }
        if !deletes.is_empty() {
            metadata = t.commit(vec![], deletes).await?;
        }
        let version = version_of(Path::new(&metadata))?;
        std::fs::write(root.join("metadata").join("version-hint.text"), version)?;
    }
    Ok(())
}

/// `N` of `…/vN.metadata.json`.
fn version_of(metadata: &Path) -> Result<String> {
    let name = metadata
        .file_name()
        .and_then(|n| n.to_str())
        .context("metadata file name")?;
    match name
        .strip_prefix('v')
        .and_then(|n| n.strip_suffix(".metadata.json"))
    {
        Some(n) => Ok(n.to_string()),
        None => bail!("unexpected metadata file name {name}"),
    }
}

/// `count` order keys spread over the table (every n-th distinct `l_orderkey`).
async fn equality_delete_keys(ctx: &SessionContext, count: usize) -> Result<Vec<i64>> {
    let batches = ctx
        .sql("SELECT DISTINCT l_orderkey FROM flat_lineitem ORDER BY l_orderkey")
        .await?
        .collect()
        .await?;
    let mut all = vec![];
    for b in &batches {
        let column = b.column(0);
        let keys = column
            .as_any()
            .downcast_ref::<Int64Array>()
            .context("l_orderkey is not BIGINT")?;
        all.extend(keys.iter().flatten());
    }
    let step = (all.len() / count).max(1);
    Ok(all.into_iter().step_by(step).take(count).collect())
}

/// The Iceberg schema of the files' Arrow schema, and the name mapping when the files carry
/// no field ids.
fn iceberg_schema(arrow: &ArrowSchema) -> Result<(Schema, Option<String>)> {
    let mut fields = vec![];
    let mut mapping = vec![];
    let mut has_ids = true;
    for (i, f) in arrow.fields().iter().enumerate() {
        let id = match f.metadata().get(PARQUET_FIELD_ID_META_KEY) {
            Some(id) => id.parse::<i32>()?,
            None => {
                has_ids = false;
                i as i32 + 1
            }
        };
        let t = match f.data_type() {
            DataType::Int32 => PrimitiveType::Int,
            DataType::Int64 => PrimitiveType::Long,
            DataType::Float32 => PrimitiveType::Float,
            DataType::Float64 => PrimitiveType::Double,
            DataType::Date32 => PrimitiveType::Date,
            DataType::Decimal128(p, s) => PrimitiveType::Decimal {
                precision: u32::from(*p),
                scale: u32::try_from(*s)?,
            },
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => PrimitiveType::String,
            other => bail!("lineitem column {} has type {other}", f.name()),
        };
        let field = match f.is_nullable() {
            true => NestedField::optional(id, f.name(), Type::Primitive(t)),
            false => NestedField::required(id, f.name(), Type::Primitive(t)),
        };
        fields.push(Arc::new(field));
        mapping.push(serde_json::json!({"field-id": id, "names": [f.name()]}));
    }
    let schema = Schema::builder().with_fields(fields).build()?;
    let mapping = (!has_ids).then(|| serde_json::Value::Array(mapping).to_string());
    Ok((schema, mapping))
}
