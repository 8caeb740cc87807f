use super::*;
use crate::handle::{ColumnHandle, ColumnRole};
use crate::required::PathStep;
use arrow::datatypes::{DataType, Field, Fields};
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::expressions::{BinaryExpr, col, lit};
use datafusion::physical_expr::projection::ProjectionExpr;

fn table() -> TableHandle {
    let cols = ["c0", "c1", "c2", "payload"]
        .map(|n| ColumnHandle::regular(&Field::new(n, DataType::Int64, true)));
    TableHandle::try_new("t", cols.to_vec()).unwrap()
}

fn names(schema: &Schema) -> Vec<&str> {
    schema.fields().iter().map(|f| f.name().as_str()).collect()
}

#[test]
fn residual_inputs_become_aux_channels_and_filter_columns_have_none() {
    // Output payload, filter c2 >= 0, residual c0 + c1 > 10.
    let mut t = table();
    let s = t.table_schema().clone();
    let sum = Arc::new(BinaryExpr::new(
        col("c0", &s).unwrap(),
        Operator::Plus,
        col("c1", &s).unwrap(),
    ));
    let residual = Arc::new(BinaryExpr::new(sum, Operator::Gt, lit(10i64)));
    let ge0 = Filter::compare(&DataType::Int64, Operator::GtEq, &0i64.into()).unwrap();
    t = t
        .with_filters(Default::default(), Some(residual))
        .with_filter(Subfield::column("c2"), ge0);
    let spec = ScanSpec::try_new(&t, &Assignments::new(vec![3]), &[]).unwrap();
    assert_eq!(names(spec.reader_schema()), ["payload", "c0", "c1"]);
    assert_eq!(names(spec.plan_schema()), ["payload"]);
    let (_, c2) = spec.field("c2").unwrap();
    assert_eq!(c2.channel, None);
    assert!(c2.filter.is_some());
    let inputs: Vec<usize> =
        datafusion::physical_expr::utils::collect_columns(spec.residual().unwrap())
            .iter()
            .map(|c| c.index())
            .collect();
    assert!(inputs.iter().all(|&i| i == 1 || i == 2), "{inputs:?}");
}

fn nested_table() -> TableHandle {
    let s = DataType::Struct(Fields::from(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Int64, true),
        Field::new("c", DataType::Utf8, true),
    ]));
    let cols = vec![
        ColumnHandle::regular(&Field::new("id", DataType::Int64, true)),
        ColumnHandle::regular(&Field::new("r", s, true)),
    ];
    TableHandle::try_new("t", cols).unwrap()
}

fn get_field(schema: &Schema, column: &str, member: &str) -> Arc<dyn PhysicalExpr> {
    let config = Arc::new(datafusion::common::config::ConfigOptions::default());
    let args = vec![col(column, schema).unwrap(), lit(member)];
    Arc::new(
        ScalarFunctionExpr::try_new(
            datafusion::functions::core::get_field(),
            args,
            schema,
            config,
        )
        .unwrap(),
    )
}

#[test]
fn an_absorbed_extraction_reads_only_its_member_and_keeps_plan_names() {
    let mut t = nested_table();
    let schema = t.table_schema().clone();
    // SELECT r['a'] AS ra FROM t WHERE r['b'] > 0 (the filter as a residual)
    let residual = Arc::new(BinaryExpr::new(
        get_field(&schema, "r", "b"),
        Operator::Gt,
        lit(0i64),
    ));
    t = t.with_filters(Default::default(), Some(residual));
    let assignments = Assignments::from_exprs(vec![ProjectionExpr::new(
        get_field(&schema, "r", "a"),
        "ra".to_string(),
    )]);
    let spec = ScanSpec::try_new(&t, &assignments, &[]).unwrap();
    assert_eq!(names(spec.plan_schema()), ["ra"]);
    assert_eq!(spec.plan_schema().field(0).data_type(), &DataType::Int64);
    assert_eq!(names(spec.reader_schema()), ["r"]);
    let (_, r) = spec.field("r").unwrap();
    let RequiredSubfields::Paths(paths) = &r.required else {
        panic!("{:?}", r.required);
    };
    let paths: Vec<_> = paths.iter().cloned().collect();
    assert_eq!(
        paths,
        [
            vec![PathStep::Field("a".into())],
            vec![PathStep::Field("b".into())]
        ]
    );
    assert!(matches!(spec.outputs()[0], OutputSource::Expr(_)));
}

#[test]
fn a_plain_column_output_reads_the_whole_column_and_stays_a_channel() {
    let t = nested_table();
    let schema = t.table_schema().clone();
    let assignments = Assignments::from_exprs(vec![
        ProjectionExpr::new(col("r", &schema).unwrap(), "whole".to_string()),
        ProjectionExpr::new(get_field(&schema, "r", "a"), "ra".to_string()),
    ]);
    let spec = ScanSpec::try_new(&t, &assignments, &[]).unwrap();
    assert_eq!(names(spec.plan_schema()), ["whole", "ra"]);
    let (_, r) = spec.field("r").unwrap();
    assert_eq!(r.required, RequiredSubfields::Whole);
    assert!(matches!(spec.outputs()[0], OutputSource::Channel(0)));
}

#[test]
fn stage_columns_and_filtered_generated_columns_get_channels() {
    let cols = vec![
        ColumnHandle::regular(&Field::new("c0", DataType::Int64, true)),
        ColumnHandle::regular(&Field::new("k", DataType::Int64, true)),
        ColumnHandle::with_role(
            &Field::new("$row_index", DataType::Int64, false),
            ColumnRole::RowIndex,
        ),
    ];
    let mut t = TableHandle::try_new("t", cols).unwrap();
    t.stage_columns = crate::handle::StageColumns::in_every_file(vec!["k".to_string()]);
    let lt = Filter::compare(&DataType::Int64, Operator::Lt, &5i64.into()).unwrap();
    t = t.with_filter(Subfield::column("$row_index"), lt);
    let spec = ScanSpec::try_new(&t, &Assignments::new(vec![0]), &[]).unwrap();
    assert_eq!(names(spec.plan_schema()), ["c0"]);
    assert_eq!(names(spec.reader_schema()), ["c0", "k", "$row_index"]);
}
