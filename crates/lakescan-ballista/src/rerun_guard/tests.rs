//! The guard against Ballista's own execution graph (a two-stage aggregation: 2 scan tasks
//! feeding 4 final tasks), with an executor lost at each point of a job: while
//! the stage holding its work still runs, after that stage finished, and in the final stage
//! before and after its task finished. Each case checks what the guard lets run again and
//! that every partition's output is listed once.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::protobuf::{
    AvailableTaskSlots, ShuffleWritePartition, SuccessfulTask, TaskStatus, job_status, task_status,
};
use ballista_core::serde::scheduler::{
    ExecutorMetadata, ExecutorOperatingSystemSpecification, ExecutorSpecification,
};
use ballista_scheduler::cluster::{BoundTask, DistributionPolicy};
use ballista_scheduler::planner::DefaultDistributedPlanner;
use ballista_scheduler::state::execution_graph::{
    ExecutionGraph, ExecutionGraphBox, StaticExecutionGraph,
};
use ballista_scheduler::state::execution_stage::ExecutionStage;
use ballista_scheduler::state::task_manager::JobInfoCache;
use datafusion::datasource::MemTable;
use tokio::sync::mpsc::UnboundedReceiver;

use super::*;

/// A job of the test plan, its guard, and the jobs the guard asked to cancel.
struct Job {
    jobs: Arc<HashMap<JobId, JobInfoCache>>,
    guard: RerunGuard,
    cancelled: UnboundedReceiver<JobId>,
}

impl Job {
    async fn new() -> Self {
        let mut graph = two_stages().await;
        graph.revive();
        let graph: ExecutionGraphBox = Box::new(graph);
        let jobs = Arc::new(HashMap::from([(
            graph.job_id().clone(),
            JobInfoCache::new(graph),
        )]));
        let (cancel, cancelled) = tokio::sync::mpsc::unbounded_channel();
        let guard = RerunGuard::new(cancel, Reasons::default());
        Self {
            jobs,
            guard,
            cancelled,
        }
    }

    fn info(&self) -> &JobInfoCache {
        // One job, put there by `new`.
        self.jobs.values().next().expect("a job")
    }

    /// The tasks the guard hands out to `executor`, given `slots` free slots there.
    async fn bind(&self, executor: &str, slots: u32) -> Vec<BoundTask> {
        let mut free = AvailableTaskSlots {
            executor_id: executor.to_string(),
            slots,
        };
        let bound = self
            .guard
            .bind_tasks(vec![&mut free], Arc::clone(&self.jobs));
        bound.await.expect("binding")
    }

    /// `tasks` finish on the executor they were handed to; the next stage starts if ready.
    async fn finish(&self, tasks: &[BoundTask]) {
        let mut graph = self.info().execution_graph.write().await;
        for (executor, task) in tasks {
            let status = finished(task, executor);
            let meta = executor_meta(executor);
            graph
                .update_task_status(&meta, vec![status], 1, 1)
                .expect("a task status");
        }
        graph.revive();
    }

    /// `executor` is lost: Ballista resets its work as its scheduler does.
    async fn lose(&self, executor: &str) {
        let mut graph = self.info().execution_graph.write().await;
        graph
            .reset_stages_on_lost_executor(executor)
            .expect("resetting");
        graph.revive();
    }

    async fn status(&self) -> Option<job_status::Status> {
        let graph = self.info().execution_graph.read().await;
        graph.status().status.clone()
    }

    /// The job succeeded, each output listed once.
    async fn succeeded(&self) {
        let status = self.status().await;
        assert!(
            matches!(status, Some(job_status::Status::Successful(_))),
            "the job did not succeed: {status:?}"
        );
        self.each_output_listed_once().await;
    }

    /// The job is failed with the guard's message and handed over to be cancelled.
    async fn failed_with(&mut self, message: &str) {
        match self.status().await {
            Some(job_status::Status::Failed(failed)) => {
                assert!(failed.error.contains(message), "{}", failed.error);
            }
            other => panic!("the job was not failed: {other:?}"),
        }
        assert!(self.cancelled.try_recv().is_ok(), "the job is cancelled");
    }

    /// Every partition of every stage's output is listed once where it is read (the final
    /// stage's in the job's result).
    async fn each_output_listed_once(&self) {
        let graph = self.info().execution_graph.read().await;
        let mut listed: Vec<(usize, usize, usize)> = vec![];
        for stage in graph.stages().values() {
            let inputs = match stage {
                ExecutionStage::UnResolved(s) => &s.inputs,
                ExecutionStage::Resolved(s) => &s.inputs,
                ExecutionStage::Running(s) => &s.inputs,
                ExecutionStage::Successful(s) => &s.inputs,
                ExecutionStage::Failed(_) => continue,
            };
            for locations in inputs.values().flat_map(|i| i.partition_locations.values()) {
                listed.extend(locations.iter().map(|l| {
                    let p = &l.partition_id;
                    (p.stage_id, p.partition_id, l.map_partition_id)
                }));
            }
        }
        listed.extend(graph.output_locations().iter().map(|l| {
            let p = &l.partition_id;
            (p.stage_id, p.partition_id, l.map_partition_id)
        }));
        let count = listed.len();
        listed.sort_unstable();
        listed.dedup();
        assert_eq!(listed.len(), count, "an output is listed twice");
    }
}

