//! The data: TPC-H `lineitem` and `orders` at one scale factor, generated once into a cache
//! directory and reused while its marker file exists. The benchmark generates it with
//! `tpchgen-cli` (installed by `benchmarks/setup.sh`); the smoke run generates it in-process
//! with the `tpchgen` crate ([`crate::tpch`]), so `cargo test` needs nothing installed.
//!
//! ```text
//! <cache>/sf<scale>/                       (smoke: <cache>/smoke-sf<scale>/)
//!   READY                                  marker: generator, scale, parts, row-group size
//!   flat/lineitem/lineitem.<part>.parquet  SNAPPY; tpchgen-cli's default 7 MiB row groups
//!   flat/orders/orders.<part>.parquet      (smoke: row groups of 4096 rows)
//!   hive/lineitem/l_shipyear=YYYY/*.parquet  DataFusion COPY … PARTITIONED BY (l_shipyear)
//!   bucketed/orders/00000B_0.parquet          orders in 8 Hive buckets of o_custkey (version 2)
//!   nested/lineitem_struct/*.parquet          l_orderkey and s, a struct of 20 members
//!   small/p=P/fF.parquet                      2 000 files of 400 rows (k, x) in 40 partitions
//!   iceberg/lineitem{,_pos,_dv,_eq}/          Iceberg tables over flat/lineitem (crate::iceberg_tables)
//!   orc/lineitem/*.orc                        flat/lineitem as ORC (stripes = row groups;
//!                                             its own _READY; written when an ORC case runs)
//! ```
//!
//! A cache whose marker differs from the current layout is generated again.
//!
//! Generation happens in a child process (`lakescan-bench --prepare-data`), so the
//! generator's and the `COPY`'s memory never counts towards the benchmark's peak RSS.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use datafusion::prelude::SessionContext;

use crate::dataset::{Dataset, parquet_files};

/// The tpchgen-cli release `benchmarks/setup.sh` installs.
pub const TPCHGEN_VERSION: &str = "4.0.0";

/// Files of `small/` in all.
pub const SMALL_FILES: usize = 2_000;
/// Rows per file of `small/`.
pub const SMALL_ROWS: usize = 400;
/// Partitions (`p = 0..`) of `small/`.
pub const SMALL_PARTITIONS: usize = 40;

/// Writes `small/`: in file `f` of partition `p`, row `i` has `k = (f * 400 + i) % 10` and
/// `x = (p * 1000 + f + i) / 8`; SNAPPY, one row group per file.
fn write_small_files(dataset: &Dataset) -> Result<()> {
    use std::sync::Arc;

    use arrow::array::{Float64Array, Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::WriterProperties;

    let schema = Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, true),
        Field::new("x", DataType::Float64, true),
    ]));
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let per_partition = SMALL_FILES / SMALL_PARTITIONS;
    for p in 0..SMALL_PARTITIONS {
        let dir = dataset.small_files().join(format!("p={p}"));
        std::fs::create_dir_all(&dir)?;
        for f in 0..per_partition {
            let k = Int64Array::from_iter_values(
                (0..SMALL_ROWS).map(|i| ((f * SMALL_ROWS + i) % 10) as i64),
            );
            let x = Float64Array::from_iter_values(
                (0..SMALL_ROWS).map(|i| (p * 1000 + f + i) as f64 / 8.0),
            );
            let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(k), Arc::new(x)])?;
            let file = std::fs::File::create(dir.join(format!("f{f:03}.parquet")))?;
            let mut writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(props.clone()))?;
            writer.write(&batch)?;
            writer.close()?;
        }
    }
    Ok(())
}

/// Buckets of `bucketed/orders` (Hive bucketing version 2 on `o_custkey`).
pub const ORDER_BUCKETS: u32 = 8;

