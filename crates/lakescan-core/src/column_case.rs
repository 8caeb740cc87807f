//! Hive's matching of a file's columns to the table's: by name, ignoring case.
//!
//! Hive's metastore keeps column names in lower case, while Spark (and pandas, polars, …)
//! write a file's columns as the data frame spelled them: a table `userid` over files with
//! `UserId`. Hive, Spark and Trino match a file's columns to the table's ignoring case, the
//! members of its structs too (`s.ZipCode` is the table's `s.zipcode`). A Hive table's file
//! is read the same way: a file column (or struct member) whose name matches no table
//! column (member) exactly, but exactly one ignoring case, is renamed to the table's name
//! when the file is opened, before anything else looks at its schema. An exact match always
//! wins; of two file columns that match a table column only ignoring case, the first is
//! read, as Hive's and Trino's readers take the first match. Structs are followed through lists and
//! maps (their elements, keys and values keep the file's names: they are matched by
//! position). Iceberg tables match by field id.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, FieldRef, Fields};

/// For each of a file's `columns` (one level, in order), the table column it reads as when
/// that differs from its own name only in case; `None` when no column is renamed.
pub fn table_spelling<T: AsRef<str>>(columns: &[&str], table: &[T]) -> Option<Vec<Option<String>>> {
    let table_names: HashSet<&str> = table.iter().map(AsRef::as_ref).collect();
    // The usual file: every column spelled as the table spells it (or not in the table at
    // all, which folding would not change either when no name differs in case).
    if columns.iter().all(|c| table_names.contains(c)) {
        return None;
    }
    let exact: HashSet<&str> = columns.iter().copied().collect();
    // The table's columns no file column spells exactly, by their folded name.
    let mut unmatched: HashMap<String, Vec<&str>> = HashMap::new();
    for t in table
        .iter()
        .map(AsRef::as_ref)
        .filter(|t| !exact.contains(t))
    {
        unmatched.entry(t.to_lowercase()).or_default().push(t);
    }
    let mut renames: Vec<Option<String>> = columns
        .iter()
        .map(|&column| match table_names.contains(column) {
            true => None,
            false => match unmatched.get(&column.to_lowercase()).map(Vec::as_slice) {
                Some([only]) => Some((*only).to_string()),
                _ => None,
            },
        })
        .collect();
    // Two file columns folding to one table column: the first is read (Hive's and Trino's
    // readers take the first match ignoring case).
    let mut claimed: HashSet<String> = HashSet::new();
    for rename in &mut renames {
        if let Some(name) = rename
            && !claimed.insert(name.clone())
        {
            *rename = None;
        }
    }
    renames.iter().any(Option::is_some).then_some(renames)
}

/// How one file column (or struct member) of a level matches the table's.
pub struct LevelMatch<'a> {
    /// The table's name for it, when that differs from its own only in case.
    pub rename: Option<String>,
    /// The type of the table column it reads as (exactly or renamed), if any.
    pub table_type: Option<&'a DataType>,
}

/// For each of a level's file `names` (in order), how it matches the `table`'s fields
/// ([`table_spelling`]); the walks of Arrow and Parquet schemas share it.
pub fn level_matches<'a>(names: &[&str], table: &'a Fields) -> Vec<LevelMatch<'a>> {
    let table_names: Vec<&str> = table.iter().map(|f| f.name().as_str()).collect();
    let mut spelled = table_spelling(names, &table_names).unwrap_or_default();
    spelled.resize(names.len(), None);
    names
        .iter()
        .zip(spelled)
        .map(|(name, rename)| LevelMatch {
            table_type: table
                .find(rename.as_deref().unwrap_or(name))
                .map(|(_, t)| t.data_type()),
            rename,
        })
        .collect()
}

/// A file's `fields` in the spelling of the `table`'s, struct members included
/// ([`table_spelling`] at each level); `None` when nothing is renamed.
pub fn respelled(fields: &Fields, table: &Fields) -> Option<Fields> {
    let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
    let matches = level_matches(&names, table);
    let mut changed = matches.iter().any(|m| m.rename.is_some());
    let fields: Fields = fields
        .iter()
        .zip(matches)
        .map(|(field, m)| {
            let name = m.rename.as_deref();
            let data_type = m
                .table_type
                .and_then(|t| respelled_type(field.data_type(), t));
            changed |= data_type.is_some();
            match (name, data_type) {
                (None, None) => Arc::clone(field),
                (name, data_type) => {
                    let mut f = field.as_ref().clone();
                    if let Some(name) = name {
                        f = f.with_name(name);
                    }
                    if let Some(data_type) = data_type {
                        f = f.with_data_type(data_type);
                    }
                    Arc::new(f)
                }
            }
        })
        .collect();
    changed.then_some(fields)
}

