//! [`members_null_where_structs_are`]: every struct member NULL wherever its struct is.
//!
//! A member of a NULL struct is NULL (SQL, Iceberg, Hive). The readers do not always say so
//! in the member's own array: Parquet's gives a required member of an optional struct no
//! nulls at all (its slots under a NULL struct hold other rows' values), Avro's a zero. A
//! reader of the member that does not look at its struct then sees those values, and
//! DataFusion 54's `get_field` is one: `s['a']` of a NULL `s` read the next row's `a`
//! (DataFusion's own Parquet scan answers so too). Each decoded column passes through here
//! on its way to the table type, so every member carries its struct's nulls itself.
//!
//! Only nested columns are walked; a member already NULL wherever its struct is (the usual
//! case for nullable members) is kept as it is, so this costs one bitmap AND per member.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, GenericListArray, MapArray, OffsetSizeTrait,
    StructArray,
};
use arrow::buffer::NullBuffer;
use arrow::compute::nullif;
use arrow::datatypes::{DataType, FieldRef};
use datafusion::common::Result;

/// `array` with each struct member (at any depth, through lists and maps too) NULL
/// wherever its struct is NULL; `array` itself when that holds already.
pub fn members_null_where_structs_are(array: &ArrayRef) -> Result<ArrayRef> {
    Ok(match array.data_type() {
        DataType::Struct(_) => {
            let s = array.as_struct();
            let mut changed = false;
            let columns = s
                .columns()
                .iter()
                .map(|member| {
                    let masked = under(member, s.nulls())?;
                    let member_out = members_null_where_structs_are(&masked)?;
                    changed |= !Arc::ptr_eq(&member_out, member);
                    Ok(member_out)
                })
                .collect::<Result<Vec<_>>>()?;
            match changed {
                false => Arc::clone(array),
                true => Arc::new(StructArray::try_new_with_length(
                    s.fields().clone(),
                    columns,
                    s.nulls().cloned(),
                    s.len(),
                )?),
            }
        }
        DataType::List(field) => list::<i32>(array, field)?,
        DataType::LargeList(field) => list::<i64>(array, field)?,
        DataType::Map(field, ordered) => {
            let m = array.as_map();
            let entries: ArrayRef = Arc::new(m.entries().clone());
            let out = members_null_where_structs_are(&entries)?;
            match Arc::ptr_eq(&out, &entries) {
                true => Arc::clone(array),
                false => Arc::new(MapArray::try_new(
                    Arc::clone(field),
                    m.offsets().clone(),
                    out.as_struct().clone(),
                    m.nulls().cloned(),
                    *ordered,
                )?),
            }
        }
        _ => Arc::clone(array),
    })
}

/// A list whose elements' members are NULL wherever their element struct is.
fn list<O: OffsetSizeTrait>(array: &ArrayRef, field: &FieldRef) -> Result<ArrayRef> {
    let l = array.as_list::<O>();
    let values = members_null_where_structs_are(l.values())?;
    Ok(match Arc::ptr_eq(&values, l.values()) {
        true => Arc::clone(array),
        false => Arc::new(GenericListArray::<O>::try_new(
            Arc::clone(field),
            l.offsets().clone(),
            values,
            l.nulls().cloned(),
        )?),
    })
}

/// `member` NULL wherever `parent` (its struct's nulls) is; `member` itself when it is so
/// already.
fn under(member: &ArrayRef, parent: Option<&NullBuffer>) -> Result<ArrayRef> {
    let Some(parent) = parent.filter(|p| p.null_count() > 0) else {
        return Ok(Arc::clone(member));
    };
    let covered = member.nulls().is_some_and(|own| {
        NullBuffer::union(Some(own), Some(parent)).map(|u| u.null_count()) == Some(own.null_count())
    });
    if covered {
        return Ok(Arc::clone(member));
    }
    let struct_null = BooleanArray::new(!parent.inner(), None);
    Ok(nullif(member.as_ref(), &struct_null)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, ListArray};
    use arrow::buffer::OffsetBuffer;
    use arrow::datatypes::{Field, Fields};

    fn structs(values: Vec<i32>, present: Vec<bool>) -> StructArray {
        let members = Fields::from(vec![Field::new("a", DataType::Int32, false)]);
        StructArray::try_new(
            members,
            vec![Arc::new(Int32Array::from(values)) as ArrayRef],
            Some(NullBuffer::from(present)),
        )
        .unwrap()
    }

    fn member(array: &ArrayRef) -> Vec<Option<i32>> {
        let s = match array.data_type() {
            DataType::List(_) => array.as_list::<i32>().values().as_struct().clone(),
            _ => array.as_struct().clone(),
        };
        s.column(0)
            .as_primitive::<arrow::datatypes::Int32Type>()
            .iter()
            .collect()
    }

    #[test]
    fn members_of_null_structs_become_null_in_lists_too() {
        let top: ArrayRef = Arc::new(structs(vec![1, 2, 3], vec![true, false, true]));
        let out = members_null_where_structs_are(&top).unwrap();
        assert_eq!(member(&out), [Some(1), None, Some(3)]);
        // Elements of a list: [s, NULL], [s].
        let item = Arc::new(Field::new("item", top.data_type().clone(), true));
        let list: ArrayRef = Arc::new(
            ListArray::try_new(
                item,
                OffsetBuffer::from_lengths([2, 1]),
                Arc::new(structs(vec![4, 5, 6], vec![true, false, true])),
                None,
            )
            .unwrap(),
        );
        let out = members_null_where_structs_are(&list).unwrap();
        assert_eq!(member(&out), [Some(4), None, Some(6)]);
        // Already NULL where its struct is: the same array back.
        assert!(Arc::ptr_eq(
            &members_null_where_structs_are(&out).unwrap(),
            &out
        ));
        let flat: ArrayRef = Arc::new(Int32Array::from(vec![1]));
        assert!(Arc::ptr_eq(
            &members_null_where_structs_are(&flat).unwrap(),
            &flat
        ));
    }
}
