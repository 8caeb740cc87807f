//! Filter extraction: DataFusion predicates → per-column [`Filter`]s + residual.
//!
//! The conjuncts of a scan's predicate are walked with a negation flag:
//!
//! * `a AND b` (and `NOT (a OR b)`) split into independent conjuncts, each extracted alone;
//!   what cannot be extracted stays in the residual, rebuilt from the original expression.
//! * `a OR b` (and `NOT (a AND b)`) become one filter only when every branch becomes a
//!   filter on the *same* column; `c0 = 1 OR c1 = 2` is never split into two filters.
//! * `NOT` flips the flag (De Morgan); [`Filter::not`] is exact under three-valued logic.
//! * Leaves: `column <op> literal` (either side), `IN` lists without NULL, `IS [NOT] NULL`,
//!   a boolean column, each possibly through a safe widening cast of the column.
//!
//! Anything else — functions, column-to-column comparisons, NULL literals — stays residual.
//! Extraction never changes results: the residual plus the filters is the original AND.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Schema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::expressions::{
    BinaryExpr, CastExpr, Column, InListExpr, IsNotNullExpr, IsNullExpr, Literal, NotExpr,
    TryCastExpr,
};
use datafusion::physical_plan::PhysicalExpr;

use crate::filter::Filter;
use crate::subfield::Subfield;

/// The `WHERE` conjuncts DataFusion hands a table provider's `scan`, as physical expressions
/// over the table schema (what [`Extraction::from_conjuncts`] takes).
pub fn physical_conjuncts(
    state: &dyn datafusion::catalog::Session,
    table_schema: &arrow::datatypes::SchemaRef,
    filters: &[datafusion::logical_expr::Expr],
) -> datafusion::common::Result<Vec<Arc<dyn PhysicalExpr>>> {
    let df_schema = datafusion::common::DFSchema::try_from(Arc::clone(table_schema))?;
    filters
        .iter()
        .map(|f| state.create_physical_expr(f.clone(), &df_schema))
        .collect()
}

/// How lakescan tables answer `supports_filters_pushdown`: every deterministic filter is
/// evaluated exactly by the scan (filters, residual), volatile ones stay above it.
pub fn exact_pushdown(
    filters: &[&datafusion::logical_expr::Expr],
) -> Vec<datafusion::logical_expr::TableProviderFilterPushDown> {
    use datafusion::logical_expr::TableProviderFilterPushDown;
    filters
        .iter()
        .map(|f| match f.is_volatile() {
            true => TableProviderFilterPushDown::Unsupported,
            false => TableProviderFilterPushDown::Exact,
        })
        .collect()
}

/// The result of extraction: filters keyed by subfield, and what is left.
#[derive(Debug, Default, Clone)]
pub struct Extraction {
    /// One merged filter per subfield (a column or a struct field).
    pub filters: BTreeMap<Subfield, Filter>,
    /// Conjuncts that must be evaluated as expressions (column indices unchanged).
    pub residual: Vec<Arc<dyn PhysicalExpr>>,
}

impl Extraction {
    /// Extracts filters from `conjuncts`, whose columns refer to `schema`.
    pub fn from_conjuncts(conjuncts: &[Arc<dyn PhysicalExpr>], schema: &Schema) -> Self {
        let mut out = Self::default();
        let mut parts = vec![];
        for c in conjuncts {
            split_conjuncts(c, false, &mut parts);
        }
        for (expr, negated) in parts {
            match to_filter(&expr, negated, schema) {
                Some((column, filter)) => out.add_filter(column, filter, &expr, negated),
                None => out.residual.push(as_conjunct(expr, negated)),
            }
        }
        out
    }

    fn add_filter(
        &mut self,
        column: Subfield,
        filter: Filter,
        expr: &Arc<dyn PhysicalExpr>,
        negated: bool,
    ) {
        match self.filters.get(&column) {
            None => {
                self.filters.insert(column, filter);
            }
            Some(existing) => match existing.and(&filter) {
                Some(merged) => {
                    self.filters.insert(column, merged);
                }
                // Compared in different types: keep the second one as an expression.
                None => self.residual.push(as_conjunct(Arc::clone(expr), negated)),
            },
        }
    }
}

