//! lakescan on Apache DataFusion Ballista 54.1: Hive and Iceberg scans on a cluster.
//!
//! | module        | owns                                                                  |
//! |---------------|-----------------------------------------------------------------------|
//! | [`session`]   | sessions whose plans carry lakescan tables and scans (Ballista's codecs wrapped by lakescan's); a remote cluster's client |
//! | [`cluster`]   | a cluster in this process: a scheduler, executors and a client session |
//! | [`rerun_guard`] | a lost executor fails the query instead of Ballista re-running finished work into duplicate rows |
//! | [`server`]    | the scheduler and the executor of the `lakescan-scheduler` / `lakescan-executor` binaries |
//! | [`logging`]   | the binaries' log on standard error, at `RUST_LOG`'s level |
//!
//! ```no_run
//! # async fn demo() -> datafusion::error::Result<()> {
//! use datafusion::prelude::SessionConfig;
//! let state = lakescan_ballista::session::state(SessionConfig::new())?;
//! // A scheduler and two executors in this process; `remote("df://host:50050", state)`
//! // connects to a running cluster instead.
//! let ctx = lakescan_ballista::cluster::standalone(state, 2).await?;
//! ctx.sql("CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION '/data/t/'").await?;
//! ctx.sql("SELECT count(*) FROM t").await?.show().await?;
//! # Ok(()) }
//! ```
//!
//! What crosses the wire and what does not is lakescan's business (`lakescan::codec`,
//! `lakescan_core::api::wire`); this crate only plugs it into Ballista.

pub mod cluster;
pub mod logging;
pub mod rerun_guard;
pub mod server;
pub mod session;
