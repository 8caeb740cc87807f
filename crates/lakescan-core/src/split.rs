//! [`FileSplit`]: the facts of one byte range of one data file.
//!
//! A split is a byte range `[start, start + length)` of one file. A row group belongs to the
//! split that contains its midpoint, so the splits of a file never overlap and never miss a
//! row group (see [`crate::parquet::row_groups`]).
//!
//! A split is plan data: immutable once built ([`FileSplitBuilder::build`] checks it),
//! shared as `Arc<FileSplit>` between the plan, the partitions that read it and the tasks
//! that preload it, and made only of values that encode to bytes (paths, numbers, scalars),
//! so a plan can carry its splits to another process. What a table format knows of a split
//! beyond that (Hive's bucket conversion, Iceberg's delete files) is a typed value its
//! [`crate::reader::TableAdapter`] owns; the split names it by an [`AdapterKey`].
//! Nothing the reader learns (deleted rows, footers) is written back into the split.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use datafusion::common::{Result, ScalarValue, internal_err};
use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;
use serde::{Deserialize, Serialize};

mod lists;

pub use lists::EncodedSplits;

/// What a value of a split stands for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SplitValue {
    /// A partition value as written in the path (`None`: SQL NULL), typed when the split is
    /// bound to the scan.
    Partition(Option<String>),
    /// The value every row of the file has in this regular column, stored or not (Iceberg
    /// identity-partition values): read as a constant, never decoded, and tested against the
    /// filters before the file is opened.
    Known(#[serde(with = "crate::wire::scalar")] ScalarValue),
    /// The value of this regular column when the file does not store it (Iceberg: the
    /// identity partition value of its spec, else the column's `initial-default`). A column
    /// missing from the file with no such value reads as NULL.
    Missing(#[serde(with = "crate::wire::scalar")] ScalarValue),
    /// The value of an info column (`$path`, `$file_size`, …; see
    /// [`crate::handle::ColumnRole::Info`]), typed by the adapter that plans the split.
    Info(#[serde(with = "crate::wire::scalar")] ScalarValue),
}

/// The kind of a [`SplitValue`], without its value: the key of a value is (kind, column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// [`SplitValue::Partition`].
    Partition,
    /// [`SplitValue::Known`].
    Known,
    /// [`SplitValue::Missing`].
    Missing,
    /// [`SplitValue::Info`].
    Info,
}

impl SplitValue {
    /// The kind of this value.
    pub fn kind(&self) -> ValueKind {
        match self {
            SplitValue::Partition(_) => ValueKind::Partition,
            SplitValue::Known(_) => ValueKind::Known,
            SplitValue::Missing(_) => ValueKind::Missing,
            SplitValue::Info(_) => ValueKind::Info,
        }
    }
}

/// The values of one split by column (partition keys, known and missing columns, info
/// columns): at most one value per kind and column. Shared by the splits of one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitValues(Arc<[(String, SplitValue)]>);

impl SplitValues {
    /// Every value with its column, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &SplitValue)> {
        self.0.iter().map(|(c, v)| (c.as_str(), v))
    }

    fn find(&self, kind: ValueKind, column: &str) -> Option<&SplitValue> {
        self.0
            .iter()
            .find(|(c, v)| v.kind() == kind && c == column)
            .map(|(_, v)| v)
    }

    fn scalar(&self, kind: ValueKind, column: &str) -> Option<&ScalarValue> {
        match self.find(kind, column)? {
            SplitValue::Known(v) | SplitValue::Missing(v) | SplitValue::Info(v) => Some(v),
            SplitValue::Partition(_) => None,
        }
    }

    /// The partition value of `key` (`Some(None)`: NULL), if the split has that key.
    pub fn partition(&self, key: &str) -> Option<Option<&str>> {
        match self.find(ValueKind::Partition, key)? {
            SplitValue::Partition(v) => Some(v.as_deref()),
            _ => None,
        }
    }

    /// The value every row of the file has in regular column `name`, when it is known.
    pub fn known(&self, name: &str) -> Option<&ScalarValue> {
        self.scalar(ValueKind::Known, name)
    }

    /// The value of regular column `name` when this file does not store it.
    pub fn missing(&self, name: &str) -> Option<&ScalarValue> {
        self.scalar(ValueKind::Missing, name)
    }

    /// The info column value under `key`, if the split has it.
    pub fn info(&self, key: &str) -> Option<&ScalarValue> {
        self.scalar(ValueKind::Info, key)
    }
}

