//! `lakescan-bench`: TPC-H scans of the same Parquet files by lakescan, DataFusion's own
//! Parquet scan (filter pushdown off and on), raw `parquet` decoding and DuckDB, in one run.
//!
//! See `docs/benchmarks.md` for the command, the cases and how to read the table.
//!
//! ```sh
//! benchmarks/setup.sh                                   # tpchgen-cli + python duckdb
//! cargo run --release -p lakescan-bench -- --scale 1 --runs 5 --json target/bench-sf1.json
//! cargo run -p lakescan-bench -- --smoke --runs 1       # all cases at SF 0.01, seconds
//! ```
//!
//! The smoke run needs nothing installed: it generates its data in-process (the `tpchgen`
//! crate) and leaves DuckDB out unless `--engines` names it.

mod cases;
mod data;
mod dataset;
mod engines;
mod floor;
mod iceberg_tables;
mod measure;
mod peer;
mod planning;
mod report;
mod results;
mod rss;
mod s3;
mod tpch;

/// mimalloc, as the Python package uses (and DataFusion's own CLI and benchmarks): `bench.py`
/// compares a scan from Python with the same scan here, and both allocate alike.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};

use crate::cases::Case;
use crate::data::Layout;
use crate::dataset::Dataset;
use crate::engines::{ConsumeOn, Engine, LakescanVariant, Shape};
use crate::floor::FloorPlan;
use crate::measure::{CaseBench, Sessions};
use crate::peer::Peer;
use lakescan_ballista::server::Scheduling;

/// Scale factor of `--smoke`.
const SMOKE_SCALE: f64 = 0.01;

