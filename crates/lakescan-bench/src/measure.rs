//! Measuring one case: [`CaseBench`] checks every engine's result, warms up, then times
//! `runs` rounds that visit every engine once each, in an order shuffled per round
//! ([`round_order`]), over the [`Sessions`] each engine runs in.

use std::path::Path;

use anyhow::{Context, Result, bail};
use datafusion::prelude::SessionContext;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::cases::Case;
use crate::dataset::Dataset;
use crate::engines;
use crate::engines::{ConsumeOn, Engine, LakeMetrics, SqlRun};
use crate::floor::FloorPlan;
use crate::peer::Peer;
use crate::report::Measurement;
use crate::results;
use crate::results::{ResultCollector, ResultSet};
use crate::rss::PeakRss;

pub(crate) struct Sessions {
    pub(crate) lakescan: SessionContext,
    pub(crate) lakescan_no_preload: SessionContext,
    pub(crate) lakescan_no_dynamic: SessionContext,
    pub(crate) lakescan_listing_cache: SessionContext,
    /// Started only when the engine runs (it starts a scheduler and two executors).
    pub(crate) lakescan_ballista: Option<SessionContext>,
    pub(crate) datafusion: SessionContext,
    /// Started only when the engine runs.
    pub(crate) datafusion_ballista: Option<SessionContext>,
    pub(crate) datafusion_pushdown: SessionContext,
    /// Started only when the engine runs an ORC case.
    pub(crate) datafusion_orc: Option<SessionContext>,
}

impl Sessions {
    fn of(&self, engine: Engine) -> Option<&SessionContext> {
        match engine {
            Engine::Lakescan => Some(&self.lakescan),
            Engine::LakescanNoPreload => Some(&self.lakescan_no_preload),
            Engine::LakescanNoDynamicFilters => Some(&self.lakescan_no_dynamic),
            Engine::LakescanListingCache => Some(&self.lakescan_listing_cache),
            Engine::LakescanBallista => self.lakescan_ballista.as_ref(),
            Engine::DataFusion => Some(&self.datafusion),
            Engine::DataFusionBallista => self.datafusion_ballista.as_ref(),
            Engine::DataFusionPushdown => Some(&self.datafusion_pushdown),
            Engine::DataFusionOrc => self.datafusion_orc.as_ref(),
            _ => None,
        }
    }
}

/// Engine indexes `0..n` in the order of round `round`: a Fisher-Yates shuffle driven by a
/// xorshift generator seeded with the round.
fn round_order(n: usize, round: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = (round as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for i in (1..n).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    order
}

/// One case: result check, warm-up, then `runs` rounds visiting every engine once each (in
/// a shuffled order).
pub(crate) struct CaseBench<'a> {
    pub(crate) case: &'a Case,
    pub(crate) dataset: &'a Dataset,
    pub(crate) sessions: &'a Sessions,
    pub(crate) peers: &'a mut Vec<(Engine, Peer)>,
    pub(crate) scratch: &'a Path,
    pub(crate) notes: &'a mut Vec<String>,
    pub(crate) skip_check: bool,
    pub(crate) threads: usize,
    pub(crate) consume_on: ConsumeOn,
}

/// What one untimed or timed run of an engine observed.
struct Observed {
    elapsed: f64,
    peak_rss: u64,
    rows_returned: usize,
    lake: Option<LakeMetrics>,
    df_row_groups: Option<usize>,
    floor_rows: Option<u64>,
    floor_row_groups: Option<usize>,
}

