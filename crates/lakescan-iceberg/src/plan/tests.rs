use super::*;

fn data_file(rows: u64, first_row_id: Option<i64>) -> DataFile {
    iceberg::spec::DataFileBuilder::default()
        .content(DataContentType::Data)
        .file_path(format!("/t/{rows}.parquet"))
        .file_format(DataFileFormat::Parquet)
        .record_count(rows)
        .file_size_in_bytes(1)
        .partition(Struct::empty())
        .partition_spec_id(0)
        .first_row_id(first_row_id)
        .build()
        .expect("every required field is set")
}

fn entry(status: ManifestStatus, file: DataFile) -> ManifestEntry {
    ManifestEntry {
        status,
        snapshot_id: Some(1),
        sequence_number: Some(1),
        file_sequence_number: Some(1),
        data_file: file,
    }
}

fn live(file: DataFile) -> ManifestEntry {
    entry(ManifestStatus::Existing, file)
}

/// Files without their own first row id continue the manifest's count; a file with
/// its own keeps it and does not advance the count.
#[test]
fn first_row_ids_are_inherited_in_manifest_order() {
    let mut ids = RowIdAssigner(Some(1000));
    assert_eq!(ids.assign(&live(data_file(10, None))), Some(1000));
    assert_eq!(ids.assign(&live(data_file(5, Some(42)))), Some(42));
    assert_eq!(ids.assign(&live(data_file(7, None))), Some(1010));
    let added = entry(ManifestStatus::Added, data_file(1, None));
    assert_eq!(ids.assign(&added), Some(1017));
    // A manifest without a first row id (pre-lineage) gives none, as Java.
    let mut none = RowIdAssigner(None);
    assert_eq!(none.assign(&live(data_file(10, None))), None);
    assert_eq!(none.assign(&live(data_file(10, Some(3)))), None);
}

/// Only ADDED entries (and every entry of a v1 manifest, sequence number 0) inherit the
/// manifest's sequence number; an EXISTING entry of a v2 manifest without one is an
/// error naming its file, not sequence number 0.
#[test]
fn existing_entries_must_carry_their_sequence_number() {
    let manifest = |sequence_number| ManifestFile {
        sequence_number,
        ..inline_manifest("/m.avro", 7)
    };
    let bare = |status| ManifestEntry {
        status,
        snapshot_id: None,
        sequence_number: None,
        file_sequence_number: None,
        data_file: data_file(1, None),
    };
    let added = inherit(bare(ManifestStatus::Added), &manifest(5)).unwrap();
    assert_eq!(
        (added.sequence_number, added.snapshot_id),
        (Some(5), Some(7))
    );
    let v1 = inherit(bare(ManifestStatus::Existing), &manifest(0)).unwrap();
    assert_eq!(v1.sequence_number, Some(0));
    let err = inherit(bare(ManifestStatus::Existing), &manifest(5)).unwrap_err();
    assert!(
        err.contains("EXISTING entry for '/t/1.parquet' has no sequence number"),
        "{err}"
    );
}

/// Java's `ManifestReader.idAssigner`: a DELETED entry takes no id and does not advance
/// the count of the live files after it.
#[test]
fn deleted_entries_take_no_row_ids() {
    let mut ids = RowIdAssigner(Some(100));
    let deleted = entry(ManifestStatus::Deleted, data_file(10, None));
    assert_eq!(ids.assign(&deleted), None);
    assert_eq!(ids.assign(&live(data_file(5, None))), Some(100));
    assert_eq!(ids.assign(&live(data_file(1, None))), Some(105));
    let deleted_with_id = entry(ManifestStatus::Deleted, data_file(3, Some(7)));
    assert_eq!(ids.assign(&deleted_with_id), Some(7));
}

#[test]
fn equal_file_path_bounds_scope_a_position_delete_file_to_one_data_file() {
    let deletes = |lower: Option<&str>, upper: Option<&str>| {
        let bound = |path: Option<&str>| {
            path.map(|p| (FILE_PATH_ID, Datum::string(p)))
                .into_iter()
                .collect::<std::collections::HashMap<_, _>>()
        };
        iceberg::spec::DataFileBuilder::default()
            .content(DataContentType::PositionDeletes)
            .file_path("/t/deletes.parquet".to_string())
            .file_format(DataFileFormat::Parquet)
            .record_count(3)
            .file_size_in_bytes(1)
            .partition(Struct::empty())
            .partition_spec_id(0)
            .lower_bounds(bound(lower))
            .upper_bounds(bound(upper))
            .build()
            .expect("every required field is set")
    };
    assert_eq!(
        referenced_by_bounds(&deletes(Some("/t/a.parquet"), Some("/t/a.parquet"))).as_deref(),
        Some("/t/a.parquet")
    );
    assert_eq!(
        referenced_by_bounds(&deletes(Some("/t/a.parquet"), Some("/t/b.parquet"))),
        None
    );
    assert_eq!(
        referenced_by_bounds(&deletes(Some("/t/a.parquet"), None)),
        None
    );
    assert_eq!(referenced_by_bounds(&deletes(None, None)), None);
}
