//! Query results reduced to something every engine can be compared on.
//!
//! Every cell is rendered with arrow's display formatter (`NULL` for nulls), so a decimal
//! prints as `123.45` and a date as `1995-01-01` whichever engine produced it. Results of at
//! most [`FULL_COMPARE_ROWS`] rows are kept and compared row by row after sorting, with
//! numbers equal when they agree to about six significant digits (DataFusion's and DuckDB's
//! sums and averages of decimals differ in type and in the last digits). Larger results
//! (the full scan, and the selective scans at larger scales) are compared by row count and an
//! order-independent digest of the exact cell texts; they hold raw column values only.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use anyhow::Result;
use arrow::array::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};

/// Results up to this many rows are compared cell by cell.
pub const FULL_COMPARE_ROWS: usize = 10_000;

/// A result as the comparison sees it.
#[derive(Debug, Clone, Default)]
pub struct ResultSet {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns (of the first non-empty batch).
    pub columns: usize,
    /// Order-independent digest of the rows' cell texts.
    pub digest: u64,
    /// The rows' cell texts, sorted, while the result is small.
    pub cells: Option<Vec<Vec<String>>>,
}

/// Builds a [`ResultSet`] batch by batch without keeping large results.
#[derive(Debug)]
pub struct ResultCollector {
    set: ResultSet,
    options: FormatOptions<'static>,
}

impl Default for ResultCollector {
    fn default() -> Self {
        Self {
            set: ResultSet {
                cells: Some(vec![]),
                ..Default::default()
            },
            options: FormatOptions::default().with_null("NULL"),
        }
    }
}

impl ResultCollector {
    /// Adds the rows of `batch`.
    pub fn add(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.set.columns = batch.num_columns();
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &self.options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            let mut hasher = DefaultHasher::new();
            cells.hash(&mut hasher);
            self.set.digest = self.set.digest.wrapping_add(hasher.finish());
            self.set.rows += 1;
            if self.set.rows > FULL_COMPARE_ROWS {
                self.set.cells = None;
            }
            if let Some(kept) = &mut self.set.cells {
                kept.push(cells);
            }
        }
        Ok(())
    }

    /// The finished result.
    pub fn finish(mut self) -> ResultSet {
        if let Some(cells) = &mut self.set.cells {
            cells.sort();
        }
        self.set
    }
}

/// Compares `actual` with `expected`; the error describes the first differences.
pub fn compare(expected: &ResultSet, actual: &ResultSet) -> Result<(), String> {
    if expected.rows != actual.rows {
        return Err(format!(
            "{} rows expected, {} returned{}",
            expected.rows,
            actual.rows,
            sample_diff(expected, actual)
        ));
    }
    if expected.rows == 0 {
        return Ok(());
    }
    if expected.columns != actual.columns {
        return Err(format!(
            "{} columns expected, {} returned",
            expected.columns, actual.columns
        ));
    }
    match (&expected.cells, &actual.cells) {
        (Some(e), Some(a)) => {
            let bad: Vec<String> = e
                .iter()
                .zip(a)
                .enumerate()
                .filter(|(_, (er, ar))| !rows_equal(er, ar))
                .take(5)
                .map(|(i, (er, ar))| {
                    format!(
                        "  row {i}:\n    expected: {}\n    actual:   {}",
                        er.join(" | "),
                        ar.join(" | ")
                    )
                })
                .collect();
            if bad.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "rows differ (sorted, first {}):\n{}",
                    bad.len(),
                    bad.join("\n")
                ))
            }
        }
        _ if expected.digest == actual.digest => Ok(()),
        _ => Err(format!(
            "{} rows on both sides but the row digests differ ({:016x} expected, {:016x} returned)",
            expected.rows, expected.digest, actual.digest
        )),
    }
}

fn sample_diff(expected: &ResultSet, actual: &ResultSet) -> String {
    let show = |set: &ResultSet| match &set.cells {
        Some(c) => c
            .iter()
            .take(3)
            .map(|r| format!("\n    {}", r.join(" | ")))
            .collect::<String>(),
        None => " (large result, not kept)".to_string(),
    };
    format!(
        "\n  expected, first rows:{}\n  actual, first rows:{}",
        show(expected),
        show(actual)
    )
}

fn rows_equal(expected: &[String], actual: &[String]) -> bool {
    expected.len() == actual.len() && expected.iter().zip(actual).all(|(e, a)| cells_equal(e, a))
}

/// Equal texts, or numbers that agree to about six significant digits.
fn cells_equal(expected: &str, actual: &str) -> bool {
    if expected == actual {
        return true;
    }
    match (expected.parse::<f64>(), actual.parse::<f64>()) {
        (Ok(e), Ok(a)) => {
            let scale = e.abs().max(a.abs());
            (e - a).abs() <= (1e-6 * scale).max(1e-5)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Float64Array, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;

    fn batch(ids: Vec<i64>, values: Vec<f64>) -> RecordBatch {
        let n = ids.len();
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("v", DataType::Float64, false),
            Field::new("s", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(Float64Array::from(values)),
                Arc::new(StringArray::from(vec![None::<&str>; n])),
            ],
        )
        .unwrap()
    }

    fn collect(batches: &[RecordBatch]) -> ResultSet {
        let mut c = ResultCollector::default();
        for b in batches {
            c.add(b).unwrap();
        }
        c.finish()
    }

    #[test]
    fn order_and_float_noise_do_not_matter() {
        let a = collect(&[batch(vec![1, 2], vec![0.1, 25.522005])]);
        let b = collect(&[
            batch(vec![2], vec![25.522005853257337]),
            batch(vec![1], vec![0.1]),
        ]);
        compare(&a, &b).unwrap();
        assert_eq!(a.cells.unwrap()[0], vec!["1", "0.1", "NULL"]);
    }

    #[test]
    fn different_values_fail() {
        let a = collect(&[batch(vec![1, 2], vec![1.0, 2.0])]);
        let b = collect(&[batch(vec![1, 2], vec![1.0, 2.5])]);
        let err = compare(&a, &b).unwrap_err();
        assert!(err.contains("rows differ"), "{err}");
        let c = collect(&[batch(vec![1], vec![1.0])]);
        assert!(compare(&a, &c).unwrap_err().contains("2 rows expected"));
    }
}
