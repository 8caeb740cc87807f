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
mod engines;
mod floor;
mod iceberg_tables;
mod peer;
mod planning;
mod report;
mod results;
mod rss;
mod s3;
mod tpch;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use datafusion::prelude::SessionContext;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::cases::Case;
use crate::data::{Dataset, Layout};
use crate::engines::{ConsumeOn, Engine, LakeMetrics, LakescanVariant, SqlRun};
use crate::floor::FloorPlan;
use crate::peer::Peer;
use crate::report::Measurement;
use crate::results::{ResultCollector, ResultSet};
use crate::rss::PeakRss;

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
    /// How lakescan and DataFusion results are consumed: each output partition by its own
    /// runtime task, the partitions merged and consumed by one runtime task, or merged and
    /// consumed by the main thread blocking on the runtime (figures before 2026-12-02 15:00
    /// UTC).
    #[arg(long, value_enum, default_value_t = ConsumeOn::Partitions)]
    consume_on: ConsumeOn,
    /// Python interpreter with the duckdb package.
    #[arg(long, default_value = "python3")]
    python: String,
    /// Python of the venv with duckdb 1.4.4 and its avro and iceberg extension packages
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
    /// Internal: generate the data set and exit (run as a child process).
    #[arg(long, hide = true)]
    prepare_data: bool,
    /// Internal: write `orc/lineitem` and exit (run as a child process).
    #[arg(long, hide = true)]
    prepare_orc: bool,
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
    let layout = if args.smoke {
        Layout::smoke(SMOKE_SCALE)
    } else {
        Layout::benchmark(args.scale)
    };
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
            args.threads,
            args.consume_on,
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
    let variant = |v| engines::lakescan_session(&dataset, args.threads, v);
    let sessions = Sessions {
        lakescan: variant(LakescanVariant::Default).await?,
        lakescan_no_preload: variant(LakescanVariant::NoPreload).await?,
        lakescan_no_dynamic: variant(LakescanVariant::NoDynamicFilters).await?,
        lakescan_listing_cache: variant(LakescanVariant::ListingCache).await?,
        lakescan_ballista: match engines.contains(&Engine::LakescanBallista) {
            true => Some(engines::lakescan_ballista_session(&dataset, args.threads).await?),
            false => None,
        },
        datafusion: engines::datafusion_session(&dataset, args.threads, false).await?,
        datafusion_ballista: match engines.contains(&Engine::DataFusionBallista) {
            true => Some(engines::datafusion_ballista_session(&dataset, args.threads).await?),
            false => None,
        },
        datafusion_pushdown: engines::datafusion_session(&dataset, args.threads, true).await?,
        datafusion_orc: match engines.contains(&Engine::DataFusionOrc)
            && cases.iter().any(|c| c.orc)
        {
            true => Some(engines::datafusion_orc_session(&dataset, args.threads).await?),
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
         {} core(s), results consumed on the {}, engines: {}{}",
        dataset.scale,
        dataset.root.display(),
        args.runs,
        args.threads,
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
    print!("{}", report::targets(&all));
    for note in &notes {
        println!("note: {note}");
    }
    for (engine, why) in &skipped {
        println!("skipped peer {}: {why:#}", engine.name());
    }
    println!();
    print!("{}", planning::table(&planning::run(args.runs.min(3))?));
    println!("total {:.1} s", started.elapsed().as_secs_f64());
    if let Some(path) = &args.json {
        let json = report::json(&all, dataset.scale, args.threads);
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
        .arg("--consume-on")
        .arg(consume_on_name(args.consume_on))
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
    threads: usize,
    on: ConsumeOn,
) -> Result<u64> {
    match engine {
        Engine::Lakescan
        | Engine::LakescanNoPreload
        | Engine::LakescanNoDynamicFilters
        | Engine::LakescanListingCache => {
            let variant = engine.lakescan_variant().context("a lakescan engine")?;
            let ctx = engines::lakescan_session(dataset, threads, variant).await?;
            engines::run_sql_on(&ctx, &case.sql, on).await?;
        }
        Engine::LakescanBallista => {
            let ctx = engines::lakescan_ballista_session(dataset, threads).await?;
            engines::run_sql_on(&ctx, &case.sql, on).await?;
        }
        Engine::DataFusionBallista => {
            let ctx = engines::datafusion_ballista_session(dataset, threads).await?;
            engines::run_sql_on(&ctx, &case.sql, on).await?;
        }
        Engine::DataFusion | Engine::DataFusionPushdown => {
            let pushdown = engine == Engine::DataFusionPushdown;
            let ctx = engines::datafusion_session(dataset, threads, pushdown).await?;
            engines::run_sql_on(&ctx, &case.sql, on).await?;
        }
        Engine::DataFusionOrc => {
            let ctx = engines::datafusion_orc_session(dataset, threads).await?;
            engines::run_sql_on(&ctx, &case.sql, on).await?;
        }
        Engine::ParquetFloor => {
            FloorPlan::new(dataset, &case.floor).await?.run(threads)?;
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

struct Sessions {
    lakescan: SessionContext,
    lakescan_no_preload: SessionContext,
    lakescan_no_dynamic: SessionContext,
    lakescan_listing_cache: SessionContext,
    /// Started only when the engine runs (it starts a scheduler and two executors).
    lakescan_ballista: Option<SessionContext>,
    datafusion: SessionContext,
    /// Started only when the engine runs.
    datafusion_ballista: Option<SessionContext>,
    datafusion_pushdown: SessionContext,
    /// Started only when the engine runs an ORC case.
    datafusion_orc: Option<SessionContext>,
}

impl Sessions {
    fn of(&self, engine: Engine) -> Option<&SessionContext> {
        match engine {
            Engine::Lakescan => Some(&self.lakescan),
            Engine::LakescanNoPreload => Some(&self.lakescan_no_preload),
            Engine::LakescanNoDynamicFilters => Some(&self.lakescan_no_dynamic),
            Engine::LakescanListingCache => Some(&self.lakescan_listing_cache),
            Engine::LakescanBallista => self.lakescan_ballista.as_ref(),
            Engine::DataFusion => Some(&self.datafusion),
            Engine::DataFusionBallista => self.datafusion_ballista.as_ref(),
            Engine::DataFusionPushdown => Some(&self.datafusion_pushdown),
            Engine::DataFusionOrc => self.datafusion_orc.as_ref(),
            _ => None,
        }
    }
}

/// Engine indexes `0..n` in the order of round `round`: a Fisher-Yates shuffle driven by a
/// xorshift generator seeded with the round.
fn round_order(n: usize, round: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = (round as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    order
}

/// One case: result check, warm-up, then `runs` rounds visiting every engine once each (in
/// a shuffled order).
struct CaseBench<'a> {
    case: &'a Case,
    dataset: &'a Dataset,
    sessions: &'a Sessions,
    peers: &'a mut Vec<(Engine, Peer)>,
    scratch: &'a Path,
    notes: &'a mut Vec<String>,
    skip_check: bool,
    threads: usize,
    consume_on: ConsumeOn,
}

/// What one untimed or timed run of an engine observed.
struct Observed {
    elapsed: f64,
    peak_rss: u64,
    rows_returned: usize,
    lake: Option<LakeMetrics>,
    df_row_groups: Option<usize>,
    floor_rows: Option<u64>,
    floor_row_groups: Option<usize>,
}

impl CaseBench<'_> {
    async fn run(&mut self, engines: &[Engine], runs: usize) -> Result<Vec<Measurement>> {
        let case = self.case;
        let mut engines = engines.to_vec();
        let floor = if engines.contains(&Engine::ParquetFloor) {
            Some(FloorPlan::new(self.dataset, &case.floor).await?)
        } else {
            None
        };

        // 1. Results: every engine against lakescan's, before anything is timed.
        let (expected, lake_metrics) = if self.skip_check {
            (None, LakeMetrics::default())
        } else {
            let mut collector = ResultCollector::default();
            let reference =
                engines::run_sql(&self.sessions.lakescan, &case.sql, Some(&mut collector))
                    .await
                    .context("lakescan")?;
            let metrics = engines::lakescan_metrics(&reference.plan);
            (Some(collector.finish()), metrics)
        };
        let mut failed_peers = vec![];
        for &engine in &engines {
            let Some(expected) = &expected else {
                break;
            };
            let actual = match engine {
                Engine::Lakescan => continue,
                Engine::LakescanNoPreload
                | Engine::LakescanNoDynamicFilters
                | Engine::LakescanListingCache
                | Engine::LakescanBallista
                | Engine::DataFusionBallista
                | Engine::DataFusion
                | Engine::DataFusionPushdown
                | Engine::DataFusionOrc => {
                    let mut c = ResultCollector::default();
                    let ctx = self.sessions.of(engine).context("session")?;
                    engines::run_sql(ctx, &case.sql, Some(&mut c))
                        .await
                        .with_context(|| engine.name())?;
                    c.finish()
                }
                Engine::DuckDb => self.peer_result(engine)?,
                Engine::DuckDbIceberg | Engine::IcebergDataFusion => {
                    // An Iceberg peer that cannot run a case, or answers it wrongly, is
                    // left out of that case with a note instead of stopping the run.
                    let verdict = self.peer_result(engine).and_then(|actual| {
                        results::compare(expected, &actual).map_err(|d| anyhow::anyhow!("{d}"))
                    });
                    if let Err(e) = verdict {
                        let first = e.to_string();
                        let first = first.lines().next().unwrap_or_default();
                        self.notes.push(format!(
                            "{}: {} left out: {first}",
                            case.name,
                            engine.name()
                        ));
                        failed_peers.push(engine);
                    }
                    continue;
                }
                Engine::ParquetFloor => {
                    let plan = floor.as_ref().context("floor plan")?;
                    let run = plan.run(self.threads)?;
                    if run.rows != plan.rows {
                        bail!(
                            "parquet-floor decoded {} rows, its row groups hold {}",
                            run.rows,
                            plan.rows
                        );
                    }
                    if lake_metrics.scans > 0 && plan.row_groups != lake_metrics.row_groups_read() {
                        self.notes.push(format!(
                            "{}: parquet-floor decodes {} row groups (DataFusion's \
                             PruningPredicate), lakescan read {}",
                            case.name,
                            plan.row_groups,
                            lake_metrics.row_groups_read()
                        ));
                    }
                    continue;
                }
            };
            if let Err(diff) = results::compare(expected, &actual) {
                bail!(
                    "result of {} differs from lakescan's on case {}:\n{diff}\nquery: {}",
                    engine.name(),
                    case.name,
                    case.sql
                );
            }
        }
        engines.retain(|e| !failed_peers.contains(e));
        match &expected {
            None => eprintln!("{}: result check SKIPPED (--skip-check)", case.name),
            Some(expected) => eprintln!(
                "{}: {} row(s), results of {} engine(s) agree",
                case.name,
                expected.rows,
                engines.len()
            ),
        }

        // 2. Warm-up, then 3. timed rounds, every engine once per round, in an order
        // shuffled per round (the same in every invocation): no engine always follows the
        // same one.
        let mut measured: Vec<Measurement> = engines
            .iter()
            .map(|&e| Measurement::new(case.name, e))
            .collect();
        let mut after_peer = false;
        for round in 0..=runs {
            for i in round_order(engines.len(), round) {
                let engine = engines[i];
                if after_peer && !engine.is_peer() {
                    // A peer process's query leaves the CPU caches (2 cores) cold: the next
                    // in-process millisecond query took 2-3 x its time. That run is repeated
                    // untimed first, so every engine is timed warm, whichever one ran before.
                    self.observe(engine, floor.as_ref())
                        .await
                        .with_context(|| engine.name())?;
                }
                after_peer = engine.is_peer();
                let seen = self
                    .observe(engine, floor.as_ref())
                    .await
                    .with_context(|| engine.name())?;
                let expected_rows = expected.as_ref().map(|e| e.rows);
                let rows_ok = match engine {
                    Engine::ParquetFloor => seen.floor_rows == floor.as_ref().map(|f| f.rows),
                    _ => expected_rows.is_none_or(|rows| rows == seen.rows_returned),
                };
                if !rows_ok {
                    bail!(
                        "{} returned {} rows in a timed run, {:?} expected",
                        engine.name(),
                        seen.rows_returned,
                        expected_rows
                    );
                }
                if round == 0 {
                    continue;
                }
                let m = &mut measured[i];
                m.times.push(seen.elapsed);
                m.peak_rss_in_process_bytes = m.peak_rss_in_process_bytes.max(seen.peak_rss);
                if engine.is_peer() {
                    m.peak_rss_bytes = m.peak_rss_in_process_bytes;
                }
                m.rows_returned = seen.rows_returned;
                if let Some(lake) = seen.lake {
                    m.rows_decoded = Some(lake.rows_scanned as u64);
                    m.rows_emitted = Some(lake.rows_emitted as u64);
                    m.row_groups_pruned_dynamic = Some(lake.row_groups_pruned_dynamic);
                    m.row_groups_read = Some(lake.row_groups_read());
                    m.row_groups_total = Some(lake.row_groups_total);
                    m.bytes_read = Some(lake.bytes_read);
                    m.splits_total = Some(lake.splits_total);
                    m.files_pruned_bucket = Some(lake.files_pruned_bucket);
                    m.delete_files_loaded = Some(lake.delete_files_loaded);
                }
                if seen.df_row_groups.is_some() {
                    m.row_groups_read = seen.df_row_groups;
                }
                if seen.floor_rows.is_some() {
                    m.rows_decoded = seen.floor_rows;
                    m.row_groups_read = seen.floor_row_groups;
                }
            }
        }
        Ok(measured)
    }

    fn peer(&mut self, engine: Engine) -> Result<&mut Peer> {
        let found = self.peers.iter_mut().find(|(e, _)| *e == engine);
        found
            .map(|(_, p)| p)
            .with_context(|| format!("{} not started", engine.name()))
    }

    /// A peer's result of the case, via a Parquet file the peer writes.
    fn peer_result(&mut self, engine: Engine) -> Result<ResultSet> {
        let out = self
            .scratch
            .join(format!("{}-{}.parquet", self.case.name, engine.name()));
        let sql = self.case.sql.clone();
        self.peer(engine)?.check(&sql, &out)?;
        let mut c = ResultCollector::default();
        let file = std::fs::File::open(&out)?;
        for batch in ParquetRecordBatchReaderBuilder::try_new(file)?.build()? {
            c.add(&batch?)?;
        }
        std::fs::remove_file(&out)?;
        Ok(c.finish())
    }

    async fn observe(&mut self, engine: Engine, floor: Option<&FloorPlan>) -> Result<Observed> {
        let mut seen = Observed {
            elapsed: 0.0,
            peak_rss: 0,
            rows_returned: 0,
            lake: None,
            df_row_groups: None,
            floor_rows: None,
            floor_row_groups: None,
        };
        match engine {
            Engine::Lakescan
            | Engine::LakescanNoPreload
            | Engine::LakescanNoDynamicFilters
            | Engine::LakescanListingCache
            | Engine::LakescanBallista
            | Engine::DataFusionBallista
            | Engine::DataFusion
            | Engine::DataFusionPushdown
            | Engine::DataFusionOrc => {
                let ctx = self.sessions.of(engine).context("session")?;
                let rss = PeakRss::start();
                let run: SqlRun = engines::run_sql_on(ctx, &self.case.sql, self.consume_on).await?;
                seen.peak_rss = rss.finish();
                seen.elapsed = run.elapsed.as_secs_f64();
                seen.rows_returned = run.rows;
                if matches!(
                    engine,
                    Engine::LakescanBallista | Engine::DataFusionBallista | Engine::DataFusionOrc
                ) {
                    // No scan metrics to show: on Ballista the scans ran in the executors;
                    // datafusion-orc's scan is not DataFusion's Parquet scan.
                } else if engine.lakescan_variant().is_some() {
                    seen.lake = Some(engines::lakescan_metrics(&run.plan));
                } else {
                    seen.df_row_groups = engines::datafusion_row_groups_read(&run.plan);
                }
            }
            Engine::ParquetFloor => {
                let plan = floor.context("floor plan")?;
                let rss = PeakRss::start();
                let run = plan.run(self.threads)?;
                seen.peak_rss = rss.finish();
                seen.elapsed = run.elapsed.as_secs_f64();
                seen.floor_rows = Some(run.rows);
                seen.floor_row_groups = Some(run.row_groups);
            }
            Engine::DuckDb | Engine::DuckDbIceberg | Engine::IcebergDataFusion => {
                let sql = self.case.sql.clone();
                let run = self.peer(engine)?.run(&sql)?;
                seen.elapsed = run.elapsed.as_secs_f64();
                seen.peak_rss = run.peak_rss_bytes;
                seen.rows_returned = run.rows;
            }
        }
        Ok(seen)
    }
}

#[cfg(test)]
mod tests {
    use super::round_order;

    #[test]
    fn round_orders_are_permutations_that_vary() {
        let orders: Vec<Vec<usize>> = (0..10).map(|r| round_order(7, r)).collect();
        for order in &orders {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..7).collect::<Vec<_>>());
        }
        // Engine 0's predecessor is not the same in every round.
        let predecessors: std::collections::BTreeSet<Option<usize>> = orders
            .iter()
            .map(|o| {
                let at = o.iter().position(|&e| e == 0).unwrap();
                at.checked_sub(1).map(|p| o[p])
            })
            .collect();
        assert!(predecessors.len() > 2, "{predecessors:?}");
        assert_eq!(round_order(1, 3), vec![0]);
        assert!(round_order(0, 3).is_empty());
    }
}
