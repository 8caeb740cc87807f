#![allow(missing_docs, clippy::unwrap_used)]
use datafusion::prelude::*;
use std::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch() {
    let t = "/tmp/.tmpByDihj/t";
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2));
    lakescan::register(&ctx).unwrap();
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE h STORED AS HIVE LOCATION '{t}' PARTITIONED BY (p)"
    ))
    .await
    .unwrap();
    ctx.sql(&format!("CREATE EXTERNAL TABLE hs STORED AS HIVE LOCATION '{t}' PARTITIONED BY (p) OPTIONS ('split_size' '4000')")).await.unwrap();
    ctx.sql("CREATE TABLE m AS SELECT * FROM h")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    for sql in [
        "SELECT 1",
        "SELECT id FROM m WHERE i > 2 ORDER BY id",
        "SELECT id FROM h WHERE i > 2 ORDER BY id",
        "SELECT id FROM hs WHERE i > 2 ORDER BY id",
        "SELECT id FROM m WHERE (i > 2 OR s = 'a') AND NOT (f < 1.0 AND p = 2) ORDER BY id",
        "SELECT id FROM h WHERE (i > 2 OR s = 'a') AND NOT (f < 1.0 AND p = 2) ORDER BY id",
        "SELECT id FROM h WHERE i > 2 ORDER BY id",
    ] {
        let n = 30;
        let (mut plan_t, mut exec_t) = (0.0, 0.0);
        for _ in 0..n {
            let s = Instant::now();
            let df = ctx.sql(sql).await.unwrap();
            let plan = df.create_physical_plan().await.unwrap();
            let m = Instant::now();
            let _ = datafusion::physical_plan::collect(plan, ctx.task_ctx())
                .await
                .unwrap();
            plan_t += (m - s).as_secs_f64();
            exec_t += m.elapsed().as_secs_f64();
        }
        println!(
            "{sql}: plan {:.2}ms exec {:.2}ms",
            plan_t * 1000.0 / n as f64,
            exec_t * 1000.0 / n as f64
        );
    }
}
