//! Planning that scales: the Iceberg delete index over plain planning data built by hand
//! (no files), at a base size and at twice and four times that size. The index is what
//! planning does per data file (which deletes apply to it); a list scanned for every data
//! file grew as data files × delete files. The figure printed is the time per data file at
//! each size: flat when planning grows linearly.

use std::time::Instant;

use datafusion::execution::object_store::ObjectStoreUrl;
use iceberg::spec::{Literal, Struct};
use lakescan::iceberg::deletes::{DataFileKey, DeleteFile, DeleteIndexBuilder, DeleteKind};
use lakescan::iceberg::paths::FileLocation;
use object_store::path::Path;

/// Data files, delete files and partitions of the base size.
const BASE: Size = Size {
    data_files: 100_000,
    delete_files: 10_000,
    partitions: 1_000,
};

/// Global equality deletes (unpartitioned spec) at every size: each applies to every data
/// file, so their number is kept fixed to keep the output linear.
const GLOBAL_DELETES: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Size {
    data_files: usize,
    delete_files: usize,
    partitions: usize,
}

impl Size {
    fn times(self, k: usize) -> Size {
        Size {
            data_files: self.data_files * k,
            delete_files: self.delete_files * k,
            partitions: self.partitions * k,
        }
    }
}

/// One measured size.
#[derive(Debug, Clone)]
pub struct PlanningFigure {
    data_files: usize,
    delete_files: usize,
    partitions: usize,
    /// Seconds to index the deletes and find those of every data file.
    seconds: f64,
    /// Of which indexing the deletes.
    index_seconds: f64,
    /// Delete files found over all data files (the output planning produces).
    matches: usize,
}

fn location(path: String) -> FileLocation {
    FileLocation {
        store: ObjectStoreUrl::local_filesystem(),
        path: Path::from(path),
    }
}

fn partition(p: usize) -> Struct {
    Struct::from_iter([Some(Literal::long(p as i64))])
}

/// Index the deletes of `size` and look up every data file: the best of `runs`.
fn measure(size: Size, runs: usize) -> anyhow::Result<PlanningFigure> {
    // Delete files: per partition, position deletes without a data file, position deletes
    // naming one, equality deletes; sequence numbers spread over the data files' own.
    let mut deletes = vec![];
    for d in 0..size.delete_files {
        let p = d % size.partitions;
        let (kind, referenced) = match d % 5 {
            0 | 1 => (DeleteKind::Position, None),
            2 => (
                DeleteKind::Position,
                Some(location(format!(
                    "data/{p}/{}.parquet",
                    d % size.data_files
                ))),
            ),
            _ => (DeleteKind::Equality { field_ids: vec![1] }, None),
        };
        deletes.push(DeleteFile {
            written_path: format!("/delete/{d}.parquet"),
            location: location(format!("delete/{d}.parquet")),
            kind,
            sequence_number: (d % 50) as i64,
            spec_id: 1,
            unpartitioned: false,
            partition: partition(p),
            referenced_written: referenced.as_ref().map(|l| format!("/{}", l.path)),
            referenced_data_file: referenced,
            record_count: 10,
            file_size: 1_000,
            format: Default::default(),
        });
    }
    for g in 0..GLOBAL_DELETES {
        deletes.push(DeleteFile {
            written_path: format!("/delete/global-{g}.parquet"),
            location: location(format!("delete/global-{g}.parquet")),
            kind: DeleteKind::Equality { field_ids: vec![1] },
            sequence_number: 40 + g as i64,
            spec_id: 0,
            unpartitioned: true,
            partition: Struct::empty(),
            referenced_data_file: None,
            referenced_written: None,
            record_count: 10,
            file_size: 1_000,
            format: Default::default(),
        });
    }
    let data: Vec<(FileLocation, Struct, i64)> = (0..size.data_files)
        .map(|f| {
            let p = f % size.partitions;
            let path = format!("data/{p}/{f}.parquet");
            (location(path), partition(p), (f % 50) as i64)
        })
        .collect();
    let mut best: Option<PlanningFigure> = None;
    for _ in 0..runs.max(1) {
        let files: Vec<DeleteFile> = deletes.clone();
        let started = Instant::now();
        let mut builder = DeleteIndexBuilder::default();
        for file in files {
            builder.add(file)?;
        }
        let mut index = builder.build();
        let index_seconds = started.elapsed().as_secs_f64();
        let mut matches = 0;
        for (location, partition, sequence_number) in &data {
            let key = DataFileKey {
                location,
                sequence_number: *sequence_number,
                spec_id: 1,
                partition,
            };
            let found = index.deletes(key);
            matches += found.position.len() + found.equality.len();
        }
        let seconds = started.elapsed().as_secs_f64();
        if best.as_ref().is_none_or(|b| seconds < b.seconds) {
            best = Some(PlanningFigure {
                data_files: size.data_files,
                delete_files: deletes.len(),
                partitions: size.partitions,
                seconds,
                index_seconds,
                matches,
            });
        }
    }
    best.ok_or_else(|| anyhow::anyhow!("no planning run"))
}

/// The figures at 1, 2 and 4 times the base size.
pub fn run(runs: usize) -> anyhow::Result<Vec<PlanningFigure>> {
    [1, 2, 4]
        .into_iter()
        .map(|k| measure(BASE.times(k), runs))
        .collect()
}

/// The figures as a table, with the time per data file relative to the base size.
pub fn table(figures: &[PlanningFigure]) -> String {
    let mut out = String::from(
        "planning (Iceberg delete index, plain planning data):\n\
         | data files | delete files | partitions | deletes found | time ms | of which index ms | µs per data file | vs base |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let per_file = |f: &PlanningFigure| f.seconds * 1e6 / f.data_files as f64;
    let base = figures.first().map(per_file).unwrap_or(1.0);
    for f in figures {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.3} | {:.2} x |\n",
            f.data_files,
            f.delete_files,
            f.partitions,
            f.matches,
            f.seconds * 1e3,
            f.index_seconds * 1e3,
            per_file(f),
            per_file(f) / base
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_data_file_finds_its_partitions_deletes() {
        let size = Size {
            data_files: 100,
            delete_files: 50,
            partitions: 10,
        };
        let figure = measure(size, 1).unwrap();
        assert_eq!(figure.delete_files, 50 + GLOBAL_DELETES);
        // Every data file gets the global deletes newer than it, at least.
        assert!(figure.matches >= 100, "{figure:?}");
    }
}
