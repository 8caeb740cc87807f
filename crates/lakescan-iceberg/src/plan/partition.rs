//! Partition tuples in the table's current types, compared as the spec compares them.
//!
//! A manifest written before `int → long` or `float → double` of a partition source column
//! holds `Int(5)` where a newer one holds `Long(5)`: the same partition. Java reads every
//! manifest with the current partition type, so the values agree; here each tuple is
//! promoted to the current type once, when planned ([`in_current_types`]). Tuples are then
//! equal when every value is ([`same_values`]); floating-point values compare by their bits,
//! so `-0.0` and `0.0` are two partitions (the spec's note on partition values) and a NaN
//! partition is one partition.

use iceberg::spec::{
    Literal, PartitionSpec, PrimitiveLiteral, PrimitiveType, Schema, Struct, Type,
};

/// `partition` of a file written with `spec`, its values promoted to the types the spec's
/// fields have over `schema` (the table's current schema). Values of fields whose source
/// column `schema` lacks (a dropped column: nothing to promote to), or that need no
/// promotion, are kept. The error says what does not fit.
pub fn in_current_types(
    partition: &Struct,
    spec: &PartitionSpec,
    schema: &Schema,
) -> Result<Struct, String> {
    if partition.fields().len() != spec.fields().len() {
        return Err(format!(
            "its partition has {} values, and partition spec {} has {} fields",
            partition.fields().len(),
            spec.spec_id(),
            spec.fields().len()
        ));
    }
    let mut out = Vec::with_capacity(spec.fields().len());
    for (field, value) in spec.fields().iter().zip(partition.iter()) {
        let Some(value) = value.cloned() else {
            out.push(None);
            continue;
        };
        let Some(source) = schema.field_by_id(field.source_id) else {
            out.push(Some(value));
            continue;
        };
        let current = field
            .transform
            .result_type(&source.field_type)
            .map_err(|e| {
                format!(
                    "partition field '{}' ({}) does not apply to its source column's type {}: {e}",
                    field.name, field.transform, source.field_type
                )
            })?;
        out.push(Some(match current {
            Type::Primitive(to) => promoted(value, &to),
            _ => value,
        }));
    }
    Ok(out.into_iter().collect())
}

/// `value` as a value of `to`, where the spec allows promoting its type to `to`.
fn promoted(value: Literal, to: &PrimitiveType) -> Literal {
    use PrimitiveLiteral as L;
    match (value, to) {
        (Literal::Primitive(L::Int(v)), PrimitiveType::Long) => Literal::long(i64::from(v)),
        (Literal::Primitive(L::Float(v)), PrimitiveType::Double) => Literal::double(f64::from(v.0)),
        (value, _) => value,
    }
}

/// Whether two partition tuples of one spec are the same partition.
pub fn same_values(a: &Struct, b: &Struct) -> bool {
    a.fields().len() == b.fields().len()
        && a.iter().zip(b.iter()).all(|(x, y)| match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => same_literal(x, y),
            _ => false,
        })
}

fn same_literal(a: &Literal, b: &Literal) -> bool {
    use PrimitiveLiteral as L;
    match (a, b) {
        (Literal::Primitive(L::Float(x)), Literal::Primitive(L::Float(y))) => {
            x.0.to_bits() == y.0.to_bits()
        }
        (Literal::Primitive(L::Double(x)), Literal::Primitive(L::Double(y))) => {
            x.0.to_bits() == y.0.to_bits()
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use iceberg::spec::{NestedField, Transform, UnboundPartitionField};

    use super::*;

    fn schema(p: PrimitiveType, q: PrimitiveType) -> Schema {
        Schema::builder()
            .with_fields(vec![
                Arc::new(NestedField::optional(1, "p", Type::Primitive(p))),
                Arc::new(NestedField::optional(2, "q", Type::Primitive(q))),
            ])
            .build()
            .unwrap()
    }

    fn spec(schema: &Schema) -> PartitionSpec {
        let field = |source_id, name: &str, transform| UnboundPartitionField {
            source_id,
            field_id: None,
            name: name.into(),
            transform,
        };
        PartitionSpec::builder(schema.clone())
            .add_unbound_fields([
                field(1, "p", Transform::Identity),
                field(2, "q", Transform::Identity),
            ])
            .unwrap()
            .build()
            .unwrap()
    }

    #[test]
    fn values_written_before_a_promotion_equal_values_written_after() {
        let old = schema(PrimitiveType::Int, PrimitiveType::Float);
        let new = schema(PrimitiveType::Long, PrimitiveType::Double);
        let written_before = Struct::from_iter([Some(Literal::int(5)), Some(Literal::float(1.5))]);
        let written_after = Struct::from_iter([Some(Literal::long(5)), Some(Literal::double(1.5))]);
        assert!(!same_values(&written_before, &written_after));
        let before = in_current_types(&written_before, &spec(&old), &new).unwrap();
        let after = in_current_types(&written_after, &spec(&new), &new).unwrap();
        assert!(same_values(&before, &after));
        assert_eq!(before, written_after);
    }

    #[test]
    fn floats_compare_by_their_bits() {
        let zero = |v: f64| Struct::from_iter([Some(Literal::double(v)), None]);
        assert!(!same_values(&zero(0.0), &zero(-0.0)));
        assert!(same_values(&zero(f64::NAN), &zero(f64::NAN)));
        assert!(same_values(&zero(2.0), &zero(2.0)));
        let null = Struct::from_iter([None, None]);
        assert!(!same_values(&zero(0.0), &null));
        assert!(same_values(&null, &null));
    }
}
