//! A decimal filter over the narrow integers a file stores.
//!
//! Parquet stores decimals of up to 9 digits as `INT32` and up to 18 as `INT64`; the
//! Parquet reader decodes those columns in their own width (`Decimal32`, `Decimal64`) rather
//! than widening every value to `Decimal128` (`crate::parquet::decoded_types`). A filter is
//! typed by the table's column, `Decimal128(p, s)`: [`Filter::narrowed_to`] rewrites it over
//! the stored type, so the values are compared as they were decoded and only the rows the
//! filters keep are widened. Two decimals of one scale compare as their unscaled integers,
//! so the rewrite changes no result; a bound that does not fit the narrow integer leaves
//! the filter as it is (the column is then widened before the test, as any other cast).

use std::borrow::Cow;

use arrow::datatypes::DataType;
use datafusion::common::ScalarValue;

use super::{Bound, Filter, ValueRange, ValueSet};

impl Filter {
    /// This filter over `to` (`Decimal32` or `Decimal64`), when the filter compares in
    /// `Decimal128` of `to`'s scale and every bound fits `to`'s integer; `None` otherwise.
    pub fn narrowed_to(&self, to: &DataType) -> Option<Filter> {
        let DataType::Decimal128(_, scale) = self.data_type else {
            return None;
        };
        match to {
            DataType::Decimal32(_, s) | DataType::Decimal64(_, s) if *s == scale => {}
            _ => return None,
        }
        // Every literal has the filter's type (the `Filter` invariant), so its scale.
        let narrow = |v: &ScalarValue| -> Option<ScalarValue> {
            let ScalarValue::Decimal128(Some(unscaled), ..) = v else {
                return None;
            };
            match *to {
                DataType::Decimal32(p, s) => Some(ScalarValue::Decimal32(
                    Some(i32::try_from(*unscaled).ok()?),
                    p,
                    s,
                )),
                DataType::Decimal64(p, s) => Some(ScalarValue::Decimal64(
                    Some(i64::try_from(*unscaled).ok()?),
                    p,
                    s,
                )),
                _ => None,
            }
        };
        let bound = |b: &Bound| -> Option<Bound> {
            Some(match b {
                Bound::Unbounded => Bound::Unbounded,
                Bound::Included(v) => Bound::Included(narrow(v)?),
                Bound::Excluded(v) => Bound::Excluded(narrow(v)?),
            })
        };
        let ranges = self
            .values
            .ranges()
            .iter()
            .map(|r| {
                Some(ValueRange {
                    low: bound(&r.low)?,
                    high: bound(&r.high)?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        // The ranges were sorted and disjoint; the same unscaled integers keep them so.
        Some(Filter::new(
            to.clone(),
            ValueSet::from_comparable(ranges),
            self.null,
        ))
    }

    /// [`Self::narrowed_to`] a narrow decimal column's type, built once (a filter meets one
    /// file column type at a time).
    pub(super) fn narrowed_for(&self, decoded: &DataType) -> Option<Cow<'_, Filter>> {
        if !matches!(decoded, DataType::Decimal32(..) | DataType::Decimal64(..)) {
            return None;
        }
        let (seen, narrowed) = self
            .narrowed
            .get_or_init(|| (decoded.clone(), self.narrowed_to(decoded)));
        match seen == decoded {
            true => narrowed.as_ref().map(Cow::Borrowed),
            false => self.narrowed_to(decoded).map(Cow::Owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Array, ArrayRef, Decimal64Array, Decimal128Array};
    use arrow::compute::cast;
    use datafusion::logical_expr::Operator;

    use super::*;

    fn d128(unscaled: i128) -> ScalarValue {
        ScalarValue::Decimal128(Some(unscaled), 15, 2)
    }

    fn stored() -> ArrayRef {
        let values = [
            Some(-700),
            Some(4),
            Some(5),
            None,
            Some(6),
            Some(7),
            Some(2_399),
        ];
        Arc::new(
            values
                .into_iter()
                .collect::<Decimal64Array>()
                .with_precision_and_scale(15, 2)
                .unwrap(),
        )
    }

    /// The narrowed filter keeps exactly the rows the table-typed filter keeps in the
    /// widened column.
    fn same_rows(filter: &Filter) {
        let narrow = filter.narrowed_to(&DataType::Decimal64(15, 2)).unwrap();
        assert_eq!(narrow.data_type(), &DataType::Decimal64(15, 2));
        let widened = cast(&stored(), &DataType::Decimal128(15, 2)).unwrap();
        assert!(widened.as_any().is::<Decimal128Array>());
        assert_eq!(
            narrow.evaluate(&stored()).unwrap(),
            filter.evaluate(&widened).unwrap(),
            "{filter}"
        );
    }

    #[test]
    fn a_narrowed_filter_keeps_the_rows_of_the_widened_column() {
        let t = DataType::Decimal128(15, 2);
        // l_discount BETWEEN 0.05 AND 0.07
        let between = Filter::compare(&t, Operator::GtEq, &d128(5))
            .unwrap()
            .and(&Filter::compare(&t, Operator::LtEq, &d128(7)).unwrap())
            .unwrap();
        same_rows(&between);
        same_rows(&Filter::compare(&t, Operator::Lt, &d128(2_400)).unwrap());
        same_rows(&Filter::in_list(&t, &[d128(-700), d128(6), d128(9)]).unwrap());
        same_rows(&between.or(&Filter::is_null(&t)).unwrap());
        same_rows(&Filter::is_not_null(&t));
        let narrow = between.narrowed_to(&DataType::Decimal64(15, 2)).unwrap();
        let kept = narrow.evaluate(&stored()).unwrap();
        let kept: Vec<bool> = (0..kept.len()).map(|i| kept.value(i)).collect();
        assert_eq!(kept, [false, false, true, false, true, true, false]);
    }

    #[test]
    fn bounds_beyond_the_narrow_integer_or_another_scale_stay_wide() {
        let t = DataType::Decimal128(38, 2);
        let huge = ScalarValue::Decimal128(Some(i128::from(i64::MAX) + 1), 38, 2);
        let beyond = Filter::compare(&t, Operator::Lt, &huge).unwrap();
        assert!(beyond.narrowed_to(&DataType::Decimal64(18, 2)).is_none());
        let small = ScalarValue::Decimal128(Some(i128::from(i32::MAX) + 1), 38, 2);
        let past_i32 = Filter::compare(&t, Operator::Lt, &small).unwrap();
        assert!(past_i32.narrowed_to(&DataType::Decimal32(9, 2)).is_none());
        assert!(past_i32.narrowed_to(&DataType::Decimal64(18, 2)).is_some());
        assert!(past_i32.narrowed_to(&DataType::Decimal64(18, 3)).is_none());
        let ints = Filter::compare(&DataType::Int64, Operator::Lt, &ScalarValue::Int64(Some(1)));
        assert!(
            ints.unwrap()
                .narrowed_to(&DataType::Decimal64(18, 0))
                .is_none()
        );
    }
}
