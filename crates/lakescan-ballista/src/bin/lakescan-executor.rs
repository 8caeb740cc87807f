//! `lakescan-executor`: a Ballista executor that reads lakescan's scans.
//!
//! ```text
//! lakescan-executor --scheduler 127.0.0.1:50050 --bind 127.0.0.1:50051
//! ```
//!
//! Prints `lakescan-executor listening on HOST:PORT` once it serves shuffle data (with
//! `--bind HOST:0`, the port the system chose) and is registered, then
//! `lakescan-executor takes tasks on HOST:PORT` when the scheduler pushes them (the port of
//! `--task-port`, or a free one), and runs tasks until interrupted or stopped by the
//! scheduler. Object stores come from its own `AWS_*` environment.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use lakescan_ballista::server::{ExecutorSettings, Scheduling};

/// A Ballista executor for lakescan scans.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// The scheduler, `HOST:PORT` (or `http://HOST:PORT`).
    #[arg(long, default_value = "127.0.0.1:50050")]
    scheduler: String,
    /// Address of the executor's shuffle service; port 0 picks a free port (printed).
    #[arg(long, default_value = "127.0.0.1:50051")]
    bind: SocketAddr,
    /// Tasks run at once (default: the machine's cores).
    #[arg(long)]
    slots: Option<usize>,
    /// Where shuffle files are written (default: a directory under the system's temporary
    /// directory, named after the process).
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// How tasks reach it: `push` (the scheduler calls its task service) or `pull` (it
    /// polls); as the scheduler's.
    #[arg(long, default_value = "push")]
    scheduling: Scheduling,
    /// With push, the port of the task service the scheduler calls (same host as
    /// `--bind`); 0 picks a free port (printed).
    #[arg(long, default_value_t = 0)]
    task_port: u16,
    /// With push, seconds between heartbeats to the scheduler (keep them well under its
    /// `--executor-timeout-seconds`).
    #[arg(long, default_value_t = 5)]
    heartbeat_seconds: u64,
}

#[tokio::main]
async fn main() -> datafusion::common::Result<()> {
    let args = Args::parse();
    lakescan_ballista::logging::log_to_stderr();
    let scheduler = match args.scheduler.contains("://") {
        true => args.scheduler.clone(),
        false => format!("http://{}", args.scheduler),
    };
    let slots = args
        .slots
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let work_dir = args.work_dir.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("lakescan-executor-{}", std::process::id()))
    });
    let settings = ExecutorSettings {
        scheduling: args.scheduling,
        task_port: args.task_port,
        heartbeat: Duration::from_secs(args.heartbeat_seconds),
        ..ExecutorSettings::new(slots, work_dir)
    };
    let executor =
        lakescan_ballista::server::start_executor(&scheduler, args.bind, settings).await?;
    println!("lakescan-executor listening on {}", executor.address);
    if let Some(tasks) = executor.task_address {
        println!("lakescan-executor takes tasks on {tasks}");
    }
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = executor.serving => {}
        _ = executor.working => {}
    }
    Ok(())
}
