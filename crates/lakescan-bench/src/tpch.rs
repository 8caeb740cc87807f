//! In-process TPC-H `lineitem` and `orders` data as Arrow [`RecordBatch`]es.
//!
//! Rows come from the [`tpchgen`] crate (the pure-Rust port of `dbgen`); the
//! conversion to Arrow is done here so that we are not tied to the Arrow major
//! version that `tpchgen-arrow` depends on. The schemas mirror what
//! `tpchgen-arrow` (and therefore `tpchgen-cli --format=parquet`) produces:
//! `Int64` keys, `Int32` line numbers / ship priority, `Decimal128(15, 2)` for
//! money, quantities, discounts and taxes, `Date32` for dates and `Utf8View`
//! for every string column, all non-nullable.

use std::fmt::Write as _;
use std::fs::File;
use std::path::Path;
use std::sync::{Arc, LazyLock};

use arrow::array::{
    ArrayRef, Date32Array, Decimal128Array, Int32Array, Int64Array, RecordBatch, StringViewBuilder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use tpchgen::generators::{LineItemGenerator, OrderGenerator};

/// Precision of the TPC-H decimal columns, as in `tpchgen-arrow`.
const DECIMAL_PRECISION: u8 = 15;
/// Scale of the TPC-H decimal columns (tpchgen decimals are hundredths).
const DECIMAL_SCALE: i8 = 2;
/// Rows per batch handed to the Parquet writer (same as `tpchgen-arrow`).
const WRITE_BATCH_ROWS: usize = 8 * 1000;

static LINEITEM_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let dec = DataType::Decimal128(DECIMAL_PRECISION, DECIMAL_SCALE);
    Arc::new(Schema::new(vec![
        Field::new("l_orderkey", DataType::Int64, false),
        Field::new("l_partkey", DataType::Int64, false),
        Field::new("l_suppkey", DataType::Int64, false),
        Field::new("l_linenumber", DataType::Int32, false),
        Field::new("l_quantity", dec.clone(), false),
        Field::new("l_extendedprice", dec.clone(), false),
        Field::new("l_discount", dec.clone(), false),
        Field::new("l_tax", dec, false),
        Field::new("l_returnflag", DataType::Utf8View, false),
        Field::new("l_linestatus", DataType::Utf8View, false),
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_commitdate", DataType::Date32, false),
        Field::new("l_receiptdate", DataType::Date32, false),
        Field::new("l_shipinstruct", DataType::Utf8View, false),
        Field::new("l_shipmode", DataType::Utf8View, false),
        Field::new("l_comment", DataType::Utf8View, false),
    ]))
});

static ORDERS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    Arc::new(Schema::new(vec![
        Field::new("o_orderkey", DataType::Int64, false),
        Field::new("o_custkey", DataType::Int64, false),
        Field::new("o_orderstatus", DataType::Utf8View, false),
        Field::new(
            "o_totalprice",
            DataType::Decimal128(DECIMAL_PRECISION, DECIMAL_SCALE),
            false,
        ),
        Field::new("o_orderdate", DataType::Date32, false),
        Field::new("o_orderpriority", DataType::Utf8View, false),
        Field::new("o_clerk", DataType::Utf8View, false),
        Field::new("o_shippriority", DataType::Int32, false),
        Field::new("o_comment", DataType::Utf8View, false),
    ]))
});

/// Arrow schema of the TPC-H `lineitem` table (16 non-nullable columns).
pub fn lineitem_schema() -> SchemaRef {
    Arc::clone(&LINEITEM_SCHEMA)
}

/// Arrow schema of the TPC-H `orders` table (9 non-nullable columns).
pub fn orders_schema() -> SchemaRef {
    Arc::clone(&ORDERS_SCHEMA)
}

