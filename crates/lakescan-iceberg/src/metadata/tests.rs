use std::io::Write;

use super::*;

/// A v2 table with two snapshots (1 → 2), a tag on the first and a snapshot log.
fn v2_json(format_version: u32) -> String {
    format!(
        r#"{{
  "format-version": {format_version},
  "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
  "location": "/wh/t",
  "last-sequence-number": 2,
  "last-updated-ms": 1700000002000,
  "last-column-id": 2,
  "current-schema-id": 1,
  "schemas": [
    {{"type": "struct", "schema-id": 0, "fields": [
      {{"id": 1, "name": "a", "required": false, "type": "int"}}]}},
    {{"type": "struct", "schema-id": 1, "fields": [
      {{"id": 1, "name": "a", "required": false, "type": "long"}},
      {{"id": 2, "name": "b", "required": false, "type": "string"}}]}}
  ],
  "default-spec-id": 0,
  "partition-specs": [{{"spec-id": 0, "fields": []}}],
  "last-partition-id": 999,
  "default-sort-order-id": 0,
  "sort-orders": [{{"order-id": 0, "fields": []}}],
  "properties": {{}},
  "current-snapshot-id": 2,
  "refs": {{
    "main": {{"snapshot-id": 2, "type": "branch"}},
    "first": {{"snapshot-id": 1, "type": "tag"}}
  }},
  "snapshots": [
    {{"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1700000001000,
      "manifest-list": "/wh/t/metadata/snap-1.avro", "summary": {{"operation": "append"}},
      "schema-id": 0}},
    {{"snapshot-id": 2, "parent-snapshot-id": 1, "sequence-number": 2,
      "timestamp-ms": 1700000002000, "manifest-list": "/wh/t/metadata/snap-2.avro",
      "summary": {{"operation": "append"}}, "schema-id": 1}}
  ],
  "snapshot-log": [
    {{"snapshot-id": 1, "timestamp-ms": 1700000001000}},
    {{"snapshot-id": 2, "timestamp-ms": 1700000002000}}
  ],
  "metadata-log": []
}}"#
    )
}

fn loaded() -> LoadedMetadata {
    parse_metadata(v2_json(2).as_bytes(), "t.metadata.json").unwrap()
}

#[test]
fn snapshots_by_id_time_and_ref() {
    let l = loaded();
    let pick = |s: SnapshotSelector| {
        let (snap, schema) = select_snapshot(&l, &s).unwrap();
        (snap.unwrap().snapshot_id(), schema.schema_id())
    };
    assert_eq!(pick(SnapshotSelector::Current), (2, 1));
    // Time travel reads with the snapshot's own schema.
    assert_eq!(pick(SnapshotSelector::Id(1)), (1, 0));
    assert_eq!(pick(SnapshotSelector::AsOf(1_700_000_001_500)), (1, 0));
    assert_eq!(pick(SnapshotSelector::AsOf(1_800_000_000_000)), (2, 1));
    assert_eq!(pick(SnapshotSelector::Ref("first".into())), (1, 0));
    assert_eq!(pick(SnapshotSelector::Ref("main".into())), (2, 1));
}

#[test]
fn unknown_snapshots_and_refs_are_errors() {
    let l = loaded();
    let err = select_snapshot(&l, &SnapshotSelector::Id(7))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no snapshot 7") && err.contains("[1, 2]"),
        "{err}"
    );
    let err = select_snapshot(&l, &SnapshotSelector::Ref("nope".into()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("'nope'") && err.contains("first"), "{err}");
    let err = select_snapshot(&l, &SnapshotSelector::AsOf(5))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "no snapshot at or before 1970-01-01T00:00:00.005Z: its oldest \
                      snapshot-log entry is snapshot 1 at 2023-11-14T22:13:21.000Z"
        ),
        "{err}"
    );
}

/// `as_of_timestamp` reads the snapshot log only: a snapshot the log does not list (staged,
/// or committed and rolled back) is never chosen, even when it is the newest by time; a time
/// before the log's first entry is an error, not that snapshot.
#[test]
fn time_travel_reads_the_snapshot_log_only() {
    let mut json: serde_json::Value = serde_json::from_str(&v2_json(2)).unwrap();
    let staged = serde_json::json!({"snapshot-id": 3, "parent-snapshot-id": 1,
        "sequence-number": 3, "timestamp-ms": 1_700_000_000_500_i64,
        "manifest-list": "/wh/t/metadata/snap-3.avro", "summary": {"operation": "append"},
        "schema-id": 1});
    json["snapshots"].as_array_mut().unwrap().push(staged);
    json["last-sequence-number"] = 3.into();
    let mut with_staged = json.clone();
    with_staged["snapshots"][2]["timestamp-ms"] = 1_700_000_001_500_i64.into();
    let pick = |json: &serde_json::Value, millis| {
        let l = parse_metadata(json.to_string().as_bytes(), "t.json").unwrap();
        select_snapshot(&l, &SnapshotSelector::AsOf(millis))
            .map(|(s, _)| s.unwrap().snapshot_id())
            .map_err(|e| e.to_string())
    };
    assert_eq!(pick(&with_staged, 1_700_000_001_600), Ok(1));
    let err = pick(&json, 1_700_000_000_600).unwrap_err();
    assert!(
        err.contains("oldest snapshot-log entry is snapshot 1"),
        "{err}"
    );
    // Without a snapshot log: the current snapshot's ancestry (3 is not an ancestor).
    json["snapshot-log"] = serde_json::json!([]);
    assert_eq!(pick(&json, 1_700_000_001_600), Ok(1));
    assert_eq!(pick(&json, 1_800_000_000_000), Ok(2));
    let err = pick(&json, 1_700_000_000_600).unwrap_err();
    assert!(err.contains("its oldest snapshot is snapshot 1"), "{err}");
}

