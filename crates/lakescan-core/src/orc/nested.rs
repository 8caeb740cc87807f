//! [`map_leaves`]: a decoded ORC column with a correction applied to its leaf arrays at any
//! depth (struct members, list elements, map keys and values), the nesting rebuilt around
//! them. The corrections of decoded values ([`super::calendar`], [`super::late_dst`]) are
//! per leaf type; this is the walk they share.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, ListArray, MapArray, StructArray};
use arrow::datatypes::DataType;
use datafusion::common::Result;

/// `array` with every leaf (an array that is not a struct, list or map) replaced by
/// `leaf(leaf)`; nested arrays keep their offsets and nulls.
pub fn map_leaves(
    array: &ArrayRef,
    leaf: &mut dyn FnMut(&ArrayRef) -> Result<ArrayRef>,
) -> Result<ArrayRef> {
    Ok(match array.data_type() {
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let columns = s
                .columns()
                .iter()
                .map(|c| map_leaves(c, leaf))
                .collect::<Result<Vec<_>>>()?;
            // With the length: a struct without members (`struct<>`) has no column to tell it.
            Arc::new(StructArray::try_new_with_length(
                fields.clone(),
                columns,
                s.nulls().cloned(),
                s.len(),
            )?)
        }
        DataType::List(item) => {
            let l = array.as_list::<i32>();
            Arc::new(ListArray::try_new(
                Arc::clone(item),
                l.offsets().clone(),
                map_leaves(l.values(), leaf)?,
                l.nulls().cloned(),
            )?)
        }
        DataType::Map(entries, sorted) => {
            let m = array.as_map();
            let kv: ArrayRef = Arc::new(m.entries().clone());
            let kv = map_leaves(&kv, leaf)?;
            Arc::new(MapArray::try_new(
                Arc::clone(entries),
                m.offsets().clone(),
                kv.as_struct().clone(),
                m.nulls().cloned(),
                *sorted,
            )?)
        }
        _ => leaf(array)?,
    })
}

/// Whether `data_type` holds a leaf `is_leaf` accepts, at any depth.
pub fn has_leaf(data_type: &DataType, is_leaf: &dyn Fn(&DataType) -> bool) -> bool {
    match data_type {
        DataType::Struct(fields) => fields.iter().any(|f| has_leaf(f.data_type(), is_leaf)),
        DataType::List(item) | DataType::Map(item, _) => has_leaf(item.data_type(), is_leaf),
        other => is_leaf(other),
    }
}
