//! Paths written in Iceberg metadata (`location`, `manifest-list`, `manifest_path`,
//! `file_path`) resolved to an object store and a path in it.
//!
//! | written                         | resolved                                          |
//! |---------------------------------|---------------------------------------------------|
//! | `s3://bucket/a/b.parquet`       | store `s3://bucket`, path `a/b.parquet`            |
//! | `file:///wh/a.parquet`, `file:/wh/a.parquet`, `/wh/a.parquet` | local file `/wh/a.parquet` |
//! | `data/a.parquet`, `./t/a.parquet` | relative: joined to the base directory            |
//! | `file://localhost/wh/a.parquet` | local file `/wh/a.parquet`                        |
//! | `file://data/a.parquet`         | relative too (a writer's `file://` + relative path; a strict URI parser would read `data` as a host) |
//! | `/wh//a.parquet`                | local file `/wh/a.parquet` (the file system folds `//`) |
//! | `s3://bucket/a//b.parquet`      | `NotImplemented`: the key `a//b.parquet` is not `a/b.parquet`, and object_store cannot address it |
//!
//! File names are used exactly as written (`k=12%3A34` stays `%3A`, not decoded).

use std::path::{Component, PathBuf};

use datafusion::common::{Result, not_impl_err, plan_err};
use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;
use serde::{Deserialize, Serialize};

/// Where a file lives: the object store and the path inside it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileLocation {
    /// The object store (registered in the session's runtime).
    #[serde(with = "lakescan_core::api::wire::store_url")]
    pub store: ObjectStoreUrl,
    /// The path inside that store.
    #[serde(with = "lakescan_core::api::wire::path")]
    pub path: Path,
}

/// Resolves paths written in one table's metadata.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PathResolver {
    /// Where relative paths are joined to.
    base: Base,
}

/// The directory relative paths are joined to.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Base {
    /// An absolute local directory.
    Local(PathBuf),
    /// A directory of an object store (`s3://bucket/wh`): the store and the directory's parts.
    Store(
        #[serde(with = "lakescan_core::api::wire::store_url")] ObjectStoreUrl,
        Vec<String>,
    ),
}

impl PathResolver {
    /// Relative paths resolve against `base` (a local directory or an object store URL such as
    /// `s3://bucket/wh`), or the process's working directory when `None`.
    pub fn new(base: Option<&str>) -> Result<Self> {
        if let Some(url) = base.filter(|b| !b.starts_with("file:") && b.contains("://")) {
            let FileLocation { store, path } =
                Self::local_base(PathBuf::from("/")).resolve(url.trim_end_matches('/'))?;
            let parts = path.parts().map(|p| p.as_ref().to_string()).collect();
            return Ok(Self {
                base: Base::Store(store, parts),
            });
        }
        let base = match base {
            Some(b) => PathBuf::from(b.strip_prefix("file://").unwrap_or(b)),
            None => match std::env::current_dir() {
                Ok(dir) => dir,
                Err(e) => {
                    return plan_err!(
                        "cannot resolve relative Iceberg paths: no working directory ({e}); \
                         set the option relative_path_base"
                    );
                }
            },
        };
        let base = if base.is_absolute() {
            base
        } else {
            match std::env::current_dir() {
                Ok(dir) => dir.join(base),
                Err(e) => return plan_err!("cannot resolve '{}': {e}", base.display()),
            }
        };
        Ok(Self::local_base(base))
    }

    fn local_base(base: PathBuf) -> Self {
        Self {
            base: Base::Local(base),
        }
    }