/// The file's type `file` with the members of its structs in the spelling of the table's
/// type `table`; `None` when nothing is renamed (or the two are not alike).
fn respelled_type(file: &DataType, table: &DataType) -> Option<DataType> {
    use DataType::*;
    match (file, table) {
        (Struct(members), Struct(table)) => respelled(members, table).map(Struct),
        (List(f), List(t) | LargeList(t) | FixedSizeList(t, _)) => {
            respelled_element(f, t).map(List)
        }
        (LargeList(f), List(t) | LargeList(t) | FixedSizeList(t, _)) => {
            respelled_element(f, t).map(LargeList)
        }
        (FixedSizeList(f, n), List(t) | LargeList(t) | FixedSizeList(t, _)) => {
            respelled_element(f, t).map(|f| FixedSizeList(f, *n))
        }
        (Map(f, sorted), Map(t, _)) => {
            let (Struct(kv), Struct(table_kv)) = (f.data_type(), t.data_type()) else {
                return None;
            };
            // Keys and values by position, their names the file's.
            let mut changed = false;
            let kv: Fields = kv
                .iter()
                .zip(table_kv.iter())
                .map(
                    |(f, t)| match respelled_type(f.data_type(), t.data_type()) {
                        Some(d) => {
                            changed = true;
                            Arc::new(f.as_ref().clone().with_data_type(d))
                        }
                        None => Arc::clone(f),
                    },
                )
                .collect();
            let entries = f.as_ref().clone().with_data_type(Struct(kv));
            changed.then(|| Map(Arc::new(entries), *sorted))
        }
        _ => None,
    }
}

/// A list's element `file` (its name the file's) respelled as the table's element `table`.
fn respelled_element(file: &FieldRef, table: &Field) -> Option<FieldRef> {
    let data_type = respelled_type(file.data_type(), table.data_type())?;
    Some(Arc::new(file.as_ref().clone().with_data_type(data_type)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn columns_differing_in_case_take_the_tables_names() {
        let got = table_spelling(&["UserId", "Name", "ds"], &table(&["userid", "name"]));
        assert_eq!(
            got,
            Some(vec![Some("userid".into()), Some("name".into()), None])
        );
        // Non-ASCII letters fold too.
        let got = table_spelling(&["ÉTÉ"], &table(&["été"]));
        assert_eq!(got, Some(vec![Some("été".into())]));
    }

    #[test]
    fn exact_names_win_and_ambiguous_ones_stay() {
        // Nothing to rename.
        assert_eq!(table_spelling(&["a", "b"], &table(&["a", "b"])), None);
        // `ID` and `id` both in the file: `id` is read, `ID` keeps its name.
        assert_eq!(table_spelling(&["ID", "id"], &table(&["id"])), None);
        // Two file columns fold to one table column: the first is read.
        assert_eq!(
            table_spelling(&["Ab", "AB"], &table(&["ab"])),
            Some(vec![Some("ab".into()), None])
        );
        // Two table columns fold alike (quoted names): the file column is ambiguous.
        assert_eq!(table_spelling(&["AB"], &table(&["ab", "Ab"])), None);
    }

    #[test]
    fn struct_members_take_the_tables_names_through_lists_and_maps() {
        let person = |id: &str, zip: &str| {
            DataType::Struct(Fields::from(vec![
                Field::new(id, DataType::Int32, true),
                Field::new(zip, DataType::Utf8, true),
            ]))
        };
        let list = |t: DataType| DataType::new_list(t, true);
        let map = |v: DataType| {
            let entries = Field::new(
                "entries",
                DataType::Struct(Fields::from(vec![
                    Field::new("keys", DataType::Utf8, false),
                    Field::new("values", v, true),
                ])),
                false,
            );
            DataType::Map(Arc::new(entries), false)
        };
        let table = Fields::from(vec![
            Field::new("owner", person("id", "zip"), true),
            Field::new("people", list(person("id", "zip")), true),
            Field::new("by_name", map(person("id", "zip")), true),
        ]);
        let file = Fields::from(vec![
            Field::new("Owner", person("ID", "zip"), true),
            Field::new("people", list(person("id", "ZIP")), true),
            Field::new("by_name", map(person("Id", "Zip")), true),
        ]);
        let got = respelled(&file, &table).expect("renamed");
        // The file's list element and map entries keep their names (matched by position).
        let want = Fields::from(vec![
            Field::new("owner", person("id", "zip"), true),
            Field::new("people", list(person("id", "zip")), true),
            Field::new("by_name", map(person("id", "zip")), true),
        ]);
        assert_eq!(got, want);
        // Nothing to rename anywhere.
        assert_eq!(respelled(&want, &table), None);
    }
}
