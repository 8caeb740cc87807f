//! [`RerunGuard`]: a lost executor fails the query instead of giving duplicate rows.
//!
//! Ballista 54.1 re-runs work after an executor is lost (or a shuffle fetch fails) by
//! rolling stages back to a new attempt, but keeps the output locations the earlier attempt
//! already pushed to the next stage and appends the new ones beside them: the next stage
//! then reads a re-run partition twice, and the query *succeeds with duplicate rows* (found
//! by `tests/cluster.rs`, which kills an executor mid-query; the mechanism, with Ballista's
//! file and line numbers, is in `docs/architecture.md`, "Executor loss"). No setting turns
//! this off.
//!
//! The guard is the scheduler's task distribution policy (every task is handed out through
//! it, pushed or pulled): it binds tasks as Ballista's default policy does, except that a
//! job about to re-execute work whose output may already have been read — a stage on a
//! second attempt, or a task of the final stage that had finished — is failed with a
//! message saying so, and cancelled. A task that *failed* (an error, not a lost executor)
//! is retried as Ballista retries it: its output was never recorded.
//!
//! What goes ahead:
//! - the tasks a lost executor ran in a stage that is still on its first attempt and is not
//!   the final stage. Ballista resets exactly that executor's tasks of the stage
//!   (`RunningStage::reset_tasks`) and first removes every location on that executor from
//!   the inputs of the stages that read it (`reset_stages_internal`, `locs.retain`); those
//!   readers have not started (a stage runs once all its inputs are complete), so the
//!   re-run's output replaces, not joins, the lost one;
//! - the tasks of the final stage that had not finished on the lost executor (or whose
//!   launch failed: a pushing scheduler hands tasks to an executor it has not yet found
//!   dead). The final stage's locations go to the job's result, which Ballista never
//!   prunes: a finished task's re-run would be listed beside it
//!   (`docs/upstream/ballista-duplicate-shuffle-locations.md`), an unfinished one has none.
//!
//! Cancelling a job makes Ballista record "Cancelled" as its error; [`GuardedJobs`], the
//! scheduler's job state, records the guard's message instead, so the client reads why.
//!
//! Why here: the duplicate is Ballista's; lakescan's scans are deterministic per partition
//! (static split lists), so a re-run of a scan task reads exactly the same rows.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use ballista_core::error::Result as BallistaResult;
use ballista_core::serde::protobuf::{AvailableTaskSlots, JobStatus, job_status};
use ballista_core::serde::scheduler::PartitionId;
use ballista_core::{JobId, JobStatusSubscriber};
use ballista_scheduler::cluster::memory::InMemoryJobState;
use ballista_scheduler::cluster::{BoundTask, DistributionPolicy, JobState, JobStateEventStream};
use ballista_scheduler::state::execution_graph::{
    ExecutionGraph, ExecutionGraphBox, TaskDescription, create_task_info,
};
use ballista_scheduler::state::execution_stage::ExecutionStage;
use ballista_scheduler::state::task_manager::JobInfoCache;
use datafusion::common::{Result, internal_err};
use datafusion::prelude::{SessionConfig, SessionContext};
use tokio::sync::mpsc::UnboundedSender;

/// The task distribution policy that fails a job instead of re-running its finished work.
#[derive(Debug)]
pub struct RerunGuard {
    state: Mutex<Handed>,
    /// Jobs to cancel (a task of the scheduler drains it: cancelling needs the server).
    cancel: UnboundedSender<JobId>,
    /// Why each job was failed, for [`GuardedJobs`].
    reasons: Reasons,
}

/// The guard's message for each job it failed.
pub type Reasons = Arc<Mutex<HashMap<JobId, String>>>;

/// What the guard remembers of the running jobs.
#[derive(Debug, Default)]
struct Handed {
    /// Per job, the `(stage, partition)` tasks handed out so far.
    tasks: HashMap<JobId, HashSet<(usize, usize)>>,
    /// Jobs failed by the guard.
    failed: HashSet<JobId>,
}

impl RerunGuard {
    /// A guard that sends the jobs it fails to `cancel` and writes why into `reasons`.
    pub fn new(cancel: UnboundedSender<JobId>, reasons: Reasons) -> Self {
        Self {
            state: Mutex::default(),
            cancel,
            reasons,
        }
    }