/// Checks the arguments shared by the batch generators.
fn check_args(scale: f64, part: i32, parts: i32, batch_rows: usize) -> Result<(), ArrowError> {
    if !(scale.is_finite() && scale >= 0.0) {
        return Err(ArrowError::InvalidArgumentError(format!(
            "TPC-H scale factor must be finite and >= 0, got {scale}"
        )));
    }
    if parts < 1 || part < 1 || part > parts {
        return Err(ArrowError::InvalidArgumentError(format!(
            "TPC-H part must satisfy 1 <= part <= parts, got part {part} of {parts}"
        )));
    }
    if batch_rows == 0 {
        return Err(ArrowError::InvalidArgumentError(
            "batch_rows must be > 0".to_string(),
        ));
    }
    Ok(())
}

/// Turns a row iterator (or an argument error) into a batch iterator: each
/// call of `build` drains at most one batch from the rows and returns `None`
/// once they are exhausted. An argument error is yielded once, then the
/// iterator ends.
fn batches<I, F>(rows: Result<I, ArrowError>, mut build: F) -> impl Iterator<Item = BatchResult>
where
    F: FnMut(&mut I) -> Option<BatchResult>,
{
    let mut state = Some(rows);
    std::iter::from_fn(move || match state.as_mut()? {
        Ok(rows) => build(rows),
        Err(_) => state.take().and_then(Result::err).map(Err),
    })
}

type BatchResult = Result<RecordBatch, ArrowError>;

/// Builds a `Decimal128(15, 2)` array from hundredths.
fn decimal_array(values: Vec<i128>) -> Result<ArrayRef, ArrowError> {
    Ok(Arc::new(
        Decimal128Array::from(values).with_precision_and_scale(DECIMAL_PRECISION, DECIMAL_SCALE)?,
    ))
}

/// Batches of at most `batch_rows` rows of part `part` (1-based) of `parts`
/// of the `lineitem` table at scale factor `scale`.
///
/// The concatenation of all parts `1..=parts` equals the single-part table.
/// Invalid arguments (non-finite or negative `scale`, `part` outside
/// `1..=parts`, `batch_rows == 0`) yield a single
/// [`ArrowError::InvalidArgumentError`].
pub fn lineitem_batches(
    scale: f64,
    part: i32,
    parts: i32,
    batch_rows: usize,
) -> impl Iterator<Item = Result<RecordBatch, ArrowError>> {
    let rows = check_args(scale, part, parts, batch_rows)
        .map(|()| LineItemGenerator::new(scale, part, parts).iter());
    let schema = lineitem_schema();
    batches(rows, move |rows| {
        let mut rows = rows.by_ref().take(batch_rows).peekable();
        rows.peek()?;
        let cap = batch_rows.min(WRITE_BATCH_ROWS);
        let mut orderkey = Vec::with_capacity(cap);
        let mut partkey = Vec::with_capacity(cap);
        let mut suppkey = Vec::with_capacity(cap);
        let mut linenumber = Vec::with_capacity(cap);
        let mut quantity = Vec::with_capacity(cap);
        let mut extendedprice = Vec::with_capacity(cap);
        let mut discount = Vec::with_capacity(cap);
        let mut tax = Vec::with_capacity(cap);
        let mut returnflag = StringViewBuilder::with_capacity(cap);
        let mut linestatus = StringViewBuilder::with_capacity(cap);
        let mut shipdate = Vec::with_capacity(cap);
        let mut commitdate = Vec::with_capacity(cap);
        let mut receiptdate = Vec::with_capacity(cap);
        let mut shipinstruct = StringViewBuilder::with_capacity(cap);
        let mut shipmode = StringViewBuilder::with_capacity(cap);
        let mut comment = StringViewBuilder::with_capacity(cap);
        for r in rows {
            orderkey.push(r.l_orderkey);
            partkey.push(r.l_partkey);
            suppkey.push(r.l_suppkey);
            linenumber.push(r.l_linenumber);
            // tpchgen keeps the quantity as a whole number; the column is decimal.
            quantity.push(i128::from(r.l_quantity) * 100);
            extendedprice.push(i128::from(r.l_extendedprice.into_inner()));
            discount.push(i128::from(r.l_discount.into_inner()));
            tax.push(i128::from(r.l_tax.into_inner()));
            returnflag.append_value(r.l_returnflag);
            linestatus.append_value(r.l_linestatus);
            shipdate.push(r.l_shipdate.to_unix_epoch());
            commitdate.push(r.l_commitdate.to_unix_epoch());
            receiptdate.push(r.l_receiptdate.to_unix_epoch());
            shipinstruct.append_value(r.l_shipinstruct);
            shipmode.append_value(r.l_shipmode);
            comment.append_value(r.l_comment);
        }
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(orderkey)),
            Arc::new(Int64Array::from(partkey)),
            Arc::new(Int64Array::from(suppkey)),
            Arc::new(Int32Array::from(linenumber)),
            match decimal_array(quantity) {
                Ok(a) => a,
                Err(e) => return Some(Err(e)),
            },
            match decimal_array(extendedprice) {
                Ok(a) => a,
                Err(e) => return Some(Err(e)),
            },
            match decimal_array(discount) {
                Ok(a) => a,
                Err(e) => return Some(Err(e)),
            },
            match decimal_array(tax) {
                Ok(a) => a,
                Err(e) => return Some(Err(e)),
            },
            Arc::new(returnflag.finish()),
            Arc::new(linestatus.finish()),
            Arc::new(Date32Array::from(shipdate)),
            Arc::new(Date32Array::from(commitdate)),
            Arc::new(Date32Array::from(receiptdate)),
            Arc::new(shipinstruct.finish()),
            Arc::new(shipmode.finish()),
            Arc::new(comment.finish()),
        ];
        Some(RecordBatch::try_new(Arc::clone(&schema), columns))
    })
}

