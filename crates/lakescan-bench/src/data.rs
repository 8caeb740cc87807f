//! The data: TPC-H `lineitem` and `orders` at one scale factor, generated once by
//! `tpchgen-cli` into a cache directory and reused while its marker file exists.
//!
//! ```text
//! <cache>/sf<scale>/                       (smoke: <cache>/smoke-sf<scale>/)
//!   READY                                  marker: generator, scale, parts, row-group size
//!   flat/lineitem/lineitem.<part>.parquet  tpchgen-cli, SNAPPY, its default 7 MiB row groups
//!   flat/orders/orders.<part>.parquet
//!   hive/lineitem/l_shipyear=YYYY/*.parquet  DataFusion COPY … PARTITIONED BY (l_shipyear)
//! ```
//!
//! Generation happens in a child process (`lakescan-bench --prepare-data`), so the
//! generator's and the `COPY`'s memory never counts towards the benchmark's peak RSS.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use datafusion::prelude::SessionContext;

use crate::floor::parquet_files;

/// The tpchgen-cli release `benchmarks/setup.sh` installs.
pub const TPCHGEN_VERSION: &str = "4.0.0";

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
}

/// How the files are generated.
#[derive(Debug, Clone)]
pub struct Layout {
    /// TPC-H scale factor.
    pub scale: f64,
    /// Files per table (`--parts`).
    pub parts: usize,
    /// `--row-group-bytes`, or the generator's default.
    pub row_group_bytes: Option<&'static str>,
    /// Directory name under the cache directory.
    pub dir_name: String,
}

impl Layout {
    /// The benchmark layout: one file per 0.25 scale-factor units (at least one), the
    /// generator's default row-group size.
    pub fn benchmark(scale: f64) -> Self {
        Self {
            scale,
            parts: ((scale * 4.0).ceil() as usize).max(1),
            row_group_bytes: None,
            dir_name: format!("sf{scale}"),
        }
    }

    /// The smoke layout: tiny, but still two files of several row groups each.
    pub fn smoke(scale: f64) -> Self {
        Self {
            scale,
            parts: 2,
            row_group_bytes: Some("512KB"),
            dir_name: format!("smoke-sf{scale}"),
        }
    }

    fn marker_text(&self) -> String {
        format!(
            "generator: tpchgen-cli {TPCHGEN_VERSION}\nscale: {}\nparts: {}\nrow_group_bytes: {}\n\
             hive: DataFusion COPY ... PARTITIONED BY (l_shipyear)\n",
            self.scale,
            self.parts,
            self.row_group_bytes.unwrap_or("default")
        )
    }
}

/// The default cache directory: `$LAKESCAN_BENCH_CACHE`, else `~/.cache/lakescan/bench`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LAKESCAN_BENCH_CACHE") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    home.join(".cache").join("lakescan").join("bench")
}

/// The dataset of `layout` under `cache`, generated first (in a child process running
/// `lakescan-bench --prepare-data …`) when its marker is missing.
pub fn ensure(cache: &Path, layout: &Layout, smoke: bool) -> Result<Dataset> {
    let dataset = Dataset {
        root: cache.join(&layout.dir_name),
        scale: layout.scale,
    };
    if dataset.root.join("READY").is_file() {
        return Ok(dataset);
    }
    eprintln!(
        "generating TPC-H SF{} into {} (once) ...",
        layout.scale,
        dataset.root.display()
    );
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.arg("--prepare-data")
        .arg("--scale")
        .arg(layout.scale.to_string())
        .arg("--cache-dir")
        .arg(cache);
    if smoke {
        cmd.arg("--smoke");
    }
    let status = cmd.status()?;
    if !status.success() || !dataset.root.join("READY").is_file() {
        bail!("data generation failed ({status})");
    }
    Ok(dataset)
}

/// Generates the dataset of `layout` under `cache` (the `--prepare-data` child's work).
pub async fn prepare(cache: &Path, layout: &Layout) -> Result<()> {
    let tpchgen = which("tpchgen-cli").with_context(|| {
        format!(
            "tpchgen-cli is not on PATH; run benchmarks/setup.sh \
             (it installs tpchgen-cli {TPCHGEN_VERSION} with cargo install)"
        )
    })?;
    let root = cache.join(&layout.dir_name);
    let partial = cache.join(format!("{}.partial", layout.dir_name));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)?;
    }
    std::fs::create_dir_all(partial.join("flat"))?;

    let mut cmd = Command::new(&tpchgen);
    cmd.arg("parquet")
        .arg("--scale-factor")
        .arg(layout.scale.to_string())
        .args(["--tables", "lineitem", "--tables", "orders"])
        .arg("--parts")
        .arg(layout.parts.to_string())
        .arg("--output-dir")
        .arg(partial.join("flat"))
        .args(["--no-progress", "--quiet"]);
    if let Some(bytes) = layout.row_group_bytes {
        cmd.args(["--row-group-bytes", bytes]);
    }
    let status = cmd
        .status()
        .with_context(|| format!("running {}", tpchgen.display()))?;
    if !status.success() {
        bail!("tpchgen-cli failed ({status})");
    }
    let staged = Dataset {
        root: partial.clone(),
        scale: layout.scale,
    };
    for (table, dir) in [
        ("lineitem", staged.flat_lineitem()),
        ("orders", staged.flat_orders()),
    ] {
        // A single part may be written as <out>/<table>.parquet.
        let single = partial.join("flat").join(format!("{table}.parquet"));
        if single.is_file() {
            std::fs::create_dir_all(&dir)?;
            std::fs::rename(&single, dir.join(format!("{table}.1.parquet")))?;
        }
        if parquet_files(&dir)?.is_empty() {
            bail!("tpchgen-cli wrote no {table} files into {}", dir.display());
        }
    }

    let ctx = SessionContext::new();
    let quote = |p: &Path| p.display().to_string().replace('\'', "''");
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE flat_lineitem STORED AS PARQUET LOCATION '{}/'",
        quote(&staged.flat_lineitem())
    ))
    .await?
    .collect()
    .await?;
    ctx.sql(&format!(
        "COPY (SELECT *, date_part('year', l_shipdate) AS l_shipyear FROM flat_lineitem) \
         TO '{}/' STORED AS PARQUET PARTITIONED BY (l_shipyear)",
        quote(&staged.hive_lineitem())
    ))
    .await?
    .collect()
    .await?;

    std::fs::write(partial.join("READY"), layout.marker_text())?;
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    std::fs::rename(&partial, &root)?;
    Ok(())
}

/// `program` on `PATH`, else in cargo's bin directory (where `cargo install` puts it).
fn which(program: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(cargo_home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(cargo_home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo").join("bin"));
    }
    dirs.into_iter()
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}
