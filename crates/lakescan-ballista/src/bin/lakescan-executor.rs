//! `lakescan-executor`: a Ballista executor that reads lakescan's scans.
//!
//! ```text
//! lakescan-executor --scheduler 127.0.0.1:50050 --bind 127.0.0.1:50051
//! ```
//!
//! Prints `lakescan-executor listening on HOST:PORT` once it serves shuffle data (with
//! `--bind HOST:0`, the port the system chose) and polls the scheduler for tasks until
//! interrupted. Object stores come from its own `AWS_*` environment.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;

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
}

#[tokio::main]
async fn main() -> datafusion::common::Result<()> {
    let args = Args::parse();
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
    let executor =
        lakescan_ballista::server::start_executor(&scheduler, args.bind, slots, work_dir).await?;
    println!("lakescan-executor listening on {}", executor.address);
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = executor.serving => {}
        _ = executor.polling => {}
    }
    Ok(())
}