fn as_conjunct(expr: Arc<dyn PhysicalExpr>, negated: bool) -> Arc<dyn PhysicalExpr> {
    if negated {
        Arc::new(NotExpr::new(expr))
    } else {
        expr
    }
}

/// Splits `expr` (under `negated`) into conjuncts, pushing NOT through AND/OR/NOT.
fn split_conjuncts(
    expr: &Arc<dyn PhysicalExpr>,
    negated: bool,
    out: &mut Vec<(Arc<dyn PhysicalExpr>, bool)>,
) {
    if let Some(b) = expr.downcast_ref::<BinaryExpr>() {
        let splits = matches!(
            (b.op(), negated),
            (Operator::And, false) | (Operator::Or, true)
        );
        if splits {
            split_conjuncts(b.left(), negated, out);
            split_conjuncts(b.right(), negated, out);
            return;
        }
    }
    if let Some(n) = expr.downcast_ref::<NotExpr>() {
        return split_conjuncts(n.arg(), !negated, out);
    }
    out.push((Arc::clone(expr), negated));
}

/// Turns a whole subtree into one filter on one column, or `None`.
fn to_filter(
    expr: &Arc<dyn PhysicalExpr>,
    negated: bool,
    schema: &Schema,
) -> Option<(Subfield, Filter)> {
    if let Some(n) = expr.downcast_ref::<NotExpr>() {
        return to_filter(n.arg(), !negated, schema);
    }
    if let Some(b) = expr.downcast_ref::<BinaryExpr>() {
        return match b.op() {
            Operator::And | Operator::Or => logical(b, negated, schema),
            op => {
                let (name, _) =
                    column_of(b.left(), schema).or_else(|| column_of(b.right(), schema))?;
                let filter = comparison(b.left(), *op, b.right(), schema)?;
                Some((name, negate(filter, negated)))
            }
        };
    }
    if let Some(list) = expr.downcast_ref::<InListExpr>() {
        let (name, data_type) = column_of(list.expr(), schema)?;
        let values: Option<Vec<ScalarValue>> = list.list().iter().map(literal_of).collect();
        let filter = Filter::in_list(&data_type, &values?)?;
        return Some((name, negate(filter, negated ^ list.negated())));
    }
    if let Some(e) = expr.downcast_ref::<IsNullExpr>() {
        let (name, data_type) = column_of(e.arg(), schema)?;
        return Some((name, negate(Filter::is_null(&data_type), negated)));
    }
    if let Some(e) = expr.downcast_ref::<IsNotNullExpr>() {
        let (name, data_type) = column_of(e.arg(), schema)?;
        return Some((name, negate(Filter::is_not_null(&data_type), negated)));
    }
    let (name, data_type) = column_of(expr, schema)?;
    (data_type == DataType::Boolean).then(|| (name, negate(Filter::is_true(), negated)))
}

fn negate(filter: Filter, negated: bool) -> Filter {
    if negated { filter.not() } else { filter }
}

/// `a AND b` / `a OR b` on one column (NOT swaps them by De Morgan).
fn logical(b: &BinaryExpr, negated: bool, schema: &Schema) -> Option<(Subfield, Filter)> {
    let (left_col, left) = to_filter(b.left(), negated, schema)?;
    let (right_col, right) = to_filter(b.right(), negated, schema)?;
    if left_col != right_col {
        return None;
    }
    let conjunction = (*b.op() == Operator::And) != negated;
    let merged = if conjunction {
        left.and(&right)
    } else {
        left.or(&right)
    };
    merged.map(|f| (left_col, f))
}

fn comparison(
    left: &Arc<dyn PhysicalExpr>,
    op: Operator,
    right: &Arc<dyn PhysicalExpr>,
    schema: &Schema,
) -> Option<Filter> {
    if let (Some((_, t)), Some(v)) = (column_of(left, schema), literal_of(right)) {
        return Filter::compare(&t, op, &v);
    }
    let (_, t) = column_of(right, schema)?;
    Filter::compare(&t, op.swap()?, &literal_of(left)?)
}