/// The name of a value a table format's adapter keeps for a split: made only by its
/// [`AdapterTable`], so a split can name no entry the table does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AdapterKey(u32);

/// The values a table format's adapter keeps for its splits (Hive: bucket conversions,
/// Iceberg: the delete files of a data file), each named by the [`AdapterKey`] a split
/// carries; splits of one file usually share one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterTable<T> {
    entries: Vec<T>,
}

impl<T> Default for AdapterTable<T> {
    fn default() -> Self {
        Self { entries: vec![] }
    }
}

impl<T> AdapterTable<T> {
    /// Adds `entry`; an error past `u32::MAX` entries.
    pub fn push(&mut self, entry: T) -> Result<AdapterKey> {
        match u32::try_from(self.entries.len()) {
            Ok(i) => {
                self.entries.push(entry);
                Ok(AdapterKey(i))
            }
            Err(_) => internal_err!("more than {} adapter entries in one scan", u32::MAX),
        }
    }

    /// The key of an entry equal to `entry`, added when there is none.
    pub fn intern(&mut self, entry: T) -> Result<AdapterKey>
    where
        T: PartialEq,
    {
        match self.entries.iter().position(|e| *e == entry) {
            // The position of an entry of a table whose keys all fit u32.
            Some(i) => Ok(AdapterKey(i as u32)),
            None => self.push(entry),
        }
    }

    /// The entry `split` names, if it names one; an internal error when its key is not one
    /// of this table's (a plan decoded with another table).
    pub fn get(&self, split: &FileSplit) -> Result<Option<&T>> {
        let Some(AdapterKey(key)) = split.adapter else {
            return Ok(None);
        };
        match self.entries.get(key as usize) {
            Some(entry) => Ok(Some(entry)),
            None => internal_err!(
                "split of '{}' names adapter entry {key} of {}",
                split.display_path(),
                self.entries.len()
            ),
        }
    }

    /// Whether it has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// How a data file stores its rows: which reader reads it (each format implements
/// `format::FileFormatReader`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FileFormat {
    /// Apache Parquet (the default).
    #[default]
    Parquet,
    /// Apache ORC.
    Orc,
    /// Avro object container files.
    Avro,
}

impl FileFormat {
    /// The format's name in messages and options (`parquet`, `orc`, `avro`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Parquet => "parquet",
            Self::Orc => "orc",
            Self::Avro => "avro",
        }
    }

    /// The format's name in prose (`Parquet`, `ORC`, `Avro`).
    pub fn display_name(self) -> &'static str {
        match self {
            Self::Parquet => "Parquet",
            Self::Orc => "ORC",
            Self::Avro => "Avro",
        }
    }

    /// The format of a file from its first and last bytes (`head` and `tail`, any lengths):
    /// Parquet's `PAR1`, ORC's `ORC` head magic, Avro's `Obj\x01`; `None` when none matches.
    pub fn from_magic(head: &[u8], tail: &[u8]) -> Option<Self> {
        if head.starts_with(b"PAR1") && tail.ends_with(b"PAR1") {
            Some(Self::Parquet)
        } else if head.starts_with(b"ORC") {
            Some(Self::Orc)
        } else if head.starts_with(b"Obj\x01") {
            Some(Self::Avro)
        } else {
            None
        }
    }
}

impl std::fmt::Display for FileFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for FileFormat {
    type Err = datafusion::common::DataFusionError;

    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "parquet" => Ok(Self::Parquet),
            "orc" => Ok(Self::Orc),
            "avro" => Ok(Self::Avro),
            other => datafusion::common::plan_err!(
                "unknown file format '{other}': expected 'parquet', 'orc' or 'avro'"
            ),
        }
    }
}

/// One byte range of one data file, with the values of that file. Built by
/// [`FileSplit::builder`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSplit {
    #[serde(with = "crate::wire::path")]
    file_path: Path,
    written_path: Option<Arc<str>>,
    #[serde(with = "crate::wire::opt_store_url")]
    store: Option<ObjectStoreUrl>,
    start: u64,
    length: u64,
    file_size: u64,
    #[serde(with = "crate::wire::opt_time")]
    last_modified: Option<DateTime<Utc>>,
    values: SplitValues,
    adapter: Option<AdapterKey>,
    format: FileFormat,
}

