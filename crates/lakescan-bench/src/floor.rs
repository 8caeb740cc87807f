//! The raw parquet floor: the `parquet` crate decoding the columns a case references, from
//! the row groups min/max statistics cannot exclude, with no filter evaluation, no
//! expression and no DataFusion operator on top.
//!
//! The row-group selection is computed once per case (DataFusion's `PruningPredicate` over
//! the row-group statistics of the case's predicate) and checked against the number of row
//! groups lakescan read. A timed run opens every file and parses its footer, then decodes
//! the selected row groups with `--threads` threads pulling (file, row group) units from a
//! shared queue, 8192-row batches (DataFusion's default batch size).
//!
//! For the full scan this is the practical floor of any Parquet scan. For filtered cases it
//! is the cost of decoding everything the query touches; a reader with late
//! materialization can be faster than it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use arrow::array::{ArrayRef, BooleanArray, UInt64Array};
use arrow::datatypes::{Schema, SchemaRef};
use datafusion::common::pruning::PruningStatistics;
use datafusion::common::{Column, DFSchema, ScalarValue};
use datafusion::physical_optimizer::pruning::PruningPredicate;
use datafusion::prelude::SessionContext;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::file::metadata::ParquetMetaData;

use crate::cases::{FloorScan, TableDir};
use crate::dataset::{Dataset, parquet_files};

const BATCH_SIZE: usize = 8192;

/// One file and what to decode from it.
#[derive(Debug, Clone)]
struct FileWork {
    path: PathBuf,
    /// Leaf column indices decoded.
    leaves: Vec<usize>,
    row_groups: Vec<usize>,
}

/// The floor's work for one case.
#[derive(Debug, Clone, Default)]
pub struct FloorPlan {
    files: Vec<FileWork>,
    /// Row groups selected (summed over files).
    pub row_groups: usize,
    /// Rows in the selected row groups.
    pub rows: u64,
}

/// What one run decoded.
#[derive(Debug, Clone, Copy)]
pub struct FloorRun {
    /// Wall time.
    pub elapsed: Duration,
    /// Rows decoded (per column).
    pub rows: u64,
    /// Row groups decoded.
    pub row_groups: usize,
}

impl FloorPlan {
    /// Chooses the files, columns and row groups of `scans`.
    pub async fn new(dataset: &Dataset, scans: &[FloorScan]) -> Result<Self> {
        let mut plan = FloorPlan::default();
        for scan in scans {
            for path in files_of(dataset, scan)? {
                let file = File::open(&path).with_context(|| path.display().to_string())?;
                let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())?;
                let schema = Arc::clone(meta.schema());
                let mut leaves = vec![];
                for c in &scan.columns {
                    let found = leaves_of(meta.parquet_schema(), c);
                    if found.is_empty() {
                        bail!("no column {c} in {}", path.display());
                    }
                    leaves.extend(found);
                }
                let all: Vec<usize> = (0..meta.metadata().num_row_groups()).collect();
                let row_groups = match &scan.predicate {
                    None => all,
                    Some(sql) => prune(&schema, meta.metadata(), sql, &all).await?,
                };
                plan.row_groups += row_groups.len();
                plan.rows += row_groups
                    .iter()
                    .map(|&i| meta.metadata().row_group(i).num_rows() as u64)
                    .sum::<u64>();
                plan.files.push(FileWork {
                    path,
                    leaves,
                    row_groups,
                });
            }
        }
        Ok(plan)
    }

    /// Opens the files, parses their footers and decodes the selected row groups, with
    /// `threads` threads.
    pub fn run(&self, threads: usize) -> Result<FloorRun> {
        let threads = threads.max(1);
        let start = Instant::now();
        let next_file = AtomicUsize::new(0);
        let metas: Vec<std::sync::Mutex<Option<ArrowReaderMetadata>>> = self
            .files
            .iter()
            .map(|_| std::sync::Mutex::new(None))
            .collect();
        // Footers, in parallel.
        std::thread::scope(|s| -> Result<()> {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| -> Result<()> {
                        loop {
                            let i = next_file.fetch_add(1, Ordering::Relaxed);
                            let Some(work) = self.files.get(i) else {
                                return Ok(());
                            };
                            let file = File::open(&work.path)?;
                            let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())?;
                            if let Ok(mut slot) = metas[i].lock() {
                                *slot = Some(meta);
                            }
                        }
                    })
                })
                .collect();
            join_all(workers)
        })?;
        let metas: Vec<ArrowReaderMetadata> = metas
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .ok()
                    .flatten()
                    .ok_or_else(|| anyhow!("footer not loaded"))
            })
            .collect::<Result<_>>()?;
        let units: Vec<(usize, usize)> = self
            .files
            .iter()
            .enumerate()
            .flat_map(|(f, w)| w.row_groups.iter().map(move |&rg| (f, rg)))
            .collect();
        let next_unit = AtomicUsize::new(0);
        let rows = AtomicUsize::new(0);
        std::thread::scope(|s| -> Result<()> {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| -> Result<()> {
                        loop {
                            let u = next_unit.fetch_add(1, Ordering::Relaxed);
                            let Some(&(f, rg)) = units.get(u) else {
                                return Ok(());
                            };
                            let work = &self.files[f];
                            let meta = metas[f].clone();
                            let mask = ProjectionMask::leaves(
                                meta.parquet_schema(),
                                work.leaves.iter().copied(),
                            );
                            let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(
                                File::open(&work.path)?,
                                meta,
                            )
                            .with_row_groups(vec![rg])
                            .with_projection(mask)
                            .with_batch_size(BATCH_SIZE)
                            .build()?;
                            for batch in reader {
                                rows.fetch_add(batch?.num_rows(), Ordering::Relaxed);
                            }
                        }
                    })
                })
                .collect();
            join_all(workers)
        })?;
        Ok(FloorRun {
            elapsed: start.elapsed(),
            rows: rows.into_inner() as u64,
            row_groups: units.len(),
        })
    }
}

