//! Rendering query results: pretty tables, CSV/TSV and JSON, plus the
//! datafusion-cli style timing line.

use std::io::Write;
use std::time::Duration;

use arrow::csv::WriterBuilder as CsvWriterBuilder;
use arrow::datatypes::SchemaRef;
use arrow::json::{ArrayWriter, LineDelimitedWriter};
use arrow::record_batch::RecordBatch;
use arrow::util::pretty::pretty_format_batches_with_schema;
use clap::ValueEnum;

use crate::error::CliResult;

/// How query results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// An ASCII table (arrow pretty printer).
    #[default]
    Table,
    /// Comma separated values with a header line.
    Csv,
    /// Tab separated values with a header line.
    Tsv,
    /// A single JSON array of row objects.
    Json,
    /// One JSON object per line.
    Ndjson,
}

/// Writes `batches` (all with schema `schema`) to `out` in `format`.
///
/// Results without columns (DDL, `SET`, ...) print nothing.
pub fn write_results(
    out: &mut dyn Write,
    format: OutputFormat,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> CliResult<()> {
    if schema.fields().is_empty() {
        return Ok(());
    }
    match format {
        OutputFormat::Table => write_table(out, schema, batches),
        OutputFormat::Csv => write_delimited(out, b',', schema, batches),
        OutputFormat::Tsv => write_delimited(out, b'\t', schema, batches),
        OutputFormat::Json => write_json(ArrayWriter::new(&mut *out), batches, true),
        OutputFormat::Ndjson => write_json(LineDelimitedWriter::new(&mut *out), batches, false),
    }
}

fn write_table(out: &mut dyn Write, schema: &SchemaRef, batches: &[RecordBatch]) -> CliResult<()> {
    let table = pretty_format_batches_with_schema(schema.clone(), batches)?;
    writeln!(out, "{table}")?;
    Ok(())
}

fn write_delimited(
    out: &mut dyn Write,
    delimiter: u8,
    schema: &SchemaRef,
    batches: &[RecordBatch],
) -> CliResult<()> {
    let mut writer = CsvWriterBuilder::new()
        .with_header(true)
        .with_delimiter(delimiter)
        .build(&mut *out);
    if batches.is_empty() {
        // Still print the header line.
        writer.write(&RecordBatch::new_empty(schema.clone()))?;
    }
    for batch in batches {
        writer.write(batch)?;
    }
    Ok(())
}

fn write_json<W: Write, F: arrow::json::writer::JsonFormat>(
    mut writer: arrow::json::Writer<W, F>,
    batches: &[RecordBatch],
    newline_after: bool,
) -> CliResult<()> {
    for batch in batches {
        writer.write(batch)?;
    }
    writer.finish()?;
    let mut inner = writer.into_inner();
    if newline_after {
        writeln!(inner)?;
    }
    Ok(())
}

/// Total number of rows in `batches`.
pub fn row_count(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// The datafusion-cli style summary line printed after each statement.
pub fn timing_line(rows: usize, elapsed: Duration) -> String {
    format!(
        "{rows} row(s) fetched. Elapsed {:.3} seconds.",
        elapsed.as_secs_f64()
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;

    fn sample() -> (SchemaRef, Vec<RecordBatch>) {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("amount", DataType::Float64, true),
        ]));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(StringArray::from(vec![Some("a,b"), None])),
            Arc::new(Float64Array::from(vec![Some(1.5), Some(2.0)])),
        ];
        let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
        (schema, vec![batch])
    }

    fn render(format: OutputFormat, schema: &SchemaRef, batches: &[RecordBatch]) -> String {
        let mut out = Vec::new();
        write_results(&mut out, format, schema, batches).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn table_format() {
        let (schema, batches) = sample();
        let expected = "\
+----+------+--------+
| id | name | amount |
+----+------+--------+
| 1  | a,b  | 1.5    |
| 2  |      | 2.0    |
+----+------+--------+
";
        assert_eq!(render(OutputFormat::Table, &schema, &batches), expected);
    }

    #[test]
    fn table_format_without_rows_prints_header() {
        let (schema, _) = sample();
        let text = render(OutputFormat::Table, &schema, &[]);
        assert!(text.contains("| id | name | amount |"), "{text}");
    }

    #[test]
    fn csv_format_quotes_delimiters() {
        let (schema, batches) = sample();
        let expected = "id,name,amount\n1,\"a,b\",1.5\n2,,2.0\n";
        assert_eq!(render(OutputFormat::Csv, &schema, &batches), expected);
    }

    #[test]
    fn csv_format_without_rows_prints_header() {
        let (schema, _) = sample();
        assert_eq!(render(OutputFormat::Csv, &schema, &[]), "id,name,amount\n");
    }

    #[test]
    fn tsv_format() {
        let (schema, batches) = sample();
        let expected = "id\tname\tamount\n1\ta,b\t1.5\n2\t\t2.0\n";
        assert_eq!(render(OutputFormat::Tsv, &schema, &batches), expected);
    }

    #[test]
    fn json_format() {
        let (schema, batches) = sample();
        let expected = "[{\"id\":1,\"name\":\"a,b\",\"amount\":1.5},{\"id\":2,\"amount\":2.0}]\n";
        assert_eq!(render(OutputFormat::Json, &schema, &batches), expected);
    }

    #[test]
    fn json_format_without_rows_is_empty_array() {
        let (schema, _) = sample();
        assert_eq!(render(OutputFormat::Json, &schema, &[]), "[]\n");
    }

    #[test]
    fn ndjson_format() {
        let (schema, batches) = sample();
        let expected = "{\"id\":1,\"name\":\"a,b\",\"amount\":1.5}\n{\"id\":2,\"amount\":2.0}\n";
        assert_eq!(render(OutputFormat::Ndjson, &schema, &batches), expected);
    }

    #[test]
    fn statements_without_columns_print_nothing() {
        let schema = Arc::new(Schema::empty());
        for format in [OutputFormat::Table, OutputFormat::Csv, OutputFormat::Json] {
            assert_eq!(render(format, &schema, &[]), "");
        }
    }

    #[test]
    fn timing_line_matches_datafusion_cli() {
        let line = timing_line(3, Duration::from_millis(12));
        assert_eq!(line, "3 row(s) fetched. Elapsed 0.012 seconds.");
    }
}