    fn state(&self) -> Result<std::sync::MutexGuard<'_, Handed>> {
        match self.state.lock() {
            Ok(state) => Ok(state),
            Err(_) => internal_err!("the re-run guard's state was poisoned by a panic"),
        }
    }

    fn fail(
        &self,
        handed: &mut Handed,
        job: &JobId,
        graph: &mut (dyn ExecutionGraph + Send + Sync),
        why: String,
    ) {
        if handed.failed.insert(job.clone()) {
            let message = format!(
                "job {job}: {why} after an executor was lost or a shuffle fetch failed; \
                 Ballista 54.1 would read the earlier attempt's output too (duplicate rows), \
                 so lakescan stops the query instead: run it again"
            );
            log::error!("{message}");
            if let Ok(mut reasons) = self.reasons.lock() {
                reasons.insert(job.clone(), message.clone());
            }
            graph.fail_job(message);
            // The receiver lives as long as the scheduler; a send after it ended is moot.
            let _ = self.cancel.send(job.clone());
        }
    }
}

/// The attempt of a stage (0 for its first run).
fn attempt(stage: &ExecutionStage) -> usize {
    match stage {
        ExecutionStage::UnResolved(s) => s.stage_attempt_num,
        ExecutionStage::Resolved(s) => s.stage_attempt_num,
        ExecutionStage::Running(s) => s.stage_attempt_num,
        ExecutionStage::Successful(s) => s.stage_attempt_num,
        ExecutionStage::Failed(s) => s.stage_attempt_num,
    }
}

/// A task of the final stage waiting to run although it finished before, on an executor
/// since lost: its output is already in the job's result, which Ballista never prunes, so a
/// re-run would be listed beside it. A task handed out before that had not finished (its
/// executor was lost first, or its launch failed) has no output yet and may run again.
fn finished_final_task(
    graph: &(dyn ExecutionGraph + Send + Sync),
    handed: Option<&HashSet<(usize, usize)>>,
) -> Option<(usize, usize)> {
    let handed = handed?;
    let again: Vec<(usize, usize)> = graph
        .stages()
        .values()
        .filter_map(|stage| match stage {
            ExecutionStage::Running(s) if s.output_links.is_empty() => Some(s),
            _ => None,
        })
        .flat_map(|s| {
            let pending = s.task_infos.iter().enumerate().filter(|(_, t)| t.is_none());
            pending.map(|(p, _)| (s.stage_id, p))
        })
        .filter(|task| handed.contains(task))
        .collect();
    if again.is_empty() {
        return None;
    }
    let results = graph.output_locations();
    again.into_iter().find(|&(stage, p)| {
        results
            .iter()
            .any(|l| l.partition_id.stage_id == stage && l.map_partition_id == p)
    })
}

#[async_trait::async_trait]
impl DistributionPolicy for RerunGuard {
    async fn bind_tasks(
        &self,
        mut slots: Vec<&mut AvailableTaskSlots>,
        running_jobs: Arc<HashMap<JobId, JobInfoCache>>,
    ) -> Result<Vec<BoundTask>> {
        let mut bound: Vec<BoundTask> = vec![];
        let free: u32 = slots.iter().map(|s| s.slots).sum();
        {
            let mut handed = self.state()?;
            handed.tasks.retain(|job, _| running_jobs.contains_key(job));
            handed.failed.retain(|job| running_jobs.contains_key(job));
        }
        if free == 0 {
            return Ok(bound);
        }
        // As Ballista's default ("bias") policy: the executors with the most free slots first.
        slots.sort_by_key(|s| std::cmp::Reverse(s.slots));
        let mut at = 0usize;
        for (job, info) in running_jobs.iter() {
            if !matches!(info.status, Some(job_status::Status::Running(_))) {
                continue;
            }
            let mut graph = info.execution_graph.write().await;
            let graph: &mut (dyn ExecutionGraph + Send + Sync) = &mut **graph;
            let mut handed = self.state()?;
            if handed.failed.contains(job) {
                continue;
            }
            if let Some((id, _)) = graph.stages().iter().find(|(_, s)| attempt(s) > 0) {
                let why = format!("stage {id} would run a second time");
                self.fail(&mut handed, job, graph, why);
                continue;
            }
            if let Some((stage, p)) = finished_final_task(graph, handed.tasks.get(job)) {
                let why = format!("task {p} of the final stage {stage} would run a second time");
                self.fail(&mut handed, job, graph, why);
                continue;
            }
            let session_id = graph.session_id().to_string();
            'stages: while let Some((stage, task_ids)) = graph.fetch_running_stage(&[]) {
                let pending: Vec<usize> = stage
                    .task_infos
                    .iter()
                    .enumerate()
                    .filter(|(_, info)| info.is_none())
                    .map(|(p, _)| p)
                    .collect();
                let tasks = handed.tasks.entry(job.clone()).or_default();
                let mut progressed = false;
                for p in pending {
                    while at < slots.len() && slots[at].slots == 0 {
                        at += 1;
                    }
                    let Some(slot) = slots.get_mut(at) else {
                        break 'stages;
                    };
                    let executor = slot.executor_id.clone();
                    let task_id = *task_ids;
                    *task_ids += 1;
                    stage.task_infos[p] = Some(create_task_info(executor.clone(), task_id));
                    tasks.insert((stage.stage_id, p));
                    bound.push((
                        executor,
                        TaskDescription {
                            session_id: session_id.clone(),
                            partition: PartitionId {
                                job_id: job.clone(),
                                stage_id: stage.stage_id,
                                partition_id: p,
                            },
                            stage_attempt_num: stage.stage_attempt_num,
                            task_id,
                            task_attempt: stage.task_failure_numbers[p],
                            plan: stage.plan.clone(),
                            session_config: stage.session_config.clone(),
                        },
                    ));
                    slot.slots -= 1;
                    progressed = true;
                }
                if !progressed {
                    break;
                }
            }
            if at >= slots.len() {
                break;
            }
        }
        Ok(bound)
    }

    fn name(&self) -> &str {
        "lakescan-rerun-guard"
    }
}

