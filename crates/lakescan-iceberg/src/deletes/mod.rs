//! Delete files (the Iceberg spec's "Scan Planning" and "Delete Formats"):
//! which delete files apply to which data file, by the sequence-number and partition rules.
//!
//! | kind              | applies to a data file when                                        |
//! |-------------------|--------------------------------------------------------------------|
//! | equality delete   | delete seq **>** data seq, and the delete's spec is unpartitioned (a global delete) or it has the data file's spec and partition |
//! | position delete   | delete seq **>=** data seq, and its `referenced_data_file` is the data file, or (none referenced) it has the data file's spec and partition, or its spec is unpartitioned |
//! | deletion vector   | delete seq **>=** data seq, and its `referenced_data_file` is the data file |
//!
//! Partitions are compared in the table's current partition types, floats by their bits
//! ([`crate::plan::partition`]). [`DeleteIndex`] answers these per planned data file; the
//! reader never reads a manifest.
//! Equality deletes are applied by [`equality`] after decoding; position deletes and
//! deletion vectors by [`position`], as a row selection before decoding.

pub mod equality;
pub mod position;

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::common::{Result, exec_err, internal_err};
use datafusion::execution::object_store::{ObjectStoreRegistry, ObjectStoreUrl};
use iceberg::spec::Struct;
use object_store::ObjectStore;
use serde::{Deserialize, Serialize};

use crate::paths::FileLocation;
use crate::plan::partition::same_values;

/// Where delete files are read from: the store of their data file, or the session's store
/// of their own URL (a delete file in another bucket than its data file).
#[derive(Clone)]
pub struct DeleteStores {
    data_url: ObjectStoreUrl,
    data_store: Arc<dyn ObjectStore>,
    registry: Option<Arc<dyn ObjectStoreRegistry>>,
}

impl std::fmt::Debug for DeleteStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeleteStores")
            .field("data_url", &self.data_url)
            .finish_non_exhaustive()
    }
}

impl DeleteStores {
    /// Delete files beside a data file in `data_store` (at `data_url`); others resolved in
    /// `registry`, the session's.
    pub fn new(
        data_url: ObjectStoreUrl,
        data_store: Arc<dyn ObjectStore>,
        registry: Option<Arc<dyn ObjectStoreRegistry>>,
    ) -> Self {
        Self {
            data_url,
            data_store,
            registry,
        }
    }

    /// The store of delete file `file`.
    pub fn of(&self, file: &DeleteFile) -> Result<Arc<dyn ObjectStore>> {
        let url = &file.location.store;
        if url == &self.data_url {
            return Ok(Arc::clone(&self.data_store));
        }
        match &self.registry {
            Some(registry) => registry.get_store(url.as_ref()),
            None => exec_err!(
                "Iceberg delete file '{}' is in object store {}, and the scan has no other \
                 store than {}",
                file.written_path,
                url.as_str(),
                self.data_url.as_str()
            ),
        }
    }
}

/// What a delete file deletes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DeleteKind {
    /// Rows by (file path, position), in a Parquet/ORC/Avro file.
    Position,
    /// Rows by position of one data file, as a Puffin `deletion-vector-v1` blob.
    DeletionVector {
        /// Where the blob starts in the Puffin file.
        offset: u64,
        /// Its length.
        length: u64,
    },
    /// Rows whose values of these field ids equal a row of the delete file.
    Equality {
        /// The key's field ids.
        field_ids: Vec<i32>,
    },
}

/// One live delete file of the snapshot.
///
/// In a plan sent to another process ([`crate::reader::IcebergAdapter`]'s wire
/// form) every field crosses but `partition`, which only planning matches (the delete index)
/// and which decodes as the empty tuple.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeleteFile {
    /// The path as the manifest wrote it.
    pub written_path: String,
    /// Where it is.
    pub location: FileLocation,
    /// What it deletes.
    pub kind: DeleteKind,
    /// Its data sequence number.
    pub sequence_number: i64,
    /// The spec it was written with.
    pub spec_id: i32,
    /// Whether that spec is unpartitioned (its deletes are global).
    pub unpartitioned: bool,
    /// Its partition (planning only; see the type's doc).
    #[serde(skip, default = "Struct::empty")]
    pub partition: Struct,
    /// The one data file it applies to, when the writer said so.
    pub referenced_data_file: Option<FileLocation>,
    /// That data file as the manifest wrote it (messages).
    pub referenced_written: Option<String>,
    /// Rows (or deleted positions) it holds.
    pub record_count: u64,
    /// Its size in bytes.
    pub file_size: u64,
    /// How its rows are stored (Parquet, ORC or Avro; a deletion vector's Puffin file reads
    /// as bytes whatever this says).
    #[serde(default)]
    pub format: lakescan_core::api::FileFormat,
}

