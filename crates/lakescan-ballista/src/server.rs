//! The scheduler and the executor of a lakescan cluster (the `lakescan-scheduler` and
//! `lakescan-executor` binaries): Ballista's own servers, built from its public pieces the
//! way its in-process cluster builds them, with lakescan's codecs, sessions and functions.
//!
//! ```text
//!  lakescan --ballista df://H:P ──▶ scheduler (H:P): decodes tables, plans, cuts stages
//!                                     │ pushes each task to a free slot (push), or
//!                                     ▼ answers polls for tasks (pull)
//!                 executor A, B: each task decodes its stage, runs one partition, writes
//!                 shuffle files and serves them over Flight
//! ```
//!
//! [`Scheduling`]: by default the scheduler pushes tasks (Ballista's `PushStaged`): it calls
//! each executor's task service as soon as a slot is free or a task finishes, so a stage
//! starts as soon as the one before ends. With pull, an idle executor asks every 50 ms
//! (Ballista's poll loop), which every stage boundary waits for. Both ends must agree: a
//! pushing scheduler refuses polls.
//!
//! Why not `start_server` / `start_executor_process`: both take a port and bind it without
//! saying which one the system chose, and the executor registers itself under the ports it
//! was given, so a cluster on free ports (tests, several clusters on one machine) needs to
//! bind its own listeners. A pushed-to executor's task service is bound by Ballista's
//! `executor_server::startup` itself, on the port the registration names: the executor
//! takes a free port just before (asking the system for one), and takes another if it was
//! taken in between.
//!
//! Both processes read object stores the way a session does, with no `CREATE` to register
//! them: an `s3://` bucket gets a client from the process's `AWS_*` environment
//! (`lakescan_core::api::EnvironmentStores`); plans carry no credentials.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arrow_flight::flight_service_server::FlightServiceServer;
use ballista_core::ConfigProducer;
use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::error::BallistaError;
use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_core::serde::protobuf::ExecutorRegistration;
use ballista_core::serde::protobuf::scheduler_grpc_client::SchedulerGrpcClient;
use ballista_core::serde::protobuf::scheduler_grpc_server::{SchedulerGrpc, SchedulerGrpcServer};
use ballista_core::serde::protobuf::{UpdateTaskStatusParams, executor_status};
use ballista_core::serde::scheduler::{
    ExecutorOperatingSystemSpecification, ExecutorSpecification,
};
use ballista_core::utils::{GrpcServerConfig, create_grpc_server};
use ballista_executor::executor::Executor;
use ballista_executor::executor_process::ExecutorProcessConfig;
use ballista_executor::executor_server;
use ballista_executor::flight_service::BallistaFlightService;
use ballista_executor::metrics::LoggingMetricsCollector;
use ballista_executor::shutdown::ShutdownNotifier;
use ballista_scheduler::cluster::memory::{InMemoryClusterState, InMemoryJobState};
use ballista_scheduler::cluster::{BallistaCluster, ClusterState};
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
use tonic::transport::Channel;

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

/// How a cluster's tasks reach its executors; the scheduler and its executors must agree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scheduling {
    /// The scheduler sends each task to an executor with a free slot as soon as it can run
    /// (Ballista's `PushStaged`); each executor serves a task service the scheduler calls.
    #[default]
    Push,
    /// Executors ask the scheduler for tasks, 50 ms apart while there are none (Ballista's
    /// `PullStaged`); only the scheduler listens for the cluster's control traffic.
    Pull,
}

impl Scheduling {
    fn policy(self) -> TaskSchedulingPolicy {
        match self {
            Scheduling::Push => TaskSchedulingPolicy::PushStaged,
            Scheduling::Pull => TaskSchedulingPolicy::PullStaged,
        }
    }
}

impl std::str::FromStr for Scheduling {
    type Err = DataFusionError;

    fn from_str(s: &str) -> Result<Self> {
        [Scheduling::Push, Scheduling::Pull]
            .into_iter()
            .find(|scheduling| scheduling.to_string() == s)
            .ok_or_else(|| {
                DataFusionError::Configuration(format!("scheduling is 'push' or 'pull', not '{s}'"))
            })
    }
}

/// As the command lines spell it: `push` or `pull`.
impl std::fmt::Display for Scheduling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Scheduling::Push => "push",
            Scheduling::Pull => "pull",
        })
    }
}

