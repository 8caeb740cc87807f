//! [`ObjectStoreStorage`]: the `iceberg` crate's `Storage` over the session's object stores,
//! so a catalog reads and writes its metadata files through the same `object_store` clients
//! that read the tables' manifests and data files.
//!
//! ```text
//!  SqlCatalog ── FileIO ── ObjectStoreStorage ──┐
//!                                               ├── RuntimeEnv's object store registry
//!  IcebergTable ── manifests, deletes, data ────┘     (s3://bucket → one AmazonS3 client)
//! ```
//!
//! The crate's own storages are its local file system, memory, or opendal services (a second
//! HTTP client with its own configuration, retries and credential chain); this one resolves
//! each path like a path written in table metadata ([`PathResolver`]) and asks the store the
//! session has for it. Written by hand because the crate has no `object_store` storage.
//!
//! The storage can be serialized (the crate requires it) but carries no stores: one
//! deserialized in another process answers every call with an error saying so.

use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::execution::object_store::ObjectStoreRegistry;
use futures::StreamExt;
use futures::stream::BoxStream;
use iceberg::io::{
    FileMetadata, FileRead, FileWrite, InputFile, OutputFile, Storage, StorageConfig,
    StorageFactory,
};
use iceberg::{Error, ErrorKind};
use object_store::buffered::BufWriter;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt};
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;

use crate::paths::PathResolver;

/// Builds an [`ObjectStoreStorage`] over one session's object stores, whatever the catalog's
/// file IO properties say (the stores are configured on the session).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ObjectStoreStorageFactory {
    #[serde(skip)]
    registry: Option<Arc<dyn ObjectStoreRegistry>>,
}

impl ObjectStoreStorageFactory {
    /// Storages over `registry` (a session's `RuntimeEnv::object_store_registry`).
    pub fn new(registry: Arc<dyn ObjectStoreRegistry>) -> Self {
        Self {
            registry: Some(registry),
        }
    }
}

#[typetag::serde]
impl StorageFactory for ObjectStoreStorageFactory {
    fn build(&self, _config: &StorageConfig) -> iceberg::Result<Arc<dyn Storage>> {
        Ok(Arc::new(ObjectStoreStorage {
            registry: self.registry.clone(),
        }))
    }
}

/// Iceberg file IO through a session's object store registry (see the module docs).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ObjectStoreStorage {
    #[serde(skip)]
    registry: Option<Arc<dyn ObjectStoreRegistry>>,
}

fn io_error(what: &str, path: &str, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::Unexpected,
        format!("cannot {what} '{path}': {e}"),
    )
}

impl ObjectStoreStorage {
    /// The store holding `path` and the path inside it.
    fn locate(&self, path: &str) -> iceberg::Result<(Arc<dyn ObjectStore>, Path)> {
        let Some(registry) = &self.registry else {
            return Err(Error::new(
                ErrorKind::FeatureUnsupported,
                format!(
                    "cannot read '{path}': this object-store file IO was deserialized, and \
                     object stores stay with the session that registered them"
                ),
            ));
        };
        let resolver = PathResolver::new(None).map_err(|e| io_error("resolve", path, e))?;
        let location = resolver
            .resolve(path)
            .map_err(|e| io_error("resolve", path, e))?;
        let store = registry
            .get_store(location.store.as_ref())
            .map_err(|e| io_error("find the object store of", path, e))?;
        Ok((store, location.path))
    }
}

#[async_trait]
#[typetag::serde]
impl Storage for ObjectStoreStorage {
    async fn exists(&self, path: &str) -> iceberg::Result<bool> {
        let (store, key) = self.locate(path)?;
        match store.head(&key).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(io_error("look up", path, e)),
        }
    }

    async fn metadata(&self, path: &str) -> iceberg::Result<FileMetadata> {
        let (store, key) = self.locate(path)?;
        let meta = store
            .head(&key)
            .await
            .map_err(|e| io_error("look up", path, e))?;
        Ok(FileMetadata { size: meta.size })
    }

    async fn read(&self, path: &str) -> iceberg::Result<Bytes> {
        let (store, key) = self.locate(path)?;
        let answer = store
            .get(&key)
            .await
            .map_err(|e| io_error("read", path, e))?;
        answer.bytes().await.map_err(|e| io_error("read", path, e))
    }

    async fn reader(&self, path: &str) -> iceberg::Result<Box<dyn FileRead>> {
        let (store, key) = self.locate(path)?;
        Ok(Box::new(RangeReader {
            store,
            key,
            shown: path.to_string(),
        }))
    }

    async fn write(&self, path: &str, bs: Bytes) -> iceberg::Result<()> {
        let (store, key) = self.locate(path)?;
        store
            .put(&key, bs.into())
            .await
            .map_err(|e| io_error("write", path, e))?;
        Ok(())
    }

    async fn writer(&self, path: &str) -> iceberg::Result<Box<dyn FileWrite>> {
        let (store, key) = self.locate(path)?;
        Ok(Box::new(ObjectWriter {
            writer: BufWriter::new(store, key),
            shown: path.to_string(),
        }))
    }

    async fn delete(&self, path: &str) -> iceberg::Result<()> {
        let (store, key) = self.locate(path)?;
        match store.delete(&key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(io_error("delete", path, e)),
        }
    }

    async fn delete_prefix(&self, path: &str) -> iceberg::Result<()> {
        let (store, prefix) = self.locate(path)?;
        let mut listed = store.list(Some(&prefix));
        while let Some(meta) = listed.next().await {
            let meta = meta.map_err(|e| io_error("list", path, e))?;
            match store.delete(&meta.location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(io_error("delete", meta.location.as_ref(), e)),
            }
        }
        Ok(())
    }

    async fn delete_stream(&self, mut paths: BoxStream<'static, String>) -> iceberg::Result<()> {
        while let Some(path) = paths.next().await {
            self.delete(&path).await?;
        }
        Ok(())
    }

    fn new_input(&self, path: &str) -> iceberg::Result<InputFile> {
        Ok(InputFile::new(Arc::new(self.clone()), path.to_string()))
    }

    fn new_output(&self, path: &str) -> iceberg::Result<OutputFile> {
        Ok(OutputFile::new(Arc::new(self.clone()), path.to_string()))
    }
}

