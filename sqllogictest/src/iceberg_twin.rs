//! The ORC and Avro twins of the Iceberg `.slt` files: a copy of the repository's Iceberg
//! fixtures (`testdata/duckdb-iceberg`, `testdata/writers`) in which every Parquet data or
//! delete file a manifest names is rewritten as an ORC or Avro file of the same name and
//! rows (Parquet row groups become ORC stripes; the field ids go into `iceberg.id`
//! attributes or the Avro schema, by `lakescan_iceberg_writer::encode`), and each manifest
//! entry naming one says so: `file_format`, the new `file_size_in_bytes`, and no
//! `split_offsets` (they were the Parquet row groups'). Everything else is copied as it is:
//! metadata JSON, manifest lists, deletion vectors, the manifests' other fields (bounds,
//! counts, partitions) and their Avro metadata keys, present or missing. A twin's `.slt`
//! file reads the copy as `$TESTDATA` and must give the same results.
//!
//! The manifests are rewritten with `apache-avro` (the `iceberg` crate's Avro library): its
//! generic values keep every field of whatever manifest schema the writer used, which the
//! `iceberg` crate's typed manifest writer would not (it writes its own schema and keys).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::orc_twin::ParquetRows;
use apache_avro::types::Value;
use apache_avro::{Codec, Reader, Schema, Writer};
use datafusion::common::{DataFusionError, Result};

/// The format the twin's Parquet files are rewritten in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TwinFormat {
    /// ORC files with `iceberg.id` attributes.
    Orc,
    /// Avro object container files with `field-id`s in their schema.
    Avro,
}

impl TwinFormat {
    /// The name a manifest's `file_format` gives it.
    fn manifest_name(self) -> &'static str {
        match self {
            Self::Orc => "ORC",
            Self::Avro => "AVRO",
        }
    }
}

/// The directories of `testdata/` holding Iceberg tables.
const ICEBERG_FIXTURES: &[&str] = &["duckdb-iceberg", "writers"];

/// A twin of the Iceberg fixtures, in a temporary directory removed when it drops.
#[derive(Debug)]
pub struct IcebergTwin {
    dir: tempfile::TempDir,
    /// Data and delete files rewritten.
    pub files: usize,
    /// Manifests rewritten.
    pub manifests: usize,
}

impl IcebergTwin {
    /// Copies the Iceberg fixtures of `testdata` and rewrites them in `format`.
    pub fn build(testdata: &Path, format: TwinFormat) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        for fixture in ICEBERG_FIXTURES {
            copy_dir(&testdata.join(fixture), &dir.path().join(fixture))?;
        }
        let mut manifests = Vec::new();
        find_avro(dir.path(), &mut manifests)?;
        manifests.sort();
        let mut rewriter = Rewriter {
            root: dir.path().to_path_buf(),
            format,
            sizes: HashMap::new(),
        };
        let mut rewritten = 0;
        for manifest in &manifests {
            rewritten += usize::from(rewriter.rewrite_manifest(manifest)?);
        }
        if rewriter.sizes.is_empty() {
            return Err(twin_error(
                dir.path(),
                "no manifest named a Parquet file: the twin would test nothing",
            ));
        }
        Ok(Self {
            files: rewriter.sizes.len(),
            manifests: rewritten,
            dir,
        })
    }

    /// The directory standing for `testdata/`.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Rewrites the manifests of one twin and the files they name.
struct Rewriter {
    root: PathBuf,
    format: TwinFormat,
    /// The new size of each file rewritten, by local path.
    sizes: HashMap<PathBuf, u64>,
}

impl Rewriter {
    /// Rewrites the Parquet files `manifest` names and their entries; false when it is not a
    /// manifest (a manifest list) or names no Parquet file.
    fn rewrite_manifest(&mut self, manifest: &Path) -> Result<bool> {
        let bytes = std::fs::read(manifest)?;
        let reader = Reader::new(&bytes[..]).map_err(|e| twin_error(manifest, e))?;
        let schema = reader.writer_schema().clone();
        let metadata = reader.user_metadata().clone();
        if !is_manifest(&schema) {
            return Ok(false);
        }
        let mut changed = false;
        let mut entries = Vec::new();
        for entry in reader {
            let mut entry = entry.map_err(|e| twin_error(manifest, e))?;
            changed |= self.rewrite_entry(manifest, &schema, &mut entry)?;
            entries.push(entry);
        }
        if !changed {
            return Ok(false);
        }
        let mut writer = Writer::with_codec(&schema, Vec::new(), Codec::Null);
        for (key, value) in &metadata {
            writer
                .add_user_metadata(key.clone(), value)
                .map_err(|e| twin_error(manifest, e))?;
        }
        for entry in &entries {
            writer
                .append_value_ref(entry)
                .map_err(|e| twin_error(manifest, e))?;
        }
        let out = writer.into_inner().map_err(|e| twin_error(manifest, e))?;
        std::fs::write(manifest, out)?;
        Ok(true)
    }

