//! Hive's matching of a file's columns to the table's: by name, ignoring case.
//!
//! Hive's metastore keeps column names in lower case, while Spark (and pandas, polars, …)
//! write a file's columns as the data frame spelled them: a table `userid` over files with
//! `UserId`. Hive, Spark and Trino match a file's top-level columns to the table's ignoring
//! case. A Hive table's file is read the same way: a file column whose name matches no
//! table column exactly, but exactly one ignoring case (and no other file column claims
//! that one), is renamed to the table's name when the file is opened, before anything else
//! looks at its schema. An exact match always wins; two file columns that differ only in
//! case keep their names (the exact one is read). Iceberg tables match by field id.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow::datatypes::Fields;

/// For each of a file's `columns` (top level, in order), the table column it reads as when
/// that differs from its own name only in case; `None` when no column is renamed.
pub fn table_spelling(columns: &[&str], table: &[String]) -> Option<Vec<Option<String>>> {
    let table_names: HashSet<&str> = table.iter().map(String::as_str).collect();
    // The usual file: every column spelled as the table spells it (or not in the table at
    // all, which folding would not change either when no name differs in case).
    if columns.iter().all(|c| table_names.contains(c)) {
        return None;
    }
    let exact: HashSet<&str> = columns.iter().copied().collect();
    // The table's columns no file column spells exactly, by their folded name.
    let mut unmatched: HashMap<String, Vec<&String>> = HashMap::new();
    for t in table.iter().filter(|t| !exact.contains(t.as_str())) {
        unmatched.entry(t.to_lowercase()).or_default().push(t);
    }
    let mut renames: Vec<Option<String>> = columns
        .iter()
        .map(|&column| match table_names.contains(column) {
            true => None,
            false => match unmatched.get(&column.to_lowercase()).map(Vec::as_slice) {
                Some([only]) => Some((*only).clone()),
                _ => None,
            },
        })
        .collect();
    // Two file columns folding to one table column: neither is renamed.
    let mut claims: HashMap<String, usize> = HashMap::new();
    for name in renames.iter().flatten() {
        *claims.entry(name.clone()).or_default() += 1;
    }
    for rename in &mut renames {
        if rename.as_ref().is_some_and(|name| claims[name] > 1) {
            *rename = None;
        }
    }
    renames.iter().any(Option::is_some).then_some(renames)
}

/// `fields` with those `spelled` names (by position; `None` keeps a field's name).
pub fn renamed(fields: &Fields, spelled: &[Option<String>]) -> Fields {
    fields
        .iter()
        .zip(spelled.iter().chain(std::iter::repeat(&None)))
        .map(|(f, name)| match name {
            Some(name) => Arc::new(f.as_ref().clone().with_name(name.clone())),
            None => Arc::clone(f),
        })
        .collect()
}

/// A file's top-level `fields` in the table's spelling ([`table_spelling`]); `None` when no
/// field is renamed.
pub fn respelled(fields: &Fields, table: &[String]) -> Option<Fields> {
    let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
    let spelled = table_spelling(&names, table)?;
    Some(renamed(fields, &spelled))
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
        // Two file columns fold to one table column: neither is renamed.
        assert_eq!(table_spelling(&["Ab", "AB"], &table(&["ab"])), None);
        // Two table columns fold alike (quoted names): the file column is ambiguous.
        assert_eq!(table_spelling(&["AB"], &table(&["ab", "Ab"])), None);
    }
}
