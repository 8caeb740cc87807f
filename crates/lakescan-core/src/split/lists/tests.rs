use datafusion::common::ScalarValue;

use super::*;

fn local() -> ObjectStoreUrl {
    ObjectStoreUrl::local_filesystem()
}

/// A Hive-like split: a file of partition `ds` in a table directory, its written path the
/// derived one, a listing's modification time.
fn hive_split(ds: &str, file: usize, start: u64, length: u64) -> Arc<FileSplit> {
    let path = Path::from(format!("warehouse/sales/ds={ds}/part-{file:05}.parquet"));
    let at = DateTime::from_timestamp(1_733_000_000 + file as i64, 123_456_789);
    Arc::new(
        FileSplit::builder(path.clone(), 64 << 20)
            .written_path(written_path(&local(), &path))
            .last_modified(at.unwrap_or_default())
            .range(start, length)
            .value("ds", SplitValue::Partition(Some(ds.to_owned())))
            .build()
            .unwrap(),
    )
}

fn round_trip(lists: &[Vec<Arc<FileSplit>>]) -> Vec<Vec<Arc<FileSplit>>> {
    let bytes = crate::wire::encode_body(&EncodedSplits::new(lists, &local()).unwrap()).unwrap();
    let decoded: EncodedSplits = crate::wire::decode_body(&bytes, "splits").unwrap();
    decoded.into_lists(&local()).unwrap()
}

/// Every fact of every split comes back: ranges of one file in several lists, values of
/// every kind, adapter keys, another store, written paths derived, given (non-ASCII, sharing
/// part of a character with the one before) and absent, ORC files.
#[test]
fn split_lists_come_back_as_they_were() {
    let s3 = ObjectStoreUrl::parse("s3://other-bucket").unwrap();
    let iceberg = |name: &str, adapter: u32| {
        let path = Path::from(format!("wh/t/data/{name}.parquet"));
        Arc::new(
            FileSplit::builder(path, 1000)
                .written_path(format!("s3a://legacy/wh/t/data/{name}.parquet"))
                .store(s3.clone())
                .adapter(AdapterKey(adapter))
                .value("id", SplitValue::Known(ScalarValue::Int64(Some(7))))
                .value(
                    "x",
                    SplitValue::Missing(ScalarValue::Utf8(Some("d".into()))),
                )
                .value(
                    "$path",
                    SplitValue::Info(ScalarValue::Utf8(Some(name.into()))),
                )
                .build()
                .unwrap(),
        )
    };
    let accented = |name: &str| {
        Arc::new(
            FileSplit::builder(Path::from(format!("t/{name}.orc")), 50)
                .written_path(format!("/t/{name}.orc"))
                .format(FileFormat::Orc)
                .value("p", SplitValue::Partition(None))
                .build()
                .unwrap(),
        )
    };
    let bare = Arc::new(FileSplit::whole_file(Path::from("t/plain.parquet"), 9));
    let lists = vec![
        vec![
            hive_split("2024-01-01", 0, 0, 1 << 20),
            iceberg("a", 0),
            accented("é1"),
        ],
        vec![
            hive_split("2024-01-01", 0, 1 << 20, 1 << 20),
            iceberg("b", 1),
            accented("è2"),
        ],
        vec![],
        vec![bare, hive_split("2024-01-02", 1, 0, 64 << 20)],
    ];
    let back = round_trip(&lists);
    assert_eq!(back, lists);
    // The two ranges of one file share its values.
    assert!(Arc::ptr_eq(&back[0][0].values.0, &back[1][0].values.0));
}

/// A table of 100 000 splits (1 000 files in each of 100 partition directories, written
/// paths derived, a partition value and a modification time each) costs at most 60 bytes a
/// split; written split by split, with each path twice, it cost about 140.
#[test]
fn a_split_costs_at_most_60_bytes_in_a_plan() {
    let lists: Vec<Vec<Arc<FileSplit>>> = (0..4)
        .map(|partition| {
            (0..25_000)
                .map(|i| {
                    let file = partition * 25_000 + i;
                    let ds = format!(
                        "2024-{:02}-{:02}",
                        1 + file / 1000 / 28,
                        1 + file / 1000 % 28
                    );
                    hive_split(&ds, file, 0, 64 << 20)
                })
                .collect()
        })
        .collect();
    let splits: usize = lists.iter().map(Vec::len).sum();
    assert_eq!(splits, 100_000);
    let bytes = crate::wire::encode_body(&EncodedSplits::new(&lists, &local()).unwrap()).unwrap();
    let per_split = bytes.len() as f64 / splits as f64;
    assert!(per_split <= 60.0, "{per_split:.1} bytes a split");
    #[derive(Serialize)]
    struct OneByOne<'a>(&'a [Vec<Arc<FileSplit>>]);
    let before = crate::wire::encode_body(&OneByOne(&lists)).unwrap();
    assert!(
        before.len() > 2 * bytes.len(),
        "{} against {}",
        before.len(),
        bytes.len()
    );
}

/// A damaged plan is an error naming what is wrong, never other splits.
#[test]
fn damaged_split_lists_are_errors() {
    let lists = vec![vec![
        hive_split("2024-01-01", 0, 0, 10),
        hive_split("2024-01-01", 1, 0, 10),
    ]];
    let damage = |change: &dyn Fn(&mut EncodedSplits)| {
        let mut encoded = EncodedSplits::new(&lists, &local()).unwrap();
        change(&mut encoded);
        encoded.into_lists(&local()).unwrap_err().to_string()
    };
    let err = damage(&|e| e.files[1].path.shared = 500);
    assert!(err.contains("shares 500 bytes"), "{err}");
    let err = damage(&|e| e.lists[0][1].file = 9);
    assert!(err.contains("file 9 of 2"), "{err}");
    let err = damage(&|e| e.files[0].values[0].0 = 3);
    assert!(err.contains("value column 3 of 1"), "{err}");
    let err = damage(&|e| e.lists[0][0].length = 1 << 40);
    assert!(err.contains("part-00000"), "{err}");
}