/// TPC-H scan benchmark: lakescan vs DataFusion's Parquet scan, raw parquet decode and DuckDB.
#[derive(Debug, Parser)]
#[command(name = "lakescan-bench", version)]
struct Args {
    /// TPC-H scale factor of the generated data.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Timed runs per case and engine (after one warm-up run each).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Also write the results as a JSON list to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Run every case on tiny data (SF 0.01) to check the harness; ignores --scale.
    #[arg(long)]
    smoke: bool,
    /// Data cache directory [default: $LAKESCAN_BENCH_CACHE or ~/.cache/lakescan/bench].
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Only these cases (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    cases: Vec<String>,
    /// Only these engines (comma-separated: lakescan, lakescan-ballista, datafusion,
    /// datafusion-ballista, datafusion-pushdown, parquet-floor, duckdb, duckdb-iceberg, iceberg-datafusion);
    /// lakescan always runs, it is the reference (unless --skip-check).
    #[arg(long, value_delimiter = ',')]
    engines: Vec<String>,
    /// Threads for every engine: target partitions, DuckDB threads, floor decoders.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Rows per batch of the lakescan and DataFusion sessions (default: DataFusion's).
    #[arg(long, default_value_t = 8192)]
    batch_size: usize,
    /// How lakescan and DataFusion results are consumed: each output partition by its own
    /// runtime task, the partitions merged and consumed by one runtime task, or merged and
    /// consumed by the main thread blocking on the runtime (figures before 2026-12-02 15:00
    /// UTC).
    #[arg(long, value_enum, default_value_t = ConsumeOn::Partitions)]
    consume_on: ConsumeOn,
    /// Python interpreter with the duckdb package.
    #[arg(long, default_value = "python3")]
    python: String,
    /// Python of the venv with duckdb 1.5.5 and its avro and iceberg extension packages
    /// [default: ~/.venvs/lakescan-bench-iceberg/bin/python, made by benchmarks/setup.sh].
    #[arg(long)]
    iceberg_python: Option<PathBuf>,
    /// The iceberg-datafusion peer binary [default: the one benchmarks/setup.sh builds].
    #[arg(long)]
    iceberg_datafusion: Option<PathBuf>,
    /// Write the results table (Markdown) to this file as well.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Print each case's physical plan in lakescan and DataFusion (pushdown on) and exit.
    #[arg(long)]
    explain: bool,
    /// Profiling aid: skip the cross-engine result check and the per-run row counts, and
    /// run only the engines of --engines (never for published numbers).
    #[arg(long)]
    skip_check: bool,
    /// Internal: run the one case of --cases once with this engine only and print its peak
    /// RSS as JSON (run as a child process).
    #[arg(long, hide = true)]
    rss_probe: Option<String>,
    /// Run the S3 cases instead (`full_scan`, `tpch_q6`, `small_partition`, `small_files`,
    /// `iceberg_pos`): lakescan, DataFusion and (when benchmarks/setup.sh installed its httpfs
    /// package in the Iceberg venv) DuckDB over a local moto S3 server (in a Python
    /// environment made on first use when `python3` lacks moto), with requests and bytes.
    #[arg(long)]
    s3: bool,
    /// Latency added to every S3 request (with --s3).
    #[arg(long, default_value_t = 20)]
    s3_latency_ms: u64,
    /// How the Ballista engines' in-process cluster hands out tasks: `push` (the scheduler
    /// sends them) or `pull` (executors poll every 50 ms; the figures before 2026-12-06).
    #[arg(long, default_value = "push")]
    ballista_scheduling: Scheduling,
    /// Print only the planning figures (the delete index; no data, no cases), best of
    /// --runs rounds (at least 10).
    #[arg(long)]
    planning_only: bool,
    /// Internal: generate the data set and exit (run as a child process).
    #[arg(long, hide = true)]
    prepare_data: bool,
    /// Internal: write `orc/lineitem` and exit (run as a child process).
    #[arg(long, hide = true)]
    prepare_orc: bool,
}

impl Args {
    /// What every lakescan and DataFusion session of the run shares.
    fn shape(&self) -> Shape {
        Shape {
            threads: self.threads,
            batch_size: self.batch_size,
        }
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build()?;
    let cache = args
        .cache_dir
        .clone()
        .unwrap_or_else(data::default_cache_dir);
    let layout = Layout {
        python: args.python.clone(),
        ..if args.smoke {
            Layout::smoke(SMOKE_SCALE)
        } else {
            Layout::benchmark(args.scale)
        }
    };
    if args.planning_only {
        print!("{}", planning::table(&planning::run(args.runs)?));
        return Ok(());
    }
    if args.prepare_data {
        return runtime.block_on(data::prepare(&cache, &layout));
    }
    if args.prepare_orc {
        let dataset = data::ensure(&cache, &layout, args.smoke)?;
        return data::prepare_orc(&dataset);
    }
    runtime.block_on(run(args, cache, layout))
}

async fn run(args: Args, cache: PathBuf, layout: Layout) -> Result<()> {
    let started = Instant::now();
    let mut engines = selected_engines(&args.engines, args.skip_check, args.smoke)?;
    let cases: Vec<Case> = cases::all(layout.scale)
        .into_iter()
        .filter(|c| args.cases.is_empty() || args.cases.iter().any(|n| n == c.name))
        .collect();
    if cases.is_empty() {
        bail!("no case matches {:?}", args.cases);
    }
    if let Some(engine) = &args.rss_probe {
        let dataset = data::ensure(&cache, &layout, args.smoke)?;
        let [case] = cases.as_slice() else {
            bail!("--rss-probe needs exactly one case");
        };
        let peak = rss_probe(
            Engine::parse(engine)?,
            case,
            &dataset,
            args.shape(),
            args.consume_on,
            args.ballista_scheduling,
        )
        .await?;
        println!("{}", serde_json::json!({ "peak_rss_bytes": peak }));
        return Ok(());
    }
    // A peer forced with --engines must be there (fail before generating data); one chosen
    // by default is skipped, saying why and how to install it.
    let iceberg_python = args
        .iceberg_python
        .clone()
        .unwrap_or_else(peer::default_iceberg_python);
    let iceberg_datafusion = args
        .iceberg_datafusion
        .clone()
        .unwrap_or_else(peer::default_iceberg_datafusion);
    let mut skipped = vec![];
    let mut available = vec![];
    // `--s3` runs its own engines (DuckDB's S3 peer is probed there).
    for engine in engines.into_iter().filter(|_| !args.s3) {
        let probed = match engine {
            Engine::DuckDb => Peer::probe_duckdb(&args.python),
            Engine::DuckDbIceberg => Peer::probe_duckdb_iceberg(&iceberg_python),
            Engine::IcebergDataFusion => Peer::probe_iceberg_datafusion(&iceberg_datafusion),
            _ => Ok(()),
        };
        match probed {
            Ok(()) => available.push(engine),
            Err(e) if args.engines.is_empty() => skipped.push((engine, e)),
            Err(e) => return Err(e.context(format!("--engines {}", engine.name()))),
        }
    }
    engines = available;
    for (engine, why) in &skipped {
        eprintln!(
            "skipping peer {}: {why:#} (pass --engines {} to require it)",
            engine.name(),
            engine.name()
        );
    }
    let dataset = data::ensure(&cache, &layout, args.smoke)?;
    if cases.iter().any(|c| c.orc) {
        data::ensure_orc(&dataset, &cache, &layout, args.smoke)?;
    }
    if args.s3 {
        // DuckDB's S3 peer needs the Iceberg venv's httpfs package: required when --engines
        // names duckdb, else skipped with the reason.
        let duckdb = match Peer::probe_duckdb_s3(&iceberg_python) {
            Ok(()) => Some(iceberg_python.as_path()),
            Err(e) if args.engines.iter().any(|e| e == "duckdb") => {
                return Err(e.context("--s3 --engines duckdb"));
            }
            Err(e) => {
                eprintln!("skipping DuckDB on S3: {e:#} (pass --engines duckdb to require it)");
                None
            }
        };
        let rows = s3::run(
            &dataset,
            &cases,
            args.runs,
            args.threads,
            args.s3_latency_ms,
            duckdb,
        )
        .await?;
        println!("{}", s3::render(&rows, args.s3_latency_ms, args.runs));
        if let Some(path) = &args.json {
            std::fs::write(path, serde_json::to_string_pretty(&s3::to_json(&rows))?)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        return Ok(());
    }
    let mut peers: Vec<(Engine, Peer)> = vec![];
    for &engine in &engines {
        let peer = match engine {
            Engine::DuckDb => Peer::duckdb(&args.python, args.threads, &dataset)?,
            Engine::DuckDbIceberg => Peer::duckdb_iceberg(&iceberg_python, args.threads, &dataset)?,
            Engine::IcebergDataFusion => {
                Peer::iceberg_datafusion(&iceberg_datafusion, args.threads, &dataset)?
            }
            _ => continue,
        };
        peers.push((engine, peer));
    }
    let variant = |v| engines::lakescan_session(&dataset, args.shape(), v);
    let ballista = |tables| {
        engines::ballista_session(&dataset, args.shape(), args.ballista_scheduling, tables)
    };
    let sessions = Sessions {
        lakescan: variant(LakescanVariant::Default).await?,
        lakescan_no_preload: variant(LakescanVariant::NoPreload).await?,
        lakescan_no_dynamic: variant(LakescanVariant::NoDynamicFilters).await?,
        lakescan_listing_cache: variant(LakescanVariant::ListingCache).await?,
        lakescan_ballista: match engines.contains(&Engine::LakescanBallista) {
            true => Some(ballista(engines::Peers::Lakescan).await?),
            false => None,
        },
        datafusion: engines::datafusion_session(&dataset, args.shape(), false).await?,
        datafusion_ballista: match engines.contains(&Engine::DataFusionBallista) {
            true => Some(ballista(engines::Peers::DataFusion).await?),
            false => None,
        },
        datafusion_pushdown: engines::datafusion_session(&dataset, args.shape(), true).await?,
        datafusion_orc: match engines.contains(&Engine::DataFusionOrc)
            && cases.iter().any(|c| c.orc)
        {
            true => Some(engines::datafusion_orc_session(&dataset, args.shape()).await?),
            false => None,
        },
    };
    if args.explain {
        for case in &cases {
            for (name, ctx) in [
                ("lakescan", &sessions.lakescan),
                ("datafusion-pushdown", &sessions.datafusion_pushdown),
            ] {
                let plan = ctx.sql(&case.sql).await?.create_physical_plan().await?;
                let shown = datafusion::physical_plan::displayable(plan.as_ref()).indent(true);
                println!("-- {} / {name}\n{shown}", case.name);
            }
        }
        return Ok(());
    }
    let scratch = std::env::temp_dir().join(format!("lakescan-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;

    println!(
        "lakescan-bench: TPC-H SF{} in {}, {} timed run(s) after 1 warm-up, {} thread(s), \
         batches of {} rows, {} core(s), results consumed on the {}, engines: {}{}",
        dataset.scale,
        dataset.root.display(),
        args.runs,
        args.threads,
        args.batch_size,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        consume_on_name(args.consume_on),
        engines
            .iter()
            .map(|e| e.name())
            .collect::<Vec<_>>()
            .join(", "),
        peers
            .iter()
            .map(|(_, p)| format!(" ({})", p.version))
            .collect::<String>(),
    );
    println!(
        "baseline RSS before the cases: {} MiB",
        rss::current_rss_bytes() >> 20
    );

    let mut all = vec![];
    let mut notes = vec![];
    for case in &cases {
        let case_engines: Vec<Engine> = engines.iter().copied().filter(|e| e.runs(case)).collect();
        let mut bench = CaseBench {
            case,
            dataset: &dataset,
            sessions: &sessions,
            peers: &mut peers,
            scratch: &scratch,
            notes: &mut notes,
            skip_check: args.skip_check,
            threads: args.threads,
            consume_on: args.consume_on,
        };
        let measured = bench.run(&case_engines, args.runs).await;
        let mut measured = measured.with_context(|| format!("case {}", case.name))?;
        // Fresh-process peaks; the smoke run probes only the full scan to stay fast.
        let probe = !args.smoke || case.name == "full_scan";
        for m in &mut measured {
            if !m.engine.is_peer() && !probe {
                m.peak_rss_bytes = m.peak_rss_in_process_bytes;
            } else if !m.engine.is_peer() {
                m.peak_rss_bytes = isolated_peak_rss(&args, &cache, case, m.engine)
                    .with_context(|| format!("peak RSS of {} on {}", m.engine.name(), case.name))?;
            }
        }
        for m in &measured {
            eprintln!(
                "  {:<16} {:<20} median {:.4} s",
                m.case,
                m.engine.name(),
                m.median()
            );
        }
        all.extend(measured);
    }
    drop(peers);
    let _ = std::fs::remove_dir_all(&scratch);

    let table = report::table(&all);
    println!();
    for case in &cases {
        println!("{:<16} {}", case.name, case.description);
    }
    println!();
    print!("{table}");
    println!();
    print!("{}", report::targets(&all, dataset.scale));
    for note in &notes {
        println!("note: {note}");
    }
    for (engine, why) in &skipped {
        println!("skipped peer {}: {why:#}", engine.name());
    }
    println!();
    print!("{}", planning::table(&planning::run(args.runs)?));
    println!("total {:.1} s", started.elapsed().as_secs_f64());
    if let Some(path) = &args.json {
        let json = report::json(&all, dataset.scale, args.shape());
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| path.display().to_string())?;
    }
    if let Some(path) = &args.markdown {
        std::fs::write(path, &table).with_context(|| path.display().to_string())?;
    }
    Ok(())
}

/// Runs `lakescan-bench --rss-probe <engine> --cases <case>` and returns its peak RSS.
fn isolated_peak_rss(args: &Args, cache: &Path, case: &Case, engine: Engine) -> Result<u64> {
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.arg("--rss-probe")
        .arg(engine.name())
        .arg("--cases")
        .arg(case.name)
        .arg("--scale")
        .arg(args.scale.to_string())
        .arg("--threads")
        .arg(args.threads.to_string())
        .arg("--batch-size")
        .arg(args.batch_size.to_string())
        .arg("--consume-on")
        .arg(consume_on_name(args.consume_on))
        .arg("--ballista-scheduling")
        .arg(args.ballista_scheduling.to_string())
        .arg("--cache-dir")
        .arg(cache);
    if args.smoke {
        cmd.arg("--smoke");
    }
    let out = cmd.stderr(std::process::Stdio::inherit()).output()?;
    if !out.status.success() {
        bail!("the RSS probe failed ({})", out.status);
    }
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    reply["peak_rss_bytes"]
        .as_u64()
        .context("no peak_rss_bytes from the RSS probe")
}

/// `on` as spelled on the command line.
fn consume_on_name(on: ConsumeOn) -> String {
    on.to_possible_value()
        .map_or_else(|| format!("{on:?}"), |v| v.get_name().to_owned())
}

/// One run of `case` by `engine` in this (fresh) process; the process's peak RSS after it.
async fn rss_probe(
    engine: Engine,
    case: &Case,
    dataset: &Dataset,
    shape: Shape,
    on: ConsumeOn,
    scheduling: Scheduling,
) -> Result<u64> {
    match engine {
        Engine::Lakescan
        | Engine::LakescanNoPreload
        | Engine::LakescanNoDynamicFilters
        | Engine::LakescanListingCache => {
            let variant = engine.lakescan_variant().context("a lakescan engine")?;
            let ctx = engines::lakescan_session(dataset, shape, variant).await?;
            engines::run_sql_on(&ctx, &case.sql, on).await?;
        }
        Engine::LakescanBallista | Engine::DataFusionBallista => {
            let tables = match engine {
                Engine::LakescanBallista => engines::Peers::Lakescan,
                _ => engines::Peers::DataFusion,
            };
            let ctx = engines::ballista_session(dataset, shape, scheduling, tables).await?;
            engines::run_sql_on(&ctx, &case.sql, on).await?;
        }
        Engine::DataFusion | Engine::DataFusionPushdown => {
            let pushdown = engine == Engine::DataFusionPushdown;
            let ctx = engines::datafusion_session(dataset, shape, pushdown).await?;
            engines::run_sql_on(&ctx, &case.sql, on).await?;
        }
        Engine::DataFusionOrc => {
            let ctx = engines::datafusion_orc_session(dataset, shape).await?;
            engines::run_sql_on(&ctx, &case.sql, on).await?;
        }
        Engine::ParquetFloor => {
            FloorPlan::new(dataset, &case.floor)
                .await?
                .run(shape.threads)?;
        }
        Engine::DuckDb | Engine::DuckDbIceberg | Engine::IcebergDataFusion => {
            bail!("a peer's peak RSS is measured in its own process")
        }
    }
    Ok(rss::lifetime_peak_rss_bytes())
}

/// The engines of `--engines` in canonical order; lakescan, the reference of the result
/// check, is always included unless the check is skipped. Without `--engines`: every
/// engine, except the peers in a smoke run (they need what `setup.sh` installs).
fn selected_engines(names: &[String], skip_check: bool, smoke: bool) -> Result<Vec<Engine>> {
    if names.is_empty() {
        let all = Engine::ALL.into_iter();
        return Ok(all.filter(|e| !smoke || !e.is_peer()).collect());
    }
    let mut chosen = if skip_check {
        vec![]
    } else {
        vec![Engine::Lakescan]
    };
    for name in names {
        let e = Engine::parse(name)?;
        if !chosen.contains(&e) {
            chosen.push(e);
        }
    }
    // Keep the canonical order.
    Ok(Engine::ALL
        .into_iter()
        .filter(|e| chosen.contains(e))
        .collect())
}