/// Batches of at most `batch_rows` rows of part `part` (1-based) of `parts`
/// of the `orders` table at scale factor `scale`.
///
/// The concatenation of all parts `1..=parts` equals the single-part table.
/// Invalid arguments (non-finite or negative `scale`, `part` outside
/// `1..=parts`, `batch_rows == 0`) yield a single
/// [`ArrowError::InvalidArgumentError`].
pub fn orders_batches(
    scale: f64,
    part: i32,
    parts: i32,
    batch_rows: usize,
) -> impl Iterator<Item = Result<RecordBatch, ArrowError>> {
    let rows = check_args(scale, part, parts, batch_rows)
        .map(|()| OrderGenerator::new(scale, part, parts).iter());
    let schema = orders_schema();
    // Reused for formatting `o_clerk`, whose number tpchgen keeps private.
    let mut clerk_buf = String::with_capacity(16);
    batches(rows, move |rows| {
        let mut rows = rows.by_ref().take(batch_rows).peekable();
        rows.peek()?;
        let cap = batch_rows.min(WRITE_BATCH_ROWS);
        let mut orderkey = Vec::with_capacity(cap);
        let mut custkey = Vec::with_capacity(cap);
        let mut orderstatus = StringViewBuilder::with_capacity(cap);
        let mut totalprice = Vec::with_capacity(cap);
        let mut orderdate = Vec::with_capacity(cap);
        let mut orderpriority = StringViewBuilder::with_capacity(cap);
        let mut clerk = StringViewBuilder::with_capacity(cap);
        let mut shippriority = Vec::with_capacity(cap);
        let mut comment = StringViewBuilder::with_capacity(cap);
        for r in rows {
            orderkey.push(r.o_orderkey);
            custkey.push(r.o_custkey);
            orderstatus.append_value(r.o_orderstatus.as_str());
            totalprice.push(i128::from(r.o_totalprice.into_inner()));
            orderdate.push(r.o_orderdate.to_unix_epoch());
            orderpriority.append_value(r.o_orderpriority);
            clerk_buf.clear();
            if let Err(e) = write!(clerk_buf, "{}", r.o_clerk) {
                return Some(Err(ArrowError::ExternalError(Box::new(e))));
            }
            clerk.append_value(&clerk_buf);
            shippriority.push(r.o_shippriority);
            comment.append_value(r.o_comment);
        }
        let totalprice = match decimal_array(totalprice) {
            Ok(a) => a,
            Err(e) => return Some(Err(e)),
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(orderkey)),
            Arc::new(Int64Array::from(custkey)),
            Arc::new(orderstatus.finish()),
            totalprice,
            Arc::new(Date32Array::from(orderdate)),
            Arc::new(orderpriority.finish()),
            Arc::new(clerk.finish()),
            Arc::new(Int32Array::from(shippriority)),
            Arc::new(comment.finish()),
        ];
        Some(RecordBatch::try_new(Arc::clone(&schema), columns))
    })
}

