//! Delete scoping after a partition source column is promoted (`int → long`,
//! `float → double`): partition tuples written before the promotion (`Int(5)`) and after it
//! (`Long(5)`) are the same partition, so partition-scoped deletes written after the
//! promotion apply to data files written before it.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float32Array, Float64Array, Int32Array, Int64Array};
use iceberg::spec::{Literal, NestedField, PrimitiveType, Schema, Struct, Transform, Type};

use crate::fixture::Fixture;
use crate::position_deletes::{query, rows};

fn schema(p: PrimitiveType, f: PrimitiveType) -> Schema {
    Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::optional(1, "p", Type::Primitive(p))),
            Arc::new(NestedField::optional(2, "f", Type::Primitive(f))),
            Arc::new(NestedField::optional(
                3,
                "v",
                Type::Primitive(PrimitiveType::Long),
            )),
        ])
        .build()
        .unwrap()
}

fn longs(values: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(Int64Array::from_iter_values(values))
}

/// A table partitioned by identity(p), identity(f) with p int and f float, whose data files
/// (p = 5, f = 1.5, v = 0..4) were written before p became long and f double; returns it
/// with the data file's path.
async fn promoted_table() -> (Fixture, String) {
    let old = schema(PrimitiveType::Int, PrimitiveType::Float);
    let mut t = Fixture::partitioned(
        old,
        vec![
            ("p", "p", Transform::Identity),
            ("f", "f", Transform::Identity),
        ],
    );
    let before = Struct::from_iter([Some(Literal::int(5)), Some(Literal::float(1.5))]);
    let data = t.data_file_in(
        before,
        vec![
            ("p", 1, Arc::new(Int32Array::from(vec![5; 4])) as ArrayRef),
            (
                "f",
                2,
                Arc::new(Float32Array::from(vec![1.5; 4])) as ArrayRef,
            ),
            ("v", 3, longs(0..4)),
        ],
    );
    let path = data.file_path().to_string();
    t.commit(vec![data], vec![]).await;
    t.evolve_schema(schema(PrimitiveType::Long, PrimitiveType::Double));
    (t, path)
}

fn after() -> Struct {
    Struct::from_iter([Some(Literal::long(5)), Some(Literal::double(1.5))])
}

#[tokio::test]
async fn equality_deletes_apply_across_a_partition_type_promotion() {
    let (mut t, _) = promoted_table().await;
    let deletes = t.equality_delete_file_in(after(), vec![3], vec![("v", 3, longs([1, 2]))]);
    let metadata = t.commit(vec![], vec![deletes]).await;
    let out = query(&metadata, "SELECT p, f, v FROM t ORDER BY v")
        .await
        .unwrap();
    assert_eq!(rows(&out), ["5|1.5|0", "5|1.5|3"], "{out}");
}

#[tokio::test]
async fn position_deletes_apply_across_a_partition_type_promotion() {
    let (mut t, path) = promoted_table().await;
    let deletes = t.position_delete_file_in(after(), vec![(path.as_str(), 0), (path.as_str(), 2)]);
    let metadata = t.commit(vec![], vec![deletes]).await;
    let out = query(&metadata, "SELECT v FROM t ORDER BY v")
        .await
        .unwrap();
    assert_eq!(rows(&out), ["1", "3"], "{out}");
}

/// `-0.0` and `0.0` are two partitions (floats compare by their bits): a delete of
/// partition `-0.0` does not apply to the data file of partition `0.0`.
#[tokio::test]
async fn negative_zero_is_another_partition() {
    let double = PrimitiveType::Double;
    let mut t = Fixture::partitioned(
        schema(PrimitiveType::Long, double.clone()),
        vec![("f", "f", Transform::Identity)],
    );
    let zero = |v: f64| Struct::from_iter([Some(Literal::double(v))]);
    let data = t.data_file_in(
        zero(0.0),
        vec![
            (
                "f",
                2,
                Arc::new(Float64Array::from(vec![0.0; 2])) as ArrayRef,
            ),
            ("v", 3, longs(0..2)),
        ],
    );
    t.commit(vec![data], vec![]).await;
    let deletes = t.equality_delete_file_in(zero(-0.0), vec![3], vec![("v", 3, longs([1]))]);
    let metadata = t.commit(vec![], vec![deletes]).await;
    let out = query(&metadata, "SELECT v FROM t ORDER BY v")
        .await
        .unwrap();
    assert_eq!(rows(&out), ["0", "1"], "{out}");
}
