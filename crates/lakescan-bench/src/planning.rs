//! Planning that scales: the Iceberg delete index over plain planning data built by hand
//! (no files), at a base size and at twice and four times that size. The index is what
//! planning does per data file (which deletes apply to it); a list scanned for every data
//! file grew as data files × delete files. The figure printed is the time per data file at
//! each size: flat when planning grows linearly. The sizes take turns, round after round,
//! and each keeps its best round. Delete and data files are made a manifest's worth at a
//! time and indexed or looked up at once, as planning does; the making is not timed. (Until 2026-12-06 they were
//! all made first and looked up from one list: the time per data file then also counted
//! reading that list back from memory, which grows with its size.)

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

/// Data files looked up per batch: as many as a manifest of a few hundred KiB lists.
const MANIFEST_ENTRIES: usize = 1_000;

/// The planning input of one size: its delete files; its data files are made batch by
/// batch ([`Input::data_files`]).
struct Input {
    size: Size,
    deletes: Vec<DeleteFile>,
}

impl Input {
    fn new(size: Size) -> Self {
        // Delete files: per partition, position deletes without a data file, position
        // deletes naming one, equality deletes; sequence numbers spread over the data
        // files' own.
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
        Self { size, deletes }
    }

    /// Data files `from..to` (location, partition, sequence number), as one manifest's
    /// entries would be decoded.
    fn data_files(&self, from: usize, to: usize) -> Vec<(FileLocation, Struct, i64)> {
        (from..to)
            .map(|f| {
                let p = f % self.size.partitions;
                let path = format!("data/{p}/{f}.parquet");
                (location(path), partition(p), (f % 50) as i64)
            })
            .collect()
    }

    /// Indexes the deletes and looks up every data file, once.
    fn measure(&self) -> anyhow::Result<PlanningFigure> {
        let mut builder = DeleteIndexBuilder::default();
        let mut index_seconds = 0.0;
        for batch in self.deletes.chunks(MANIFEST_ENTRIES) {
            // As the data files below: a manifest's delete files, added as decoded.
            let files = batch.to_vec();
            let started = Instant::now();
            for file in files {
                builder.add(file)?;
            }
            index_seconds += started.elapsed().as_secs_f64();
        }
        let started = Instant::now();
        let mut index = builder.build();
        index_seconds += started.elapsed().as_secs_f64();
        let mut seconds = index_seconds;
        let mut matches = 0;
        for from in (0..self.size.data_files).step_by(MANIFEST_ENTRIES) {
            // Made untimed, looked up timed: planning looks a data file up right after
            // decoding its manifest entry, not from a list of them all.
            let to = (from + MANIFEST_ENTRIES).min(self.size.data_files);
            let data = self.data_files(from, to);
            let started = Instant::now();
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
            seconds += started.elapsed().as_secs_f64();
        }
        Ok(PlanningFigure {
            data_files: self.size.data_files,
            delete_files: self.deletes.len(),
            partitions: self.size.partitions,
            seconds,
            index_seconds,
            matches,
        })
    }
}

/// Rounds at least: the base size takes ~15 ms, so a round is cheap and the best of many
/// sheds this machine's noise.
const MIN_ROUNDS: usize = 10;

/// The figures at 1, 2 and 4 times the base size: each the best of `rounds` (at least
/// [`MIN_ROUNDS`]), the sizes taking turns within a round so that a slow spell of the
/// machine falls on every size alike.
pub fn run(rounds: usize) -> anyhow::Result<Vec<PlanningFigure>> {
    let inputs: Vec<Input> = [1, 2, 4]
        .into_iter()
        .map(|k| Input::new(BASE.times(k)))
        .collect();
    let mut best: Vec<Option<PlanningFigure>> = vec![None; inputs.len()];
    for _ in 0..rounds.max(MIN_ROUNDS) {
        for (input, best) in inputs.iter().zip(&mut best) {
            let figure = input.measure()?;
            if best.as_ref().is_none_or(|b| figure.seconds < b.seconds) {
                *best = Some(figure);
            }
        }
    }
    best.into_iter()
        .map(|b| b.ok_or_else(|| anyhow::anyhow!("no planning run")))
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
        let figure = Input::new(size).measure().unwrap();
        assert_eq!(figure.delete_files, 50 + GLOBAL_DELETES);
        // Every data file gets the global deletes newer than it, at least.
        assert!(figure.matches >= 100, "{figure:?}");
    }
}
