//! [`AdaptiveState`]: what a scan learns while reading, shared by all its splits.
//!
//! Each per-column filter reports its cost (time, rows in, rows out); filters that drop a
//! row most cheaply run first, and a filter observed to keep most rows runs after decoding
//! instead of inside the decoder (`parquet::row_filter`). The state is keyed by subfield
//! name, not by a `ScanSpec` node, so a rebuilt spec or a new split keeps it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use arrow::datatypes::DataType;

/// Observed cost of one filter: time spent and rows in/out.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilterCost {
    /// Time spent evaluating (decode + test).
    pub time: Duration,
    /// Rows the filter saw.
    pub rows_in: u64,
    /// Rows it kept.
    pub rows_out: u64,
}

impl FilterCost {
    /// Average time to drop one row: `time / (rows_in - rows_out)`; `time` when it drops none.
    pub fn time_to_drop(&self) -> Duration {
        let dropped = self.rows_in.saturating_sub(self.rows_out);
        if dropped == 0 {
            self.time
        } else {
            self.time / dropped.min(u32::MAX as u64) as u32
        }
    }
}

/// Adaptive filter order: filters that drop rows cheaply run first.
#[derive(Debug, Default)]
pub struct AdaptiveState {
    costs: Mutex<HashMap<String, FilterCost>>,
}

impl AdaptiveState {
    /// Adds one observation for the filter on `column`.
    pub fn record(&self, column: &str, time: Duration, rows_in: u64, rows_out: u64) {
        if let Ok(mut costs) = self.costs.lock() {
            let c = costs.entry(column.to_string()).or_default();
            c.time += time;
            c.rows_in += rows_in;
            c.rows_out += rows_out;
        }
    }

    /// What has been observed for `column`.
    pub fn cost(&self, column: &str) -> Option<FilterCost> {
        self.costs.lock().ok().and_then(|c| c.get(column).copied())
    }

    /// Orders filters: observed ones by time to drop a row; unobserved ones first, cheap
    /// fixed-width types before variable-width ones, then by name. `key` gives each item's
    /// filter name (its subfield) and compared type.
    pub fn order<T>(&self, items: &mut [T], key: impl Fn(&T) -> (String, DataType)) {
        let Ok(costs) = self.costs.lock() else { return };
        items.sort_by_cached_key(|item| {
            let (name, t) = key(item);
            match costs.get(&name) {
                Some(c) if c.rows_in > 0 => (1, c.time_to_drop(), 0, name),
                _ => (0, Duration::ZERO, width_rank(&t), name),
            }
        });
    }
}

fn width_rank(t: &DataType) -> u8 {
    if t.is_primitive() || matches!(t, DataType::Boolean) {
        0
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptive_order_prefers_cheap_drops() {
        let state = AdaptiveState::default();
        // A: 10000 units for 900 dropped; B: 1000 units for 500 dropped. B drops a row for 2
        // units, A for 11: B runs first.
        state.record("a", Duration::from_micros(10_000), 1000, 100);
        state.record("b", Duration::from_micros(1_000), 1000, 500);
        let (i64t, utf8) = (DataType::Int64, DataType::Utf8);
        let mut cols = [("a", &i64t), ("b", &i64t), ("s", &utf8), ("c", &i64t)];
        state.order(&mut cols, |(n, t)| (n.to_string(), (*t).clone()));
        let names: Vec<_> = cols.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["c", "s", "b", "a"]);
    }
}
