//! Filter semantics on the original columns: NaN and -0.0 against statistics, NOT IN with
//! NULLs, OR across columns, widening casts against row-group statistics, dynamic filters
//! (TopK, joins) merged with the query's filters, string and prefix predicates.

use super::{assert_same, assert_same_queries, file};
use crate::data::DataFile;
use crate::queries::Query;
use crate::table::Row;

fn f_row(f: Option<f64>) -> Row {
    Row {
        f,
        ..Row::default()
    }
}

#[tokio::test]
async fn regression_not_gt_zero_with_nan_and_negative_zero() {
    let nan = f64::NAN;
    let files = vec![
        // Statistics of this file say [0.0, 1.0]: NaN is left out of them.
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![f_row(Some(nan)), f_row(Some(1.0)), f_row(Some(0.0))],
                vec![f_row(Some(-0.0)), f_row(None), f_row(Some(2.0))],
            ],
        ),
        // Only zeros: min/max may be recorded as -0.0/+0.0 or +0.0/+0.0.
        file(
            Some(1),
            "part-1.parquet",
            vec![
                vec![f_row(Some(-0.0)), f_row(Some(0.0))],
                vec![f_row(Some(-0.0))],
            ],
        ),
        file(
            Some(1),
            "part-2.parquet",
            vec![vec![f_row(Some(nan)), f_row(Some(f64::INFINITY))]],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![
                f_row(Some(f64::NEG_INFINITY)),
                f_row(Some(-1.0)),
                f_row(Some(nan)),
            ]],
        ),
    ];
    assert_same(
        files,
        &[
            "NOT (f > 0.0)",
            "f <= 0.0",
            "NOT (f <= 0.0)",
            "f < 0.0",
            "f = 0.0",
            "f = -0.0",
            "f > -0.0",
            "NOT (f >= -0.0)",
            "f = 'NaN'::double",
            "NOT (f < 'NaN'::double)",
            "f > 'inf'::double",
            "f IN (0.0, 'NaN'::double)",
            "NOT (f IN (0.0, -1.0))",
            "NOT (f BETWEEN -0.0 AND 1.0)",
            "NOT (f <> f)",
        ],
    )
    .await;
}

fn il_row(i: Option<i32>, l: Option<i64>) -> Row {
    Row {
        i,
        l,
        ..Row::default()
    }
}

#[tokio::test]
async fn regression_not_in_with_nulls() {
    let files = vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![
                    il_row(Some(1), None),
                    il_row(Some(2), None),
                    il_row(Some(3), None),
                ],
                // An all-NULL row group.
                vec![il_row(None, None), il_row(None, Some(1))],
                vec![il_row(Some(0), Some(2)), il_row(None, Some(3))],
            ],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![il_row(Some(1), Some(1)), il_row(Some(2), Some(2))]],
        ),
        file(
            None,
            "part-0.parquet",
            vec![vec![il_row(Some(5), Some(5)), il_row(None, Some(6))]],
        ),
    ];
    assert_same(
        files,
        &[
            "NOT (i IN (1, 2))",
            "i NOT IN (1, 2)",
            "NOT (i NOT IN (1, 2))",
            "i NOT IN (1, NULL)",
            "NOT (i IN (1, NULL))",
            "i IN (1, NULL)",
            "NOT (i NOT IN (3))",
            "NOT (i IN (1, 2)) OR i IS NULL",
            "NOT (i IN (1, 2) AND i IS NOT NULL)",
            "i IS DISTINCT FROM 1",
            "NOT (i IS NOT DISTINCT FROM 1)",
            "NOT (p IN (1))",
            "p NOT IN (2, NULL)",
        ],
    )
    .await;
}

#[tokio::test]
async fn regression_or_across_columns() {
    let files = vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![
                    il_row(Some(1), Some(5)),
                    il_row(Some(3), Some(2)),
                    il_row(Some(1), Some(2)),
                ],
                vec![
                    il_row(Some(4), Some(4)),
                    il_row(None, Some(2)),
                    il_row(Some(1), None),
                ],
            ],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![il_row(Some(7), Some(9)), il_row(Some(8), Some(2))]],
        ),
        file(
            Some(2),
            "part-1.parquet",
            vec![vec![il_row(Some(9), Some(9)), il_row(None, None)]],
        ),
    ];
    assert_same(
        files,
        &[
            "i = 1 OR l = 2",
            "NOT (i = 1 OR l = 2)",
            "(i = 1 OR l = 2) AND p = 1",
            "i = 1 OR p = 2",
            "NOT (i = 1 AND l = 2)",
            "(i = 1 OR l = 2) AND (i = 3 OR l = 5)",
            "i = 1 OR i = 3 OR l = 9",
            "i > 2 OR l < 3",
        ],
    )
    .await;
}

fn is_row(i: Option<i32>, s: Option<&str>) -> Row {
    Row {
        i,
        s: s.map(str::to_string),
        ..Row::default()
    }
}

/// Found by the generated test (fixed in "Filter statistics: compare in the filter's type"):
/// row-group statistics were compared in the column's own type while a filter through a
/// widening cast held literals of the wider type; comparing two types answered "no
/// overlap", so matching row groups were pruned and these predicates returned no rows.
#[tokio::test]
async fn regression_widening_cast_against_row_group_statistics() {
    let files = vec![file(
        Some(1),
        "part-0.parquet",
        vec![vec![
            is_row(Some(1), Some("a")),
            is_row(Some(2), Some("b")),
            is_row(None, None),
        ]],
    )];
    assert_same(
        files,
        &[
            "CAST(i AS DOUBLE) > 0.0",
            "i < 2.5",
            "CAST(i AS BIGINT) < 3000000000",
            "arrow_cast(s, 'Utf8View') = 'a'",
            "CAST(s AS VARCHAR) = 'a'",
            "s = arrow_cast('a', 'LargeUtf8')",
        ],
    )
    .await;
}