/// Builds a [`FileSplit`]; [`Self::build`] checks it.
#[derive(Debug, Clone)]
pub struct FileSplitBuilder {
    split: FileSplit,
    range: Option<(u64, u64)>,
    values: Vec<(String, SplitValue)>,
}

impl FileSplitBuilder {
    /// The file as the table or the user wrote it (`/wh/t/a.parquet`, `s3://b/a.parquet`, a
    /// path as an Iceberg manifest has it), for messages; see [`FileSplit::display_path`].
    pub fn written_path(mut self, written: impl Into<Arc<str>>) -> Self {
        self.split.written_path = Some(written.into());
        self
    }

    /// The object store of the file when it is not the scan's (files of one table in
    /// several buckets).
    pub fn store(mut self, store: ObjectStoreUrl) -> Self {
        self.split.store = Some(store);
        self
    }

    /// When the file was last modified (a listing's): with the size, it tells whether a
    /// footer kept in the session's metadata cache is still the file's. Without it, footers
    /// of the file are not cached.
    pub fn last_modified(mut self, at: DateTime<Utc>) -> Self {
        self.split.last_modified = Some(at);
        self
    }

    /// Reads `[start, start + length)` only (the whole file by default).
    pub fn range(mut self, start: u64, length: u64) -> Self {
        self.range = Some((start, length));
        self
    }

    /// Adds `value` of `column`.
    pub fn value(mut self, column: impl Into<String>, value: SplitValue) -> Self {
        self.values.push((column.into(), value));
        self
    }

    /// Adds the values of `values`.
    pub fn values(mut self, values: impl IntoIterator<Item = (String, SplitValue)>) -> Self {
        self.values.extend(values);
        self
    }

    /// How the file stores its rows (Parquet by default).
    pub fn format(mut self, format: FileFormat) -> Self {
        self.split.format = format;
        self
    }

    /// The table format's value for this split, kept by its adapter.
    pub fn adapter(mut self, key: AdapterKey) -> Self {
        self.split.adapter = Some(key);
        self
    }

    /// The split. An error when the range is not inside the file or a column has two values
    /// of one kind.
    pub fn build(self) -> Result<FileSplit> {
        let Self {
            mut split,
            range,
            values,
        } = self;
        for (i, (column, value)) in values.iter().enumerate() {
            let kind = value.kind();
            if values[..i]
                .iter()
                .any(|(c, v)| c == column && v.kind() == kind)
            {
                return internal_err!(
                    "split of '{}' has two {kind:?} values of column '{column}'",
                    split.display_path()
                );
            }
        }
        split.values = SplitValues(values.into());
        match range {
            Some((start, length)) => split.with_range(start, length),
            None => Ok(split),
        }
    }
}

impl FileSplit {
    /// A split of the file at `file_path` (its identity in its object store), `file_size`
    /// bytes long: the whole file unless [`FileSplitBuilder::range`] says otherwise.
    pub fn builder(file_path: Path, file_size: u64) -> FileSplitBuilder {
        FileSplitBuilder {
            split: FileSplit {
                file_path,
                written_path: None,
                store: None,
                start: 0,
                length: file_size,
                file_size,
                last_modified: None,
                values: SplitValues::default(),
                adapter: None,
                format: FileFormat::Parquet,
            },
            range: None,
            values: vec![],
        }
    }

    /// A split covering the whole file, with no values.
    pub fn whole_file(file_path: Path, file_size: u64) -> Self {
        Self::builder(file_path, file_size).split
    }

    /// The file's identity in its object store (row ids, delete matching, reading).
    pub fn file_path(&self) -> &Path {
        &self.file_path
    }

    /// The file as messages name it: as written, else its path in the object store.
    pub fn display_path(&self) -> &str {
        self.written_path
            .as_deref()
            .unwrap_or_else(|| self.file_path.as_ref())
    }

    /// The object store of the file when it is not the scan's.
    pub fn store(&self) -> Option<&ObjectStoreUrl> {
        self.store.as_ref()
    }

    /// How the file stores its rows: which reader reads it.
    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// First byte of the range.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Length of the range in bytes.
    pub fn length(&self) -> u64 {
        self.length
    }