impl CaseBench<'_> {
    pub(crate) async fn run(
        &mut self,
        engines: &[Engine],
        runs: usize,
    ) -> Result<Vec<Measurement>> {
        let case = self.case;
        let mut engines = engines.to_vec();
        let floor = if engines.contains(&Engine::ParquetFloor) {
            Some(FloorPlan::new(self.dataset, &case.floor).await?)
        } else {
            None
        };

        // 1. Results: every engine against lakescan's, before anything is timed.
        let (expected, lake_metrics) = if self.skip_check {
            (None, LakeMetrics::default())
        } else {
            let mut collector = ResultCollector::default();
            let reference =
                engines::run_sql(&self.sessions.lakescan, &case.sql, Some(&mut collector))
                    .await
                    .context("lakescan")?;
            let metrics = engines::lakescan_metrics(&reference.plan);
            (Some(collector.finish()), metrics)
        };
        let mut failed_peers = vec![];
        for &engine in &engines {
            let Some(expected) = &expected else {
                break;
            };
            let actual = match engine {
                Engine::Lakescan => continue,
                Engine::LakescanNoPreload
                | Engine::LakescanNoDynamicFilters
                | Engine::LakescanListingCache
                | Engine::LakescanBallista
                | Engine::DataFusionBallista
                | Engine::DataFusion
                | Engine::DataFusionPushdown
                | Engine::DataFusionOrc => {
                    let mut c = ResultCollector::default();
                    let ctx = self.sessions.of(engine).context("session")?;
                    engines::run_sql(ctx, &case.sql, Some(&mut c))
                        .await
                        .with_context(|| engine.name())?;
                    c.finish()
                }
                Engine::DuckDb => self.peer_result(engine)?,
                Engine::DuckDbIceberg | Engine::IcebergDataFusion => {
                    // An Iceberg peer that cannot run a case, or answers it wrongly, is
                    // left out of that case with a note instead of stopping the run.
                    let verdict = self.peer_result(engine).and_then(|actual| {
                        results::compare(expected, &actual).map_err(|d| anyhow::anyhow!("{d}"))
                    });
                    if let Err(e) = verdict {
                        let first = e.to_string();
                        let first = first.lines().next().unwrap_or_default();
                        self.notes.push(format!(
                            "{}: {} left out: {first}",
                            case.name,
                            engine.name()
                        ));
                        failed_peers.push(engine);
                    }
                    continue;
                }
                Engine::ParquetFloor => {
                    let plan = floor.as_ref().context("floor plan")?;
                    let run = plan.run(self.threads)?;
                    if run.rows != plan.rows {
                        bail!(
                            "parquet-floor decoded {} rows, its row groups hold {}",
                            run.rows,
                            plan.rows
                        );
                    }
                    if lake_metrics.scans > 0 && plan.row_groups != lake_metrics.row_groups_read() {
                        self.notes.push(format!(
                            "{}: parquet-floor decodes {} row groups (DataFusion's \
                             PruningPredicate), lakescan read {}",
                            case.name,
                            plan.row_groups,
                            lake_metrics.row_groups_read()
                        ));
                    }
                    continue;
                }
            };
            if let Err(diff) = results::compare(expected, &actual) {
                bail!(
                    "result of {} differs from lakescan's on case {}:\n{diff}\nquery: {}",
                    engine.name(),
                    case.name,
                    case.sql
                );
            }
        }
        engines.retain(|e| !failed_peers.contains(e));
        match &expected {
            None => eprintln!("{}: result check SKIPPED (--skip-check)", case.name),
            Some(expected) => eprintln!(
                "{}: {} row(s), results of {} engine(s) agree",
                case.name,
                expected.rows,
                engines.len()
            ),
        }

        // 2. Warm-up, then 3. timed rounds, every engine once per round, in an order
        // shuffled per round (the same in every invocation): no engine always follows the
        // same one.
        let mut measured: Vec<Measurement> = engines
            .iter()
            .map(|&e| Measurement::new(case.name, e))
            .collect();
        let mut after_peer = false;
        for round in 0..=runs {
            for i in round_order(engines.len(), round) {
                let engine = engines[i];
                if after_peer && !engine.is_peer() {
                    // A peer process's query leaves the CPU caches (2 cores) cold: the next
                    // in-process millisecond query took 2-3 x its time. That run is repeated
                    // untimed first, so every engine is timed warm, whichever one ran before.
                    self.observe(engine, floor.as_ref())
                        .await
                        .with_context(|| engine.name())?;
                }
                after_peer = engine.is_peer();
                let seen = self
                    .observe(engine, floor.as_ref())
                    .await
                    .with_context(|| engine.name())?;
                let expected_rows = expected.as_ref().map(|e| e.rows);
                let rows_ok = match engine {
                    Engine::ParquetFloor => seen.floor_rows == floor.as_ref().map(|f| f.rows),
                    _ => expected_rows.is_none_or(|rows| rows == seen.rows_returned),
                };
                if !rows_ok {
                    bail!(
                        "{} returned {} rows in a timed run, {:?} expected",
                        engine.name(),
                        seen.rows_returned,
                        expected_rows
                    );
                }
                if round == 0 {
                    continue;
                }
                let m = &mut measured[i];
                m.times.push(seen.elapsed);
                m.peak_rss_in_process_bytes = m.peak_rss_in_process_bytes.max(seen.peak_rss);
                if engine.is_peer() {
                    m.peak_rss_bytes = m.peak_rss_in_process_bytes;
                }
                m.rows_returned = seen.rows_returned;
                if let Some(lake) = seen.lake {
                    m.rows_decoded = Some(lake.rows_scanned as u64);
                    m.rows_emitted = Some(lake.rows_emitted as u64);
                    m.row_groups_pruned_dynamic = Some(lake.row_groups_pruned_dynamic);
                    m.row_groups_read = Some(lake.row_groups_read());
                    m.row_groups_total = Some(lake.row_groups_total);
                    m.bytes_read = Some(lake.bytes_read);
                    m.splits_total = Some(lake.splits_total);
                    m.files_pruned_bucket = Some(lake.files_pruned_bucket);
                    m.delete_files_loaded = Some(lake.delete_files_loaded);
                }
                if seen.df_row_groups.is_some() {
                    m.row_groups_read = seen.df_row_groups;
                }
                if seen.floor_rows.is_some() {
                    m.rows_decoded = seen.floor_rows;
                    m.row_groups_read = seen.floor_row_groups;
                }
            }
        }
        Ok(measured)
    }

    fn peer(&mut self, engine: Engine) -> Result<&mut Peer> {
        let found = self.peers.iter_mut().find(|(e, _)| *e == engine);
        found
            .map(|(_, p)| p)
            .with_context(|| format!("{} not started", engine.name()))
    }

    /// A peer's result of the case, via a Parquet file the peer writes.
    fn peer_result(&mut self, engine: Engine) -> Result<ResultSet> {
        let out = self
            .scratch
            .join(format!("{}-{}.parquet", self.case.name, engine.name()));
        let sql = self.case.sql.clone();
        self.peer(engine)?.check(&sql, &out)?;
        let mut c = ResultCollector::default();
        let file = std::fs::File::open(&out)?;
        for batch in ParquetRecordBatchReaderBuilder::try_new(file)?.build()? {
            c.add(&batch?)?;
        }
        std::fs::remove_file(&out)?;
        Ok(c.finish())
    }

    async fn observe(&mut self, engine: Engine, floor: Option<&FloorPlan>) -> Result<Observed> {
        let mut seen = Observed {
            elapsed: 0.0,
            peak_rss: 0,
            rows_returned: 0,
            lake: None,
            df_row_groups: None,
            floor_rows: None,
            floor_row_groups: None,
        };
        match engine {
            Engine::Lakescan
            | Engine::LakescanNoPreload
            | Engine::LakescanNoDynamicFilters
            | Engine::LakescanListingCache
            | Engine::LakescanBallista
            | Engine::DataFusionBallista
            | Engine::DataFusion
            | Engine::DataFusionPushdown
            | Engine::DataFusionOrc => {
                let ctx = self.sessions.of(engine).context("session")?;
                let rss = PeakRss::start();
                let run: SqlRun = engines::run_sql_on(ctx, &self.case.sql, self.consume_on).await?;
                seen.peak_rss = rss.finish();
                seen.elapsed = run.elapsed.as_secs_f64();
                seen.rows_returned = run.rows;
                if matches!(
                    engine,
                    Engine::LakescanBallista | Engine::DataFusionBallista | Engine::DataFusionOrc
                ) {
                    // No scan metrics to show: on Ballista the scans ran in the executors;
                    // datafusion-orc's scan is not DataFusion's Parquet scan.
                } else if engine.lakescan_variant().is_some() {
                    seen.lake = Some(engines::lakescan_metrics(&run.plan));
                } else {
                    seen.df_row_groups = engines::datafusion_row_groups_read(&run.plan);
                }
            }
            Engine::ParquetFloor => {
                let plan = floor.context("floor plan")?;
                let rss = PeakRss::start();
                let run = plan.run(self.threads)?;
                seen.peak_rss = rss.finish();
                seen.elapsed = run.elapsed.as_secs_f64();
                seen.floor_rows = Some(run.rows);
                seen.floor_row_groups = Some(run.row_groups);
            }
            Engine::DuckDb | Engine::DuckDbIceberg | Engine::IcebergDataFusion => {
                let sql = self.case.sql.clone();
                let run = self.peer(engine)?.run(&sql)?;
                seen.elapsed = run.elapsed.as_secs_f64();
                seen.peak_rss = run.peak_rss_bytes;
                seen.rows_returned = run.rows;
            }
        }
        Ok(seen)
    }
}

#[cfg(test)]
mod tests {
    use super::round_order;

    #[test]
    fn round_orders_are_permutations_that_vary() {
        let orders: Vec<Vec<usize>> = (0..10).map(|r| round_order(7, r)).collect();
        for order in &orders {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..7).collect::<Vec<_>>());
        }
        // Engine 0's predecessor is not the same in every round.
        let predecessors: std::collections::BTreeSet<Option<usize>> = orders
            .iter()
            .map(|o| {
                let at = o.iter().position(|&e| e == 0).unwrap();
                at.checked_sub(1).map(|p| o[p])
            })
            .collect();
        assert!(predecessors.len() > 2, "{predecessors:?}");
        assert_eq!(round_order(1, 3), vec![0]);
        assert!(round_order(0, 3).is_empty());
    }
}
