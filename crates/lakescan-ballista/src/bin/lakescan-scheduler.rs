//! `lakescan-scheduler`: a Ballista scheduler that knows lakescan's tables and scans.
//!
//! ```text
//! lakescan-scheduler --bind 127.0.0.1:50050
//! ```
//!
//! Prints `lakescan-scheduler listening on HOST:PORT` once it accepts connections (with
//! `--bind HOST:0`, the port the system chose), then serves until interrupted.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use lakescan_ballista::server::Scheduling;

/// A Ballista scheduler for lakescan tables.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// Address to listen on; port 0 picks a free port (printed).
    #[arg(long, default_value = "127.0.0.1:50050")]
    bind: SocketAddr,
    /// Seconds without a word from an executor before its tasks run elsewhere (at least
    /// 3; executors' heartbeats must come more often).
    #[arg(long, default_value_t = 60)]
    executor_timeout_seconds: u64,
    /// How tasks reach executors: `push` (the scheduler sends them) or `pull` (executors
    /// poll); the executors must be started with the same.
    #[arg(long, default_value = "push")]
    scheduling: Scheduling,
}

#[tokio::main]
async fn main() -> datafusion::common::Result<()> {
    let args = Args::parse();
    lakescan_ballista::logging::log_to_stderr();
    let scheduler = lakescan_ballista::server::start_scheduler(
        args.bind,
        Duration::from_secs(args.executor_timeout_seconds),
        args.scheduling,
    )
    .await?;
    println!("lakescan-scheduler listening on {}", scheduler.address);
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = scheduler.serving => {}
    }
    Ok(())
}
