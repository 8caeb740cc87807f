//! Iceberg tables with position deletes and deletion vectors for the Python suite, written
//! with lakescan's test writer: pyiceberg writes no delete files (it rewrites data files
//! instead), and the repository's tables of other writers hold equality deletes only.
//!
//! The ids each snapshot keeps are worked out here from the positions deleted, by the
//! writer's own bookkeeping, so the suite checks lakescan against them and against
//! pyiceberg's scan of the same files — neither comes from lakescan's reader.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use datafusion::common::Result;
use iceberg::spec::{
    FormatVersion, Literal, NestedField, PrimitiveType, Schema, Struct, Transform, Type,
};
use lakescan_iceberg_writer::TableWriter;
use serde_json::{Value, json};

/// A data file written: its path and the id of its first row (row `p` holds id `first + p`).
struct Written {
    path: String,
    first: i64,
}

/// A table under construction and the ids it keeps.
struct Table {
    writer: TableWriter,
    live: BTreeSet<i64>,
    /// Each commit's snapshot id and the ids it keeps.
    snapshots: Vec<Value>,
}

impl Table {
    fn new(writer: TableWriter) -> Self {
        Self {
            writer,
            live: BTreeSet::new(),
            snapshots: vec![],
        }
    }

    /// A data file of `region` (`None`: an unpartitioned table) holding ids `ids`.
    fn data_file(
        &mut self,
        region: Option<&str>,
        ids: std::ops::Range<i64>,
    ) -> Result<(iceberg::spec::DataFile, Written)> {
        let count = (ids.end - ids.start) as usize;
        let columns = vec![
            (
                "id",
                1,
                Arc::new(Int64Array::from_iter_values(ids.clone())) as ArrayRef,
            ),
            (
                "region",
                2,
                Arc::new(StringArray::from(vec![region.unwrap_or("eu"); count])) as ArrayRef,
            ),
            (
                "amount",
                3,
                Arc::new(Float64Array::from_iter_values(
                    ids.clone().map(|id| id as f64 * 1.5),
                )) as ArrayRef,
            ),
        ];
        let file = match region {
            Some(region) => self.writer.data_file_in(partition(region), columns)?,
            None => self.writer.data_file(columns)?,
        };
        self.live.extend(ids.clone());
        let path = file.file_path().to_string();
        Ok((
            file,
            Written {
                path,
                first: ids.start,
            },
        ))
    }

    /// Records that `positions` of `file` are deleted by the next commit; returns them as
    /// `(data file path, position)` rows.
    fn deleting<'f>(&mut self, file: &'f Written, positions: &[u64]) -> Vec<(&'f str, i64)> {
        for p in positions {
            self.live.remove(&(file.first + *p as i64));
        }
        positions
            .iter()
            .map(|p| (file.path.as_str(), *p as i64))
            .collect()
    }

    async fn commit(
        &mut self,
        data: Vec<iceberg::spec::DataFile>,
        deletes: Vec<iceberg::spec::DataFile>,
    ) -> Result<()> {
        let metadata = self.writer.commit(data, deletes).await?;
        let text = std::fs::read_to_string(&metadata)
            .map_err(|e| datafusion::common::exec_datafusion_err!("{metadata}: {e}"))?;
        let parsed: Value = serde_json::from_str(&text)
            .map_err(|e| datafusion::common::exec_datafusion_err!("{metadata}: {e}"))?;
        self.snapshots.push(json!({
            "metadata": metadata,
            "snapshot_id": parsed["current-snapshot-id"],
            "ids": self.live.iter().collect::<Vec<_>>(),
        }));
        Ok(())
    }

    fn described(self) -> Value {
        json!({
            "location": self.writer.path().to_string_lossy(),
            "snapshots": self.snapshots,
        })
    }
}

fn schema() -> Result<Schema> {
    let field = |id, name, kind, required| {
        let kind = Type::Primitive(kind);
        Arc::new(if required {
            NestedField::required(id, name, kind)
        } else {
            NestedField::optional(id, name, kind)
        })
    };
    Schema::builder()
        .with_fields(vec![
            field(1, "id", PrimitiveType::Long, true),
            field(2, "region", PrimitiveType::String, true),
            field(3, "amount", PrimitiveType::Double, false),
        ])
        .build()
        .map_err(|e| datafusion::common::exec_datafusion_err!("{e}"))
}

fn partition(region: &str) -> Struct {
    Struct::from_iter([Some(Literal::string(region))])
}

/// Format v2, partitioned by `region`: partition-scoped position-delete files (as Spark
/// writes them, no `referenced_data_file`) over two commits, and a file appended after the
/// first deletes.
async fn positions(root: &Path) -> Result<Value> {
    let writer = TableWriter::partitioned(
        root,
        schema()?,
        vec![("region", "region", Transform::Identity)],
    )?;
    let mut t = Table::new(writer);
    let (e1, eu) = t.data_file(Some("eu"), 0..40)?;
    let (u1, us) = t.data_file(Some("us"), 40..100)?;
    t.commit(vec![e1, u1], vec![]).await?;

    let of_eu = t.deleting(&eu, &[0, 5, 10, 15, 20, 25, 30, 35]);
    let of_us = t.deleting(&us, &[1, 8, 15, 22, 29, 36, 43, 50, 57]);
    let d_eu = t.writer.position_delete_file_in(partition("eu"), of_eu)?;
    let d_us = t.writer.position_delete_file_in(partition("us"), of_us)?;
    t.commit(vec![], vec![d_eu, d_us]).await?;

    let (e2, eu2) = t.data_file(Some("eu"), 100..130)?;
    t.commit(vec![e2], vec![]).await?;

    let mut rows = t.deleting(&eu2, &[2, 29]);
    rows.extend(t.deleting(&eu, &[1]));
    let d_eu = t.writer.position_delete_file_in(partition("eu"), rows)?;
    t.commit(vec![], vec![d_eu]).await?;
    Ok(t.described())
}

/// Format v3, unpartitioned: deletion vectors in one Puffin file for two data files, then a
/// data file appended and a vector of its own.
async fn vectors(root: &Path) -> Result<Value> {
    let writer = TableWriter::new(root, schema()?)?.with_format_version(FormatVersion::V3)?;
    let mut t = Table::new(writer);
    let (a, file_a) = t.data_file(None, 0..50)?;
    let (b, file_b) = t.data_file(None, 50..80)?;
    t.commit(vec![a, b], vec![]).await?;

    let of_a = [0, 1, 2, 10, 49];
    let of_b = [0, 29];
    t.deleting(&file_a, &of_a);
    t.deleting(&file_b, &of_b);
    let dvs = t.writer.deletion_vectors(&[
        (file_a.path.as_str(), &of_a[..]),
        (file_b.path.as_str(), &of_b[..]),
    ])?;
    t.commit(vec![], dvs).await?;

    let (c, file_c) = t.data_file(None, 80..90)?;
    t.commit(vec![c], vec![]).await?;

    t.deleting(&file_c, &[3]);
    let dv = t.writer.deletion_vector(&file_c.path, &file_c.path, &[3])?;
    t.commit(vec![], vec![dv]).await?;
    Ok(t.described())
}

/// Writes the tables under `dir`; returns their description (JSON): for each table its
/// location and, per commit, the metadata file written, the snapshot id and the ids it
/// keeps.
pub fn write(dir: &Path) -> Result<String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let described = json!({
            "positions": positions(&dir.join("positions")).await?,
            "vectors": vectors(&dir.join("vectors")).await?,
        });
        Ok(described.to_string())
    })
}