/// The top-level columns with field ids `ids` (or, for a column without an id, the name
/// beside its id) of a delete file, read whole in its format (its errors name the file), or
/// the first id no column has.
pub(crate) async fn read_columns(
    store: &std::sync::Arc<dyn object_store::ObjectStore>,
    file: &DeleteFile,
    ids: &[(i32, &str)],
    counters: &lakescan_core::api::ReadCounters,
) -> datafusion::common::Result<lakescan_core::api::ColumnsById> {
    let whole = lakescan_core::api::WholeFile {
        store,
        location: &file.location.path,
        size: file.file_size,
        written: &file.written_path,
        counters,
    };
    file.format.seam().read_columns_by_id(whole, ids).await
}

/// A data file as the delete rules see it.
#[derive(Debug, Clone, Copy)]
pub struct DataFileKey<'a> {
    /// Where it is.
    pub location: &'a FileLocation,
    /// Its data sequence number.
    pub sequence_number: i64,
    /// Its spec.
    pub spec_id: i32,
    /// Its partition.
    pub partition: &'a Struct,
}

/// Collects the live delete files of a snapshot; [`Self::build`] indexes them.
#[derive(Debug, Default)]
pub struct DeleteIndexBuilder {
    index: DeleteIndex,
}

impl DeleteIndexBuilder {
    /// Adds a live delete file. A second deletion vector for one data file is an error: a
    /// snapshot holds at most one (the spec; Java's `DeleteFileIndex` refuses it too).
    pub fn add(&mut self, file: DeleteFile) -> Result<()> {
        let index = &mut self.index;
        let file = Arc::new(file);
        match (&file.kind, &file.referenced_data_file) {
            (DeleteKind::DeletionVector { .. }, None) => internal_err!(
                "deletion vector '{}' reached the delete index without its data file",
                file.written_path
            ),
            (DeleteKind::DeletionVector { .. }, Some(data)) => {
                if let Some(other) = index.vectors.get(data) {
                    return exec_err!(
                        "two deletion vectors for one data file ('{}' and '{}', both of '{}'): \
                         a snapshot may hold at most one per data file",
                        other.written_path,
                        file.written_path,
                        file.referenced_written
                            .as_deref()
                            .unwrap_or(data.path.as_ref())
                    );
                }
                index.vectors.insert(data.clone(), file);
                Ok(())
            }
            (DeleteKind::Position, Some(data)) => {
                index
                    .by_data_file
                    .entry(data.clone())
                    .or_default()
                    .files
                    .push(file);
                Ok(())
            }
            (DeleteKind::Position | DeleteKind::Equality { .. }, _) => {
                let deletes = match file.unpartitioned {
                    true => &mut index.global,
                    false => {
                        let bucket = index
                            .by_partition
                            .entry(file.spec_id)
                            .or_default()
                            .entry(file.partition.clone())
                            .or_default();
                        // One group per partition by its bits (the bucket may hold -0.0
                        // beside 0.0): a data file compares its tuple once per group, not
                        // once per delete file.
                        match bucket
                            .iter()
                            .position(|(p, _)| same_values(p, &file.partition))
                        {
                            Some(g) => &mut bucket[g].1,
                            None => {
                                bucket.push((file.partition.clone(), PartitionDeletes::default()));
                                let last = bucket.len() - 1;
                                &mut bucket[last].1
                            }
                        }
                    }
                };
                match file.kind {
                    DeleteKind::Position => deletes.position.files.push(file),
                    _ => deletes.equality.files.push(file),
                }
                Ok(())
            }
        }
    }

