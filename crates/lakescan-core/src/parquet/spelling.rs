//! A Hive table's Parquet file in the table's spelling: its columns and struct members that
//! match the table's only ignoring case renamed ([`crate::column_case`]), in the footer's
//! schema and in its embedded Arrow schema alike, so that leaf selection, statistics and
//! decoding all see the table's names.
//!
//! Structs are followed through Parquet's `LIST` and `MAP` groups (the backward-compatible
//! list shapes included: a repeated group that is itself the element) and through a bare
//! repeated group, which reads as a list of it; elements, keys and values keep their names.

use std::sync::Arc;

use arrow::datatypes::{DataType, Fields, SchemaRef};
use datafusion::common::Result;
use parquet::file::metadata::ParquetMetaData;
use parquet::schema::types::{Type, TypePtr};

use super::field_ids::{Annotation, annotation, children, is_repeated, rebuild, wraps_element};
use super::leaves::{has_arrow_hint, with_schema_and_hint};
use crate::column_case::{level_matches, respelled};

/// `metadata` with its columns (and struct members) that match the `table`'s only ignoring
/// case renamed to the table's names; its embedded Arrow schema, when it has one, becomes
/// `arrow` (the file read with it) under the new names. `None` when nothing is renamed.
pub(crate) fn with_table_spelling(
    metadata: &ParquetMetaData,
    arrow: Option<&SchemaRef>,
    table: &Fields,
) -> Result<Option<ParquetMetaData>> {
    let root = metadata.file_metadata().schema_descr().root_schema();
    let Some(fields) = respelled_members(root.get_fields(), table)? else {
        return Ok(None);
    };
    let renamed = rebuild(root, root.name(), fields)?;
    // The Arrow schema read with the old hint, under the new names: the same types again.
    let hint = arrow.filter(|_| has_arrow_hint(metadata)).map(|schema| {
        let fields = respelled(schema.fields(), table).unwrap_or_else(|| schema.fields().clone());
        let renamed =
            arrow::datatypes::Schema::new_with_metadata(fields, schema.metadata().clone());
        parquet::arrow::encode_arrow_schema(&renamed)
    });
    Ok(Some(with_schema_and_hint(metadata, renamed, hint)))
}

/// The members of a group (or the columns of the file) in the spelling of the table's
/// `table` members; `None` when nothing is renamed.
fn respelled_members(members: &[TypePtr], table: &Fields) -> Result<Option<Vec<TypePtr>>> {
    let names: Vec<&str> = members.iter().map(|m| m.name()).collect();
    let matches = level_matches(&names, table);
    let mut changed = matches.iter().any(|m| m.rename.is_some());
    let members = members
        .iter()
        .zip(matches)
        .map(|(member, m)| {
            let name = m.rename.as_deref();
            let inner = match m.table_type {
                Some(t) => respelled_children(member, t)?,
                None => None,
            };
            changed |= inner.is_some();
            match (name, inner) {
                (None, None) => Ok(Arc::clone(member)),
                (name, inner) => rebuild(
                    member,
                    name.unwrap_or(member.name()),
                    inner.unwrap_or_else(|| children(member)),
                ),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(changed.then_some(members))
}

/// The children of `field` (a file column or member the table reads as `table`) with the
/// struct members below it in the table's spelling; `None` when nothing is renamed or the
/// file's structure is not the table's (reading it reports that).
fn respelled_children(field: &Type, table: &DataType) -> Result<Option<Vec<TypePtr>>> {
    if field.is_primitive() {
        return Ok(None);
    }
    let repeated = is_repeated(field);
    let children = field.get_fields();
    match (table, annotation(field), children) {
        // A bare repeated group outside a `LIST`: a list whose elements are the group.
        (list, Annotation::Plain, _) if repeated => match element_of(list) {
            Some(DataType::Struct(members)) => respelled_members(children, members),
            _ => Ok(None),
        },
        (list, Annotation::List, [repeated]) if repeated.is_group() => {
            let Some(element) = element_of(list) else {
                return Ok(None);
            };
            let inner = match wraps_element(field, repeated) {
                true => {
                    let inner = &repeated.get_fields()[0];
                    respelled_children(inner, element)?
                        .map(|members| rebuild(inner, inner.name(), members))
                        .transpose()?
                        .map(|inner| vec![inner])
                }
                // The repeated group is the element: its fields are the struct's members.
                false => match element {
                    DataType::Struct(members) => respelled_members(repeated.get_fields(), members)?,
                    _ => None,
                },
            };
            inner
                .map(|inner| Ok(vec![rebuild(repeated, repeated.name(), inner)?]))
                .transpose()
        }
        (DataType::Map(entries, _), Annotation::Map, [key_value])
            if key_value.is_group() && key_value.get_fields().len() == 2 =>
        {
            let DataType::Struct(table_kv) = entries.data_type() else {
                return Ok(None);
            };
            let mut changed = false;
            let kv = key_value
                .get_fields()
                .iter()
                .zip(table_kv.iter())
                .map(|(side, t)| match respelled_children(side, t.data_type())? {
                    Some(members) => {
                        changed = true;
                        rebuild(side, side.name(), members)
                    }
                    None => Ok(Arc::clone(side)),
                })
                .collect::<Result<Vec<_>>>()?;
            match changed {
                true => Ok(Some(vec![rebuild(key_value, key_value.name(), kv)?])),
                false => Ok(None),
            }
        }
        (DataType::Struct(members), Annotation::Plain, _) => respelled_members(children, members),
        _ => Ok(None),
    }
}

/// The element type of a table list type.
fn element_of(list: &DataType) -> Option<&DataType> {
    match list {
        DataType::List(e) | DataType::LargeList(e) | DataType::FixedSizeList(e, _) => {
            Some(e.data_type())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