/// Ranged reads of one object.
struct RangeReader {
    store: Arc<dyn ObjectStore>,
    key: Path,
    shown: String,
}

#[async_trait]
impl FileRead for RangeReader {
    async fn read(&self, range: Range<u64>) -> iceberg::Result<Bytes> {
        self.store
            .get_range(&self.key, range)
            .await
            .map_err(|e| io_error("read", &self.shown, e))
    }
}

/// A streamed upload (multipart above object_store's buffer size), completed by `close`.
struct ObjectWriter {
    writer: BufWriter,
    shown: String,
}

#[async_trait]
impl FileWrite for ObjectWriter {
    async fn write(&mut self, bs: Bytes) -> iceberg::Result<()> {
        self.writer
            .put(bs)
            .await
            .map_err(|e| io_error("write", &self.shown, e))
    }

    async fn close(&mut self) -> iceberg::Result<()> {
        self.writer
            .shutdown()
            .await
            .map_err(|e| io_error("write", &self.shown, e))
    }
}

#[cfg(test)]
mod tests {
    use datafusion::execution::object_store::DefaultObjectStoreRegistry;
    use iceberg::io::FileIOBuilder;
    use object_store::memory::InMemory;
    use url::Url;

    use super::*;

    fn file_io() -> (iceberg::io::FileIO, Arc<InMemory>) {
        let registry = Arc::new(DefaultObjectStoreRegistry::new());
        let store = Arc::new(InMemory::new());
        let url = Url::parse("memory://wh").unwrap();
        registry.register_store(&url, Arc::clone(&store) as Arc<dyn ObjectStore>);
        let factory = ObjectStoreStorageFactory::new(registry);
        (FileIOBuilder::new(Arc::new(factory)).build(), store)
    }

    #[tokio::test]
    async fn writes_reads_and_deletes_through_the_registered_store() {
        let (io, store) = file_io();
        let output = io.new_output("memory://wh/t/metadata/v1.json").unwrap();
        output
            .write(Bytes::from_static(b"{\"a\":1}"))
            .await
            .unwrap();
        let mut writer = io
            .new_output("memory://wh/t/data/f.bin")
            .unwrap()
            .writer()
            .await
            .unwrap();
        writer.write(Bytes::from_static(b"0123")).await.unwrap();
        writer.write(Bytes::from_static(b"4567")).await.unwrap();
        writer.close().await.unwrap();

        // The bytes are in the store the session registered.
        let kept = store.get(&Path::from("t/data/f.bin")).await.unwrap();
        assert_eq!(kept.bytes().await.unwrap().as_ref(), b"01234567");
        let input = io.new_input("memory://wh/t/data/f.bin").unwrap();
        assert_eq!(input.metadata().await.unwrap().size, 8);
        let reader = input.reader().await.unwrap();
        assert_eq!(reader.read(2..5).await.unwrap().as_ref(), b"234");
        assert_eq!(
            io.new_input("memory://wh/t/metadata/v1.json")
                .unwrap()
                .read()
                .await
                .unwrap()
                .as_ref(),
            b"{\"a\":1}"
        );

        assert!(io.exists("memory://wh/t/data/f.bin").await.unwrap());
        io.delete_prefix("memory://wh/t").await.unwrap();
        assert!(!io.exists("memory://wh/t/data/f.bin").await.unwrap());
        assert!(!io.exists("memory://wh/t/metadata/v1.json").await.unwrap());
        // Deleting what is gone is not an error (the crate's contract).
        io.delete("memory://wh/t/data/f.bin").await.unwrap();
    }

    #[tokio::test]
    async fn errors_name_the_file_and_a_deserialized_storage_says_why_it_cannot_read() {
        let (io, _store) = file_io();
        let err = io
            .new_input("memory://wh/nope.json")
            .unwrap()
            .read()
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("memory://wh/nope.json"), "{err}");
        let err = io
            .new_input("s3://unregistered/x.json")
            .unwrap()
            .read()
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("s3://unregistered/x.json"), "{err}");

        let text = serde_json::to_string(&ObjectStoreStorage::default()).unwrap();
        let back: ObjectStoreStorage = serde_json::from_str(&text).unwrap();
        let err = back.read("memory://wh/x").await.unwrap_err().to_string();
        assert!(err.contains("deserialized"), "{err}");
    }
}