/// The members of the struct `s` of `nested/lineitem_struct`: the 16 lineitem columns and
/// four derived values.
pub const STRUCT_MEMBERS: [(&str, &str); 20] = [
    ("l_orderkey", "l_orderkey"),
    ("l_partkey", "l_partkey"),
    ("l_suppkey", "l_suppkey"),
    ("l_linenumber", "l_linenumber"),
    ("l_quantity", "l_quantity"),
    ("l_extendedprice", "l_extendedprice"),
    ("l_discount", "l_discount"),
    ("l_tax", "l_tax"),
    ("l_returnflag", "l_returnflag"),
    ("l_linestatus", "l_linestatus"),
    ("l_shipdate", "l_shipdate"),
    ("l_commitdate", "l_commitdate"),
    ("l_receiptdate", "l_receiptdate"),
    ("l_shipinstruct", "l_shipinstruct"),
    ("l_shipmode", "l_shipmode"),
    ("l_comment", "l_comment"),
    ("l_net", "l_extendedprice * (1 - l_discount)"),
    ("l_gross", "l_extendedprice * (1 + l_tax)"),
    ("l_shipmode_lower", "lower(l_shipmode)"),
    ("l_orderkey_x10", "l_orderkey * 10"),
];

/// Which generator writes the flat tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    /// `tpchgen-cli parquet` with its default row groups (the published benchmark).
    TpchgenCli,
    /// The `tpchgen` crate in this process, row groups of at most this many rows.
    InProcess {
        /// Rows per row group.
        row_group_rows: usize,
    },
}

/// How the files are generated.
#[derive(Debug, Clone)]
pub struct Layout {
    /// TPC-H scale factor.
    pub scale: f64,
    /// Files per table (`--parts`).
    pub parts: usize,
    /// Who writes the files.
    pub generator: Generator,
    /// Directory name under the cache directory.
    pub dir_name: String,
    /// The Python whose scripts directories are searched for `tpchgen-cli` after `PATH`
    /// (`pip install tpchgen-cli` puts it there, e.g. a venv's `bin/`).
    pub python: String,
}

impl Layout {
    /// The benchmark layout: one file per 0.25 scale-factor units (at least one), the
    /// generator's default row-group size.
    pub fn benchmark(scale: f64) -> Self {
        Self {
            scale,
            parts: ((scale * 4.0).ceil() as usize).max(1),
            generator: Generator::TpchgenCli,
            dir_name: format!("sf{scale}"),
            python: "python3".into(),
        }
    }

    /// The smoke layout: tiny, but still two files of several row groups each, generated
    /// in-process.
    pub fn smoke(scale: f64) -> Self {
        Self {
            scale,
            parts: 2,
            generator: Generator::InProcess {
                row_group_rows: 4096,
            },
            dir_name: format!("smoke-sf{scale}"),
            python: "python3".into(),
        }
    }

