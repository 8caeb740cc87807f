//! The scheduler and the executor of a lakescan cluster (the `lakescan-scheduler` and
//! `lakescan-executor` binaries): Ballista's own servers, built from its public pieces the
//! way its in-process cluster builds them, with lakescan's codecs, sessions and functions.
//!
//! ```text
//!  lakescan --ballista df://H:P ──▶ scheduler (H:P): decodes tables, plans, cuts stages
//!                                     ▲ poll for tasks (pull)
//!                 executor A ─────────┤  each task: decode its stage, run one partition,
//!                 executor B ─────────┘  write shuffle files, serve them over Flight
//! ```
//!
//! Why not `start_server` / `start_executor_process`: both take a port and bind it without
//! saying which one the system chose, and the executor registers itself under the port it
//! was given, so a cluster on free ports (tests, several clusters on one machine) needs to
//! bind its own listeners. Tasks are pulled (`PullStaged`) on both sides.
//!
//! Both processes read object stores the way a session does, with no `CREATE` to register
//! them: an `s3://` bucket gets a client from the process's `AWS_*` environment
//! (`lakescan_core::api::EnvironmentStores`); plans carry no credentials.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arrow_flight::flight_service_server::FlightServiceServer;
use ballista_core::ConfigProducer;
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::protobuf::ExecutorRegistration;
use ballista_core::serde::protobuf::scheduler_grpc_server::SchedulerGrpcServer;
use ballista_core::serde::scheduler::{
    ExecutorOperatingSystemSpecification, ExecutorSpecification,
};
use ballista_core::utils::{GrpcServerConfig, create_grpc_server};
use ballista_executor::executor::Executor;
use ballista_executor::flight_service::BallistaFlightService;
use ballista_executor::metrics::LoggingMetricsCollector;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::cluster::memory::{InMemoryClusterState, InMemoryJobState};
use ballista_scheduler::config::{SchedulerConfig, TaskDistributionPolicy};
use ballista_scheduler::metrics::default_metrics_collector;
use ballista_scheduler::scheduler_server::SchedulerServer;
use ballista_scheduler::scheduler_server::SessionBuilder;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use lakescan_core::api::EnvironmentStores;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::TcpListenerStream;

use crate::rerun_guard::{GuardedJobs, Reasons, RerunGuard};
use crate::session;

/// The runtime of a cluster process: its object stores come from the process's environment.
pub fn runtime() -> Result<Arc<RuntimeEnv>> {
    RuntimeEnvBuilder::new()
        .with_object_store_registry(Arc::new(EnvironmentStores::default()))
        .build_arc()
}

/// The configuration a scheduler plans with and an executor runs with, before a query's
/// settings: Ballista's, with lakescan's codecs and `lakescan.*` settings.
fn base_config() -> SessionConfig {
    session::config(SessionConfig::new())
}

fn ballista_error(
    what: &str,
) -> impl FnOnce(ballista_core::error::BallistaError) -> DataFusionError {
    let what = what.to_string();
    move |e| DataFusionError::Execution(format!("{what}: {e}"))
}

/// A running scheduler: where it listens, and the task serving it.
#[derive(Debug)]
pub struct RunningScheduler {
    /// The address clients and executors connect to.
    pub address: SocketAddr,
    /// Serves until the process ends (or the task is aborted).
    pub serving: JoinHandle<()>,
}

/// Starts a scheduler listening on `bind` (port 0: a free port, reported in the result);
/// an executor silent for `executor_timeout` is declared lost and its tasks run elsewhere.
pub async fn start_scheduler(
    bind: SocketAddr,
    executor_timeout: Duration,
) -> Result<RunningScheduler> {
    let runtime = runtime()?;
    let builder: SessionBuilder =
        Arc::new(move |config| session::state_with_runtime(config, Arc::clone(&runtime)));
    start_scheduler_with(bind, executor_timeout, builder, Arc::new(base_config)).await
}

