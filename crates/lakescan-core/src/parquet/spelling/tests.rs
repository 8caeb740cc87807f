use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields};
use parquet::schema::parser::parse_message_type;
use parquet::schema::printer::print_schema;

use super::*;

fn person() -> DataType {
    DataType::Struct(Fields::from(vec![
        Field::new("id", DataType::Int32, true),
        Field::new("zip", DataType::Utf8, true),
    ]))
}

fn printed(fields: Vec<TypePtr>) -> String {
    let root = Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
        .expect("a group of valid fields");
    let mut out = vec![];
    print_schema(&mut out, &root);
    String::from_utf8(out).expect("the printer writes UTF-8")
}

#[test]
fn columns_and_struct_members_through_lists_and_maps_take_the_tables_names() {
    let file = parse_message_type(
        "message spark_schema {
            optional group Owner { optional int32 ID; optional binary zip (STRING); }
            optional group people (LIST) {
                repeated group list { optional group element { optional int32 Id; optional binary ZIP (STRING); } }
            }
            optional group legacy (LIST) {
                repeated group array { optional int32 iD; optional binary Zip (STRING); }
            }
            repeated group Bare { optional int32 ID; optional binary zip (STRING); }
            optional group by_name (MAP) {
                repeated group key_value {
                    required binary key (STRING);
                    optional group value { optional int32 ID; optional binary zip (STRING); }
                }
            }
        }",
    )
    .expect("a valid schema");
    let map = {
        let entries = Field::new(
            "entries",
            DataType::Struct(Fields::from(vec![
                Field::new("keys", DataType::Utf8, false),
                Field::new("values", person(), true),
            ])),
            false,
        );
        DataType::Map(Arc::new(entries), false)
    };
    let list = DataType::new_list(person(), true);
    let table = Fields::from(vec![
        Field::new("owner", person(), true),
        Field::new("people", list.clone(), true),
        Field::new("legacy", list.clone(), true),
        Field::new("bare", list, true),
        Field::new("by_name", map, true),
    ]);
    let got = respelled_members(file.get_fields(), &table)
        .expect("renaming builds valid types")
        .expect("renamed");
    let want = parse_message_type(
        "message spark_schema {
            optional group owner { optional int32 id; optional binary zip (STRING); }
            optional group people (LIST) {
                repeated group list { optional group element { optional int32 id; optional binary zip (STRING); } }
            }
            optional group legacy (LIST) {
                repeated group array { optional int32 id; optional binary zip (STRING); }
            }
            repeated group bare { optional int32 id; optional binary zip (STRING); }
            optional group by_name (MAP) {
                repeated group key_value {
                    required binary key (STRING);
                    optional group value { optional int32 id; optional binary zip (STRING); }
                }
            }
        }",
    )
    .expect("a valid schema");
    assert_eq!(printed(got), printed(want.get_fields().to_vec()));
    // Spelled as the table: nothing to do.
    assert!(
        respelled_members(want.get_fields(), &table)
            .expect("nothing to build")
            .is_none()
    );
}

#[test]
fn a_struct_member_the_table_spells_exactly_is_kept() {
    // `Id` and `id` in one struct: the exact one is read, the other keeps its name.
    let file = parse_message_type(
        "message m { optional group s { optional int32 Id; optional int32 id; optional int32 ZIP; } }",
    )
    .expect("a valid schema");
    let table = Fields::from(vec![Field::new("s", person(), true)]);
    let got = respelled_members(file.get_fields(), &table)
        .expect("renaming builds valid types")
        .expect("renamed");
    let members: Vec<&str> = got[0].get_fields().iter().map(|m| m.name()).collect();
    assert_eq!(members, ["Id", "id", "zip"]);
}
