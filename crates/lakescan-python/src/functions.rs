//! The caller's functions in filters pushed through datafusion-python's FFI.
//!
//! A filter the caller pushes into a lakescan table crosses the FFI as protobuf, and every
//! function in it comes back as a `ForeignScalarUDF`: a call into datafusion-python's
//! library that passes each argument as an array, the constant ones too. A function that
//! needs a constant argument then fails (`date_trunc('month', ts)`: "Granularity of
//! `date_trunc` must be non-null scalar Utf8"), and every other one crosses the FFI once per
//! batch. So:
//!
//! * `get_field` (what the planner makes of `s['f']`, `s.f` and `m['k']`) is replaced by
//!   this session's own: it is syntax rather than a function a caller would redefine, and
//!   lakescan reads struct-field filters from it (subfield filters, pruning).
//! * A filter with any other function of the caller stays the caller's: the table answers
//!   `Unsupported` for it, and datafusion-python evaluates it above the scan with its own
//!   function, whatever that function is (a built-in or a Python UDF of that name).

use std::sync::Arc;

use datafusion::common::Result;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::execution::context::SessionState;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Expr, ScalarUDF};
use datafusion_ffi::udf::ForeignScalarUDF;

/// The function the planner writes for field and key access.
const GET_FIELD: &str = "get_field";

/// Whether `func` is a call back into the caller's library.
fn is_foreign(func: &ScalarUDF) -> bool {
    func.inner().is::<ForeignScalarUDF>()
}

/// Whether `filter` calls a function of the caller other than `get_field`: such a filter
/// is left to the caller.
pub fn calls_callers_function(filter: &Expr) -> bool {
    filter
        .exists(|e| {
            Ok(matches!(e, Expr::ScalarFunction(f)
                if is_foreign(&f.func) && f.func.name() != GET_FIELD))
        })
        // `exists` only fails when the closure does, and it never does.
        .unwrap_or(true)
}

/// `filter` with the caller's `get_field` replaced by `state`'s.
pub fn with_own_get_field(filter: Expr, state: &SessionState) -> Result<Expr> {
    let Some(own) = state.scalar_functions().get(GET_FIELD) else {
        return Ok(filter);
    };
    filter
        .transform(|e| match e {
            Expr::ScalarFunction(f) if is_foreign(&f.func) && f.func.name() == GET_FIELD => {
                Ok(Transformed::yes(Expr::ScalarFunction(
                    ScalarFunction::new_udf(Arc::clone(own), f.args),
                )))
            }
            e => Ok(Transformed::no(e)),
        })
        .map(|t| t.data)
}