/// `SELECT k, count(*) … GROUP BY k` over a table of 2 partitions, 4 partitions after the
/// shuffle: a scan stage of 2 tasks, a final stage of 4.
async fn two_stages() -> StaticExecutionGraph {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)]));
    let part = |v: i64| {
        let column = Arc::new(Int64Array::from(vec![v, v + 1]));
        vec![RecordBatch::try_new(Arc::clone(&schema), vec![column]).expect("a batch")]
    };
    let table = MemTable::try_new(Arc::clone(&schema), vec![part(0), part(10)]).expect("table");
    ctx.register_table("t", Arc::new(table))
        .expect("registered");
    let df = ctx.sql("SELECT k, count(*) FROM t GROUP BY k").await;
    let plan = df.expect("planned").create_physical_plan().await;
    let config = Arc::new(SessionConfig::new_with_ballista());
    let mut planner = DefaultDistributedPlanner::new();
    let job: JobId = "job".into();
    let plan = plan.expect("a physical plan");
    StaticExecutionGraph::new(
        "scheduler",
        &job,
        "",
        "session",
        plan,
        0,
        config,
        &mut planner,
        None,
    )
    .expect("an execution graph")
}

/// `task` finished on `executor`, having written each of its output partitions.
fn finished(task: &TaskDescription, executor: &str) -> TaskStatus {
    let partitions = (0..task.get_output_partition_number() as u64)
        .map(|partition_id| ShuffleWritePartition {
            partition_id,
            num_batches: 1,
            num_rows: 1,
            num_bytes: 1,
            file_id: None,
            is_sort_shuffle: false,
        })
        .collect();
    TaskStatus {
        task_id: task.task_id as u32,
        job_id: task.partition.job_id.to_string(),
        stage_id: task.partition.stage_id as u32,
        stage_attempt_num: task.stage_attempt_num as u32,
        partition_id: task.partition.partition_id as u32,
        status: Some(task_status::Status::Successful(SuccessfulTask {
            executor_id: executor.to_string(),
            partitions,
        })),
        ..TaskStatus::default()
    }
}

fn executor_meta(id: &str) -> ExecutorMetadata {
    ExecutorMetadata {
        id: id.to_string(),
        host: "localhost".to_string(),
        port: 1,
        grpc_port: 2,
        specification: ExecutorSpecification::default().with_task_slots(4),
        os_info: ExecutorOperatingSystemSpecification::default(),
    }
}

fn stages(tasks: &[BoundTask]) -> Vec<usize> {
    tasks.iter().map(|(_, t)| t.partition.stage_id).collect()
}

#[tokio::test]
async fn a_lost_executors_tasks_run_again_while_their_stage_runs() {
    let job = Job::new().await;
    let on_a = job.bind("a", 1).await;
    let on_b = job.bind("b", 1).await;
    assert_eq!(stages(&on_a), [1]);
    assert_eq!(stages(&on_b), [1]);
    job.finish(&on_a).await;
    job.lose("a").await;
    // The lost executor's finished scan task is the only one to run again.
    let again = job.bind("b", 4).await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].1.partition, on_a[0].1.partition);
    job.finish(&on_b).await;
    job.finish(&again).await;
    let last = job.bind("b", 4).await;
    assert_eq!(stages(&last), [2, 2, 2, 2]);
    job.finish(&last).await;
    job.succeeded().await;
}

#[tokio::test]
async fn a_lost_executor_after_its_stage_finished_fails_the_job() {
    let mut job = Job::new().await;
    let on_a = job.bind("a", 1).await;
    let on_b = job.bind("b", 1).await;
    job.finish(&on_a).await;
    job.finish(&on_b).await;
    let last = job.bind("b", 2).await;
    assert_eq!(stages(&last), [2, 2]);
    // The final stage has read the lost executor's scan output: the scan would run again
    // under a new attempt, and Ballista would list both attempts' output.
    job.lose("a").await;
    assert!(job.bind("b", 4).await.is_empty());
    job.failed_with("would run a second time").await;
}

#[tokio::test]
async fn the_final_stage_runs_again_the_tasks_a_lost_executor_had_not_finished() {
    let job = Job::new().await;
    let scan = job.bind("b", 2).await;
    job.finish(&scan).await;
    let on_a = job.bind("a", 2).await;
    let on_b = job.bind("b", 2).await;
    assert_eq!(stages(&on_a), [2, 2]);
    job.lose("a").await;
    let again = job.bind("b", 2).await;
    let mut want: Vec<_> = on_a.iter().map(|(_, t)| t.partition.clone()).collect();
    let mut got: Vec<_> = again.iter().map(|(_, t)| t.partition.clone()).collect();
    want.sort_by_key(|p| p.partition_id);
    got.sort_by_key(|p| p.partition_id);
    assert_eq!(got, want);
    job.finish(&on_b).await;
    job.finish(&again).await;
    job.succeeded().await;
}

#[tokio::test]
async fn a_finished_task_of_the_final_stage_never_runs_twice() {
    let mut job = Job::new().await;
    let scan = job.bind("b", 2).await;
    job.finish(&scan).await;
    let on_a = job.bind("a", 2).await;
    let _on_b = job.bind("b", 2).await;
    job.finish(&on_a[..1]).await;
    job.lose("a").await;
    assert!(job.bind("b", 4).await.is_empty());
    let p = on_a[0].1.partition.partition_id;
    job.failed_with(&format!(
        "task {p} of the final stage 2 would run a second time"
    ))
    .await;
    job.each_output_listed_once().await;
}
