use super::*;
use parquet::schema::parser::parse_message_type;

const SCHEMA: &str = "
message m {
  optional int64 id;
  optional group r { optional int64 a; optional int64 b; optional binary c (STRING); }
  optional group a (LIST) {
    repeated group list { optional group element { optional int64 x; optional int64 y; } }
  }
  optional group m (MAP) {
    repeated group key_value {
      required binary key (STRING);
      optional group value { optional int64 x; optional int64 y; }
    }
  }
  optional group legacy (LIST) { repeated int32 array; }
}";

fn leaves() -> (FileLeaves, SchemaDescriptor) {
    let t = parse_message_type(SCHEMA).unwrap();
    let descr = SchemaDescriptor::new(Arc::new(t));
    (FileLeaves::new(&descr), descr)
}

fn paths(list: &[&[PathStep]]) -> RequiredSubfields {
    let mut r = RequiredSubfields::Nothing;
    for p in list {
        r.add(p.to_vec());
    }
    r
}

fn field(name: &str) -> PathStep {
    PathStep::Field(name.to_string())
}

#[test]
fn logical_paths_select_the_leaves_of_structs_lists_and_maps() {
    let (l, _) = leaves();
    assert_eq!(l.select(0, &RequiredSubfields::Whole), [0]);
    assert_eq!(l.select(1, &paths(&[&[field("a")]])), [1]);
    assert_eq!(l.select(1, &RequiredSubfields::Whole), [1, 2, 3]);
    assert_eq!(
        l.select(2, &paths(&[&[PathStep::Element, field("x")]])),
        [4]
    );
    assert_eq!(
        l.select(
            3,
            &paths(&[&[PathStep::MapKey], &[PathStep::MapValue, field("x")]])
        ),
        [6, 7]
    );
    assert_eq!(l.select(3, &paths(&[&[PathStep::Size]])), [6]);
    assert_eq!(l.select(4, &paths(&[&[PathStep::Element]])), [9]);
    assert_eq!(
        l.select(1, &RequiredSubfields::Nothing),
        Vec::<usize>::new()
    );
    assert_eq!(l.struct_member(1, &["b".to_string()]), [2]);
    assert_eq!(l.root_of(7), 3);
}

#[test]
fn maps_read_without_keys_or_without_values_become_lists() {
    let (l, _) = leaves();
    let keys_only: BTreeSet<usize> = [6].into();
    assert_eq!(l.partial_maps(&keys_only), [vec!["m".to_string()]]);
    let values_only: BTreeSet<usize> = [8].into();
    assert_eq!(l.partial_maps(&values_only), [vec!["m".to_string()]]);
    let both: BTreeSet<usize> = [6, 8].into();
    assert!(l.partial_maps(&both).is_empty());
    let none: BTreeSet<usize> = [0, 1].into();
    assert!(l.partial_maps(&none).is_empty());
}

#[test]
fn reannotation_changes_only_the_map_groups_annotation() {
    use parquet::file::metadata::FileMetaData;
    let (_, descr) = leaves();
    let descr = Arc::new(descr);
    let file = FileMetaData::new(1, 0, None, None, Arc::clone(&descr), None);
    let metadata = ParquetMetaData::new(file, vec![]);
    let rewritten = reannotate_maps(&metadata, &[vec!["m".to_string()]]).unwrap();
    let new_descr = rewritten.file_metadata().schema_descr();
    assert_eq!(new_descr.num_columns(), descr.num_columns());
    for i in 0..descr.num_columns() {
        let (old, new) = (descr.column(i), new_descr.column(i));
        assert_eq!(old.path(), new.path());
        assert_eq!(old.max_def_level(), new.max_def_level());
        assert_eq!(old.max_rep_level(), new.max_rep_level());
    }
    let m = &new_descr.root_schema().get_fields()[3];
    assert_eq!(
        m.get_basic_info().logical_type_ref(),
        Some(&LogicalType::List)
    );
    let r = &new_descr.root_schema().get_fields()[1];
    assert_eq!(r.get_basic_info().logical_type_ref(), None);
    // Read as a list, the keys are the element's member `key`.
    let relisted = FileLeaves::new(new_descr);
    assert_eq!(
        relisted.select(3, &paths(&[&[PathStep::Element, field("key")]])),
        [6]
    );
}