    /// The index: each list sorted by sequence number (stable: files of one sequence
    /// number stay in manifest order).
    pub fn build(mut self) -> DeleteIndex {
        let index = &mut self.index;
        let groups = index
            .by_partition
            .values_mut()
            .flat_map(|p| p.values_mut())
            .flat_map(|bucket| bucket.iter_mut().map(|(_, deletes)| deletes));
        for deletes in groups.chain([&mut index.global]) {
            deletes.equality.sort();
            deletes.position.sort();
        }
        index.by_data_file.values_mut().for_each(BySequence::sort);
        self.index
    }
}

/// The live delete files of a snapshot, indexed by what they apply to, as Java's
/// `DeleteFileIndex` does: deletion vectors and position deletes that name their data file
/// by that file; other deletes of a partitioned spec by (spec id, partition); deletes of an
/// unpartitioned spec (global) apart. Each list is sorted by sequence number, so the deletes
/// newer than a data file are found by a binary search: planning costs O(data files ×
/// log(deletes)) plus the deletes that apply, not O(data files × delete files).
///
/// What a lookup reads lies together, so its cost per data file does not grow with the
/// number of delete files: the sequence numbers are kept beside the files (the binary search
/// reads no delete file), and the delete files of one partition are one group compared
/// with the data file's tuple once. Partitions are hashed as iceberg's `Struct` (`-0.0` and
/// `0.0` in one bucket); a bucket holds one group per partition by [`same_values`] (by
/// their bits). They are looked up by spec id, then by the data file's own tuple (never
/// copied).
#[derive(Debug, Default)]
pub struct DeleteIndex {
    vectors: HashMap<FileLocation, Arc<DeleteFile>>,
    by_data_file: HashMap<FileLocation, BySequence>,
    by_partition: HashMap<i32, HashMap<Struct, Vec<(Struct, PartitionDeletes)>>>,
    global: PartitionDeletes,
}

/// Delete files sorted by sequence number, the numbers kept beside them.
#[derive(Debug, Default)]
struct BySequence {
    sequence_numbers: Vec<i64>,
    files: Vec<Arc<DeleteFile>>,
}

impl BySequence {
    /// Sorts the files by sequence number (stable) and records the numbers.
    fn sort(&mut self) {
        self.files.sort_by_key(|f| f.sequence_number);
        self.sequence_numbers = self.files.iter().map(|f| f.sequence_number).collect();
    }

    fn len(&self) -> usize {
        self.files.len()
    }

    /// The files whose sequence number is above `sequence` (`Above`) or at least
    /// `sequence` (`AtLeast`).
    fn newer(&self, than: Newer) -> &[Arc<DeleteFile>] {
        let start = self.sequence_numbers.partition_point(|&n| match than {
            Newer::Above(seq) => n <= seq,
            Newer::AtLeast(seq) => n < seq,
        });
        self.files.get(start..).unwrap_or_default()
    }
}

/// The deletes of one partition (or the global ones), each kind sorted by sequence number.
#[derive(Debug, Default)]
struct PartitionDeletes {
    equality: BySequence,
    position: BySequence,
}

impl PartitionDeletes {
    fn len(&self) -> usize {
        self.equality.len() + self.position.len()
    }
}

/// Which sequence numbers a delete must have to apply to a data file of sequence number
/// `n`: equality deletes need a greater one, position deletes at least `n`.
#[derive(Debug, Clone, Copy)]
enum Newer {
    Above(i64),
    AtLeast(i64),
}