    /// Rewrites the file `entry` names when it is a Parquet file inside the twin, and the
    /// entry with it; whether it did.
    fn rewrite_entry(
        &mut self,
        manifest: &Path,
        schema: &Schema,
        entry: &mut Value,
    ) -> Result<bool> {
        let Some(data_file) = field_mut(entry, "data_file") else {
            return Err(twin_error(manifest, "an entry without data_file"));
        };
        let is_parquet = matches!(field_mut(data_file, "file_format"),
            Some(Value::String(f)) if f.eq_ignore_ascii_case("parquet"));
        let Some(Value::String(written)) = field_mut(data_file, "file_path").cloned() else {
            return Err(twin_error(manifest, "an entry without file_path"));
        };
        let Some(local) = self.local_file(manifest, &written).filter(|_| is_parquet) else {
            return Ok(false);
        };
        let size = match self.sizes.get(&local) {
            Some(size) => *size,
            None => {
                let size = rewrite_file(&local, self.format)?;
                self.sizes.insert(local, size);
                size
            }
        };
        if let Some(format) = field_mut(data_file, "file_format") {
            *format = Value::String(self.format.manifest_name().to_string());
        }
        if let Some(bytes) = field_mut(data_file, "file_size_in_bytes") {
            *bytes = Value::Long(size as i64);
        }
        if let Some(offsets) = field_mut(data_file, "split_offsets") {
            let null = null_branch(schema, manifest)?;
            *offsets = Value::Union(null, Box::new(Value::Null));
        }
        Ok(true)
    }

    /// The file inside the twin that `written` (a manifest's `file_path`) names: a relative
    /// path against the manifest's directory or one of its parents in the twin (the table's
    /// `relative_path_base`), an absolute one only when it lies in the twin.
    fn local_file(&self, manifest: &Path, written: &str) -> Option<PathBuf> {
        let path = match written.strip_prefix("file:") {
            Some(rest) => match rest.strip_prefix("///") {
                Some(absolute) => format!("/{absolute}"),
                None => rest.strip_prefix("//").unwrap_or(rest).to_string(),
            },
            None if written.contains("://") => return None,
            None => written.to_string(),
        };
        let path = Path::new(&path);
        if path.is_absolute() {
            return (path.starts_with(&self.root) && path.is_file()).then(|| path.to_path_buf());
        }
        manifest
            .ancestors()
            .skip(1)
            .take_while(|dir| dir.starts_with(&self.root))
            .map(|dir| dir.join(path))
            .find(|candidate| candidate.is_file())
    }
}

/// Rewrites the Parquet file at `path` as `format`, in place; its new size.
fn rewrite_file(path: &Path, format: TwinFormat) -> Result<u64> {
    let failed = |e: &dyn std::fmt::Display| twin_error(path, e);
    let rows = ParquetRows::read(std::fs::read(path)?).map_err(|e| failed(&e))?;
    let (schema, batches) = (&rows.schema, &rows.batches);
    let out = match format {
        TwinFormat::Orc => {
            lakescan_iceberg_writer::encode::orc_file_with_stripes(schema, batches, rows.row_groups)
        }
        TwinFormat::Avro => lakescan_iceberg_writer::encode::avro_file(schema, batches),
    }
    .map_err(|e| failed(&e))?;
    std::fs::write(path, &out)?;
    Ok(out.len() as u64)
}

/// Whether `schema` is a manifest's (its entries have a `data_file`), not a manifest list's.
fn is_manifest(schema: &Schema) -> bool {
    matches!(schema, Schema::Record(record) if record.lookup.contains_key("data_file"))
}

/// The index of the `null` branch of `data_file.split_offsets`' union in `schema`.
fn null_branch(schema: &Schema, manifest: &Path) -> Result<u32> {
    let union = record_field(schema, "data_file")
        .and_then(|data_file| record_field(data_file, "split_offsets"));
    match union {
        Some(Schema::Union(union)) => union
            .variants()
            .iter()
            .position(|v| matches!(v, Schema::Null))
            .map(|i| i as u32)
            .ok_or_else(|| twin_error(manifest, "split_offsets is not optional")),
        _ => Err(twin_error(manifest, "split_offsets is not a union")),
    }
}