    /// The store and path of `written`.
    pub fn resolve(&self, written: &str) -> Result<FileLocation> {
        if written.is_empty() {
            return plan_err!("an Iceberg metadata path is empty");
        }
        if let Some(rest) = written.strip_prefix("file:") {
            let local = if let Some(abs) = rest.strip_prefix("///") {
                format!("/{abs}")
            } else if let Some(abs) = rest.strip_prefix("//localhost/") {
                format!("/{abs}")
            } else if let Some(after) = rest.strip_prefix("//") {
                // `file://relative/…`: a writer's `file://` before a relative path (a strict
                // URI parser would read a host there).
                after.to_string()
            } else {
                rest.to_string()
            };
            return Ok(self.local(&local));
        }
        if let Some((scheme, rest)) = written.split_once("://")
            && !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
            let name = key.trim_end_matches('/');
            if !name.is_empty() && name.split('/').any(str::is_empty) {
                // An object store key is a name, not a path: `a//b` is not `a/b`, and
                // object_store's paths cannot hold an empty segment.
                return not_impl_err!(
                    "Iceberg path '{written}' has an empty segment ('//'); \
                     object store keys with empty segments cannot be read"
                );
            }
            let store = ObjectStoreUrl::parse(format!("{scheme}://{authority}"))?;
            return Ok(FileLocation {
                store,
                path: as_written(key.split('/').map(str::to_string).collect()),
            });
        }
        Ok(self.local(written))
    }

    /// A relative or absolute local path, joined to the base directory.
    fn local(&self, written: &str) -> FileLocation {
        let (store, mut parts, joined) = match &self.base {
            Base::Local(base) => (
                ObjectStoreUrl::local_filesystem(),
                vec![],
                base.join(written),
            ),
            // An absolute path stays a local file; a relative one joins the store directory.
            Base::Store(_, _) if written.starts_with('/') => (
                ObjectStoreUrl::local_filesystem(),
                vec![],
                PathBuf::from(written),
            ),
            Base::Store(store, dir) => (store.clone(), dir.clone(), PathBuf::from(written)),
        };
        // Drop `.` and fold `..` without touching the file system.
        for component in joined.components() {
            match component {
                Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
                Component::ParentDir => {
                    parts.pop();
                }
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        FileLocation {
            store,
            path: as_written(parts),
        }
    }
}

/// The object store path of `parts` exactly as written: not percent-encoded again, so a file
/// named `k=12%3A34` is that file, not `k=12:34` nor `k=12%253A34`. Parts that are not valid
/// as written fall back to the encoded form.
fn as_written(parts: Vec<String>) -> Path {
    let parts: Vec<String> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    match Path::parse(parts.join("/")) {
        Ok(path) => path,
        Err(_) => Path::from_iter(parts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_join_an_object_store_base() {
        let r = PathResolver::new(Some("s3://bucket/wh/")).unwrap();
        let got = r.resolve("./db/t/../t/metadata/snap.avro").unwrap();
        assert_eq!(got.store.as_str(), "s3://bucket/");
        assert_eq!(got.path, Path::from("wh/db/t/metadata/snap.avro"));
        // Absolute paths and URLs are not joined.
        let local = r.resolve("/abs/a.parquet").unwrap();
        assert_eq!(local.store, ObjectStoreUrl::local_filesystem());
        assert_eq!(
            r.resolve("s3://other/a.parquet").unwrap().path,
            Path::from("a.parquet")
        );
    }

    #[test]
    fn written_forms() {
        let r = PathResolver::new(Some("/base/dir")).unwrap();
        let local = |p: &str| FileLocation {
            store: ObjectStoreUrl::local_filesystem(),
            path: Path::from(p),
        };
        assert_eq!(r.resolve("/wh/a.parquet").unwrap(), local("wh/a.parquet"));
        assert_eq!(
            r.resolve("file:///wh/a.parquet").unwrap(),
            local("wh/a.parquet")
        );
        assert_eq!(
            r.resolve("file:/wh/a.parquet").unwrap(),
            local("wh/a.parquet")
        );
        assert_eq!(
            r.resolve("data/t/a.parquet").unwrap(),
            local("base/dir/data/t/a.parquet")
        );
        assert_eq!(
            r.resolve("./t/../u/a.parquet").unwrap(),
            local("base/dir/u/a.parquet")
        );
        assert_eq!(
            r.resolve("file://data/m/a.parquet").unwrap(),
            local("base/dir/data/m/a.parquet")
        );
        let s3 = r.resolve("s3://bucket/wh/a.parquet").unwrap();
        assert_eq!(s3.store.as_str(), "s3://bucket/");
        assert_eq!(s3.path.as_ref(), "wh/a.parquet");
        // File names are used as written: `%3A` is not decoded.
        let quirk = r.resolve("/t/p=12%3A34/f.parquet").unwrap();
        assert_eq!(quirk.path.as_ref(), "t/p=12%3A34/f.parquet");
        assert!(r.resolve("").is_err());
        assert_eq!(
            r.resolve("file://localhost/wh/a.parquet").unwrap(),
            local("wh/a.parquet")
        );
        assert_eq!(r.resolve("/wh//a.parquet").unwrap(), local("wh/a.parquet"));
        let err = r
            .resolve("s3://bucket/wh//a.parquet")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("'s3://bucket/wh//a.parquet' has an empty segment"),
            "{err}"
        );
        // A directory's trailing '/' is not an empty segment.
        assert_eq!(
            r.resolve("s3://bucket/wh/t/").unwrap().path.as_ref(),
            "wh/t"
        );
        assert_eq!(r.resolve("s3://bucket/").unwrap().path.as_ref(), "");
    }
}
