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

use std::collections::HashSet;

/// For each of a file's `columns` (top level, in order), the table column it reads as when
/// that differs from its own name only in case; `None` when no column is renamed.
pub fn table_spelling(columns: &[&str], table: &[String]) -> Option<Vec<Option<String>>> {
    let exact: HashSet<&str> = columns.iter().copied().collect();
    let folded = |name: &str| name.to_lowercase();
    let mut renames: Vec<Option<String>> = columns
        .iter()
        .map(|&column| {
            if table.iter().any(|t| t == column) {
                return None;
            }
            let mut candidates = table
                .iter()
                .filter(|t| !exact.contains(t.as_str()) && folded(t) == folded(column));
            match (candidates.next(), candidates.next()) {
                (Some(only), None) => Some(only.clone()),
                _ => None,
            }
        })
        .collect();
    // Two file columns folding to one table column: neither is renamed.
    for k in 0..renames.len() {
        let Some(name) = renames[k].clone() else {
            continue;
        };
        if renames
            .iter()
            .filter(|r| r.as_deref() == Some(&name))
            .count()
            > 1
        {
            for r in renames.iter_mut().filter(|r| r.as_deref() == Some(&name)) {
                *r = None;
            }
        }
    }
    renames.iter().any(Option::is_some).then_some(renames)
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
