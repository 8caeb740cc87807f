//! [`FileSplit`]: the facts of one byte range of one data file (seed §3.3).
//!
//! A split is a byte range `[start, start + length)` of one file. A row group belongs to the
//! split that contains its midpoint, so the splits of a file never overlap and never miss a
//! row group (see [`crate::parquet::row_groups`]).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use datafusion::common::ScalarValue;
use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;

/// Format-specific facts an adapter attaches to a split (bucket conversion, delete files…).
pub trait SplitExtension: Any + fmt::Debug + Send + Sync {}

/// One byte range of one data file, with the constants of that file.
#[derive(Debug, Clone)]
pub struct FileSplit {
    /// Identity of the file in its object store (row ids, delete matching).
    pub file_path: Path,
    /// The file as the table or the user wrote it (`/wh/t/a.parquet`, `s3://b/a.parquet`, a
    /// path as an Iceberg manifest has it), for messages; see [`Self::display_path`].
    pub written_path: Option<Arc<str>>,
    /// Where to read the bytes when different from `file_path`.
    pub read_path: Option<Path>,
    /// The object store of the file when it is not the scan's (files of one table in
    /// several buckets); `None`: the scan's store.
    pub store: Option<ObjectStoreUrl>,
    /// First byte of the range.
    pub start: u64,
    /// Length of the range in bytes.
    pub length: u64,
    /// Size of the whole file.
    pub file_size: u64,
    /// When the file was last modified, when the planner knows (a listing). With the size,
    /// it tells whether a footer kept in the session's metadata cache is still the file's;
    /// `None`: footers of the file are not cached.
    pub last_modified: Option<DateTime<Utc>>,
    /// Partition values as written in the path; `None` is SQL NULL. Typed at prepare time.
    /// Shared by the splits of one partition.
    pub partition_keys: Arc<[(String, Option<String>)]>,
    /// Values of regular columns this file does not store, by column name (Iceberg: the
    /// identity partition value of its spec, else the column's `initial-default`); a column
    /// missing from the file and not listed here reads as NULL.
    pub missing_values: Vec<(String, ScalarValue)>,
    /// Values every row of the file has in these regular columns, stored or not (Iceberg
    /// identity-partition values): read as constants, never decoded, and tested against the
    /// filters before the file is opened.
    pub known_values: Vec<(String, ScalarValue)>,
    /// Info column values by key (`$path`, `$file_size`, …; see
    /// [`crate::handle::ColumnRole::Synthesized`]), typed by the adapter that plans the split.
    pub info_columns: Vec<(String, ScalarValue)>,
    /// Adapter-specific facts.
    pub extension: Option<Arc<dyn SplitExtension>>,
}

impl FileSplit {
    /// A split covering the whole file.
    pub fn whole_file(file_path: Path, file_size: u64) -> Self {
        Self {
            file_path,
            written_path: None,
            read_path: None,
            store: None,
            start: 0,
            length: file_size,
            file_size,
            last_modified: None,
            partition_keys: Arc::default(),
            missing_values: vec![],
            known_values: vec![],
            info_columns: vec![],
            extension: None,
        }
    }

    /// The file as messages name it: as written ([`Self::written_path`]), else its path in
    /// the object store.
    pub fn display_path(&self) -> &str {
        self.written_path
            .as_deref()
            .unwrap_or_else(|| self.file_path.as_ref())
    }

    /// The path to open.
    pub fn read_path(&self) -> &Path {
        self.read_path.as_ref().unwrap_or(&self.file_path)
    }

    /// Cuts `file` into splits of at most `max_bytes` (at least one split).
    pub fn ranges(self, max_bytes: u64) -> Vec<FileSplit> {
        let max_bytes = max_bytes.max(1);
        if self.file_size <= max_bytes {
            return vec![self];
        }
        (0..self.file_size)
            .step_by(max_bytes as usize)
            .map(|start| FileSplit {
                start,
                length: max_bytes.min(self.file_size - start),
                ..self.clone()
            })
            .collect()
    }

    /// The info column value under `key`, if the split has it.
    pub fn info_value(&self, key: &str) -> Option<&ScalarValue> {
        self.info_columns
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The value every row of the file has in regular column `name`, when it is known.
    pub fn known_value(&self, name: &str) -> Option<&ScalarValue> {
        self.known_values
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// The value of regular column `name` when this file does not store it.
    pub fn missing_value(&self, name: &str) -> Option<&ScalarValue> {
        self.missing_values
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// The file name: the last segment of `file_path` (Hive row id's `row_group_id`).
    pub fn file_name(&self) -> &str {
        self.file_path.filename().unwrap_or(self.file_path.as_ref())
    }

    /// The partition value of `key`, if the split has that key.
    pub fn partition_value(&self, key: &str) -> Option<Option<&str>> {
        self.partition_keys
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_deref())
    }
}

/// `path` of the store `store` the way users write it: an absolute path for the local file
/// system (`/wh/t/a.parquet`), else a URL (`s3://bucket/wh/t/a.parquet`).
pub fn written_path(store: &ObjectStoreUrl, path: &Path) -> Arc<str> {
    match store.as_str() {
        "file:///" => format!("/{path}").into(),
        url => format!("{url}{path}").into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_tile_the_file() {
        let split = FileSplit::whole_file(Path::from("a"), 10);
        let parts = split.clone().ranges(4);
        let covered: Vec<(u64, u64)> = parts.iter().map(|s| (s.start, s.length)).collect();
        assert_eq!(covered, vec![(0, 4), (4, 4), (8, 2)]);
        assert_eq!(split.ranges(100).len(), 1);
    }

    #[test]
    fn written_paths_are_what_users_write() {
        let path = Path::from("wh/t/a.parquet");
        let local = written_path(&ObjectStoreUrl::local_filesystem(), &path);
        assert_eq!(&*local, "/wh/t/a.parquet");
        let s3 = ObjectStoreUrl::parse("s3://bucket").unwrap();
        assert_eq!(&*written_path(&s3, &path), "s3://bucket/wh/t/a.parquet");
        let mut split = FileSplit::whole_file(path, 1);
        assert_eq!(split.display_path(), "wh/t/a.parquet");
        split.written_path = Some(local);
        assert_eq!(split.display_path(), "/wh/t/a.parquet");
    }
}
