//! Quickstart: write a small partitioned table with DataFusion, then query it with lakescan.
//!
//! Run with `cargo run -p lakescan --example quickstart`.

use datafusion::error::Result;
use datafusion::prelude::SessionContext;

#[tokio::main]
async fn main() -> Result<()> {
    let dir = std::env::temp_dir().join("lakescan-quickstart");
    let _ = std::fs::remove_dir_all(&dir);
    let location = dir.join("sales");
    let location = location.to_string_lossy();

    let ctx = SessionContext::new();
    lakescan::register(&ctx)?;

    // 1. Write a Hive-style table: sales/region=…/day=…/*.parquet
    ctx.sql(&format!(
        "COPY (SELECT i AS id,
                      CASE WHEN i % 7 = 0 THEN 'acme' ELSE 'other' END AS customer,
                      CAST(i % 250 AS DOUBLE) AS amount,
                      CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END AS region,
                      CAST(DATE '2024-01-01' + CAST(i % 4 AS INT) AS VARCHAR) AS day
               FROM generate_series(1, 20000) t(i))
         TO '{location}' STORED AS PARQUET PARTITIONED BY (region, day)"
    ))
    .await?
    .collect()
    .await?;

    // 2. Register it as a lakescan Hive table; partition types are inferred (day → DATE).
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE sales STORED AS HIVE LOCATION '{location}' PARTITIONED BY (region, day)"
    ))
    .await?;

    // 3. Query: partitions are pruned while listing, the rest filters inside the reader.
    let sql = "SELECT region, count(*) AS orders, sum(amount) AS total FROM sales \
               WHERE day >= DATE '2024-01-02' AND (amount > 100 OR customer = 'acme') \
               GROUP BY region ORDER BY region";
    ctx.sql(sql).await?.show().await?;
    ctx.sql(&format!("EXPLAIN ANALYZE {sql}"))
        .await?
        .show()
        .await?;
    Ok(())
}