/// The schema of field `name` of record `schema`.
fn record_field<'a>(schema: &'a Schema, name: &str) -> Option<&'a Schema> {
    match schema {
        Schema::Record(record) => record
            .lookup
            .get(name)
            .and_then(|i| record.fields.get(*i))
            .map(|f| &f.schema),
        _ => None,
    }
}

/// Field `name` of record `value`.
fn field_mut<'a>(value: &'a mut Value, name: &str) -> Option<&'a mut Value> {
    match value {
        Value::Record(fields) => fields.iter_mut().find(|(n, _)| n == name).map(|(_, v)| v),
        _ => None,
    }
}

/// Copies directory `from` to `to`, recursively.
fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The `.avro` files under `dir`, recursively.
fn find_avro(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            find_avro(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "avro") {
            out.push(path);
        }
    }
    Ok(())
}

fn twin_error(path: &Path, e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(format!("Iceberg twin: '{}': {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entries of every manifest of the Iceberg fixtures under `root`: (manifest, file
    /// path, format, size).
    fn entries(root: &Path) -> Vec<(PathBuf, String, String, i64)> {
        let mut avro = Vec::new();
        for fixture in ICEBERG_FIXTURES {
            find_avro(&root.join(fixture), &mut avro).unwrap();
        }
        let mut out = Vec::new();
        for manifest in avro {
            let bytes = std::fs::read(&manifest).unwrap();
            let reader = Reader::new(&bytes[..]).unwrap();
            if !is_manifest(reader.writer_schema()) {
                continue;
            }
            for entry in reader {
                let mut entry = entry.unwrap();
                let data_file = field_mut(&mut entry, "data_file").unwrap();
                let text = |v: Option<&mut Value>| match v {
                    Some(Value::String(s)) => s.clone(),
                    other => panic!("not a string: {other:?}"),
                };
                let path = text(field_mut(data_file, "file_path"));
                let format = text(field_mut(data_file, "file_format"));
                let Some(Value::Long(size)) = field_mut(data_file, "file_size_in_bytes").cloned()
                else {
                    panic!("no size")
                };
                out.push((manifest.clone(), path, format, size));
            }
        }
        out
    }

    /// Every manifest entry of the twin that names a file of the twin names it in the twin's
    /// format with its size, the file is of that format, and the Parquet entries the
    /// fixtures have are all rewritten; the Avro metadata keys of each manifest are kept.
    #[test]
    fn twins_rewrite_every_parquet_entry() {
        let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
        let parquet_entries = entries(&testdata)
            .iter()
            .filter(|e| e.2 == "PARQUET")
            .count();
        assert!(parquet_entries > 50, "{parquet_entries}");
        for (format, magic) in [
            (TwinFormat::Orc, &b"ORC"[..]),
            (TwinFormat::Avro, &b"Obj\x01"[..]),
        ] {
            let twin = IcebergTwin::build(&testdata, format).unwrap();
            assert!(twin.files > 30 && twin.manifests > 20, "{twin:?}");
            let rewriter = Rewriter {
                root: twin.path().to_path_buf(),
                format,
                sizes: HashMap::new(),
            };
            let mut rewritten = 0;
            for (manifest, path, entry_format, size) in entries(twin.path()) {
                let Some(local) = rewriter.local_file(&manifest, &path) else {
                    continue;
                };
                if entry_format == "PUFFIN" {
                    continue;
                }
                assert_eq!(entry_format, format.manifest_name(), "{path}");
                let bytes = std::fs::read(&local).unwrap();
                assert!(bytes.starts_with(magic), "{path} is not {format:?}");
                assert_eq!(bytes.len() as i64, size, "{path}");
                rewritten += 1;
            }
            assert_eq!(rewritten, parquet_entries);
            // Manifests without the `schema` key (testdata/writers) stay without it.
            let no_keys = twin
                .path()
                .join("writers/manifests_without_metadata/data/persistent/hive_partitioned_table/metadata");
            let mut found = 0;
            for entry in std::fs::read_dir(no_keys).unwrap() {
                let path = entry.unwrap().path();
                let bytes = std::fs::read(&path).unwrap();
                let Ok(reader) = Reader::new(&bytes[..]) else {
                    continue;
                };
                if is_manifest(reader.writer_schema()) {
                    assert!(!reader.user_metadata().contains_key("schema"), "{path:?}");
                    found += 1;
                }
            }
            assert!(found > 0);
        }
    }
}