#[test]
fn bad_metadata_files_are_errors_naming_the_file() {
    let err = parse_metadata(v2_json(4).as_bytes(), "m.json")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'m.json'") && err.contains("format-version 4"),
        "{err}"
    );
    let err = parse_metadata(b"{not json", "m.json")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'m.json'") && err.contains("not valid JSON"),
        "{err}"
    );
    let err = parse_metadata(br#"{"format-version": 2}"#, "m.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not valid Iceberg table metadata"), "{err}");
}

#[test]
fn gzip_metadata_is_inflated() {
    let mut gz = flate2::write::GzEncoder::new(vec![], flate2::Compression::default());
    gz.write_all(v2_json(2).as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    let l = parse_metadata(&bytes, "v1.gz.metadata.json").unwrap();
    assert_eq!(l.metadata.current_snapshot_id(), Some(2));
}

#[tokio::test]
async fn locating_the_newest_metadata_file() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("metadata");
    std::fs::create_dir_all(&md).unwrap();
    for name in ["v1.metadata.json", "v2.metadata.json", "v10.metadata.json"] {
        std::fs::write(md.join(name), "{}").unwrap();
    }
    let store: Arc<dyn ObjectStore> = Arc::new(object_store::local::LocalFileSystem::new());
    let table = Path::from_filesystem_path(dir.path()).unwrap();
    let found = locate(&store, &table, "t").await.unwrap();
    assert_eq!(found.filename(), Some("v10.metadata.json"));
    // A hint wins, as an integer or a file-name stem.
    std::fs::write(md.join("version-hint.text"), "2\n").unwrap();
    let found = locate(&store, &table, "t").await.unwrap();
    assert_eq!(found.filename(), Some("v2.metadata.json"));
    std::fs::write(md.join("00003-abc.gz.metadata.json"), "{}").unwrap();
    std::fs::write(md.join("version-hint.text"), "00003-abc").unwrap();
    let found = locate(&store, &table, "t").await.unwrap();
    assert_eq!(found.filename(), Some("00003-abc.gz.metadata.json"));
    std::fs::write(md.join("version-hint.text"), "9").unwrap();
    let err = locate(&store, &table, "t").await.unwrap_err().to_string();
    assert!(err.contains("names version 9"), "{err}");
    // A stale numeric hint is followed to the newest consecutive version (Java).
    std::fs::write(md.join("version-hint.text"), "1").unwrap();
    let found = locate(&store, &table, "t").await.unwrap();
    assert_eq!(found.filename(), Some("v2.metadata.json"));
    // An empty or unusable hint is no hint: the folder is listed (Java).
    for hint in ["", "\n", "not a version", "../v1"] {
        std::fs::write(md.join("version-hint.text"), hint).unwrap();
        let found = locate(&store, &table, "t").await.unwrap();
        assert_eq!(found.filename(), Some("v10.metadata.json"), "hint {hint:?}");
    }
    // So is a hint that cannot be read (here: a folder of that name).
    std::fs::remove_file(md.join("version-hint.text")).unwrap();
    std::fs::create_dir(md.join("version-hint.text")).unwrap();
    let found = locate(&store, &table, "t").await.unwrap();
    assert_eq!(found.filename(), Some("v10.metadata.json"));
    // UUID-named files without a hint: the highest sequence prefix.
    let other = tempfile::tempdir().unwrap();
    let md = other.path().join("metadata");
    std::fs::create_dir_all(&md).unwrap();
    for name in [
        "00000-aa.metadata.json",
        "00002-cc.metadata.json",
        "00001-bb.metadata.json",
    ] {
        std::fs::write(md.join(name), "{}").unwrap();
    }
    let table = Path::from_filesystem_path(other.path()).unwrap();
    let found = locate(&store, &table, "t").await.unwrap();
    assert_eq!(found.filename(), Some("00002-cc.metadata.json"));
    let empty = tempfile::tempdir().unwrap();
    let table = Path::from_filesystem_path(empty.path()).unwrap();
    let err = locate(&store, &table, "t").await.unwrap_err().to_string();
    assert!(err.contains("no Iceberg metadata at 't'"), "{err}");
}
