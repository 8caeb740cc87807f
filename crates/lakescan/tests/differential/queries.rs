//! Queries around a predicate ([`Query`]): ids in order, a count, a projection,
//! per-partition aggregates, a TopK, a count under LIMIT/OFFSET or a join with a few values
//! (the last three push limits and dynamic filters into the scan), and how a case draws one.

use rand::Rng;
use rand::seq::{IndexedRandom, SliceRandom};

use crate::literals::date_text;
use crate::predicates::{COLUMNS, Gen};
use crate::table::{DAY0, Value};

/// Columns a projection may select.
const PROJECTED: [&str; 17] = [
    "i", "l", "f", "s", "d", "ts", "b", "p", "dc", "dw", "r", "t8", "t16", "bn", "tz", "st",
    "st['y']",
];
/// Columns a TopK may sort by.
const TOPK: [&str; 16] = [
    "id", "i", "l", "f", "s", "d", "ts", "p", "dc", "dw", "r", "t8", "t16", "bn", "tz", "st['x']",
];
/// Columns a join may probe.
const JOINED: [&str; 7] = ["l", "p", "d", "id", "i", "t8", "t16"];

/// What to select for a predicate.
#[derive(Clone, Debug, PartialEq)]
pub enum Query {
    Ids,
    Count,
    CountByP,
    Project(Vec<&'static str>),
    /// Exercises TopK's dynamic filter pushed into the scan. Only the sort column is
    /// returned, so ties do not make the result ambiguous.
    TopK {
        column: &'static str,
        desc: bool,
        nulls_first: bool,
        limit: usize,
    },
    /// Exercises the limit pushed into the scan: how many rows come out is deterministic.
    LimitCount {
        limit: usize,
        offset: usize,
    },
    /// Exercises the hash join's dynamic filter pushed into the scan (the table is the
    /// probe side of a join with a few distinct values).
    Join {
        column: &'static str,
        values: Vec<String>,
    },
}

impl Query {
    pub fn sql(&self, table: &str, pred: &str) -> String {
        match self {
            Query::Ids => format!("SELECT id FROM {table} WHERE {pred} ORDER BY id"),
            Query::Count => format!("SELECT count(*) FROM {table} WHERE {pred}"),
            // No min/max of `f` or `r`: DataFusion's grouped min/max over floats containing
            // NaN depends on the order rows arrive in, so it differs between any two plans;
            // no sum of them either (rounding depends on the order).
            Query::CountByP => format!(
                "SELECT p, count(*), sum(l), min(i), max(ts), max(s), count(f), sum(dc), \
                 sum(dw), min(t16), max(t8), max(bn), min(tz), count(r), count(st['y']) \
                 FROM {table} WHERE {pred} GROUP BY p ORDER BY p NULLS FIRST"
            ),
            Query::Project(cols) => {
                format!(
                    "SELECT id, {} FROM {table} WHERE {pred} ORDER BY id",
                    cols.join(", ")
                )
            }
            Query::TopK {
                column,
                desc,
                nulls_first,
                limit,
            } => format!(
                "SELECT {column} FROM {table} WHERE {pred} ORDER BY {column} {} NULLS {} LIMIT {limit}",
                if *desc { "DESC" } else { "ASC" },
                if *nulls_first { "FIRST" } else { "LAST" },
            ),
            Query::LimitCount { limit, offset } => format!(
                "SELECT count(*) FROM (SELECT id FROM {table} WHERE {pred} LIMIT {limit} \
                 OFFSET {offset})"
            ),
            Query::Join { column, values } => {
                let rows: Vec<String> = values.iter().map(|v| format!("({v})")).collect();
                format!(
                    "SELECT {table}.id FROM {table} JOIN (VALUES {}) AS v(x) \
                     ON {table}.{column} = v.x WHERE {pred} ORDER BY {table}.id",
                    rows.join(", ")
                )
            }
        }
    }

    /// Whether the first output column is `id` (so differing rows can be shown).
    pub fn starts_with_id(&self) -> bool {
        matches!(self, Query::Ids | Query::Project(_) | Query::Join { .. })
    }
}

impl Gen<'_> {
    /// A column for a query's dynamic filter (TopK sort key, join key): often one the
    /// predicate filters on, so the scan has to merge both.
    fn dynamic_filter_column(&mut self, allowed: &[&'static str]) -> &'static str {
        let used: Vec<&'static str> = self
            .used
            .iter()
            .map(|&c| COLUMNS[c].0)
            .filter(|c| allowed.contains(c))
            .collect();
        if !used.is_empty() && self.chance(0.6) {
            return self.pick(&used);
        }
        self.pick(allowed)
    }

    pub fn query(&mut self) -> Query {
        match self.rng.random_range(0..100) {
            0..45 => Query::Ids,
            45..53 => Query::Count,
            53..58 => Query::CountByP,
            58..72 => {
                let mut cols = PROJECTED.to_vec();
                cols.shuffle(&mut self.rng);
                let n = self.rng.random_range(1..=5);
                cols.truncate(n);
                Query::Project(cols)
            }
            72..87 => Query::TopK {
                column: self.dynamic_filter_column(&TOPK),
                desc: self.chance(0.5),
                nulls_first: self.chance(0.5),
                limit: self.rng.random_range(1..=20),
            },
            87..94 => Query::LimitCount {
                limit: self.rng.random_range(0..=40),
                offset: if self.chance(0.4) {
                    self.rng.random_range(1..=30)
                } else {
                    0
                },
            },
            _ => self.join(),
        }
    }

    fn join(&mut self) -> Query {
        let column = self.dynamic_filter_column(&JOINED);
        let n = self.rng.random_range(1..=4);
        let mut values: Vec<String> = (0..n).map(|_| self.join_value(column)).collect();
        values.sort();
        values.dedup();
        if self.chance(0.1) {
            values.push("NULL".to_string());
        }
        Query::Join { column, values }
    }

    fn join_value(&mut self, column: &str) -> String {
        let from_data = self.chance(0.9);
        if column != "d" {
            return self.int_value(column, from_data).to_string();
        }
        let d = match self.pools.values("d").choose(&mut self.rng) {
            Some(Value::Day(d)) if from_data => *d,
            _ => DAY0 - 7,
        };
        format!("DATE '{}'", date_text(d))
    }
}