    /// Size of the whole file.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// When the file was last modified, when the planner knows.
    pub fn last_modified(&self) -> Option<DateTime<Utc>> {
        self.last_modified
    }

    /// The split's values by column.
    pub fn values(&self) -> &SplitValues {
        &self.values
    }

    /// The table format's value for this split, if it has one.
    pub fn adapter(&self) -> Option<AdapterKey> {
        self.adapter
    }

    /// Cuts this split's file into splits of at most `max_bytes` (at least one split), each
    /// with this split's values.
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

    /// This split's values over `[start, start + length)` of the same file; an error when
    /// the range is not inside the file.
    pub fn with_range(&self, start: u64, length: u64) -> Result<FileSplit> {
        let fits = start
            .checked_add(length)
            .is_some_and(|end| end <= self.file_size);
        if !fits {
            return internal_err!(
                "split [{start}, +{length}) of '{}' is not inside the file ({} bytes)",
                self.display_path(),
                self.file_size
            );
        }
        Ok(FileSplit {
            start,
            length,
            ..self.clone()
        })
    }

    /// The file name: the last segment of the file's path (Hive row id's `row_group_id`).
    pub fn file_name(&self) -> &str {
        self.file_path.filename().unwrap_or(self.file_path.as_ref())
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
        let covered: Vec<(u64, u64)> = parts.iter().map(|s| (s.start(), s.length())).collect();
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
        let split = FileSplit::whole_file(path.clone(), 1);
        assert_eq!(split.display_path(), "wh/t/a.parquet");
        let split = FileSplit::builder(path, 1)
            .written_path(local)
            .build()
            .unwrap();
        assert_eq!(split.display_path(), "/wh/t/a.parquet");
    }

    #[test]
    fn the_builder_refuses_a_range_outside_the_file_and_two_values_of_a_kind() {
        let build = |start, length| {
            FileSplit::builder(Path::from("a"), 10)
                .range(start, length)
                .build()
        };
        assert!(build(0, 10).is_ok());
        assert!(build(4, 6).is_ok());
        let err = build(4, 7).unwrap_err().to_string();
        assert!(err.contains("is not inside the file (10 bytes)"), "{err}");
        assert!(build(u64::MAX, 2).is_err());
        let twice = FileSplit::builder(Path::from("a"), 10)
            .value("p", SplitValue::Partition(Some("1".into())))
            .value("p", SplitValue::Known(ScalarValue::Int32(Some(1))))
            .value("p", SplitValue::Partition(None))
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            twice.contains("two Partition values of column 'p'"),
            "{twice}"
        );
    }

    #[test]
    fn values_are_found_by_kind_and_column() {
        let split = FileSplit::builder(Path::from("a"), 10)
            .value("p", SplitValue::Partition(None))
            .value("x", SplitValue::Known(ScalarValue::Int32(Some(1))))
            .value("x", SplitValue::Missing(ScalarValue::Int32(Some(2))))
            .value("$path", SplitValue::Info(ScalarValue::from("a")))
            .build()
            .unwrap();
        let values = split.values();
        assert_eq!(values.partition("p"), Some(None));
        assert_eq!(values.partition("x"), None);
        assert_eq!(values.known("x"), Some(&ScalarValue::Int32(Some(1))));
        assert_eq!(values.missing("x"), Some(&ScalarValue::Int32(Some(2))));
        assert_eq!(values.info("$path"), Some(&ScalarValue::from("a")));
        assert_eq!(values.info("p"), None);
    }

    #[test]
    fn a_split_names_an_entry_of_its_adapter_table() {
        let mut table = AdapterTable::default();
        let a = table.intern("a").unwrap();
        let b = table.intern("b").unwrap();
        assert_eq!(table.intern("a").unwrap(), a, "equal entries share a key");
        let plain = FileSplit::whole_file(Path::from("f"), 1);
        assert_eq!(table.get(&plain).unwrap(), None);
        let second = FileSplit::builder(Path::from("f"), 1)
            .adapter(b)
            .build()
            .unwrap();
        assert_eq!(table.get(&second).unwrap(), Some(&"b"));
        let mut shorter = AdapterTable::default();
        shorter.push("a").unwrap();
        let err = shorter.get(&second).unwrap_err().to_string();
        assert!(err.contains("names adapter entry 1 of 1"), "{err}");
    }
}