/// Writes `parts` Parquet files `<dir>/<table>.<part>.parquet` (parts
/// numbered from 1) holding table `table` (`"lineitem"` or `"orders"`) at
/// scale factor `scale`, with row groups of at most `row_group_rows` rows.
///
/// `dir` is created if missing and existing files are overwritten. Columns
/// are SNAPPY-compressed, the default of `tpchgen-cli`.
pub fn write_table(
    table: &str,
    scale: f64,
    parts: i32,
    dir: &Path,
    row_group_rows: usize,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if row_group_rows == 0 {
        return Err("row_group_rows must be > 0".into());
    }
    if parts < 1 {
        return Err(format!("parts must be >= 1, got {parts}").into());
    }
    let schema = match table {
        "lineitem" => lineitem_schema(),
        "orders" => orders_schema(),
        other => return Err(format!("unsupported TPC-H table {other:?}").into()),
    };
    std::fs::create_dir_all(dir)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(row_group_rows))
        .build();
    for part in 1..=parts {
        let path = dir.join(format!("{table}.{part}.parquet"));
        let file = File::create(&path)?;
        let mut writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(props.clone()))?;
        let mut write =
            |batch: BatchResult| -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
                writer.write(&batch?)?;
                Ok(())
            };
        if table == "lineitem" {
            lineitem_batches(scale, part, parts, WRITE_BATCH_ROWS).try_for_each(&mut write)?;
        } else {
            orders_batches(scale, part, parts, WRITE_BATCH_ROWS).try_for_each(&mut write)?;
        }
        writer.close()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::AsArray;
    use arrow::compute::concat_batches;
    use arrow::datatypes::{Date32Type, Decimal128Type, Int64Type};
    use arrow::util::display::array_value_to_string;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use std::time::Instant;

    const SF: f64 = 0.01;

    fn collect(batches: impl Iterator<Item = BatchResult>) -> Vec<RecordBatch> {
        batches.collect::<Result<Vec<_>, _>>().unwrap()
    }

    fn rows(batches: &[RecordBatch]) -> usize {
        batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// Formats row `i` of `batch` like tpchgen's `.tbl` Display (`a|b|...|`).
    fn tbl_line(batch: &RecordBatch, i: usize) -> String {
        let mut s = String::new();
        for (field, col) in batch.schema().fields().iter().zip(batch.columns()) {
            let v = array_value_to_string(col, i).unwrap();
            // tpchgen keeps l_quantity integral: "17" where the decimal is "17.00".
            if field.name() == "l_quantity" {
                s.push_str(v.strip_suffix(".00").unwrap());
            } else {
                s.push_str(&v);
            }
            s.push('|');
        }
        s
    }

    #[test]
    fn schemas() {
        let l = lineitem_schema();
        assert_eq!(l.fields().len(), 16);
        assert_eq!(l.field(0).name(), "l_orderkey");
        assert_eq!(l.field(15).name(), "l_comment");
        assert_eq!(l.field(4).data_type(), &DataType::Decimal128(15, 2));
        assert_eq!(l.field(10).data_type(), &DataType::Date32);
        let o = orders_schema();
        assert_eq!(o.fields().len(), 9);
        assert_eq!(o.field(0).name(), "o_orderkey");
        assert_eq!(o.field(8).name(), "o_comment");
        assert!(
            l.fields()
                .iter()
                .chain(o.fields())
                .all(|f| !f.is_nullable())
        );
    }

    #[test]
    fn lineitem_counts_and_values() {
        let start = Instant::now();
        let batches = collect(lineitem_batches(SF, 1, 1, 8192));
        eprintln!(
            "lineitem SF {SF}: {} rows in {:?}",
            rows(&batches),
            start.elapsed()
        );
        // dbgen's documented SF 0.01 lineitem cardinality.
        assert_eq!(rows(&batches), 60175);
        assert!(batches.iter().all(|b| b.num_rows() <= 8192));
        assert_eq!(batches.len(), 60175usize.div_ceil(8192));

        // Every row of the first batch equals tpchgen's own row rendering.
        let first = &batches[0];
        let reference: Vec<_> = LineItemGenerator::new(SF, 1, 1)
            .iter()
            .take(first.num_rows())
            .collect();
        for (i, r) in reference.iter().enumerate() {
            assert_eq!(tbl_line(first, i), r.to_string(), "row {i}");
        }
        // Exact decimals and dates of row 1, straight from the typed fields.
        let r = &reference[0];
        let price = first.column(5).as_primitive::<Decimal128Type>();
        assert_eq!(price.value(0), i128::from(r.l_extendedprice.into_inner()));
        assert_eq!(price.value_as_string(0), r.l_extendedprice.to_string());
        let qty = first.column(4).as_primitive::<Decimal128Type>();
        assert_eq!(qty.value(0), i128::from(r.l_quantity) * 100);
        let ship = first.column(10).as_primitive::<Date32Type>();
        assert_eq!(ship.value(0), r.l_shipdate.to_unix_epoch());
        assert_eq!(
            array_value_to_string(ship, 0).unwrap(),
            r.l_shipdate.to_string()
        );
    }

    #[test]
    fn lineitem_sf1_first_row_known_values() {
        // Values from tpchgen-arrow's documented SF 1 output (= dbgen).
        let b = lineitem_batches(1.0, 1, 1, 10).next().unwrap().unwrap();
        assert_eq!(b.num_rows(), 10);
        assert_eq!(b.column(1).as_primitive::<Int64Type>().value(0), 155190);
        let price = b.column(5).as_primitive::<Decimal128Type>();
        assert_eq!(price.value(0), 2_116_823); // 21168.23
        assert_eq!(price.value_as_string(0), "21168.23");
        assert_eq!(b.column(4).as_primitive::<Decimal128Type>().value(0), 1_700); // 17.00
        // 1996-03-13 = 9568 days after 1970-01-01.
        assert_eq!(b.column(10).as_primitive::<Date32Type>().value(0), 9568);
        assert_eq!(
            b.column(15).as_string_view().value(0),
            "egular courts above the"
        );
        assert_eq!(
            tbl_line(&b, 9),
            "3|128449|3474|3|27|39890.88|0.06|0.07|A|F|1994-01-16|1993-11-22|1994-01-23|\
             DELIVER IN PERSON|SHIP|nal foxes wake. |"
        );
    }

    #[test]
    fn orders_counts_and_values() {
        let batches = collect(orders_batches(SF, 1, 1, 4000));
        assert_eq!(rows(&batches), 15000);
        assert_eq!(
            OrderGenerator::calculate_row_count(SF, 1, 1),
            15000,
            "tpchgen's own count"
        );
        let all = concat_batches(&orders_schema(), &batches).unwrap();
        for (i, r) in OrderGenerator::new(SF, 1, 1).iter().enumerate().step_by(97) {
            assert_eq!(tbl_line(&all, i), r.to_string(), "row {i}");
        }
        let b = orders_batches(1.0, 1, 1, 3).next().unwrap().unwrap();
        assert_eq!(
            tbl_line(&b, 0),
            "1|36901|O|173665.47|1996-01-02|5-LOW|Clerk#000000951|0|nstructions sleep furiously among |"
        );
        assert_eq!(b.column(6).as_string_view().value(2), "Clerk#000000955");
    }

    #[test]
    fn parts_add_up() {
        for (whole, split) in [
            (
                rows(&collect(lineitem_batches(SF, 1, 1, 10_000))),
                (1..=2)
                    .map(|p| rows(&collect(lineitem_batches(SF, p, 2, 10_000))))
                    .sum::<usize>(),
            ),
            (
                rows(&collect(orders_batches(SF, 1, 1, 10_000))),
                (1..=3)
                    .map(|p| rows(&collect(orders_batches(SF, p, 3, 10_000))))
                    .sum::<usize>(),
            ),
        ] {
            assert_eq!(whole, split);
        }
        // Part 2 of 2 starts where part 1 ends.
        let p1 = collect(orders_batches(SF, 1, 2, 100_000));
        let p2 = collect(orders_batches(SF, 2, 2, 1));
        let last1 = p1[0].column(0).as_primitive::<Int64Type>();
        let first2 = p2[0].column(0).as_primitive::<Int64Type>().value(0);
        assert!(last1.value(last1.len() - 1) < first2);
    }

    #[test]
    fn bad_arguments() {
        for mut it in [
            Box::new(lineitem_batches(SF, 0, 1, 10)) as Box<dyn Iterator<Item = BatchResult>>,
            Box::new(lineitem_batches(SF, 3, 2, 10)),
            Box::new(orders_batches(f64::NAN, 1, 1, 10)),
            Box::new(orders_batches(SF, 1, 1, 0)),
            Box::new(orders_batches(SF, 1, 0, 10)),
        ] {
            assert!(matches!(
                it.next(),
                Some(Err(ArrowError::InvalidArgumentError(_)))
            ));
            assert!(it.next().is_none());
        }
        assert_eq!(orders_batches(0.0, 1, 1, 10).count(), 0);
        let dir = std::env::temp_dir();
        assert!(write_table("part", SF, 1, &dir, 10).is_err());
        assert!(write_table("orders", SF, 1, &dir, 0).is_err());
    }

    #[test]
    fn parquet_round_trip() {
        let dir = std::env::temp_dir().join(format!("tpcharrow-{}", std::process::id()));
        for (table, schema, parts, row_group_rows) in [
            ("lineitem", lineitem_schema(), 2, 20_000),
            ("orders", orders_schema(), 1, 4_096),
        ] {
            write_table(table, SF, parts, &dir, row_group_rows).unwrap();
            let mut read = Vec::new();
            for part in 1..=parts {
                let file = File::open(dir.join(format!("{table}.{part}.parquet"))).unwrap();
                let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
                assert_eq!(builder.schema(), &schema);
                let meta = builder.metadata();
                assert!(
                    meta.row_groups()
                        .iter()
                        .all(|rg| rg.num_rows() as usize <= row_group_rows)
                );
                assert_eq!(
                    meta.row_group(0).column(0).compression(),
                    Compression::SNAPPY
                );
                read.extend(builder.build().unwrap().map(Result::unwrap));
            }
            let read = concat_batches(&schema, &read).unwrap();
            let batches = if table == "lineitem" {
                collect(lineitem_batches(SF, 1, 1, 100_000))
            } else {
                collect(orders_batches(SF, 1, 1, 100_000))
            };
            let expected = concat_batches(&schema, &batches).unwrap();
            assert_eq!(read, expected, "{table}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