impl DeleteIndex {
    /// Number of delete files.
    pub fn len(&self) -> usize {
        let groups = self
            .by_partition
            .values()
            .flat_map(|p| p.values())
            .flat_map(|bucket| bucket.iter().map(|(_, deletes)| deletes));
        self.vectors.len()
            + self
                .by_data_file
                .values()
                .map(BySequence::len)
                .sum::<usize>()
            + groups
                .chain([&self.global])
                .map(PartitionDeletes::len)
                .sum::<usize>()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The deletes of `data`'s partition (none when it has none).
    fn partition_of(&self, data: DataFileKey<'_>) -> Option<&PartitionDeletes> {
        let bucket = self.by_partition.get(&data.spec_id)?.get(data.partition)?;
        bucket
            .iter()
            .find(|(partition, _)| same_values(partition, data.partition))
            .map(|(_, deletes)| deletes)
    }

    /// The equality deletes that apply to `data`: the global ones, then its partition's,
    /// each by sequence number.
    pub fn equality_deletes(&self, data: DataFileKey<'_>) -> Vec<Arc<DeleteFile>> {
        let above = Newer::Above(data.sequence_number);
        let mut out: Vec<Arc<DeleteFile>> = self.global.equality.newer(above).to_vec();
        if let Some(partition) = self.partition_of(data) {
            out.extend_from_slice(partition.equality.newer(above));
        }
        out
    }

    /// The position deletes and deletion vectors that apply to `data`.
    pub fn position_deletes(&self, data: DataFileKey<'_>) -> Vec<Arc<DeleteFile>> {
        let at_least = Newer::AtLeast(data.sequence_number);
        let mut out: Vec<Arc<DeleteFile>> = vec![];
        if let Some(named) = self.by_data_file.get(data.location) {
            out.extend_from_slice(named.newer(at_least));
        }
        out.extend_from_slice(self.global.position.newer(at_least));
        if let Some(partition) = self.partition_of(data) {
            out.extend_from_slice(partition.position.newer(at_least));
        }
        if let Some(vector) = self.vectors.get(data.location)
            && vector.sequence_number >= data.sequence_number
        {
            out.push(Arc::clone(vector));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::PathResolver;
    use iceberg::spec::Literal;

    fn location(p: &str) -> FileLocation {
        PathResolver::new(Some("/")).unwrap().resolve(p).unwrap()
    }

    fn delete(kind: DeleteKind, seq: i64, part: Option<&str>) -> DeleteFile {
        DeleteFile {
            written_path: "d".into(),
            location: location("/d"),
            kind,
            sequence_number: seq,
            spec_id: i32::from(part.is_some()),
            unpartitioned: part.is_none(),
            partition: match part {
                Some(p) => Struct::from_iter([Some(Literal::string(p))]),
                None => Struct::empty(),
            },
            referenced_data_file: None,
            referenced_written: None,
            record_count: 1,
            file_size: 1,
            format: Default::default(),
        }
    }

    #[test]
    fn sequence_number_and_partition_rules() {
        let eq = || DeleteKind::Equality { field_ids: vec![1] };
        let mut index = DeleteIndexBuilder::default();
        index.add(delete(eq(), 2, None)).unwrap(); // global
        index.add(delete(eq(), 3, Some("a"))).unwrap();
        index.add(delete(eq(), 1, None)).unwrap(); // older than the data: does not apply
        let data_location = location("/f");
        let part_a = Struct::from_iter([Some(Literal::string("a"))]);
        let part_b = Struct::from_iter([Some(Literal::string("b"))]);
        let key = |partition| DataFileKey {
            location: &data_location,
            sequence_number: 1,
            spec_id: 1,
            partition,
        };
        let seqs = |files: Vec<Arc<DeleteFile>>| -> Vec<i64> {
            files.iter().map(|f| f.sequence_number).collect()
        };
        let index = index.build();
        assert_eq!(seqs(index.equality_deletes(key(&part_a))), [2, 3]);
        assert_eq!(seqs(index.equality_deletes(key(&part_b))), [2]);
        // Same sequence number: an equality delete does not apply, a position delete does.
        let mut same = DeleteIndexBuilder::default();
        same.add(delete(eq(), 1, None)).unwrap();
        same.add(delete(DeleteKind::Position, 1, Some("a")))
            .unwrap();
        let same = same.build();
        assert!(same.equality_deletes(key(&part_a)).is_empty());
        assert_eq!(same.position_deletes(key(&part_a)).len(), 1);
        assert!(same.position_deletes(key(&part_b)).is_empty());
        // The spec: a position delete of an unpartitioned spec applies to every partition.
        let mut unpartitioned = DeleteIndexBuilder::default();
        unpartitioned
            .add(delete(DeleteKind::Position, 1, None))
            .unwrap();
        let unpartitioned = unpartitioned.build();
        assert_eq!(unpartitioned.position_deletes(key(&part_b)).len(), 1);
        // A deletion vector applies only to the file it references.
        let mut dv = delete(
            DeleteKind::DeletionVector {
                offset: 4,
                length: 40,
            },
            5,
            None,
        );
        dv.referenced_data_file = Some(location("/other"));
        let mut dvs = DeleteIndexBuilder::default();
        dvs.add(dv.clone()).unwrap();
        let mut unrelated = delete(DeleteKind::Position, 5, None);
        unrelated.referenced_data_file = Some(location("/third"));
        dvs.add(unrelated).unwrap();
        // A second deletion vector for the same data file is an error naming both.
        let mut second = dv;
        second.written_path = "d2".into();
        second.referenced_written = Some("/other".into());
        let err = dvs.add(second).unwrap_err().to_string();
        assert!(
            err.contains("two deletion vectors for one data file ('d' and 'd2', both of '/other')"),
            "{err}"
        );
        let dvs = dvs.build();
        assert_eq!(dvs.len(), 2);
        assert!(dvs.position_deletes(key(&part_a)).is_empty());
        let other = location("/other");
        let of_other = DataFileKey {
            location: &other,
            ..key(&part_a)
        };
        assert_eq!(dvs.position_deletes(of_other).len(), 1);
    }

    /// The index finds what a scan of every delete file finds, for deletes of several
    /// specs, partitions, sequence numbers and kinds (the rules of the module table).
    #[test]
    fn the_index_agrees_with_the_rules_applied_to_every_file() {
        let parts = ["a", "b", "c"];
        let mut all = vec![];
        for seq in 0..6i64 {
            for (n, part) in parts.iter().enumerate() {
                let kind = match (seq + n as i64) % 3 {
                    0 => DeleteKind::Position,
                    1 => DeleteKind::Equality { field_ids: vec![1] },
                    _ => DeleteKind::Position,
                };
                let mut file = delete(kind, seq, (seq % 4 != 3).then_some(*part));
                file.written_path = format!("d{seq}{part}");
                if seq % 5 == 2 && file.kind == DeleteKind::Position {
                    file.referenced_data_file = Some(location(&format!("/{part}")));
                }
                all.push(file);
            }
        }
        let mut builder = DeleteIndexBuilder::default();
        for file in &all {
            builder.add(file.clone()).unwrap();
        }
        let index = builder.build();
        let names = |files: Vec<Arc<DeleteFile>>| -> Vec<String> {
            let mut names: Vec<String> = files.iter().map(|f| f.written_path.clone()).collect();
            names.sort();
            names
        };
        for part in parts {
            let partition = Struct::from_iter([Some(Literal::string(part))]);
            let data_location = location(&format!("/{part}"));
            for seq in 0..7 {
                let data = DataFileKey {
                    location: &data_location,
                    sequence_number: seq,
                    spec_id: 1,
                    partition: &partition,
                };
                let same = |d: &DeleteFile| d.spec_id == 1 && same_values(&d.partition, &partition);
                let equality = all.iter().filter(|d| {
                    matches!(d.kind, DeleteKind::Equality { .. })
                        && d.sequence_number > seq
                        && (d.unpartitioned || same(d))
                });
                let position = all.iter().filter(|d| {
                    d.kind == DeleteKind::Position
                        && d.sequence_number >= seq
                        && match &d.referenced_data_file {
                            Some(r) => r == &data_location,
                            None => d.unpartitioned || same(d),
                        }
                });
                let expected = |it: &mut dyn Iterator<Item = &DeleteFile>| {
                    let mut names: Vec<String> = it.map(|f| f.written_path.clone()).collect();
                    names.sort();
                    names
                };
                assert_eq!(
                    names(index.equality_deletes(data)),
                    expected(&mut equality.into_iter())
                );
                assert_eq!(
                    names(index.position_deletes(data)),
                    expected(&mut position.into_iter())
                );
            }
        }
    }
}
