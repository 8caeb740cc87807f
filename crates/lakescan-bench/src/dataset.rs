//! [`Dataset`]: where one scale factor's files live (`crate::data` writes them), and
//! [`parquet_files`], the Parquet files of one of its folders.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Where a scale factor's files live.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// `<cache>/sf<scale>`.
    pub root: PathBuf,
    /// TPC-H scale factor.
    pub scale: f64,
}

impl Dataset {
    /// `flat/lineitem`.
    pub fn flat_lineitem(&self) -> PathBuf {
        self.root.join("flat").join("lineitem")
    }

    /// `flat/orders`.
    pub fn flat_orders(&self) -> PathBuf {
        self.root.join("flat").join("orders")
    }

    /// `hive/lineitem`.
    pub fn hive_lineitem(&self) -> PathBuf {
        self.root.join("hive").join("lineitem")
    }

    /// `bucketed/orders`: orders in [`crate::data::ORDER_BUCKETS`] bucket files by `o_custkey`.
    pub fn bucketed_orders(&self) -> PathBuf {
        self.root.join("bucketed").join("orders")
    }

    /// `nested/lineitem_struct`: `l_orderkey` and `s`, a struct of [`STRUCT_MEMBERS`](crate::data::STRUCT_MEMBERS) members.
    pub fn struct_lineitem(&self) -> PathBuf {
        self.root.join("nested").join("lineitem_struct")
    }

    /// `orc/lineitem`: `flat/lineitem` as ORC files (one per Parquet file, its row groups as
    /// stripes), written by [`prepare_orc`](crate::data::prepare_orc).
    pub fn orc_lineitem(&self) -> PathBuf {
        self.root.join("orc").join("lineitem")
    }

    /// `small/p=P/fF.parquet`: [`SMALL_FILES`](crate::data::SMALL_FILES) files of [`SMALL_ROWS`](crate::data::SMALL_ROWS) rows in
    /// [`SMALL_PARTITIONS`](crate::data::SMALL_PARTITIONS) partitions (the many-small-files Hive shape; the same at every
    /// scale).
    pub fn small_files(&self) -> PathBuf {
        self.root.join("small")
    }
}

/// The `*.parquet` files directly in `dir`.
pub fn parquet_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = vec![];
    if !dir.is_dir() {
        return Ok(out);
    }
    for entry in std::fs::read_dir(dir).with_context(|| dir.display().to_string())? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "parquet") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}
