//! The split lists of a scan as a plan carries them to another process: each file once,
//! each split a file number and its byte range.
//!
//! A scan's lists hold every split of a stage, and every task of the stage decodes them
//! all, so their size is what a plan of many splits costs to ship (and what must fit a
//! gRPC message). Written split by split, each split repeated its file's path twice (as
//! stored and as written) and its values. Here the facts of a file — path, written path,
//! store, size, modification time, values, adapter key, format — are written once, in the
//! order the lists first name the files:
//!
//! * a path is the length of the prefix it shares with the path of the file before and the
//!   rest (the files of one directory share most of theirs);
//! * a written path that is what [`written_path`] makes of the store and the path (Hive's,
//!   mostly) is not written at all;
//! * a value's column is a number into one list of names.
//!
//! A split is then its file's number and its range: a few bytes. Decoding builds the
//! splits again through [`FileSplit::with_range`], which checks each range against its
//! file, and refuses a prefix longer than the path before or a column number past the
//! names: a damaged plan is an error, never other splits.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use datafusion::common::{Result, exec_err};
use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;
use serde::{Deserialize, Serialize};

use super::{AdapterKey, FileFormat, FileSplit, SplitValue, SplitValues, written_path};

/// A scan's split lists, one per output partition, as they cross to another process.
#[derive(Debug, Serialize, Deserialize)]
pub struct EncodedSplits {
    /// The columns of the files' values.
    columns: Vec<String>,
    files: Vec<FileEntry>,
    /// Per partition, its splits in order.
    lists: Vec<Vec<SplitRange>>,
}

/// The facts of one file, shared by its splits.
#[derive(Debug, Serialize, Deserialize)]
struct FileEntry {
    path: Prefixed,
    written: Written,
    #[serde(with = "crate::wire::opt_store_url")]
    store: Option<ObjectStoreUrl>,
    file_size: u64,
    #[serde(with = "crate::wire::opt_time")]
    last_modified: Option<DateTime<Utc>>,
    /// `(column number, value)`.
    values: Vec<(u32, SplitValue)>,
    adapter: Option<AdapterKey>,
    format: FileFormat,
}

/// A file's written path.
#[derive(Debug, Serialize, Deserialize)]
enum Written {
    /// None was given.
    Absent,
    /// What [`written_path`] makes of the file's store and path.
    Derived,
    /// Another text, prefixed against the written path of the file before.
    Given(Prefixed),
}

/// A text as the number of bytes it shares with the text before it and the rest.
#[derive(Debug, Serialize, Deserialize)]
struct Prefixed {
    shared: u32,
    rest: String,
}

impl Prefixed {
    /// `text` against `before`, cut on a character boundary.
    fn new(text: &str, before: &str) -> Self {
        // A path longer than 4 GiB shares what fits.
        let mut shared = text
            .bytes()
            .zip(before.bytes())
            .take_while(|(a, b)| a == b)
            .count()
            .min(u32::MAX as usize);
        while !text.is_char_boundary(shared) {
            shared -= 1;
        }
        Self {
            shared: shared as u32,
            rest: text[shared..].to_owned(),
        }
    }

    /// The text, given the one before it.
    fn text(&self, before: &str) -> Result<String> {
        let shared = self.shared as usize;
        match before.get(..shared) {
            Some(prefix) => Ok(format!("{prefix}{}", self.rest)),
            None => exec_err!(
                "a scan's split lists are damaged: a path shares {shared} bytes with one of {} \
                 ('{before}')",
                before.len()
            ),
        }
    }
}

/// One split: its file's number and its byte range.
#[derive(Debug, Serialize, Deserialize)]
struct SplitRange {
    file: u32,
    start: u64,
    length: u64,
}

/// Whether `a` and `b` are splits of one file with the same facts (their ranges aside).
fn same_file(a: &FileSplit, b: &FileSplit) -> bool {
    a.file_path == b.file_path
        && a.written_path == b.written_path
        && a.store == b.store
        && a.file_size == b.file_size
        && a.last_modified == b.last_modified
        && a.values == b.values
        && a.adapter == b.adapter
        && a.format == b.format
}

