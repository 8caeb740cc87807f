//! [`S3Mirror`]: runs a `.slt` file's lakescan tables from S3 instead of the local disk.
//!
//! The file writes its data locally as always (`COPY … TO`, `system` commands); before each
//! statement the mirror uploads what changed under its local directories to a bucket of the
//! run's S3 server (and deletes what was removed), and a `CREATE EXTERNAL TABLE … STORED AS
//! HIVE|ICEBERG` reads the bucket: its local paths become `s3://` URLs. Results and errors
//! show the local paths again, so the expected output is the same file's.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use datafusion::error::{DataFusionError, Result};
use lakescan_testkit::{collect_files, object_path, relative_key};
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use tokio::sync::Mutex;

/// One local directory and the `s3://` URL it is mirrored to.
#[derive(Debug, Clone)]
pub struct Root {
    /// The local directory (absolute).
    pub local: PathBuf,
    /// Its URL, `s3://bucket/prefix`.
    pub url: String,
    /// The prefix of its keys in the bucket.
    pub prefix: String,
    /// Whether the directory may change while the file runs (else it is uploaded once, before).
    pub changes: bool,
}

/// Uploads local directories to S3 and rewrites lakescan tables' locations to them.
#[derive(Debug)]
pub struct S3Mirror {
    store: Arc<dyn ObjectStore>,
    roots: Vec<Root>,
    /// What was uploaded of the changing roots: file → (size, modified).
    uploaded: Mutex<HashMap<PathBuf, (u64, SystemTime)>>,
}

impl S3Mirror {
    /// Mirrors `roots` into `store` (the bucket of the roots' URLs).
    pub fn new(store: Arc<dyn ObjectStore>, roots: Vec<Root>) -> Self {
        Self {
            store,
            roots,
            uploaded: Mutex::new(HashMap::new()),
        }
    }

    /// The store the roots are mirrored to.
    pub fn store(&self) -> Arc<dyn ObjectStore> {
        Arc::clone(&self.store)
    }

    /// Uploads what changed under the changing roots since the last call; deletes the objects
    /// of files removed since.
    pub async fn sync(&self) -> Result<()> {
        let mut uploaded = self.uploaded.lock().await;
        let mut seen = HashSet::new();
        for root in self.roots.iter().filter(|r| r.changes) {
            if !root.local.exists() {
                continue;
            }
            let mut files = Vec::new();
            collect_files(&root.local, &mut files)?;
            for file in files {
                let meta = std::fs::metadata(&file)?;
                let stamp = (meta.len(), meta.modified()?);
                seen.insert(file.clone());
                if uploaded.get(&file) == Some(&stamp) {
                    continue;
                }
                let bytes = tokio::fs::read(&file).await?;
                let key = relative_key(&root.local, &file, &root.prefix);
                self.store
                    .put(&object_path(&key), PutPayload::from(bytes))
                    .await?;
                uploaded.insert(file, stamp);
            }
        }
        let removed: Vec<PathBuf> = uploaded
            .keys()
            .filter(|f| !seen.contains(*f))
            .cloned()
            .collect();
        for file in removed {
            if let Some(root) = self.roots.iter().find(|r| file.starts_with(&r.local)) {
                let key = relative_key(&root.local, &file, &root.prefix);
                self.store.delete(&object_path(&key)).await?;
            }
            uploaded.remove(&file);
        }
        Ok(())
    }

    /// `sql` with the roots' local paths turned into their URLs, when it creates a lakescan
    /// table; other statements are unchanged.
    pub fn rewrite(&self, sql: &str) -> String {
        let upper = sql.to_uppercase();
        let lakescan_table = upper.contains("CREATE EXTERNAL TABLE")
            && (upper.contains("STORED AS HIVE") || upper.contains("STORED AS ICEBERG"));
        if !lakescan_table {
            return sql.to_string();
        }
        let mut out = sql.to_string();
        for root in &self.roots {
            let local = root.local.to_string_lossy();
            out = out.replace(&format!("file://{local}"), &root.url);
            out = out.replace(local.as_ref(), &root.url);
        }
        out
    }

    /// A result cell as the local run shows it: the roots' URLs turned back into local
    /// URLs (`file:///…`, as the hidden `$path` column shows local files).
    ///
    /// The `requests_*` metrics of object-store scans are left out (local scans make no
    /// requests and do not show it; `crates/lakescan/tests/s3.rs` checks its values).
    pub fn localize(&self, text: &str) -> String {
        let mut out = text.to_string();
        for root in &self.roots {
            out = out.replace(
                &root.url,
                &format!("file://{}", root.local.to_string_lossy()),
            );
        }
        let out = without_metric(&out, "requests_get=");
        let out = without_metric(&out, "requests_deletes=");
        let out = without_metric(&out, "requests_planning=");
        let out = without_metric(&out, "requests_list=");
        let out = without_metric(&out, "requests_head=");
        without_metric(&out, "requests_retried=")
    }

    /// `error` as the local run would show it: the roots' URLs turned back into local paths
    /// (as messages name local files), in an error of the same kind.
    pub fn localize_error(&self, error: DataFusionError) -> DataFusionError {
        let local = |text: &str| {
            let mut out = text.to_string();
            for root in &self.roots {
                out = out.replace(&root.url, &root.local.to_string_lossy());
            }
            out
        };
        match error {
            DataFusionError::Execution(m) => DataFusionError::Execution(local(&m)),
            DataFusionError::Plan(m) => DataFusionError::Plan(local(&m)),
            DataFusionError::NotImplemented(m) => DataFusionError::NotImplemented(local(&m)),
            DataFusionError::Internal(m) => DataFusionError::Internal(local(&m)),
            other => {
                let shown = other.to_string();
                match local(&shown) {
                    same if same == shown => other,
                    changed => DataFusionError::External(changed.into()),
                }
            }
        }
    }
}

/// `text` without the metric `name` (`name` followed by a value up to `, ` or `]`).
fn without_metric(text: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(name) {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let end = after.find([',', ']']).unwrap_or(after.len());
        rest = after[end..].strip_prefix(", ").unwrap_or(&after[end..]);
        // `…, requests_get=3]`: drop the separator before it.
        if rest.starts_with(']') && out.ends_with(", ") {
            out.truncate(out.len() - 2);
        }
    }
    out.push_str(rest);
    out
}

/// Uploads `local` once under `prefix` (the read-only fixtures).
pub async fn upload_once(store: &Arc<dyn ObjectStore>, local: &Path, prefix: &str) -> Result<()> {
    lakescan_testkit::upload_dir(store, local, prefix)
        .await
        .map(|_| ())
        .map_err(DataFusionError::External)
}

#[cfg(test)]
mod tests {
    use super::without_metric;

    #[test]
    fn a_metric_is_left_out_wherever_it_stands() {
        let m = "requests_get=";
        assert_eq!(
            without_metric("[a=1, requests_get=3, b=2]", m),
            "[a=1, b=2]"
        );
        assert_eq!(without_metric("[a=1, requests_get=3]", m), "[a=1]");
        assert_eq!(without_metric("[requests_get=3, b=2]", m), "[b=2]");
        assert_eq!(without_metric("no metric", m), "no metric");
    }
}
