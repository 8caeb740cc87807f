//! Hand-written regression cases: small fixed tables and predicates, each named after the
//! behaviour it pins (most were found by the generated test). A case runs the id query (or
//! the given query) on both lakescan tables and compares with the `MemTable`.
//!
//! * `mod.rs` — building a fixed table ([`file`], [`file_as`]) and comparing ([`assert_same`]).
//! * [`filters`] — filter semantics: NaN and -0.0, NOT IN with NULLs, OR across columns,
//!   widening casts against statistics, dynamic filters, string predicates.
//! * [`types`] — the decimal, REAL, small integer, binary, zoned timestamp and struct
//!   columns, and files that leave columns out or store them narrower.

mod filters;
mod types;

use std::fmt::Write as _;

use parquet::file::properties::EnabledStatistics;

use crate::data::DataFile;
use crate::fixture::{Fixture, HIVE, HIVE_SPLIT};
use crate::layout::Layout;
use crate::predicates::Pred;
use crate::queries::Query;
use crate::run::{Outcome, check};
use crate::shrink::{Failure, describe};
use crate::table::Row;

/// A handmade file: row groups of rows in partition `p`.
pub fn file(p: Option<i64>, name: &str, row_groups: Vec<Vec<Row>>) -> DataFile {
    DataFile {
        partition: p,
        name: name.to_string(),
        row_groups,
        statistics: EnabledStatistics::Page,
        dictionary: false,
        layout: Layout::default(),
    }
}

/// A handmade file with a stored schema of its own (its rows lose the columns it leaves
/// out).
pub fn file_as(
    p: Option<i64>,
    name: &str,
    layout: Layout,
    mut row_groups: Vec<Vec<Row>>,
) -> DataFile {
    for row in row_groups.iter_mut().flatten() {
        layout.clear_missing(row);
    }
    DataFile {
        layout,
        ..file(p, name, row_groups)
    }
}

/// Numbers the rows (`id`) and sets their partition.
fn numbered(mut files: Vec<DataFile>) -> Vec<DataFile> {
    let mut id = 0;
    for f in &mut files {
        for rg in &mut f.row_groups {
            for r in rg.iter_mut() {
                r.id = id;
                r.p = f.partition;
                id += 1;
            }
        }
    }
    files
}

/// Runs each predicate with the id query on both lakescan tables and fails with every
/// mismatch.
pub async fn assert_same(files: Vec<DataFile>, predicates: &[&str]) {
    let cases: Vec<(Query, &str)> = predicates.iter().map(|p| (Query::Ids, *p)).collect();
    assert_same_queries(files, &cases).await;
}

/// Runs each (query, predicate) on both lakescan tables and fails with every mismatch.
pub async fn assert_same_queries(files: Vec<DataFile>, cases: &[(Query, &str)]) {
    let fx = Fixture::build(&numbered(files)).await;
    let mut report = String::new();
    for (query, pred) in cases {
        let pred = Pred::Leaf(pred.to_string());
        for table in [HIVE, HIVE_SPLIT] {
            match check(&fx, table, query, &pred).await {
                Outcome::Same(out, _) => assert!(
                    !out.rows.is_empty() || pred.sql().contains("NULL"),
                    "{}: no rows, the fixture does not test it",
                    pred.sql()
                ),
                Outcome::BothFailed(e) => panic!("{}: both engines failed: {e}", pred.sql()),
                Outcome::Differ { lake, mem } => {
                    let original = query.sql(table, &pred.sql());
                    let f = Failure {
                        case: "fixed case".to_string(),
                        original,
                        table,
                        query: query.clone(),
                        pred: pred.clone(),
                        lake,
                        mem,
                    };
                    let _ = writeln!(report, "{}", describe(&fx, &f));
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "lakescan differs from DataFusion:\n{report}"
    );
}