fn i_row(i: Option<i32>) -> Row {
    Row {
        i,
        ..Row::default()
    }
}

/// Files whose first split fills a TopK heap with values the query keeps, and whose later
/// splits hold values the query's filter excludes but the dynamic filter would let through.
fn dynamic_filter_files() -> Vec<DataFile> {
    let rows = |v: &[i32]| v.iter().map(|&x| i_row(Some(x))).collect::<Vec<_>>();
    vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![rows(&[3, 4]), rows(&[5, 6])],
        ),
        file(Some(1), "part-1.parquet", vec![rows(&[-3, -2, 1, 2])]),
        file(
            Some(1),
            "part-2.parquet",
            vec![rows(&[-5, 0, 2, 7]), vec![i_row(None)]],
        ),
        file(Some(2), "part-0.parquet", vec![rows(&[-4, 1, 8])]),
    ]
}

fn topk_i(desc: bool, nulls_first: bool) -> Query {
    Query::TopK {
        column: "i",
        desc,
        nulls_first,
        limit: 2,
    }
}

fn join_i(values: &[i64]) -> Query {
    Query::Join {
        column: "i",
        values: values.iter().map(i64::to_string).collect(),
    }
}

/// TopK and hash joins push dynamic filters (`i < k-th value`, the build side's key range)
/// into the scan while it runs; lakescan merges them with the query's own filters.
#[tokio::test]
async fn regression_dynamic_filters_merge_with_query_filters() {
    let cases = [
        (topk_i(false, true), "CAST(i AS BIGINT) > 0"),
        (topk_i(false, false), "i > 0"),
        (topk_i(true, true), "i IN (1, 2, 7)"),
        (topk_i(false, false), "i IS NULL OR i > 1"),
        (
            Query::Join {
                column: "p",
                values: vec!["1".into(), "2".into()],
            },
            "i > 0",
        ),
    ];
    assert_same_queries(dynamic_filter_files(), &cases).await;
}

/// Regression: a dynamic filter on `i` in another type than the query's filter on `i` —
/// TopK's is INT while `i > 0.5` compares in DOUBLE; a join with BIGINT keys filters
/// `CAST(i AS BIGINT)` while `i = 7` is INT — once replaced the query's filter: e.g. `SELECT hive_t.id FROM hive_t JOIN (VALUES (1),
/// (2), (7)) AS v(x) ON hive_t.i = v.x WHERE i = 7` also returns the rows with i = 1 and 2.
#[tokio::test]
async fn regression_dynamic_filter_of_another_type_keeps_query_filter() {
    let cases = [
        (topk_i(false, false), "CAST(i AS DOUBLE) > 0.5"),
        (topk_i(false, false), "i > 0.5"),
        (topk_i(true, false), "i < 2.5"),
        (join_i(&[1, 2, 7]), "i = 7"),
        (join_i(&[1, 2]), "CAST(i AS DOUBLE) > 1.5"),
    ];
    assert_same_queries(dynamic_filter_files(), &cases).await;
}

fn s_row(s: Option<&str>) -> Row {
    Row {
        s: s.map(str::to_string),
        ..Row::default()
    }
}

/// Regression: `LIKE 'a%'` / `starts_with` on a Utf8View column made DataFusion's pruning
/// predicate fail ("Utf8View <= Utf8"); pruning errors now keep the row groups.
#[tokio::test]
async fn regression_prefix_pruning_on_view_strings() {
    let files = vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![s_row(Some("ab")), s_row(Some("b"))],
                vec![s_row(None), s_row(Some("é"))],
            ],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![s_row(Some("a")), s_row(Some("abc"))]],
        ),
    ];
    assert_same(
        files,
        &[
            "s LIKE 'a%'",
            "starts_with(s, 'a')",
            "s LIKE 'a_'",
            "s LIKE 'a%' OR i IS NULL",
        ],
    )
    .await;
}

/// String predicates that DataFusion's pruning does not rewrite into min/max bounds.
#[tokio::test]
async fn regression_string_predicates() {
    let files = vec![
        file(
            Some(1),
            "part-0.parquet",
            vec![
                vec![s_row(Some("ab")), s_row(Some("b"))],
                vec![s_row(None), s_row(Some("é"))],
            ],
        ),
        file(
            Some(2),
            "part-0.parquet",
            vec![vec![s_row(Some("a")), s_row(Some("abc"))]],
        ),
    ];
    assert_same(
        files,
        &[
            "CAST(p AS VARCHAR) LIKE '1%'",
            "s NOT LIKE 'a%'",
            "s LIKE '%b'",
            "s LIKE 'ab'",
            "s ILIKE 'A%'",
            "s = 'ab'",
            "s > 'a'",
            "upper(s) = 'AB'",
            "s LIKE '_'",
            "NOT starts_with(s, 'a')",
            "arrow_cast(s, 'Utf8') = 'a'",
            "s IN ('a', 'é', 'zz')",
        ],
    )
    .await;
}
