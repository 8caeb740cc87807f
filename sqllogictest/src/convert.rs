//! Record batches → sqllogictest output: column types and value strings.
//!
//! * **Column types** ([`column_type`]): integers → `I`, floats and decimals → `R`, everything
//!   else → `T` (a dictionary counts as its value type).
//! * **Values** ([`batch_rows`]): arrow's display formatting ([`ArrayFormatter`]) with nulls as
//!   `NULL` (also inside nested values) and a non-null value that prints as nothing as
//!   `(empty)`. Booleans print `true` / `false`, floats as arrow prints them (`1.0`, `0.5`).
//! * **Multi-line values** ([`expand_multiline`]): DataFusion's slt convention. When the last
//!   cell of a row spans several lines (the plan column of `EXPLAIN`), the row is emitted
//!   without that cell, followed by one single-cell row per line, numbered `01)`, `02)`, …,
//!   with the line's leading spaces turned into `-` so indentation survives whitespace
//!   normalization:
//!
//! ```text
//! logical_plan
//! 01)Projection: t.a
//! 02)--TableScan: t projection=[a]
//! ```

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Schema};
use arrow::error::ArrowError;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::Result;
use sqllogictest::{DBOutput, DefaultColumnType};

/// Text of a NULL value.
pub const NULL_TEXT: &str = "NULL";

/// Text of a non-null value that displays as the empty string (e.g. `''`).
pub const EMPTY_TEXT: &str = "(empty)";

/// Display options of every value: arrow defaults, nulls as [`NULL_TEXT`].
const FORMAT_OPTIONS: FormatOptions<'static> = FormatOptions::new().with_null(NULL_TEXT);

/// Converts a statement's result into runner output.
///
/// A result with no columns and no rows (DDL, `SET`, …) is `StatementComplete(0)`; anything
/// else is `Rows`, typed from the batches' schema (or `plan_schema` when there are no
/// batches).
pub fn to_output(
    plan_schema: &Schema,
    batches: &[RecordBatch],
) -> Result<DBOutput<DefaultColumnType>> {
    let schema = batches
        .first()
        .map_or(plan_schema, |batch| batch.schema_ref().as_ref());
    let rows = to_rows(batches)?;
    if schema.fields().is_empty() && rows.is_empty() {
        return Ok(DBOutput::StatementComplete(0));
    }
    let types = schema
        .fields()
        .iter()
        .map(|field| column_type(field.data_type()))
        .collect();
    Ok(DBOutput::Rows { types, rows })
}

/// The sqllogictest column type of an arrow type: `I`, `R` or `T`.
pub fn column_type(data_type: &DataType) -> DefaultColumnType {
    match data_type {
        DataType::Dictionary(_, value_type) => column_type(value_type),
        t if t.is_integer() => DefaultColumnType::Integer,
        t if t.is_floating() || t.is_decimal() => DefaultColumnType::FloatingPoint,
        _ => DefaultColumnType::Text,
    }
}

/// All rows of `batches` as text, multi-line last cells expanded ([`expand_multiline`]).
pub fn to_rows(batches: &[RecordBatch]) -> Result<Vec<Vec<String>>> {
    let mut rows = Vec::new();
    for batch in batches {
        rows.extend(batch_rows(batch)?.into_iter().flat_map(expand_multiline));
    }
    Ok(rows)
}

/// The rows of one batch as text, one string per cell.
pub fn batch_rows(batch: &RecordBatch) -> Result<Vec<Vec<String>>> {
    let formatters = batch
        .columns()
        .iter()
        .map(|column| ArrayFormatter::try_new(column.as_ref(), &FORMAT_OPTIONS))
        .collect::<Result<Vec<_>, ArrowError>>()?;
    let rows = (0..batch.num_rows())
        .map(|row| {
            formatters
                .iter()
                .map(|formatter| cell_text(formatter, row))
                .collect()
        })
        .collect::<Result<Vec<Vec<String>>, ArrowError>>()?;
    Ok(rows)
}

/// The text of one cell: arrow display, nulls as [`NULL_TEXT`], empty as [`EMPTY_TEXT`].
fn cell_text(formatter: &ArrayFormatter<'_>, row: usize) -> Result<String, ArrowError> {
    let text = formatter.value(row).try_to_string()?;
    Ok(if text.is_empty() {
        EMPTY_TEXT.to_string()
    } else {
        text
    })
}

/// Splits a row whose last cell has several lines into the row without that cell (dropped
/// when nothing is left of it) followed by one numbered row per line (trailing newlines are
/// dropped first: plans end with one); other rows pass through.
pub fn expand_multiline(mut row: Vec<String>) -> Vec<Vec<String>> {
    let Some(last) = row.pop_if(|cell| cell.contains('\n')) else {
        return vec![row];
    };
    let head = (!row.is_empty()).then_some(row);
    let lines = last.trim_end_matches('\n').split('\n');
    let lines = lines
        .enumerate()
        .map(|(i, line)| vec![numbered_line(i + 1, line)]);
    head.into_iter().chain(lines).collect()
}

/// `NN)` + the line with each leading space replaced by `-`.
fn numbered_line(number: usize, line: &str) -> String {
    let content = line.trim_start_matches(' ');
    let indent = "-".repeat(line.len() - content.len());
    format!("{number:02}){indent}{content}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|cell| cell.to_string()).collect()
    }

    #[test]
    fn single_line_rows_pass_through() {
        assert_eq!(
            expand_multiline(strings(&["a", "b"])),
            vec![strings(&["a", "b"])]
        );
    }

    #[test]
    fn multi_line_last_cell_becomes_numbered_rows() {
        let rows = expand_multiline(strings(&[
            "logical_plan",
            "Projection: a\n  TableScan: t\n",
        ]));
        let expected = vec![
            strings(&["logical_plan"]),
            strings(&["01)Projection: a"]),
            strings(&["02)--TableScan: t"]),
        ];
        assert_eq!(rows, expected);
    }

    #[test]
    fn single_multi_line_cell_has_no_empty_head_row() {
        let rows = expand_multiline(strings(&["x\ny"]));
        assert_eq!(rows, vec![strings(&["01)x"]), strings(&["02)y"])]);
    }
}