    fn marker_text(&self) -> String {
        let generator = match self.generator {
            Generator::TpchgenCli => format!("tpchgen-cli {TPCHGEN_VERSION}, default row groups"),
            Generator::InProcess { row_group_rows } => {
                format!("tpchgen crate in-process, row groups of {row_group_rows} rows")
            }
        };
        format!(
            "generator: {generator}\nscale: {}\nparts: {}\n\
             hive: DataFusion COPY ... PARTITIONED BY (l_shipyear)\n\
             bucketed: orders, {ORDER_BUCKETS} buckets of o_custkey, version 2\n\
             nested: lineitem_struct, {} members\n\
             small: {SMALL_FILES} files of {SMALL_ROWS} rows in {SMALL_PARTITIONS} partitions\n\
             iceberg: lineitem, positions (files referencing their data file), vectors, \
             {} equality keys\n",
            self.scale,
            self.parts,
            STRUCT_MEMBERS.len(),
            crate::iceberg_tables::equality_keys(self.scale),
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

/// An exclusive lock on `<cache>/<name>.lock` while a dataset is generated: two runs that
/// find it missing at once (the smoke tests run in parallel) generate it once, the second
/// waiting for the first, instead of writing over each other's staging directory. The
/// operating system releases it when the file is closed (drop) or the process ends.
struct GenerationLock {
    _file: std::fs::File,
}

impl GenerationLock {
    /// Waits for and takes the lock of `name`.
    fn take(cache: &Path, name: &str) -> Result<Self> {
        std::fs::create_dir_all(cache)?;
        let path = cache.join(format!("{name}.lock"));
        let file =
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        file.lock()
            .with_context(|| format!("locking {}", path.display()))?;
        Ok(Self { _file: file })
    }
}

/// The dataset of `layout` under `cache`, generated first (in a child process running
/// `lakescan-bench --prepare-data …`) when its marker is missing.
pub fn ensure(cache: &Path, layout: &Layout, smoke: bool) -> Result<Dataset> {
    let dataset = Dataset {
        root: cache.join(&layout.dir_name),
        scale: layout.scale,
    };
    let ready = || {
        std::fs::read_to_string(dataset.root.join("READY")).unwrap_or_default()
            == layout.marker_text()
    };
    if ready() {
        return Ok(dataset);
    }
    let _lock = GenerationLock::take(cache, &layout.dir_name)?;
    if ready() {
        // Another run generated it while this one waited.
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
        .arg(cache)
        .arg("--python")
        .arg(&layout.python);
    if smoke {
        cmd.arg("--smoke");
    }
    let status = cmd.status()?;
    if !status.success() || !dataset.root.join("READY").is_file() {
        bail!("data generation failed ({status})");
    }
    Ok(dataset)
}

/// The marker of `orc/lineitem`: what its files are.
const ORC_MARKER: &str = "lineitem as ORC v1: one file per Parquet file of flat/lineitem, its \
                          row groups as stripes, row index every 10000 rows, uncompressed, \
                          written by lakescan_testkit::orc";

/// `orc/lineitem` of `dataset`, written first (in a child process running
/// `lakescan-bench --prepare-orc …`, so the conversion's memory is not the benchmark's) when
/// its marker is missing.
pub fn ensure_orc(dataset: &Dataset, cache: &Path, layout: &Layout, smoke: bool) -> Result<()> {
    let marker = dataset.orc_lineitem().join("_READY");
    let ready = || std::fs::read_to_string(&marker).unwrap_or_default() == ORC_MARKER;
    if ready() {
        return Ok(());
    }
    let _lock = GenerationLock::take(cache, &format!("{}.orc", layout.dir_name))?;
    if ready() {
        return Ok(());
    }
    eprintln!(
        "writing lineitem as ORC into {} (once) ...",
        dataset.orc_lineitem().display()
    );
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.arg("--prepare-orc")
        .arg("--scale")
        .arg(layout.scale.to_string())
        .arg("--cache-dir")
        .arg(cache);
    if smoke {
        cmd.arg("--smoke");
    }
    let status = cmd.status()?;
    if !status.success() || !marker.is_file() {
        bail!("writing the ORC files failed ({status})");
    }
    Ok(())
}

/// Writes `orc/lineitem` from `flat/lineitem` (the `--prepare-orc` child's work): each
/// Parquet file as an ORC file of the same rows, its row groups as stripes.
pub fn prepare_orc(dataset: &Dataset) -> Result<()> {
    use lakescan_testkit::orc::{OrcWriteOptions, write_orc};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    let out = dataset.orc_lineitem();
    let partial = out.with_extension("partial");
    if partial.exists() {
        std::fs::remove_dir_all(&partial)?;
    }
    std::fs::create_dir_all(&partial)?;
    for file in parquet_files(&dataset.flat_lineitem())? {
        let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file)?)?;
        let stripes = builder
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows().max(0) as usize)
            .collect();
        let schema = builder.schema().clone();
        let batches = builder
            .build()?
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let options = OrcWriteOptions {
            stripes,
            ..OrcWriteOptions::default()
        };
        let bytes = write_orc(&schema, &batches, &options)?;
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        std::fs::write(partial.join(format!("{name}.orc")), bytes)?;
    }
    std::fs::write(partial.join("_READY"), ORC_MARKER)?;
    if out.exists() {
        std::fs::remove_dir_all(&out)?;
    }
    std::fs::rename(&partial, &out)?;
    Ok(())
}

/// Generates the dataset of `layout` under `cache` (the `--prepare-data` child's work).
pub async fn prepare(cache: &Path, layout: &Layout) -> Result<()> {
    let root = cache.join(&layout.dir_name);
    let partial = cache.join(format!("{}.partial", layout.dir_name));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)?;
    }
    std::fs::create_dir_all(partial.join("flat"))?;
    match layout.generator {
        Generator::TpchgenCli => run_tpchgen_cli(layout, &partial.join("flat"))?,
        Generator::InProcess { row_group_rows } => {
            for table in ["lineitem", "orders"] {
                let dir = partial.join("flat").join(table);
                crate::tpch::write_table(
                    table,
                    layout.scale,
                    layout.parts as i32,
                    &dir,
                    row_group_rows,
                )
                .map_err(|e| anyhow::anyhow!("generating {table}: {e}"))?;
            }
        }
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
            bail!(
                "the generator wrote no {table} files into {}",
                dir.display()
            );
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

    write_bucketed_and_nested(&ctx, &staged).await?;
    write_small_files(&staged)?;
    drop(ctx);

    // The Iceberg tables name their data files by absolute path: written in place, before
    // the marker.
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    std::fs::rename(&partial, &root)?;
    let dataset = Dataset {
        root: root.clone(),
        scale: layout.scale,
    };
    let ctx = SessionContext::new();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE flat_lineitem STORED AS PARQUET LOCATION '{}/'",
        quote(&dataset.flat_lineitem())
    ))
    .await?
    .collect()
    .await?;
    crate::iceberg_tables::write(&dataset, &ctx).await?;
    std::fs::write(root.join("READY"), layout.marker_text())?;
    Ok(())
}