/// A running scheduler: where it listens, and the task serving it.
#[derive(Debug)]
pub struct RunningScheduler {
    /// The address clients and executors connect to.
    pub address: SocketAddr,
    /// Serves until the process ends (or the task is aborted).
    pub serving: JoinHandle<()>,
}

/// Starts a scheduler listening on `bind` (port 0: a free port, reported in the result),
/// handing tasks out by `scheduling`; an executor silent for `executor_timeout` (at least
/// 3 s) is declared lost and its tasks run elsewhere.
pub async fn start_scheduler(
    bind: SocketAddr,
    executor_timeout: Duration,
    scheduling: Scheduling,
) -> Result<RunningScheduler> {
    let runtime = runtime()?;
    let builder: SessionBuilder =
        Arc::new(move |config| session::state_with_runtime(config, Arc::clone(&runtime)));
    let producer: ConfigProducer = Arc::new(base_config);
    start_scheduler_with(bind, executor_timeout, scheduling, builder, producer).await
}

/// [`start_scheduler`] planning each query in the session `builder` makes of the query's
/// configuration (`producer`'s, updated with the query's settings).
pub async fn start_scheduler_with(
    bind: SocketAddr,
    executor_timeout: Duration,
    scheduling: Scheduling,
    builder: SessionBuilder,
    producer: ConfigProducer,
) -> Result<RunningScheduler> {
    let listener = TcpListener::bind(bind).await?;
    let address = listener.local_addr()?;
    // Executors report task statuses to `http://{name}` in push mode.
    let name = address.to_string();
    let reasons = Reasons::default();
    let jobs = GuardedJobs::new(
        InMemoryJobState::new(name.clone(), builder, producer),
        Arc::clone(&reasons),
    );
    let executors = Arc::new(InMemoryClusterState::default());
    let cluster = BallistaCluster::new(Arc::clone(&executors) as _, Arc::new(jobs));
    // Heartbeats are stamped to the second: a shorter timeout would declare live executors
    // lost between two of them.
    let timeout = executor_timeout.as_secs().max(3);
    let (cancel, mut to_cancel) = tokio::sync::mpsc::unbounded_channel();
    let guard = RerunGuard::new(cancel, reasons);
    let config = SchedulerConfig {
        task_distribution: TaskDistributionPolicy::Custom(Arc::new(guard)),
        external_host: address.ip().to_string(),
        bind_host: address.ip().to_string(),
        bind_port: address.port(),
        scheduling_policy: scheduling.policy(),
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
    let reviver = server.clone();
    let service = SchedulerGrpcServer::new(server)
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message);
    // The re-offering lives in the serving task: it ends with the service, or when the
    // task is aborted.
    let serving = tokio::spawn(async move {
        let serve = create_grpc_server(&GrpcServerConfig::default())
            .add_service(service)
            .serve_with_incoming(TcpListenerStream::new(listener));
        let revive = async move {
            match scheduling {
                Scheduling::Push => offer_slots_again(reviver, executors).await,
                Scheduling::Pull => std::future::pending().await,
            }
        };
        tokio::select! {
            served = serve => if let Err(e) = served {
                log::error!("scheduler stopped: {e}");
            },
            () = revive => {}
        }
    });
    Ok(RunningScheduler { address, serving })
}

/// How often a pushing scheduler with running jobs offers its free slots again.
const REVIVE_EVERY: Duration = Duration::from_secs(1);

/// Offers the free task slots to the running jobs every [`REVIVE_EVERY`] while any runs;
/// never returns.
///
/// Ballista 54.1's pushing scheduler binds tasks to free slots when an executor registers,
/// a job is submitted, a task reports its status or a launch fails — not after it declares
/// an executor lost (`QueryStageSchedulerEvent::ExecutorLost` resets the lost tasks and
/// stops). The tasks it resets then wait for the next such event: forever, when the job
/// has no other task running and no other job comes. The only public way to make it bind
/// again is a status report: an empty one, in the name of a live executor, which returns
/// no slot (it reports no task) and binds what can be bound.
async fn offer_slots_again(
    server: SchedulerServer<LogicalPlanNode, PhysicalPlanNode>,
    executors: Arc<InMemoryClusterState>,
) {
    let mut ticks = tokio::time::interval(REVIVE_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if server.running_job_number() == 0 {
            continue;
        }
        let heartbeats = executors.executor_heartbeats();
        let alive = heartbeats.into_values().find(|h| {
            let status = h.status.as_ref().and_then(|s| s.status.as_ref());
            matches!(status, Some(executor_status::Status::Active(_)))
        });
        let Some(alive) = alive else { continue };
        let report = tonic::Request::new(UpdateTaskStatusParams {
            executor_id: alive.executor_id,
            task_status: vec![],
        });
        if let Err(e) = SchedulerGrpc::update_task_status(&server, report).await {
            log::debug!("cannot offer the free task slots again: {e}");
        }
    }
}