impl EncodedSplits {
    /// The lists of a scan whose files are in `scan_store` unless a split names its own.
    pub fn new<L: AsRef<[Arc<FileSplit>]>>(
        lists: &[L],
        scan_store: &ObjectStoreUrl,
    ) -> Result<Self> {
        let mut encoded = Self {
            columns: vec![],
            files: vec![],
            lists: Vec::with_capacity(lists.len()),
        };
        let mut columns: HashMap<&str, u32> = HashMap::new();
        // The files met so far, by path: (number, a split of it).
        let mut files: HashMap<&str, Vec<(u32, &FileSplit)>> = HashMap::new();
        let (mut path_before, mut written_before) = ("", "");
        for list in lists {
            let list = list.as_ref();
            let mut ranges = Vec::with_capacity(list.len());
            for split in list {
                let met = files.entry(split.file_path.as_ref()).or_default();
                let file = match met.iter().find(|(_, other)| same_file(other, split)) {
                    Some((number, _)) => *number,
                    None => {
                        let Ok(number) = u32::try_from(encoded.files.len()) else {
                            return exec_err!("more than {} files in one scan", u32::MAX);
                        };
                        met.push((number, split));
                        let store = split.store.as_ref().unwrap_or(scan_store);
                        let written = match split.written_path.as_deref() {
                            None => Written::Absent,
                            Some(w) if *w == *written_path(store, &split.file_path) => {
                                Written::Derived
                            }
                            Some(w) => {
                                let given = Prefixed::new(w, written_before);
                                written_before = w;
                                Written::Given(given)
                            }
                        };
                        let path = split.file_path.as_ref();
                        let prefixed = Prefixed::new(path, path_before);
                        path_before = path;
                        let mut values = Vec::with_capacity(split.values.0.len());
                        for (column, value) in split.values.iter() {
                            let next = columns.len() as u32;
                            let at = *columns.entry(column).or_insert(next);
                            if at == next {
                                encoded.columns.push(column.to_owned());
                            }
                            values.push((at, value.clone()));
                        }
                        encoded.files.push(FileEntry {
                            path: prefixed,
                            written,
                            store: split.store.clone(),
                            file_size: split.file_size,
                            last_modified: split.last_modified,
                            values,
                            adapter: split.adapter,
                            format: split.format,
                        });
                        number
                    }
                };
                ranges.push(SplitRange {
                    file,
                    start: split.start,
                    length: split.length,
                });
            }
            encoded.lists.push(ranges);
        }
        Ok(encoded)
    }

    /// The lists again, each file's splits sharing its values; `scan_store` as given to
    /// [`Self::new`].
    pub fn into_lists(self, scan_store: &ObjectStoreUrl) -> Result<Vec<Vec<Arc<FileSplit>>>> {
        let mut files = Vec::with_capacity(self.files.len());
        let (mut path_before, mut written_before) = (String::new(), String::new());
        for entry in self.files {
            let path_text = entry.path.text(&path_before)?;
            let file_path = match Path::parse(&path_text) {
                Ok(path) => path,
                Err(e) => {
                    return exec_err!("a scan's split lists name a bad path '{path_text}': {e}");
                }
            };
            path_before = path_text;
            let written_path = match entry.written {
                Written::Absent => None,
                Written::Derived => Some(written_path(
                    entry.store.as_ref().unwrap_or(scan_store),
                    &file_path,
                )),
                Written::Given(given) => {
                    let text = given.text(&written_before)?;
                    let written: Arc<str> = Arc::from(text.as_str());
                    written_before = text;
                    Some(written)
                }
            };
            let mut values = Vec::with_capacity(entry.values.len());
            for (column, value) in entry.values {
                match self.columns.get(column as usize) {
                    Some(name) => values.push((name.clone(), value)),
                    None => {
                        return exec_err!(
                            "a scan's split lists are damaged: value column {column} of {}",
                            self.columns.len()
                        );
                    }
                }
            }
            files.push(FileSplit {
                file_path,
                written_path,
                store: entry.store,
                start: 0,
                length: entry.file_size,
                file_size: entry.file_size,
                last_modified: entry.last_modified,
                values: SplitValues(values.into()),
                adapter: entry.adapter,
                format: entry.format,
            });
        }
        self.lists
            .into_iter()
            .map(|list| {
                list.into_iter()
                    .map(|range| match files.get(range.file as usize) {
                        Some(file) => Ok(Arc::new(file.with_range(range.start, range.length)?)),
                        None => exec_err!(
                            "a scan's split lists are damaged: file {} of {}",
                            range.file,
                            files.len()
                        ),
                    })
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