/// `bucketed/orders` (bucket files written with `hive_bucket`) and `nested/lineitem_struct`.
async fn write_bucketed_and_nested(ctx: &SessionContext, staged: &Dataset) -> Result<()> {
    lakescan::register(ctx)?;
    let quote = |p: &Path| p.display().to_string().replace('\'', "''");
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE flat_orders STORED AS PARQUET LOCATION '{}/'",
        quote(&staged.flat_orders())
    ))
    .await?
    .collect()
    .await?;
    let dir = staged.bucketed_orders();
    std::fs::create_dir_all(&dir)?;
    for b in 0..ORDER_BUCKETS {
        let file = dir.join(format!("{b:06}_0.parquet"));
        ctx.sql(&format!(
            "COPY (SELECT * FROM flat_orders WHERE hive_bucket(2, {ORDER_BUCKETS}, o_custkey) = {b}) \
             TO '{}' STORED AS PARQUET",
            quote(&file)
        ))
        .await?
        .collect()
        .await?;
    }
    let members: Vec<String> = STRUCT_MEMBERS
        .iter()
        .map(|(name, expr)| format!("'{name}', {expr}"))
        .collect();
    ctx.sql(&format!(
        "COPY (SELECT l_orderkey, named_struct({}) AS s FROM flat_lineitem) \
         TO '{}/' STORED AS PARQUET",
        members.join(", "),
        quote(&staged.struct_lineitem())
    ))
    .await?
    .collect()
    .await?;
    Ok(())
}

/// `tpchgen-cli parquet` for lineitem and orders into `out`.
fn run_tpchgen_cli(layout: &Layout, out: &Path) -> Result<()> {
    let tpchgen = which("tpchgen-cli", &python_scripts(&layout.python)).with_context(|| {
        format!(
            "tpchgen-cli is not on PATH, in cargo's bin directory or in {}'s scripts \
             directories; run benchmarks/setup.sh (PYTHON={} to install into that Python's \
             environment; it installs tpchgen-cli {TPCHGEN_VERSION} from PyPI)",
            layout.python, layout.python
        )
    })?;
    let status = Command::new(&tpchgen)
        .arg("parquet")
        .arg("--scale-factor")
        .arg(layout.scale.to_string())
        .args(["--tables", "lineitem", "--tables", "orders"])
        .arg("--parts")
        .arg(layout.parts.to_string())
        .arg("--output-dir")
        .arg(out)
        .args(["--no-progress", "--quiet"])
        .status()
        .with_context(|| format!("running {}", tpchgen.display()))?;
    if !status.success() {
        bail!("tpchgen-cli failed ({status})");
    }
    Ok(())
}

/// The scripts directories of `python` (its environment's and its user scheme's `bin/`),
/// where `pip install` puts a wheel's executables; none when `python` does not run.
fn python_scripts(python: &str) -> Vec<PathBuf> {
    const SCRIPT: &str = "import os, sysconfig\n\
        print(sysconfig.get_path('scripts'))\n\
        print(sysconfig.get_path('scripts', os.name + '_user'))";
    match Command::new(python).args(["-c", SCRIPT]).output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(PathBuf::from)
            .collect(),
        _ => vec![],
    }
}

/// `program` on `PATH`, else in cargo's bin directory (where `cargo install` puts it), else
/// in one of `extra` (a Python's scripts directories).
fn which(program: &str, extra: &[PathBuf]) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(cargo_home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(cargo_home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo").join("bin"));
    }
    dirs.extend(extra.iter().cloned());
    dirs.into_iter()
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}