/// Returns the subfield and the type it is compared in, if `expr` is a column, a struct
/// field of one (`get_field(col, 'a', …)`), or a safe widening cast of either.
fn column_of(expr: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Option<(Subfield, DataType)> {
    if let Some(c) = expr.downcast_ref::<Column>() {
        let field = schema.fields().get(c.index())?;
        let t = field.data_type().clone();
        return (field.name() == c.name()).then(|| (Subfield::column(c.name()), t));
    }
    if let Some(f) = expr.downcast_ref::<ScalarFunctionExpr>() {
        return struct_field_of(f, schema);
    }
    let (inner, target) = if let Some(c) = expr.downcast_ref::<CastExpr>() {
        (c.expr(), c.cast_type())
    } else if let Some(c) = expr.downcast_ref::<TryCastExpr>() {
        (c.expr(), c.cast_type())
    } else {
        return None;
    };
    let (name, from) = column_of(inner, schema)?;
    is_safe_widening(&from, target).then(|| (name, target.clone()))
}

/// `get_field(column, 'a', 'b')` over structs only (map lookups stay residual).
fn struct_field_of(f: &ScalarFunctionExpr, schema: &Schema) -> Option<(Subfield, DataType)> {
    let (base, names) = f.args().split_first()?;
    if f.name() != "get_field" || names.is_empty() {
        return None;
    }
    let column = base.downcast_ref::<Column>()?;
    let field = schema.fields().get(column.index())?;
    let path = names
        .iter()
        .map(|n| match literal_of(n)? {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::Utf8View(Some(s))
            | ScalarValue::LargeUtf8(Some(s)) => Some(s),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()?;
    let subfield = Subfield::nested(column.name(), path);
    let t = subfield.resolve_type(field.data_type())?;
    (field.name() == column.name()).then_some((subfield, t))
}

fn literal_of(expr: &Arc<dyn PhysicalExpr>) -> Option<ScalarValue> {
    expr.downcast_ref::<Literal>().map(|l| l.value().clone())
}

/// Casts that keep every value and its order, so statistics stay valid after the cast.
pub fn is_safe_widening(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    if from == to {
        return true;
    }
    let rank = |t: &DataType| match t {
        Int8 => Some((true, 1)),
        Int16 => Some((true, 2)),
        Int32 => Some((true, 4)),
        Int64 => Some((true, 8)),
        UInt8 => Some((false, 1)),
        UInt16 => Some((false, 2)),
        UInt32 => Some((false, 4)),
        UInt64 => Some((false, 8)),
        _ => None,
    };
    match (from, to) {
        (Float32, Float64) => true,
        // More digits on either side of the point: every value kept (Hive's decimal
        // evolution, `decimal(5,2)` read as `decimal(10,4)`).
        (Decimal128(p1, s1), Decimal128(p2, s2)) => {
            s2 >= s1 && i16::from(*p2) - i16::from(*s2) >= i16::from(*p1) - i16::from(*s1)
        }
        (Utf8 | LargeUtf8 | Utf8View, Utf8 | LargeUtf8 | Utf8View) => true,
        (Binary | LargeBinary | BinaryView, Binary | LargeBinary | BinaryView) => true,
        (Int8 | Int16 | Int32 | UInt8 | UInt16 | UInt32, Float64) => true,
        (Int8 | Int16 | UInt8 | UInt16, Float32) => true,
        _ => match (rank(from), rank(to)) {
            (Some((fs, fw)), Some((ts, tw))) => (fs == ts && tw > fw) || (!fs && ts && tw > fw),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::Field;
    use datafusion::physical_expr::expressions::{col, lit};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("c0", DataType::Int64, true),
            Field::new("c1", DataType::Int32, true),
            Field::new("b", DataType::Boolean, true),
        ])
    }

    fn bin(
        l: Arc<dyn PhysicalExpr>,
        op: Operator,
        r: Arc<dyn PhysicalExpr>,
    ) -> Arc<dyn PhysicalExpr> {
        Arc::new(BinaryExpr::new(l, op, r))
    }

    fn c(name: &str) -> Arc<dyn PhysicalExpr> {
        col(name, &schema()).unwrap()
    }

    #[test]
    fn and_splits_and_or_on_two_columns_stays_residual() {
        let s = schema();
        let a = bin(c("c0"), Operator::Gt, lit(1i64));
        let or = bin(
            bin(c("c0"), Operator::Eq, lit(1i64)),
            Operator::Or,
            bin(c("c1"), Operator::Eq, lit(2i32)),
        );
        let e = Extraction::from_conjuncts(&[bin(a, Operator::And, or)], &s);
        assert_eq!(e.filters.len(), 1);
        assert_eq!(e.filters[&Subfield::column("c0")].to_string(), "(1, +∞)");
        assert_eq!(e.residual.len(), 1);
    }

    #[test]
    fn or_on_one_column_and_not_by_de_morgan() {
        let s = schema();
        let or = bin(
            bin(c("c0"), Operator::Lt, lit(1i64)),
            Operator::Or,
            bin(c("c0"), Operator::Gt, lit(9i64)),
        );
        let not_or = Arc::new(NotExpr::new(or)) as Arc<dyn PhysicalExpr>;
        let e = Extraction::from_conjuncts(&[not_or, Arc::new(NotExpr::new(c("b")))], &s);
        assert!(e.residual.is_empty());
        assert_eq!(e.filters[&Subfield::column("c0")].to_string(), "[1, 9]");
        assert_eq!(e.filters[&Subfield::column("b")].to_string(), "false");
    }

    #[test]
    fn widening_cast_and_flipped_literal() {
        let s = schema();
        let cast: Arc<dyn PhysicalExpr> = Arc::new(CastExpr::new(c("c1"), DataType::Int64, None));
        let e = Extraction::from_conjuncts(&[bin(lit(5i64), Operator::Lt, cast)], &s);
        assert_eq!(e.filters[&Subfield::column("c1")].to_string(), "(5, +∞)");
        assert_eq!(
            e.filters[&Subfield::column("c1")].data_type(),
            &DataType::Int64
        );
        let narrowing: Arc<dyn PhysicalExpr> =
            Arc::new(CastExpr::new(c("c0"), DataType::Int32, None));
        let e = Extraction::from_conjuncts(&[bin(narrowing, Operator::Eq, lit(5i32))], &s);
        assert!(e.filters.is_empty());
        assert_eq!(e.residual.len(), 1);
    }

    #[test]
    fn struct_field_paths_are_subfields() {
        use arrow::datatypes::Fields;
        use datafusion::functions::core::get_field;
        let inner = Fields::from(vec![Field::new("x", DataType::Int64, true)]);
        let fields = Fields::from(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("inner", DataType::Struct(inner), true),
        ]);
        let s = Schema::new(vec![Field::new("s", DataType::Struct(fields), true)]);
        let config = Arc::new(datafusion::common::config::ConfigOptions::default());
        let field = |names: &[&str]| -> Arc<dyn PhysicalExpr> {
            let mut args = vec![col("s", &s).unwrap()];
            args.extend(names.iter().map(|n| lit(*n)));
            Arc::new(
                ScalarFunctionExpr::try_new(get_field(), args, &s, Arc::clone(&config)).unwrap(),
            )
        };
        let gt = bin(field(&["inner", "x"]), Operator::Gt, lit(5i64));
        let eq = bin(field(&["a"]), Operator::Eq, lit(1i32));
        let e = Extraction::from_conjuncts(&[gt, eq], &s);
        assert!(e.residual.is_empty());
        let keys: Vec<String> = e.filters.keys().map(|k| k.to_string()).collect();
        assert_eq!(keys, ["s.a", "s.inner.x"]);
    }

    #[test]
    fn safe_widening_table() {
        assert!(is_safe_widening(&DataType::Int32, &DataType::Int64));
        assert!(is_safe_widening(&DataType::UInt32, &DataType::Int64));
        assert!(!is_safe_widening(&DataType::Int64, &DataType::Int32));
        assert!(!is_safe_widening(&DataType::Int64, &DataType::UInt64));
        assert!(!is_safe_widening(&DataType::Int64, &DataType::Float64));
        assert!(is_safe_widening(&DataType::Float32, &DataType::Float64));
        // Decimals: more digits before and after the point keep every value.
        let d = DataType::Decimal128;
        assert!(is_safe_widening(&d(5, 2), &d(10, 4)));
        assert!(is_safe_widening(&d(5, 2), &d(6, 2)));
        assert!(!is_safe_widening(&d(5, 2), &d(6, 4)));
        assert!(!is_safe_widening(&d(5, 2), &d(10, 1)));
    }
}