/// How an executor runs: its task slots, where its shuffle files go, how it gets tasks.
#[derive(Debug, Clone)]
pub struct ExecutorSettings {
    /// Tasks run at once (at least 1).
    pub slots: usize,
    /// Where shuffle files are written (created if missing).
    pub work_dir: PathBuf,
    /// As the scheduler's.
    pub scheduling: Scheduling,
    /// With [`Scheduling::Push`], the port of the task service the scheduler calls; 0: a
    /// free one. Unused with pull.
    pub task_port: u16,
    /// With [`Scheduling::Push`], how often the executor tells the scheduler it is alive
    /// (a pulling executor's polls say so); well under the scheduler's executor timeout.
    pub heartbeat: Duration,
}

impl ExecutorSettings {
    /// `slots` tasks at a time, shuffle files under `work_dir`, tasks pushed to a free port,
    /// a heartbeat every 5 s (the scheduler's timeout: 60 s in `lakescan-scheduler`).
    pub fn new(slots: usize, work_dir: PathBuf) -> Self {
        Self {
            slots,
            work_dir,
            scheduling: Scheduling::Push,
            task_port: 0,
            heartbeat: Duration::from_secs(5),
        }
    }
}

/// A running executor: where its Flight service (shuffle data) listens, and its tasks.
#[derive(Debug)]
pub struct RunningExecutor {
    /// The address of its Flight service.
    pub address: SocketAddr,
    /// With [`Scheduling::Push`], the address of the task service the scheduler calls.
    pub task_address: Option<SocketAddr>,
    /// Serves shuffle data until the process ends.
    pub serving: JoinHandle<()>,
    /// Takes tasks and runs them, until the scheduler is gone or stops this executor;
    /// aborting it stops the executor.
    pub working: JoinHandle<()>,
}

/// Starts an executor of the scheduler at `scheduler` (`http://host:port`), serving shuffle
/// data on `bind` (port 0: a free port).
pub async fn start_executor(
    scheduler: &str,
    bind: SocketAddr,
    settings: ExecutorSettings,
) -> Result<RunningExecutor> {
    let runtime = runtime()?;
    let state = session::state_with_runtime(SessionConfig::new(), runtime)?;
    start_executor_with(scheduler, bind, settings, &state, base_config()).await
}

/// [`start_executor`] running its tasks with `state`'s runtime (object stores, memory) and
/// functions, and with `config` before each query's settings.
pub(crate) async fn start_executor_with(
    scheduler: &str,
    bind: SocketAddr,
    settings: ExecutorSettings,
    state: &SessionState,
    config: SessionConfig,
) -> Result<RunningExecutor> {
    let listener = TcpListener::bind(bind).await?;
    let address = listener.local_addr()?;
    std::fs::create_dir_all(&settings.work_dir)?;
    let work_dir = settings.work_dir.to_string_lossy().into_owned();
    let max_message = config.ballista_grpc_client_max_message_size();
    // Ballista's own executors talk to the scheduler with these limits (16 MiB by default)
    // instead of tonic's 4 MiB: one poll answer carries a stage plan per free slot.
    let client = session::connect(scheduler)
        .await?
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message);
    let slots = settings.slots.max(1);
    let runtime = Arc::clone(state.runtime_env());
    let functions = Arc::new(BallistaFunctionRegistry::from(state));
    let executor = |task_port: u16| {
        let registration = ExecutorRegistration {
            id: uuid::Uuid::new_v4().to_string(),
            host: Some(address.ip().to_string()),
            port: u32::from(address.port()),
            grpc_port: u32::from(task_port),
            specification: Some(
                ExecutorSpecification::default()
                    .with_task_slots(slots as u32)
                    .into(),
            ),
            os_info: Some(ExecutorOperatingSystemSpecification::default().into()),
        };
        let runtime = Arc::clone(&runtime);
        let config = config.clone();
        Arc::new(Executor::with_default_execution_engine(
            registration,
            &work_dir,
            Arc::new(move |_: &SessionConfig| Ok(Arc::clone(&runtime))),
            Arc::new(move || config.clone()),
            Arc::clone(&functions),
            Arc::new(LoggingMetricsCollector::default()),
            slots,
        ))
    };
    let (task_address, working) = match settings.scheduling {
        Scheduling::Pull => {
            // Pulled tasks need no port of the executor's own.
            let executor = executor(0);
            let working = tokio::spawn(async move {
                let polled = ballista_executor::execution_loop::poll_loop(
                    client,
                    executor,
                    session::codecs(),
                )
                .await;
                if let Err(e) = polled {
                    log::error!("executor stopped polling: {e}");
                }
            });
            (None, working)
        }
        Scheduling::Push => {
            let pushed = Pushed {
                ip: address.ip(),
                task_port: settings.task_port,
                heartbeat: settings.heartbeat,
                max_message,
            };
            let (port, working) = pushed.start(client, executor).await?;
            (Some(SocketAddr::new(address.ip(), port)), working)
        }
    };
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
    Ok(RunningExecutor {
        address,
        task_address,
        serving,
        working,
    })
}

