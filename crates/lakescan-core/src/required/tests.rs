use super::*;
use arrow::datatypes::{Field, Fields};
use datafusion::common::config::ConfigOptions;
use datafusion::physical_expr::expressions::{col, lit};

fn schema() -> Schema {
    let point = DataType::Struct(Fields::from(vec![
        Field::new("x", DataType::Int64, true),
        Field::new("y", DataType::Int64, true),
    ]));
    let map = DataType::Map(
        Arc::new(Field::new(
            "key_value",
            DataType::Struct(Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", point.clone(), true),
            ])),
            false,
        )),
        false,
    );
    let list = DataType::List(Arc::new(Field::new("item", point.clone(), true)));
    Schema::new(vec![
        Field::new(
            "r",
            DataType::Struct(Fields::from(vec![
                Field::new("a", DataType::Int64, true),
                Field::new("b", DataType::Int64, true),
            ])),
            true,
        ),
        Field::new("a", list, true),
        Field::new("m", map, true),
    ])
}

fn call(
    f: Arc<datafusion::logical_expr::ScalarUDF>,
    args: Vec<Arc<dyn PhysicalExpr>>,
) -> Arc<dyn PhysicalExpr> {
    let s = schema();
    Arc::new(ScalarFunctionExpr::try_new(f, args, &s, Arc::new(ConfigOptions::default())).unwrap())
}

fn get_field(base: Arc<dyn PhysicalExpr>, names: &[&str]) -> Arc<dyn PhysicalExpr> {
    let mut args = vec![base];
    args.extend(names.iter().map(|n| lit(*n)));
    call(datafusion::functions::core::get_field(), args)
}

fn required(expr: &Arc<dyn PhysicalExpr>) -> Vec<(usize, String)> {
    let mut out = HashMap::new();
    required_by(expr, &schema(), &mut out);
    let mut v: Vec<_> = out.into_iter().map(|(c, r)| (c, r.to_string())).collect();
    v.sort();
    v
}

#[test]
fn paths_of_a_struct_member_a_list_element_member_and_a_map_value_member() {
    let s = schema();
    // r['a']
    let ra = get_field(col("r", &s).unwrap(), &["a"]);
    assert_eq!(required(&ra), [(0, "a".to_string())]);
    // a[3]['x']
    let element = call(
        datafusion::functions_nested::extract::array_element_udf(),
        vec![col("a", &s).unwrap(), lit(3i64)],
    );
    let ax = get_field(element, &["x"]);
    assert_eq!(required(&ax), [(1, "<element>.x".to_string())]);
    // m['k']['x']: the keys to find 'k', the member x of the values
    let mkx = get_field(col("m", &s).unwrap(), &["k", "x"]);
    assert_eq!(required(&mkx), [(2, "<key>, <value>.x".to_string())]);
}

#[test]
fn map_keys_reads_only_the_keys_and_cardinality_only_the_sizes() {
    let s = schema();
    let keys = call(
        datafusion::functions_nested::map_keys::map_keys_udf(),
        vec![col("m", &s).unwrap()],
    );
    assert_eq!(required(&keys), [(2, "<key>".to_string())]);
    let size = call(
        datafusion::functions_nested::cardinality::cardinality_udf(),
        vec![col("m", &s).unwrap()],
    );
    assert_eq!(required(&size), [(2, "<size>".to_string())]);
}

#[test]
fn any_other_use_reads_the_whole_column_and_paths_merge() {
    let s = schema();
    let is_null: Arc<dyn PhysicalExpr> = Arc::new(
        datafusion::physical_expr::expressions::IsNullExpr::new(col("r", &s).unwrap()),
    );
    assert_eq!(required(&is_null), [(0, "all".to_string())]);
    let mut r = RequiredSubfields::Nothing;
    r.add(vec![
        PathStep::Field("a".into()),
        PathStep::Field("x".into()),
    ]);
    r.add(vec![PathStep::Field("a".into())]);
    r.add(vec![PathStep::Field("b".into())]);
    assert_eq!(r.to_string(), "a, b");
    r.add(vec![]);
    assert_eq!(r, RequiredSubfields::Whole);
}