/// The scheduler's job state (Ballista's in-memory one) recording, for a job the guard
/// failed, the guard's message rather than the "Cancelled" of the cancellation that ends it.
pub struct GuardedJobs {
    inner: InMemoryJobState,
    reasons: Reasons,
}

impl GuardedJobs {
    /// `inner`, with the messages of `reasons`.
    pub fn new(inner: InMemoryJobState, reasons: Reasons) -> Self {
        Self { inner, reasons }
    }

    fn reason(&self, job: &JobId) -> Option<String> {
        self.reasons.lock().ok()?.get(job).cloned()
    }
}

#[async_trait::async_trait]
impl JobState for GuardedJobs {
    fn accept_job(&self, job_id: &JobId, job_name: &str, queued_at: u64) -> BallistaResult<()> {
        self.inner.accept_job(job_id, job_name, queued_at)
    }

    fn pending_job_number(&self) -> usize {
        self.inner.pending_job_number()
    }

    async fn submit_job(
        &self,
        job_id: JobId,
        graph: &ExecutionGraphBox,
        subscriber: Option<JobStatusSubscriber>,
    ) -> BallistaResult<()> {
        self.inner.submit_job(job_id, graph, subscriber).await
    }

    async fn get_jobs(&self) -> BallistaResult<HashSet<JobId>> {
        self.inner.get_jobs().await
    }

    async fn get_all_jobs(&self) -> BallistaResult<HashSet<JobId>> {
        self.inner.get_all_jobs().await
    }

    async fn get_job_status(&self, job_id: &JobId) -> BallistaResult<Option<JobStatus>> {
        self.inner.get_job_status(job_id).await
    }

    async fn get_execution_graph(
        &self,
        job_id: &JobId,
    ) -> BallistaResult<Option<ExecutionGraphBox>> {
        self.inner.get_execution_graph(job_id).await
    }

    async fn save_job(&self, job_id: &JobId, graph: &ExecutionGraphBox) -> BallistaResult<()> {
        let failed = matches!(graph.status().status, Some(job_status::Status::Failed(_)));
        match (failed, self.reason(job_id)) {
            (true, Some(reason)) => {
                let mut graph = graph.cloned();
                graph.fail_job(reason);
                self.inner.save_job(job_id, &graph).await
            }
            _ => self.inner.save_job(job_id, graph).await,
        }
    }

    async fn fail_unscheduled_job(&self, job_id: &JobId, reason: String) -> BallistaResult<()> {
        self.inner.fail_unscheduled_job(job_id, reason).await
    }

    async fn remove_job(&self, job_id: &JobId) -> BallistaResult<()> {
        if let Ok(mut reasons) = self.reasons.lock() {
            reasons.remove(job_id);
        }
        self.inner.remove_job(job_id).await
    }

    async fn try_acquire_job(&self, job_id: &JobId) -> BallistaResult<Option<ExecutionGraphBox>> {
        self.inner.try_acquire_job(job_id).await
    }

    async fn job_state_events(&self) -> BallistaResult<JobStateEventStream> {
        self.inner.job_state_events().await
    }

    async fn create_or_update_session(
        &self,
        session_id: &str,
        config: &SessionConfig,
    ) -> BallistaResult<Arc<SessionContext>> {
        self.inner
            .create_or_update_session(session_id, config)
            .await
    }

    async fn remove_session(&self, session_id: &str) -> BallistaResult<()> {
        self.inner.remove_session(session_id).await
    }

    fn produce_config(&self) -> SessionConfig {
        self.inner.produce_config()
    }
}

#[cfg(test)]
mod tests;
