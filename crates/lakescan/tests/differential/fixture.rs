//! [`Fixture`]: the generated files written as a Hive table, the lakescan tables over it
//! (declared schema, default and tiny splits) in one session, and the reference `MemTable`
//! over the same rows in another.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow::datatypes::{DataType, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use crate::data::DataFile;
use crate::layout::file_batch;
use crate::run::run_query;
use crate::table::{Row, TIME_ZONE, create_table_sql, table_schema, to_batch};

/// The lakescan tables (same directory, default and tiny splits) and the reference table.
pub const HIVE: &str = "hive_t";
pub const HIVE_SPLIT: &str = "hive_split";
pub const MEM: &str = "mem_t";

fn write_parquet(path: &Path, file: &DataFile) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(64))
        .set_data_page_row_count_limit(10)
        .set_write_batch_size(10)
        .set_dictionary_enabled(file.dictionary)
        .set_statistics_enabled(file.statistics)
        .build();
    let out = std::fs::File::create(path).unwrap();
    let schema = file_batch(&[], &file.layout).schema();
    let mut writer = ArrowWriter::try_new(out, schema, Some(props)).unwrap();
    for rg in &file.row_groups {
        writer.write(&file_batch(rg, &file.layout)).unwrap();
        writer.flush().unwrap();
    }
    writer.close().unwrap();
}

/// Both engines plan in the same session time zone (see [`TIME_ZONE`]).
fn session(target_partitions: usize) -> SessionContext {
    let mut config = SessionConfig::new().with_target_partitions(target_partitions);
    config.options_mut().execution.time_zone = Some(TIME_ZONE.to_string());
    SessionContext::new_with_config(config)
}

/// A row as the report shows it: the row and where it is stored.
pub struct Placed {
    pub row: Row,
    pub place: String,
}

/// The written table: a SessionContext with `hive_t` and `hive_split`, one with the
/// reference `mem_t`, and the rows (for reports).
pub struct Fixture {
    pub ctx: SessionContext,
    pub reference: SessionContext,
    pub rows: HashMap<i64, Placed>,
    pub row_count: usize,
    _dir: Option<tempfile::TempDir>,
}

fn types(s: &Schema) -> Vec<(String, DataType)> {
    s.fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect()
}

/// Writes `files` below `root` (with a hidden marker and checksum files that are not data)
/// and returns every row, in file order, with where it is stored.
fn write_table(root: &Path, files: &[DataFile]) -> Vec<Placed> {
    std::fs::create_dir_all(root).unwrap();
    std::fs::write(root.join("_SUCCESS"), b"").unwrap();
    let mut placed = vec![];
    for file in files {
        let part = root.join(file.dir());
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join(format!(".{}.crc", file.name)), b"junk").unwrap();
        write_parquet(&part.join(&file.name), file);
        let mut layout = file.layout.describe();
        if !layout.is_empty() {
            layout = format!("; file: {layout}");
        }
        for (k, rg) in file.row_groups.iter().enumerate() {
            let place = format!("{}/{} row group {k}{layout}", file.dir(), file.name);
            placed.extend(rg.iter().map(|row| Placed {
                row: row.clone(),
                place: place.clone(),
            }));
        }
    }
    placed
}

/// A session with the lakescan tables over `location`, checked to have the declared schema
/// and `row_count` rows.
async fn lakescan_session(location: &str, row_count: usize) -> SessionContext {
    let ctx = session(2);
    lakescan::register(&ctx).unwrap();
    for (table, options) in [(HIVE, ""), (HIVE_SPLIT, "OPTIONS ('split_size' '4000')")] {
        ctx.sql(&create_table_sql(table, location, options))
            .await
            .unwrap();
    }
    let schema = ctx.table(HIVE).await.unwrap().schema().as_arrow().clone();
    assert_eq!(types(&schema), types(&table_schema()), "schema of {HIVE}");
    for table in [HIVE, HIVE_SPLIT] {
        let other = ctx.table(table).await.unwrap().schema().as_arrow().clone();
        assert_eq!(other, schema, "schema of {table}");
        let count = run_query(&ctx, &format!("SELECT count(*) FROM {table}"))
            .await
            .unwrap();
        assert_eq!(count.rows, vec![row_count.to_string()], "rows of {table}");
    }
    ctx
}

impl Fixture {
    pub async fn build(files: &[DataFile]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("t");
        let placed = write_table(&root, files);
        let location = root.to_string_lossy().to_string();
        let ctx = lakescan_session(&location, placed.len()).await;

        // The reference: plain DataFusion over the same rows in memory, in its own context,
        // with the lakescan table's types (so both plans coerce alike) and NULL where a file
        // leaves a column out.
        let all: Vec<Row> = placed.iter().map(|p| p.row.clone()).collect();
        let batch = to_batch(&all);
        let mem = MemTable::try_new(batch.schema(), vec![vec![batch]]).unwrap();
        let reference = session(1);
        reference.register_table(MEM, Arc::new(mem)).unwrap();
        let dir = if std::env::var_os("LAKESCAN_DIFF_KEEP").is_some() {
            eprintln!("differential: keeping the table at {location}");
            let _ = dir.keep();
            None
        } else {
            Some(dir)
        };
        Self {
            ctx,
            reference,
            row_count: all.len(),
            rows: placed.into_iter().map(|p| (p.row.id, p)).collect(),
            _dir: dir,
        }
    }
}
