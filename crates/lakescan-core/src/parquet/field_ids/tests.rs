use std::sync::Arc;

use parquet::file::metadata::{FileMetaData, ParquetMetaData};
use parquet::schema::parser::parse_message_type;
use parquet::schema::printer::print_schema;
use parquet::schema::types::SchemaDescriptor;

use super::*;
use crate::field_ids::FieldIdNode;

fn metadata(message: &str) -> ParquetMetaData {
    let schema = Arc::new(parse_message_type(message).unwrap());
    let descr = Arc::new(SchemaDescriptor::new(schema));
    ParquetMetaData::new(FileMetaData::new(1, 0, None, None, descr, None), vec![])
}

fn printed(m: &ParquetMetaData) -> String {
    let mut out = vec![];
    print_schema(&mut out, m.file_metadata().schema());
    String::from_utf8(out).unwrap()
}

fn node(name: &str, nested: NestedIds) -> FieldIdNode {
    FieldIdNode {
        name: name.into(),
        nested,
    }
}

/// Table: id#1 BIGINT, s#3 ROW(y#5, z#6), l#7 LIST<ROW(v#9)>, m#10 MAP<key#11, ROW(w#13)>.
fn table() -> FieldIds {
    FieldIds::new([
        (1, node("id", NestedIds::Primitive)),
        (
            3,
            node(
                "s",
                NestedIds::Struct(FieldIds::new([
                    (5, node("y", NestedIds::Primitive)),
                    (6, node("z", NestedIds::Primitive)),
                ])),
            ),
        ),
        (
            7,
            node(
                "l",
                NestedIds::List(Box::new(NestedIds::Struct(FieldIds::new([(
                    9,
                    node("v", NestedIds::Primitive),
                )])))),
            ),
        ),
        (
            10,
            node(
                "m",
                NestedIds::Map(
                    Box::new(NestedIds::Primitive),
                    Box::new(NestedIds::Struct(FieldIds::new([(
                        13,
                        node("w", NestedIds::Primitive),
                    )]))),
                ),
            ),
        ),
    ])
}

#[test]
fn renames_reorders_and_drops_by_id() {
    let file = metadata(
        "message schema {
            optional int32 a = 1;
            optional binary b (UTF8) = 2;
            optional group s = 3 { optional int32 x = 4; optional int32 old_y = 5; }
            optional group l (LIST) = 7 {
                repeated group list { optional group element = 8 { optional int32 old_v = 9; } }
            }
            optional group m (MAP) = 10 {
                repeated group key_value {
                    required binary key (UTF8) = 11;
                    optional group value = 12 { optional int32 old_w = 13; }
                }
            }
        }",
    );
    let matching = FieldIdMatching {
        table: table(),
        name_mapping: None,
    };
    let renamed = rename_by_field_id(&file, &matching).unwrap().unwrap();
    let text = printed(&renamed);
    for expected in [
        "OPTIONAL INT32 id [1];",
        "OPTIONAL BYTE_ARRAY __lakescan_field_2 [2] (UTF8);",
        "OPTIONAL INT32 __lakescan_field_4 [4];",
        "OPTIONAL INT32 y [5];",
        "OPTIONAL group element [8] {",
        "OPTIONAL INT32 v [9];",
        "REPEATED group key_value {",
        "OPTIONAL INT32 w [13];",
    ] {
        assert!(text.contains(expected), "{expected} not in\n{text}");
    }
    // Leaves and their order are unchanged: only names are.
    assert_eq!(
        renamed.file_metadata().schema_descr().num_columns(),
        file.file_metadata().schema_descr().num_columns()
    );
}

/// Java's `pruneColumnsFallback`: top-level column k takes id k; members of a struct take
/// the ids of the table's members at their positions; names play no part.
#[test]
fn files_without_ids_or_mapping_match_by_position() {
    let file = metadata(
        "message schema {
            optional int64 first;
            optional int32 second;
            optional group third { optional int32 p; optional int32 q; optional int32 r; }
        }",
    );
    let table = FieldIds::new([
        (1, node("id", NestedIds::Primitive)),
        (
            3,
            node(
                "s",
                NestedIds::Struct(FieldIds::new([
                    (5, node("y", NestedIds::Primitive)),
                    (6, node("z", NestedIds::Primitive)),
                ])),
            ),
        ),
        // `second` was dropped (id 2) and re-added under its old name with a new id.
        (7, node("second", NestedIds::Primitive)),
    ]);
    let matching = FieldIdMatching {
        table,
        name_mapping: None,
    };
    let text = printed(&rename_by_field_id(&file, &matching).unwrap().unwrap());
    for expected in [
        "OPTIONAL INT64 id;",
        "OPTIONAL INT32 __lakescan_field_2;",
        "OPTIONAL group s {",
        "OPTIONAL INT32 y;",
        "OPTIONAL INT32 z;",
        "OPTIONAL INT32 __lakescan_field_at_2;",
    ] {
        assert!(text.contains(expected), "{expected} not in\n{text}");
    }
}

#[test]
fn files_without_ids_use_the_name_mapping() {
    let file = metadata(
        "message schema {
            optional int64 legacy_id;
            optional group s { optional int32 why; }
            optional int32 unmapped;
        }",
    );
    let unmatched = FieldIdMatching {
        table: table(),
        name_mapping: None,
    };
    // Neither ids nor a mapping: matched by position (Java's fallback ids): top-level
    // column k is id k — legacy_id is id 1 (`id`), s is id 2 (no such column), unmapped is
    // id 3 (`s`, a struct the file's int cannot be; read as the table type, it is an error).
    let text = printed(&rename_by_field_id(&file, &unmatched).unwrap().unwrap());
    for expected in [
        "OPTIONAL INT64 id;",
        "OPTIONAL group __lakescan_field_2 {",
        "OPTIONAL INT32 s;",
    ] {
        assert!(text.contains(expected), "{expected} not in\n{text}");
    }
    let mapped = |id, names: &[&str], fields| MappedName {
        field_id: id,
        names: names.iter().map(|n| n.to_string()).collect(),
        fields,
    };
    let matching = FieldIdMatching {
        table: table(),
        name_mapping: Some(vec![
            mapped(Some(1), &["legacy_id", "id"], vec![]),
            mapped(Some(3), &["s"], vec![mapped(Some(5), &["why"], vec![])]),
        ]),
    };
    let text = printed(&rename_by_field_id(&file, &matching).unwrap().unwrap());
    for expected in [
        "OPTIONAL INT64 id;",
        "OPTIONAL INT32 y;",
        "OPTIONAL INT32 __lakescan_field_at_2;",
    ] {
        assert!(text.contains(expected), "{expected} not in\n{text}");
    }
}