/// The leaves of column `name`, or of struct member `root.member` (its path from the root).
fn leaves_of(descr: &parquet::schema::types::SchemaDescriptor, name: &str) -> Vec<usize> {
    let wanted: Vec<&str> = name.split('.').collect();
    (0..descr.num_columns())
        .filter(|&i| {
            let parts = descr.column(i).path().parts().to_vec();
            parts.len() >= wanted.len() && parts.iter().zip(&wanted).all(|(p, w)| p == w)
        })
        .collect()
}

fn join_all(workers: Vec<std::thread::ScopedJoinHandle<'_, Result<()>>>) -> Result<()> {
    for w in workers {
        w.join().map_err(|_| anyhow!("floor worker panicked"))??;
    }
    Ok(())
}

/// The data files of `scan`, sorted.
fn files_of(dataset: &Dataset, scan: &FloorScan) -> Result<Vec<PathBuf>> {
    let root = match scan.table {
        TableDir::Lineitem => dataset.flat_lineitem(),
        TableDir::Orders => dataset.flat_orders(),
        TableDir::LineitemHive => dataset.hive_lineitem(),
        TableDir::BucketedOrders => dataset.bucketed_orders(),
        TableDir::StructLineitem => dataset.struct_lineitem(),
        TableDir::SmallFiles => dataset.small_files(),
    };
    let dirs: Vec<PathBuf> = match (&scan.partitions, scan.table) {
        (Some(parts), _) => parts.iter().map(|p| root.join(p)).collect(),
        (None, TableDir::LineitemHive | TableDir::SmallFiles) => subdirs(&root)?,
        (None, _) => vec![root],
    };
    let mut files = vec![];
    for dir in dirs {
        files.extend(parquet_files(&dir)?);
    }
    if files.is_empty() {
        bail!("no parquet files for {:?}", scan.table);
    }
    files.sort();
    Ok(files)
}

fn subdirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).with_context(|| dir.display().to_string())? {
        let path = entry?.path();
        if path.is_dir() {
            out.push(path);
        }
    }
    Ok(out)
}

/// Row groups of `all` that `sql` may match, by DataFusion's `PruningPredicate`.
async fn prune(
    schema: &SchemaRef,
    metadata: &ParquetMetaData,
    sql: &str,
    all: &[usize],
) -> Result<Vec<usize>> {
    let ctx = SessionContext::new();
    let df_schema = DFSchema::try_from(schema.as_ref().clone())?;
    let expr = ctx.parse_sql_expr(sql, &df_schema)?;
    let physical = ctx.create_physical_expr(expr, &df_schema)?;
    let predicate = PruningPredicate::try_new(physical, Arc::clone(schema))?;
    let stats = Stats {
        schema,
        metadata,
        row_groups: all,
    };
    let keep = predicate.prune(&stats)?;
    Ok(all
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(i, _)| *i)
        .collect())
}

/// Row-group statistics of one file, as parquet's `StatisticsConverter` reads them.
struct Stats<'a> {
    schema: &'a Schema,
    metadata: &'a ParquetMetaData,
    row_groups: &'a [usize],
}

impl Stats<'_> {
    fn converter(&self, column: &Column) -> Option<StatisticsConverter<'_>> {
        StatisticsConverter::try_new(
            column.name(),
            self.schema,
            self.metadata.file_metadata().schema_descr(),
        )
        .ok()
    }

    fn groups(&self) -> impl Iterator<Item = &parquet::file::metadata::RowGroupMetaData> {
        self.row_groups.iter().map(|&i| self.metadata.row_group(i))
    }
}

impl PruningStatistics for Stats<'_> {
    fn min_values(&self, column: &Column) -> Option<ArrayRef> {
        self.converter(column)?.row_group_mins(self.groups()).ok()
    }

    fn max_values(&self, column: &Column) -> Option<ArrayRef> {
        self.converter(column)?.row_group_maxes(self.groups()).ok()
    }

    fn num_containers(&self) -> usize {
        self.row_groups.len()
    }

    fn null_counts(&self, column: &Column) -> Option<ArrayRef> {
        let counts = self.converter(column)?.row_group_null_counts(self.groups());
        counts.ok().map(|c| Arc::new(c) as ArrayRef)
    }

    fn row_counts(&self) -> Option<ArrayRef> {
        let rows = self.groups().map(|rg| rg.num_rows() as u64);
        Some(Arc::new(UInt64Array::from_iter_values(rows)))
    }

    fn contained(
        &self,
        _column: &Column,
        _values: &std::collections::HashSet<ScalarValue>,
    ) -> Option<BooleanArray> {
        None
    }
}
