//! Failures: shrinking a failing case ([`shrink`]: a node replaced by one of its children,
//! NOT removed, an IN item dropped, then the simplest query and table, as long as lakescan
//! still differs) and the report ([`describe`]: the case and seed, the minimal SQL, both
//! results and the rows only one engine returned, with the file and stored schema they
//! come from).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use arrow::util::display::{ArrayFormatter, FormatOptions};

use crate::fixture::{Fixture, HIVE, MEM, Placed};
use crate::predicates::Pred;
use crate::queries::Query;
use crate::run::{Outcome, Output, check};
use crate::table::to_batch;

/// A failing case, shrunk.
pub struct Failure {
    pub case: String,
    pub original: String,
    pub table: &'static str,
    pub query: Query,
    pub pred: Pred,
    pub lake: Result<Output, String>,
    pub mem: Result<Output, String>,
}

/// Greedily shrinks a failing case: smaller predicates first, then the plain id query and
/// the default-split table, as long as lakescan still differs.
pub async fn shrink(
    fx: &Fixture,
    case: String,
    table: &'static str,
    query: Query,
    pred: Pred,
    lake: Result<Output, String>,
    mem: Result<Output, String>,
) -> Failure {
    let original = query.sql(table, &pred.sql());
    let mut f = Failure {
        case,
        original,
        table,
        query,
        pred,
        lake,
        mem,
    };
    'outer: loop {
        let mut candidates: Vec<(&'static str, Query, Pred)> = f
            .pred
            .shrinks()
            .into_iter()
            .map(|p| (f.table, f.query.clone(), p))
            .collect();
        if f.query != Query::Ids {
            candidates.push((f.table, Query::Ids, f.pred.clone()));
        }
        if f.table != HIVE {
            candidates.push((HIVE, f.query.clone(), f.pred.clone()));
        }
        for (table, query, pred) in candidates {
            if let Outcome::Differ { lake, mem } = check(fx, table, &query, &pred).await {
                f = Failure {
                    table,
                    query,
                    pred,
                    lake,
                    mem,
                    ..f
                };
                continue 'outer;
            }
        }
        return f;
    }
}

fn show(result: &Result<Output, String>) -> String {
    const SHOWN: usize = 40;
    match result {
        Err(e) => e.clone(),
        Ok(out) => {
            let mut s = format!("{} rows: [", out.rows.len());
            s.push_str(
                &out.rows
                    .iter()
                    .take(SHOWN)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            if out.rows.len() > SHOWN {
                let _ = write!(s, ", … {} more", out.rows.len() - SHOWN);
            }
            s.push(']');
            s
        }
    }
}
/// Every column of a row (`name=value`) and where it is stored.
fn show_row(placed: &Placed) -> String {
    let batch = to_batch(std::slice::from_ref(&placed.row));
    let options = FormatOptions::default().with_null("NULL");
    let values: Vec<String> = batch
        .schema()
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(field, column)| {
            let value = ArrayFormatter::try_new(column.as_ref(), &options).unwrap();
            format!("{}={}", field.name(), value.value(0))
        })
        .collect();
    format!("{}  ({})", values.join(" "), placed.place)
}

/// The report of one failure.
pub fn describe(fx: &Fixture, f: &Failure) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "  {}", f.case);
    let _ = writeln!(s, "  minimal SQL:  {}", f.query.sql(f.table, &f.pred.sql()));
    let _ = writeln!(s, "  reference:    {}", f.query.sql(MEM, &f.pred.sql()));
    let _ = writeln!(s, "  lakescan   -> {}", show(&f.lake));
    let _ = writeln!(s, "  datafusion -> {}", show(&f.mem));
    if let (Ok(lake), Ok(mem), true) = (&f.lake, &f.mem, f.query.starts_with_id()) {
        // Rows (all selected columns) only one engine returned, with the stored row.
        let rows = |o: &Output| -> BTreeSet<String> { o.rows.iter().cloned().collect() };
        let (a, b) = (rows(lake), rows(mem));
        for (label, only) in [
            ("only lakescan", a.difference(&b)),
            ("only datafusion", b.difference(&a)),
        ] {
            let only: Vec<&String> = only.collect();
            if only.is_empty() {
                continue;
            }
            let _ = writeln!(s, "  rows {label} ({}):", only.len());
            for row in only.iter().take(8) {
                let _ = writeln!(s, "    {row}");
                let id = row.split('|').next().and_then(|id| id.parse::<i64>().ok());
                if let Some(placed) = id.and_then(|id| fx.rows.get(&id)) {
                    let _ = writeln!(s, "      stored: {}", show_row(placed));
                }
            }
        }
    }
    let _ = writeln!(s, "  original SQL: {}", f.original);
    s
}
