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

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use datafusion::common::{Result, exec_err, internal_err};
use datafusion::execution::object_store::{ObjectStoreRegistry, ObjectStoreUrl};
use hashbrown::HashTable;
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
                let named = index.named_mut(data)?;
                if let Some(other) = &named.vector {
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
                named.vector = Some(file);
                Ok(())
            }
            (DeleteKind::Position, Some(data)) => {
                index.named_mut(data)?.position.files.push(file);
                Ok(())
            }
            (DeleteKind::Position | DeleteKind::Equality { .. }, _) => {
                let deletes = match file.unpartitioned {
                    true => &mut index.global,
                    false => {
                        let at = match index.group(file.spec_id, &file.partition) {
                            Some(at) => at,
                            None => index.add_group(file.spec_id, &file.partition)?,
                        };
                        match index.deletes.get_mut(at) {
                            Some(deletes) => deletes,
                            None => return internal_err!("delete index group {at} has no lists"),
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
        index.deletes.iter_mut().for_each(PartitionDeletes::sort);
        index.global.sort();
        for (_, named) in &mut index.named {
            named.position.sort();
        }
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
/// What a lookup reads is small and lies together, so its cost per data file grows as
/// little as the memory allows with the number of partitions: a partition is one
/// `PartitionGroup` of 72 bytes (its spec id, its tuple and what its data files were
/// given), found through a table of group numbers by the hash of spec id and partition and
/// compared with the data file's tuple once by [`same_values`] (by the values' bits: `-0.0`
/// and `0.0` share a hash and are two groups). The group's delete lists lie apart (in
/// `deletes`, by group number) and are read only for the first data file of each partition
/// and sequence number: what it is given ([`FileDeletes`]) is kept in the group and shared
/// by the others, so a lookup touches no delete file, one group and one shared value.
#[derive(Debug, Default)]
pub struct DeleteIndex {
    /// The deletes that name their data file, by data file.
    named: Vec<(FileLocation, Named)>,
    /// Their numbers, with the hash of the data file beside each: a lookup of a data file
    /// that no delete names (most) reads no entry of `named`.
    named_by_hash: HashTable<(u64, u32)>,
    /// The partitions' groups: what a lookup reads.
    groups: Vec<PartitionGroup>,
    /// The delete lists of each group (by group number): what a group's first lookup of a
    /// sequence number reads.
    deletes: Vec<PartitionDeletes>,
    /// The group numbers, by the hash of spec id and partition.
    by_hash: HashTable<u32>,
    hasher: RandomState,
    /// The deletes of unpartitioned specs, which apply in every partition.
    global: PartitionDeletes,
    /// What the data files of partitions without a group were given (the global deletes).
    global_given: Given,
}

/// The deletes that name one data file.
#[derive(Debug, Default)]
struct Named {
    position: BySequence,
    vector: Option<Arc<DeleteFile>>,
}

/// One partition of one spec that has delete files.
#[derive(Debug)]
struct PartitionGroup {
    spec_id: i32,
    partition: Struct,
    given: Given,
}

/// What the data files of one partition were given, by their data sequence number: the
/// first inline (the data files of a partition mostly share one), the others sorted.
#[derive(Debug, Default)]
struct Given {
    first: Option<(i64, Arc<FileDeletes>)>,
    more: Vec<(i64, Arc<FileDeletes>)>,
}

impl Given {
    /// What the data files of sequence number `sequence` were given, made by `make` for
    /// the first of them.
    fn get_or_make(
        &mut self,
        sequence: i64,
        make: impl FnOnce() -> FileDeletes,
    ) -> Arc<FileDeletes> {
        match &self.first {
            Some((first, made)) if *first == sequence => return Arc::clone(made),
            Some(_) => {}
            None => {
                let made = Arc::new(make());
                self.first = Some((sequence, Arc::clone(&made)));
                return made;
            }
        }
        match self.more.binary_search_by_key(&sequence, |(seq, _)| *seq) {
            Ok(at) => Arc::clone(&self.more[at].1),
            Err(at) => {
                let made = Arc::new(make());
                self.more.insert(at, (sequence, Arc::clone(&made)));
                made
            }
        }
    }
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

    /// Where the files whose sequence number is above `sequence` (`Above`) or at least
    /// `sequence` (`AtLeast`) start.
    fn start(&self, than: Newer) -> usize {
        self.sequence_numbers.partition_point(|&n| match than {
            Newer::Above(seq) => n <= seq,
            Newer::AtLeast(seq) => n < seq,
        })
    }

    /// The files from `start` on.
    fn files_from(&self, start: usize) -> &[Arc<DeleteFile>] {
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

    fn sort(&mut self) {
        self.equality.sort();
        self.position.sort();
    }
}

/// Which sequence numbers a delete must have to apply to a data file of sequence number
/// `n`: equality deletes need a greater one, position deletes at least `n`.
#[derive(Debug, Clone, Copy)]
enum Newer {
    Above(i64),
    AtLeast(i64),
}

/// The delete files that apply to one data file. Those that come from partitions (the
/// global ones and the data file's own) are one value shared by every data file of the
/// partition with the same sequence number: planning a data file clones one `Arc`, whatever
/// the number of its deletes, and reads no delete file.
#[derive(Debug, Default, Clone)]
pub struct FileDeletes {
    /// Position-delete files and deletion vectors.
    pub position: Vec<Arc<DeleteFile>>,
    /// Equality-delete files.
    pub equality: Vec<Arc<DeleteFile>>,
}

impl FileDeletes {
    /// Whether no delete file applies.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty() && self.equality.is_empty()
    }

    /// The deletes of `sources` (the global ones, then a partition's) that apply to a data
    /// file of sequence number `sequence`.
    fn of(sources: &[&PartitionDeletes], sequence: i64) -> Self {
        let (above, at_least) = (Newer::Above(sequence), Newer::AtLeast(sequence));
        let mut deletes = FileDeletes::default();
        for PartitionDeletes { position, equality } in sources {
            deletes
                .position
                .extend_from_slice(position.files_from(position.start(at_least)));
            deletes
                .equality
                .extend_from_slice(equality.files_from(equality.start(above)));
        }
        deletes
    }
}

impl DeleteIndex {
    /// Number of delete files.
    pub fn len(&self) -> usize {
        self.named
            .iter()
            .map(|(_, named)| named.position.len() + usize::from(named.vector.is_some()))
            .sum::<usize>()
            + self
                .deletes
                .iter()
                .chain([&self.global])
                .map(PartitionDeletes::len)
                .sum::<usize>()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of the entry of `named` for `location`, whose hash is `hash`.
    fn named_entry(&self, hash: u64, location: &FileLocation) -> Option<usize> {
        let is_it = |(entry_hash, at): &(u64, u32)| {
            *entry_hash == hash
                && self
                    .named
                    .get(*at as usize)
                    .is_some_and(|(named, _)| named == location)
        };
        let (_, at) = self.named_by_hash.find(hash, is_it)?;
        Some(*at as usize)
    }

    /// The deletes that name `location`.
    fn named(&self, location: &FileLocation) -> Option<&Named> {
        if self.named.is_empty() {
            return None;
        }
        let at = self.named_entry(self.hasher.hash_one(location), location)?;
        self.named.get(at).map(|(_, named)| named)
    }

    /// The deletes that name `location`, an empty entry made for it when there is none.
    fn named_mut(&mut self, location: &FileLocation) -> Result<&mut Named> {
        let hash = self.hasher.hash_one(location);
        let at = match self.named_entry(hash, location) {
            Some(at) => at,
            None => {
                let at = self.named.len();
                let Ok(number) = u32::try_from(at) else {
                    return exec_err!("more than {} data files named by delete files", u32::MAX);
                };
                self.named.push((location.clone(), Named::default()));
                self.named_by_hash
                    .insert_unique(hash, (hash, number), |(entry_hash, _)| *entry_hash);
                at
            }
        };
        let entries = self.named.len();
        match self.named.get_mut(at) {
            Some((_, named)) => Ok(named),
            None => internal_err!("delete index entry {at} of {entries} is missing"),
        }
    }

    /// The group of `partition` of spec `spec_id`.
    fn group(&self, spec_id: i32, partition: &Struct) -> Option<usize> {
        let hash = self.hasher.hash_one((spec_id, partition));
        let is_it = |at: &u32| {
            self.groups.get(*at as usize).is_some_and(|group| {
                group.spec_id == spec_id && same_values(&group.partition, partition)
            })
        };
        self.by_hash.find(hash, is_it).map(|&at| at as usize)
    }

    /// A new empty group for `partition` of spec `spec_id`.
    fn add_group(&mut self, spec_id: i32, partition: &Struct) -> Result<usize> {
        let at = self.groups.len();
        let Ok(number) = u32::try_from(at) else {
            return exec_err!("more than {} partitions with delete files", u32::MAX);
        };
        self.groups.push(PartitionGroup {
            spec_id,
            partition: partition.clone(),
            given: Given::default(),
        });
        self.deletes.push(PartitionDeletes::default());
        let (groups, hasher) = (&self.groups, &self.hasher);
        let hash_of = |at: &u32| match groups.get(*at as usize) {
            Some(group) => hasher.hash_one((group.spec_id, &group.partition)),
            None => 0,
        };
        self.by_hash
            .insert_unique(hasher.hash_one((spec_id, partition)), number, hash_of);
        Ok(at)
    }

    /// The deletes that apply to `data`. Position deletes: those naming it, the global
    /// ones, its partition's, then its deletion vector; equality deletes: the global ones,
    /// then its partition's; each part by sequence number.
    pub fn deletes(&mut self, data: DataFileKey<'_>) -> Arc<FileDeletes> {
        let shared = self.partition_deletes(data);
        let at_least = Newer::AtLeast(data.sequence_number);
        let (named, vector) = match self.named(data.location) {
            Some(Named { position, vector }) => (
                position.files_from(position.start(at_least)),
                vector
                    .as_ref()
                    .filter(|vector| vector.sequence_number >= data.sequence_number),
            ),
            None => (&[][..], None),
        };
        if named.is_empty() && vector.is_none() {
            return shared;
        }
        let position = named
            .iter()
            .chain(&shared.position)
            .chain(vector)
            .cloned()
            .collect();
        Arc::new(FileDeletes {
            position,
            equality: shared.equality.clone(),
        })
    }

    /// The deletes of `data` that come from partitions: what the first data file of its
    /// partition with its sequence number was given.
    fn partition_deletes(&mut self, data: DataFileKey<'_>) -> Arc<FileDeletes> {
        let sequence = data.sequence_number;
        let global = &self.global;
        let own = self
            .group(data.spec_id, data.partition)
            .and_then(|at| Some((self.groups.get_mut(at)?, self.deletes.get(at)?)));
        match own {
            Some((group, own)) => group
                .given
                .get_or_make(sequence, || FileDeletes::of(&[global, own], sequence)),
            // A data file of a partition without deletes: only the global ones apply.
            None => self
                .global_given
                .get_or_make(sequence, || FileDeletes::of(&[global], sequence)),
        }
    }
}

#[cfg(test)]
mod tests;
