//! [`standalone`]: a Ballista cluster in this process — a scheduler pushing tasks to
//! executors on loopback ports, all sharing the client's runtime — and the client session
//! over it, whose
//! [`ShuffleDirectory`] holds the executors' shuffle files and goes with the session.

use std::sync::Arc;
use std::time::Duration;

use ballista::extension::{SessionConfigExt, SessionStateExt};
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::server::{ExecutorSettings, Scheduling};
use crate::{server, session};

/// The directory the executors of a [`standalone`] cluster write their shuffle files in,
/// held by the client session's configuration (an extension): removed with the session.
#[derive(Debug)]
pub struct ShuffleDirectory(tempfile::TempDir);

impl ShuffleDirectory {
    /// The directory of the cluster `ctx` is a client of, if it is a [`standalone`] one.
    pub fn of(ctx: &SessionContext) -> Option<std::path::PathBuf> {
        let state = ctx.state();
        let dir = state.config().get_extension::<ShuffleDirectory>()?;
        Some(dir.0.path().to_path_buf())
    }
}

/// A scheduler and `executors` executors in this process, sharing `state`'s runtime (its
/// object stores, caches and memory pool), and a client session over them. Each query is
/// planned with the client's settings at that moment; tasks are pushed to the executors.
pub async fn standalone(state: SessionState, executors: usize) -> Result<SessionContext> {
    standalone_with(state, executors, Scheduling::Push).await
}

/// [`standalone`], its tasks handed out by `scheduling`.
pub async fn standalone_with(
    state: SessionState,
    executors: usize,
    scheduling: Scheduling,
) -> Result<SessionContext> {
    let runtime = Arc::clone(state.runtime_env());
    let builder: ballista_scheduler::scheduler_server::SessionBuilder =
        Arc::new(move |config: SessionConfig| {
            session::state_with_runtime(config, Arc::clone(&runtime))
        });
    let startup = state.config().clone();
    let scheduler = server::start_scheduler_with(
        ([127, 0, 0, 1], 0).into(),
        Duration::from_secs(180),
        scheduling,
        builder,
        Arc::new(move || startup.clone()),
    )
    .await?;
    let url = format!("http://{}", scheduler.address);
    let slots = state
        .config()
        .ballista_standalone_parallelism()
        .div_ceil(executors.max(1))
        .max(1);
    let shuffles = tempfile::tempdir()?;
    let config = state.config().clone().upgrade_for_ballista();
    for k in 0..executors.max(1) {
        let work_dir = shuffles.path().join(format!("executor-{k}"));
        server::start_executor_with(
            &url,
            ([127, 0, 0, 1], 0).into(),
            ExecutorSettings {
                scheduling,
                ..ExecutorSettings::new(slots, work_dir)
            },
            &state,
            config.clone(),
        )
        .await
        .map_err(|e| DataFusionError::Configuration(format!("cannot start an executor: {e}")))?;
    }
    let mut upgraded = state.upgrade_for_ballista(url)?;
    upgraded
        .config_mut()
        .set_extension(Arc::new(ShuffleDirectory(shuffles)));
    session::client(upgraded)
}
