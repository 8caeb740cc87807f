//! Sessions for Ballista: a [`state`] whose plans carry lakescan's tables and scans, and a
//! cluster to run them on, in this process ([`crate::cluster::standalone`]) or elsewhere ([`remote`]).
//!
//! A session codec *replaces* Ballista's own, so lakescan's codecs wrap Ballista's and hand
//! it every node that is not lakescan's ([`codecs`]).
//!
//! The in-process cluster is built from Ballista's public pieces rather than with
//! `SessionContext::standalone_with_state`, for three reasons: that scheduler plans every
//! query with the session as it was at start (it drops the query's settings, so a `SET
//! lakescan.split_size` or `SET datafusion.execution.target_partitions` would not reach
//! planning), it always starts one executor, and it has no [`crate::rerun_guard`]. The
//! scheduler and the executors are [`crate::server`]'s, sharing the session's runtime. The
//! executors write their shuffle files in one temporary directory the client session owns
//! ([`crate::cluster::ShuffleDirectory`]): it is removed when the last clone of the session is dropped.
//! (Ballista's own in-process executor takes a temporary directory's name and drops the
//! directory, then recreates it for its shuffle files and never removes them.)

use std::sync::Arc;
use std::time::Duration;

use ballista::extension::SessionConfigExt;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::{
    BallistaCodec, BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec,
};
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::prelude::{SessionConfig, SessionContext};
use lakescan::codec::{LakeLogicalCodec, LakePhysicalCodec};
use lakescan::core::api::LakeScanConfig;

/// lakescan's logical codec around Ballista's.
pub fn logical_codec() -> Arc<LakeLogicalCodec> {
    Arc::new(LakeLogicalCodec::new(Arc::new(
        BallistaLogicalExtensionCodec::default(),
    )))
}

/// lakescan's physical codec around Ballista's.
pub fn physical_codec() -> Arc<LakePhysicalCodec> {
    Arc::new(LakePhysicalCodec::new(Arc::new(
        BallistaPhysicalExtensionCodec::default(),
    )))
}

/// lakescan's codecs around Ballista's, as Ballista's scheduler and executors take them.
pub fn codecs() -> BallistaCodec {
    BallistaCodec::new(logical_codec(), physical_codec())
}

/// `config` made a Ballista configuration (its restrictions applied) with lakescan's codecs
/// and `lakescan.*` settings.
pub fn config(config: SessionConfig) -> SessionConfig {
    let config = match config.options().extensions.get::<LakeScanConfig>() {
        Some(_) => config,
        None => config.with_option_extension(LakeScanConfig::default()),
    };
    config
        .upgrade_for_ballista()
        .with_ballista_logical_extension_codec(logical_codec())
        .with_ballista_physical_extension_codec(physical_codec())
}

/// A session state for Ballista over `config` with lakescan registered
/// (`lakescan::register`: table factories, `hive_hash`/`hive_bucket`, `table_changes`,
/// `lakescan.*` settings) and lakescan's codecs: the state of a client, of a scheduler's
/// sessions and of an executor's tasks alike.
pub fn state(session: SessionConfig) -> Result<SessionState> {
    state_with_runtime(session, Arc::new(RuntimeEnv::default()))
}

/// [`state`] over `runtime` (object stores, caches, memory pool shared with other sessions);
/// also the session a scheduler plans a query in, over the query's configuration (which is
/// already Ballista's: the upgrade is applied once, and the query's settings are kept).
pub fn state_with_runtime(
    session: SessionConfig,
    runtime: Arc<RuntimeEnv>,
) -> Result<SessionState> {
    let state = SessionStateBuilder::new()
        .with_default_features()
        .with_config(config(session))
        .with_runtime_env(runtime)
        .build();
    let ctx = SessionContext::new_with_state(state);
    lakescan::register(&ctx)?;
    Ok(ctx.state())
}

/// How long a client waits for a scheduler to accept connections.
const CONNECT_ATTEMPTS: u32 = 100;
const CONNECT_PAUSE: Duration = Duration::from_millis(100);

/// A client session over `upgraded` (a state made Ballista's), with lakescan registered again:
/// the upgrade replaces the session's scalar functions with Ballista's list.
pub(crate) fn client(upgraded: SessionState) -> Result<SessionContext> {
    let ctx = SessionContext::new_with_state(upgraded);
    lakescan::register(&ctx)?;
    Ok(ctx)
}

/// A client session of the cluster whose scheduler is at `url` (`df://host:port`), with
/// `state`'s settings, tables and functions.
pub async fn remote(url: &str, state: SessionState) -> Result<SessionContext> {
    use ballista::prelude::SessionContextExt;
    let ctx = SessionContext::remote_with_state(url, state).await?;
    client(ctx.state())
}

/// A client of the scheduler at `url`, retried while it starts.
pub(crate) async fn connect(url: &str) -> Result<SchedulerGrpcClient<tonic::transport::Channel>> {
    let mut last = None;
    for _ in 0..CONNECT_ATTEMPTS {
        match SchedulerGrpcClient::connect(url.to_string()).await {
            Ok(client) => return Ok(client),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(CONNECT_PAUSE).await;
    }
    Err(DataFusionError::Configuration(format!(
        "scheduler at {url} did not accept connections: {}",
        last.map(|e| e.to_string()).unwrap_or_default()
    )))
}