/// [`start_scheduler`] planning each query in the session `builder` makes of the query's
/// configuration (`producer`'s, updated with the query's settings).
pub async fn start_scheduler_with(
    bind: SocketAddr,
    executor_timeout: Duration,
    builder: SessionBuilder,
    producer: ConfigProducer,
) -> Result<RunningScheduler> {
    let listener = TcpListener::bind(bind).await?;
    let address = listener.local_addr()?;
    let name = address.to_string();
    let reasons = Reasons::default();
    let jobs = GuardedJobs::new(
        InMemoryJobState::new(name.clone(), builder, producer),
        Arc::clone(&reasons),
    );
    let cluster = BallistaCluster::new(Arc::new(InMemoryClusterState::default()), Arc::new(jobs));
    let timeout = executor_timeout.as_secs().max(1);
    let (cancel, mut to_cancel) = tokio::sync::mpsc::unbounded_channel();
    let guard = RerunGuard::new(cancel, reasons);
    let config = SchedulerConfig {
        task_distribution: TaskDistributionPolicy::Custom(Arc::new(guard)),
        external_host: address.ip().to_string(),
        bind_host: address.ip().to_string(),
        bind_port: address.port(),
        scheduling_policy: TaskSchedulingPolicy::PullStaged,
        executor_timeout_seconds: timeout,
        expire_dead_executor_interval_seconds: timeout.clamp(1, 15),
        override_logical_codec: Some(session::logical_codec()),
        override_physical_codec: Some(session::physical_codec()),
        ..SchedulerConfig::default()
    };
    let max_message = config.grpc_server_max_decoding_message_size as usize;
    let metrics = default_metrics_collector().map_err(ballista_error("scheduler metrics"))?;
    let mut server: SchedulerServer<LogicalPlanNode, PhysicalPlanNode> =
        SchedulerServer::new(name, cluster, session::codecs(), Arc::new(config), metrics);
    server
        .init()
        .await
        .map_err(ballista_error("cannot start the scheduler"))?;
    // The jobs the guard failed, cancelled (after `init`: it starts the event loop); their
    // status keeps the guard's message (`GuardedJobs`).
    let canceller = server.clone();
    tokio::spawn(async move {
        while let Some(job) = to_cancel.recv().await {
            if let Err(e) = canceller.cancel_job(job).await {
                log::warn!("cannot cancel a job the re-run guard failed: {e}");
            }
        }
    });
    let service = SchedulerGrpcServer::new(server)
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message);
    let serving = tokio::spawn(async move {
        let served = create_grpc_server(&GrpcServerConfig::default())
            .add_service(service)
            .serve_with_incoming(TcpListenerStream::new(listener))
            .await;
        if let Err(e) = served {
            log::error!("scheduler stopped: {e}");
        }
    });
    Ok(RunningScheduler { address, serving })
}

/// A running executor: where its Flight service (shuffle data) listens, and its tasks.
#[derive(Debug)]
pub struct RunningExecutor {
    /// The address of its Flight service.
    pub address: SocketAddr,
    /// Serves shuffle data until the process ends.
    pub serving: JoinHandle<()>,
    /// Polls the scheduler for tasks and runs them; ends when the scheduler is gone.
    pub polling: JoinHandle<()>,
}

/// Starts an executor of the scheduler at `scheduler` (`http://host:port`), serving shuffle
/// data on `bind` (port 0: a free port), running `slots` tasks at a time and writing shuffle
/// files under `work_dir`.
pub async fn start_executor(
    scheduler: &str,
    bind: SocketAddr,
    slots: usize,
    work_dir: PathBuf,
) -> Result<RunningExecutor> {
    let runtime = runtime()?;
    let state = session::state_with_runtime(SessionConfig::new(), runtime)?;
    start_executor_with(scheduler, bind, slots, work_dir, &state, base_config()).await
}

/// [`start_executor`] running its tasks with `state`'s runtime (object stores, memory) and
/// functions, and with `config` before each query's settings.
pub(crate) async fn start_executor_with(
    scheduler: &str,
    bind: SocketAddr,
    slots: usize,
    work_dir: PathBuf,
    state: &SessionState,
    config: SessionConfig,
) -> Result<RunningExecutor> {
    let listener = TcpListener::bind(bind).await?;
    let address = listener.local_addr()?;
    std::fs::create_dir_all(&work_dir)?;
    let work_dir = work_dir.to_string_lossy().into_owned();
    let max_message = config.ballista_grpc_client_max_message_size();
    // Ballista's own executors talk to the scheduler with these limits (16 MiB by default)
    // instead of tonic's 4 MiB: one poll answer carries a stage plan per free slot.
    let client = session::connect(scheduler)
        .await?
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message);
    let runtime = Arc::clone(state.runtime_env());
    let registration = ExecutorRegistration {
        id: uuid::Uuid::new_v4().to_string(),
        host: Some(address.ip().to_string()),
        port: u32::from(address.port()),
        // Only push scheduling calls executors back; this cluster pulls.
        grpc_port: 0,
        specification: Some(
            ExecutorSpecification::default()
                .with_task_slots(slots.max(1) as u32)
                .into(),
        ),
        os_info: Some(ExecutorOperatingSystemSpecification::default().into()),
    };
    let executor = Arc::new(Executor::with_default_execution_engine(
        registration,
        &work_dir,
        Arc::new(move |_: &SessionConfig| Ok(Arc::clone(&runtime))),
        Arc::new(move || config.clone()),
        Arc::new(BallistaFunctionRegistry::from(state)),
        Arc::new(LoggingMetricsCollector::default()),
        slots.max(1),
    ));
    let flight = FlightServiceServer::new(BallistaFlightService::new(work_dir))
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message);
    let serving = tokio::spawn(async move {
        let served = create_grpc_server(&GrpcServerConfig::default())
            .add_service(flight)
            .serve_with_incoming(TcpListenerStream::new(listener))
            .await;
        if let Err(e) = served {
            log::error!("executor's Flight service stopped: {e}");
        }
    });
    let polling = tokio::spawn(async move {
        let polled =
            ballista_executor::execution_loop::poll_loop(client, executor, session::codecs()).await;
        if let Err(e) = polled {
            log::error!("executor stopped polling: {e}");
        }
    });
    Ok(RunningExecutor {
        address,
        serving,
        polling,
    })
}
