//! Delete files (seed §10.2–§10.3; the Iceberg spec's "Scan Planning" and "Delete Formats"):
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
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone)]
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
    /// Its partition.
    pub partition: Struct,
    /// The one data file it applies to, when the writer said so.
    pub referenced_data_file: Option<FileLocation>,
    /// That data file as the manifest wrote it (messages).
    pub referenced_written: Option<String>,
    /// Rows (or deleted positions) it holds.
    pub record_count: u64,
    /// Its size in bytes.
    pub file_size: u64,
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

/// The live delete files of a snapshot, by the data files they apply to: deletion vectors
/// by the data file they reference (at most one each), the other files in manifest order.
#[derive(Debug, Clone, Default)]
pub struct DeleteIndex {
    files: Vec<Arc<DeleteFile>>,
    vectors: HashMap<FileLocation, Arc<DeleteFile>>,
}

impl DeleteIndex {
    /// Adds a live delete file. A second deletion vector for one data file is an error: a
    /// snapshot holds at most one (the spec; Java's `DeleteFileIndex` refuses it too).
    pub fn add(&mut self, file: DeleteFile) -> Result<()> {
        if !matches!(file.kind, DeleteKind::DeletionVector { .. }) {
            self.files.push(Arc::new(file));
            return Ok(());
        }
        let Some(data) = file.referenced_data_file.clone() else {
            return internal_err!(
                "deletion vector '{}' reached the delete index without its data file",
                file.written_path
            );
        };
        if let Some(other) = self.vectors.get(&data) {
            return exec_err!(
                "two deletion vectors for one data file ('{}' and '{}', both of '{}'): a \
                 snapshot may hold at most one per data file",
                other.written_path,
                file.written_path,
                file.referenced_written
                    .as_deref()
                    .unwrap_or(data.path.as_ref())
            );
        }
        self.vectors.insert(data, Arc::new(file));
        Ok(())
    }

    /// Number of delete files.
    pub fn len(&self) -> usize {
        self.files.len() + self.vectors.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The equality deletes that apply to `data`, in the order the manifests list them.
    pub fn equality_deletes(&self, data: DataFileKey<'_>) -> Vec<Arc<DeleteFile>> {
        self.files
            .iter()
            .filter(|d| {
                matches!(d.kind, DeleteKind::Equality { .. })
                    && d.sequence_number > data.sequence_number
                    && (d.unpartitioned || same_partition(d, data))
            })
            .cloned()
            .collect()
    }

    /// The position deletes and deletion vectors that apply to `data`.
    pub fn position_deletes(&self, data: DataFileKey<'_>) -> Vec<Arc<DeleteFile>> {
        let mut out: Vec<Arc<DeleteFile>> = self
            .files
            .iter()
            .filter(|d| {
                if d.kind != DeleteKind::Position || d.sequence_number < data.sequence_number {
                    return false;
                }
                match &d.referenced_data_file {
                    Some(referenced) => referenced == data.location,
                    None => d.unpartitioned || same_partition(d, data),
                }
            })
            .cloned()
            .collect();
        if let Some(vector) = self.vectors.get(data.location)
            && vector.sequence_number >= data.sequence_number
        {
            out.push(Arc::clone(vector));
        }
        out
    }
}

/// The top-level column of a delete file's Parquet schema with field id `id`.
fn root_with_field_id(roots: &[parquet::schema::types::TypePtr], id: i32) -> Option<usize> {
    roots.iter().position(|f| {
        let info = f.get_basic_info();
        info.has_id() && info.id() == id
    })
}

fn same_partition(d: &DeleteFile, data: DataFileKey<'_>) -> bool {
    d.spec_id == data.spec_id && same_values(&d.partition, data.partition)
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
        }
    }

    #[test]
    fn sequence_number_and_partition_rules() {
        let eq = || DeleteKind::Equality { field_ids: vec![1] };
        let mut index = DeleteIndex::default();
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
        assert_eq!(seqs(index.equality_deletes(key(&part_a))), [2, 3]);
        assert_eq!(seqs(index.equality_deletes(key(&part_b))), [2]);
        // Same sequence number: an equality delete does not apply, a position delete does.
        let mut same = DeleteIndex::default();
        same.add(delete(eq(), 1, None)).unwrap();
        same.add(delete(DeleteKind::Position, 1, Some("a")))
            .unwrap();
        assert!(same.equality_deletes(key(&part_a)).is_empty());
        assert_eq!(same.position_deletes(key(&part_a)).len(), 1);
        assert!(same.position_deletes(key(&part_b)).is_empty());
        // The spec: a position delete of an unpartitioned spec applies to every partition.
        let mut unpartitioned = DeleteIndex::default();
        unpartitioned
            .add(delete(DeleteKind::Position, 1, None))
            .unwrap();
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
        let mut dvs = DeleteIndex::default();
        dvs.add(dv.clone()).unwrap();
        assert!(dvs.position_deletes(key(&part_a)).is_empty());
        // A second deletion vector for the same data file is an error naming both.
        let mut second = dv;
        second.written_path = "d2".into();
        second.referenced_written = Some("/other".into());
        let err = dvs.add(second).unwrap_err().to_string();
        assert!(
            err.contains("two deletion vectors for one data file ('d' and 'd2', both of '/other')"),
            "{err}"
        );
    }
}