/// How a pushed-to executor serves its task service.
struct Pushed {
    ip: IpAddr,
    /// 0: a free port.
    task_port: u16,
    heartbeat: Duration,
    max_message: usize,
}

impl Pushed {
    /// Tries a free port this many times when another process takes it first.
    const PORT_TRIES: usize = 8;

    /// Starts Ballista's task service, heartbeats and task runners for an executor made by
    /// `executor` with its task port, and registers it: returns the port and the task that
    /// keeps them running (the scheduler's "stop", or aborting it, ends them).
    async fn start(
        &self,
        client: SchedulerGrpcClient<Channel>,
        executor: impl Fn(u16) -> Arc<Executor>,
    ) -> Result<(u16, JoinHandle<()>)> {
        let process = Arc::new(ExecutorProcessConfig {
            // Ballista parses `bind_host:port` as a socket address.
            bind_host: match self.ip {
                IpAddr::V4(ip) => ip.to_string(),
                IpAddr::V6(ip) => format!("[{ip}]"),
            },
            grpc_max_decoding_message_size: self.max_message as u32,
            grpc_max_encoding_message_size: self.max_message as u32,
            executor_heartbeat_interval_seconds: self.heartbeat.as_secs().max(1),
            ..ExecutorProcessConfig::default()
        });
        // Everything `startup` starts stops when this is dropped: it goes with the task.
        let shutdown = ShutdownNotifier::new();
        let (stop, mut stopped) = tokio::sync::mpsc::channel::<bool>(10);
        let mut tries = 0;
        let (port, server) = loop {
            tries += 1;
            let port = match self.task_port {
                0 => std::net::TcpListener::bind((self.ip, 0))?
                    .local_addr()?
                    .port(),
                port => port,
            };
            let started = executor_server::startup(
                client.clone(),
                Arc::clone(&process),
                executor(port),
                session::codecs(),
                stop.clone(),
                &shutdown,
            )
            .await;
            match started {
                Ok(server) => break (port, server),
                Err(BallistaError::IoError(e))
                    if e.kind() == std::io::ErrorKind::AddrInUse
                        && self.task_port == 0
                        && tries < Self::PORT_TRIES =>
                {
                    log::debug!("task port {port} was taken before it could be bound: {e}");
                }
                Err(e) => {
                    return Err(DataFusionError::Execution(format!(
                        "cannot start the executor's task service on {}:{port}, or register \
                         it with the scheduler (which calls that address back): {e}",
                        self.ip
                    )));
                }
            }
        };
        let working = tokio::spawn(async move {
            tokio::select! {
                served = server => match served {
                    Ok(Err(e)) => log::error!("executor's task service stopped: {e}"),
                    Err(e) => log::error!("executor's task service ended: {e}"),
                    Ok(Ok(())) => {}
                },
                Some(_) = stopped.recv() => log::warn!("the scheduler stopped this executor"),
            }
            // Stops the heartbeats, the task runners and the service (`stopped` is still
            // open: a second "stop" finds a receiver).
            drop(shutdown);
            drop(stopped);
        });
        Ok((port, working))
    }
}
