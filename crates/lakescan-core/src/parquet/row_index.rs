//! Filters on the row index (`$row_index`, Iceberg `_pos`) as row selections.
//!
//! A row's index is its position in the *file*: row group `g` holds positions
//! `[start(g), start(g) + rows(g))`, where `start(g)` sums the rows of the row groups before
//! it. A filter on the index becomes the rows of the kept row groups whose position it
//! accepts, so the reader never decodes the others:
//!
//! ```text
//!  row groups kept:   rg1 = [100, 150)          rg3 = [200, 260)
//!  filter:            [120, 210)
//!  selection:         skip 20, select 30        select 10, skip 50
//! ```

use arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::ParquetMetaData;

use crate::filter::{Bound, Filter};

/// First file position of every row group, in file order.
pub fn row_group_starts(metadata: &ParquetMetaData) -> Vec<i64> {
    let mut starts = Vec::with_capacity(metadata.num_row_groups());
    let mut next = 0i64;
    for rg in metadata.row_groups() {
        starts.push(next);
        next = next.saturating_add(rg.num_rows());
    }
    starts
}

/// The rows of `row_groups` (ascending) whose position passes `filter`, as a selection over
/// those row groups concatenated; `None` when `filter` is not on BIGINT positions.
pub fn row_index_selection(
    metadata: &ParquetMetaData,
    row_groups: &[usize],
    filter: &Filter,
) -> Option<RowSelection> {
    if filter.data_type() != &DataType::Int64 {
        return None;
    }
    let intervals: Vec<(i64, i64)> = filter
        .values()
        .ranges()
        .iter()
        .filter_map(|r| Some((low_of(&r.low)?, high_of(&r.high)?)))
        .filter(|(lo, hi)| lo < hi)
        .collect();
    let starts = row_group_starts(metadata);
    let mut selectors = vec![];
    for &rg in row_groups {
        let start = *starts.get(rg)?;
        let end = start.saturating_add(metadata.row_group(rg).num_rows());
        let mut at = start;
        for &(lo, hi) in &intervals {
            let (lo, hi) = (lo.max(at), hi.min(end));
            if lo >= hi {
                continue;
            }
            push(&mut selectors, RowSelector::skip((lo - at) as usize));
            push(&mut selectors, RowSelector::select((hi - lo) as usize));
            at = hi;
        }
        push(&mut selectors, RowSelector::skip((end - at) as usize));
    }
    Some(RowSelection::from(selectors))
}

fn push(selectors: &mut Vec<RowSelector>, selector: RowSelector) {
    if selector.row_count > 0 {
        selectors.push(selector);
    }
}

/// The first position an interval's low end admits (`None`: admits none).
fn low_of(bound: &Bound) -> Option<i64> {
    match bound {
        Bound::Unbounded => Some(i64::MIN),
        Bound::Included(v) => int(v),
        Bound::Excluded(v) => int(v)?.checked_add(1),
    }
}

/// The first position past an interval's high end.
fn high_of(bound: &Bound) -> Option<i64> {
    match bound {
        Bound::Unbounded => Some(i64::MAX),
        Bound::Included(v) => Some(int(v)?.saturating_add(1)),
        Bound::Excluded(v) => int(v),
    }
}

fn int(v: &ScalarValue) -> Option<i64> {
    match v {
        ScalarValue::Int64(Some(x)) => Some(*x),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::logical_expr::Operator;

    fn metadata(rows: &[i64]) -> ParquetMetaData {
        use parquet::file::metadata::{FileMetaData, RowGroupMetaData};
        use parquet::schema::parser::parse_message_type;
        use parquet::schema::types::SchemaDescriptor;
        use std::sync::Arc;
        let schema = parse_message_type("message m { required int64 a; }").unwrap();
        let descr = Arc::new(SchemaDescriptor::new(Arc::new(schema)));
        let row_groups = rows
            .iter()
            .map(|&n| {
                let column = parquet::file::metadata::ColumnChunkMetaData::builder(descr.column(0))
                    .build()
                    .unwrap();
                RowGroupMetaData::builder(Arc::clone(&descr))
                    .set_num_rows(n)
                    .set_column_metadata(vec![column])
                    .build()
                    .unwrap()
            })
            .collect();
        let file = FileMetaData::new(1, rows.iter().sum(), None, None, descr, None);
        ParquetMetaData::new(file, row_groups)
    }

    fn i(v: i64) -> ScalarValue {
        ScalarValue::Int64(Some(v))
    }

    fn selected(selection: &RowSelection) -> Vec<(bool, usize)> {
        selection.iter().map(|s| (!s.skip, s.row_count)).collect()
    }

    #[test]
    fn the_module_doc_example() {
        // rg0 = [0, 100), rg1 = [100, 150), rg2 = [150, 200), rg3 = [200, 260)
        let m = metadata(&[100, 50, 50, 60]);
        let ge = Filter::compare(&DataType::Int64, Operator::GtEq, &i(120)).unwrap();
        let lt = Filter::compare(&DataType::Int64, Operator::Lt, &i(210)).unwrap();
        let filter = ge.and(&lt).unwrap();
        let s = row_index_selection(&m, &[1, 3], &filter).unwrap();
        // rg1: skip 20, select 30; rg3: select 10, skip 50 (adjacent selects merge).
        assert_eq!(selected(&s), [(false, 20), (true, 40), (false, 50)]);
        assert_eq!(s.row_count(), 40);
    }

    #[test]
    fn points_exclusive_bounds_and_nothing() {
        let m = metadata(&[10]);
        let points = Filter::in_list(&DataType::Int64, &[i(0), i(3), i(9), i(10)]).unwrap();
        let s = row_index_selection(&m, &[0], &points).unwrap();
        assert_eq!(
            selected(&s),
            [(true, 1), (false, 2), (true, 1), (false, 5), (true, 1)]
        );
        let gt = Filter::compare(&DataType::Int64, Operator::Gt, &i(7)).unwrap();
        let s = row_index_selection(&m, &[0], &gt).unwrap();
        assert_eq!(selected(&s), [(false, 8), (true, 2)]);
        let none = Filter::is_null(&DataType::Int64);
        let s = row_index_selection(&m, &[0], &none).unwrap();
        assert_eq!(s.row_count(), 0);
        assert!(row_index_selection(&m, &[0], &Filter::is_true()).is_none());
    }
}
