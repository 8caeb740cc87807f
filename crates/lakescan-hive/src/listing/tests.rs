#![allow(clippy::unwrap_used)]

use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{binary, col, lit};
use object_store::ObjectStoreExt;
use object_store::local::LocalFileSystem;

use super::*;

/// The files and counts of a listing, comparable.
fn summary(listing: &Listing) -> (Vec<String>, usize, usize) {
    let files = listing.files.iter();
    let names = files.map(|(m, p)| format!("{} {:?}", m.location, p.values));
    (
        names.collect(),
        listing.partitions_total,
        listing.partitions_pruned,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_table_lists_the_same_on_the_planning_thread_and_on_the_blocking_pool() {
    let dir = tempfile::tempdir().unwrap();
    for (partition, file) in [
        ("p=1", "a"),
        ("p=2", "b"),
        ("p=2", "c"),
        ("p=3", "_SUCCESS"),
    ] {
        std::fs::create_dir_all(dir.path().join(partition)).unwrap();
        std::fs::write(dir.path().join(partition).join(file), b"x").unwrap();
    }
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
    let root = Path::from_absolute_path(dir.path()).unwrap();
    let schema = partition_schema(&[("p".to_string(), DataType::Int32)]);
    let p_is_2 = binary(col("p", &schema).unwrap(), Operator::Eq, lit(2i32), &schema);
    let filters = PartitionFilters::new(schema, vec![p_is_2.unwrap()]);
    let keys = ["p".to_string()];
    let memory = ListingMemory::new();
    assert!(
        !memory.lists_inline(),
        "a table's first listing goes to the blocking pool"
    );

    let mut listings = vec![];
    for took in [
        Duration::from_secs(1),
        Duration::ZERO,
        Duration::from_secs(1),
    ] {
        memory.record_local(took);
        assert_eq!(memory.lists_inline(), took < INLINE_LISTING);
        let lister = Lister::new(&store, &memory);
        listings.push(summary(
            &list_table(lister, &root, &keys, &filters).await.unwrap(),
        ));
        assert!(memory.local_micros.load(Ordering::Relaxed) < u64::MAX);
    }
    let expected = (
        vec![
            format!("{root}/p=2/b [Some(\"2\")]"),
            format!("{root}/p=2/c [Some(\"2\")]"),
        ],
        3,
        2,
    );
    assert!(listings.iter().all(|l| *l == expected), "{listings:?}");
}

/// With nothing to prune, an object store is listed in one recursive request; the
/// listing is the one directory by directory gives (here: with the listing cache on,
/// which lists level by level), hidden files and markers skipped, a file among the
/// partitions an error.
#[tokio::test]
async fn one_recursive_listing_lists_what_level_by_level_lists() {
    let store: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    for key in [
        "t/a=1/b=x/f1.parquet",
        "t/a=1/b=x/_SUCCESS",
        "t/a=1/b=y/.f2.crc",
        "t/a=1/b=y/f2.parquet",
        "t/a=2/b=x/f3.parquet",
        "t/a=2/_temporary/0/f4.parquet",
        "t/_SUCCESS",
        "t0/a=9/b=x/other.parquet",
    ] {
        store.put(&Path::from(key), "x".into()).await.unwrap();
    }
    let schema = partition_schema(&[
        ("a".to_string(), DataType::Int32),
        ("b".to_string(), DataType::Utf8),
    ]);
    let filters = PartitionFilters::new(schema, vec![]);
    let keys = ["a".to_string(), "b".to_string()];
    let root = Path::from("t");
    let mut listings = vec![];
    for ttl in [Duration::ZERO, Duration::from_secs(60)] {
        let lister = Lister::new(&store, &ListingMemory::new()).with_ttl(ttl);
        let listing = list_table(lister, &root, &keys, &filters).await.unwrap();
        listings.push(summary(&listing));
    }
    assert_eq!(listings[0], listings[1]);
    assert_eq!(
        listings[0].0,
        [
            "t/a=1/b=x/f1.parquet [Some(\"1\"), Some(\"x\")]",
            "t/a=1/b=y/f2.parquet [Some(\"1\"), Some(\"y\")]",
            "t/a=2/b=x/f3.parquet [Some(\"2\"), Some(\"x\")]",
        ]
    );
    store
        .put(&Path::from("t/a=2/stray.parquet"), "x".into())
        .await
        .unwrap();
    let lister = Lister::new(&store, &ListingMemory::new());
    let err = list_table(lister, &root, &keys, &filters)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("t/a=2/stray.parquet"), "{err}");
}

#[tokio::test]
async fn a_partition_added_under_a_kept_root_is_listed_and_one_removed_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let add = |partition: &str| {
        std::fs::create_dir_all(dir.path().join(partition)).unwrap();
        std::fs::write(dir.path().join(partition).join("f"), b"x").unwrap();
    };
    add("p=1");
    add("p=2");
    let store: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
    let root = Path::from_absolute_path(dir.path()).unwrap();
    let schema = partition_schema(&[("p".to_string(), DataType::Int32)]);
    let filters = PartitionFilters::new(schema, vec![]);
    let keys = ["p".to_string()];
    let kept = KeptChildren::with_settle_time(Duration::ZERO);
    let memory = ListingMemory::with_kept_children(kept.clone());
    let partitions = async || {
        let lister = Lister::new(&store, &memory);
        let listing = list_table(lister, &root, &keys, &filters).await.unwrap();
        let values = listing.files.iter().map(|(_, p)| p.values[0].clone());
        values.map(Option::unwrap_or_default).collect::<Vec<_>>()
    };
    assert_eq!(partitions().await, ["1", "2"]);
    assert_eq!(partitions().await, ["1", "2"]);
    assert_eq!(kept.kept_dirs(), 1, "the root's listing is kept");
    // Past the file system's clock tick: the root's next change gets a later time.
    std::thread::sleep(Duration::from_millis(20));
    add("p=3");
    assert_eq!(partitions().await, ["1", "2", "3"]);
    std::thread::sleep(Duration::from_millis(20));
    std::fs::remove_dir_all(dir.path().join("p=1")).unwrap();
    assert_eq!(partitions().await, ["2", "3"]);
    // A file added to a partition is listed (leaf directories are always read).
    std::fs::write(dir.path().join("p=2").join("g"), b"x").unwrap();
    assert_eq!(partitions().await, ["2", "2", "3"]);
}

/// A directory that is not `key=…` at a partition level, and a visible file beside
/// partition directories, are errors naming them, in the local store and in any other
/// (whose files hidden ones stay skipped); their files would never be read.
#[tokio::test]
async fn what_is_not_a_partition_directory_is_an_error_naming_it() {
    let local: Arc<dyn ObjectStore> = Arc::new(LocalFileSystem::new());
    let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
    let schema = partition_schema(&[("p".to_string(), DataType::Utf8)]);
    let filters = PartitionFilters::new(schema, vec![]);
    let keys = ["p".to_string()];
    let cases = [
        (vec!["p=1/f", "_SUCCESS", ".p=2/f", "_tmp/f"], None),
        // Directory markers hold no rows: an empty `p=2` (S3's `p=2/`), EMRFS's
        // `p=1_$folder$`.
        (vec!["p=1/f", "p=2", "p=1_$folder$"], None),
        (
            vec!["p=1/f", "q=2/f"],
            Some("'{root}/q=2' is not named 'p=<value>'"),
        ),
        (
            vec!["p=1/f", "=2/f"],
            Some("'{root}/=2' is not named 'p=<value>'"),
        ),
        (
            vec!["p=1/f", "f"],
            Some("file '{root}/f' is not in a partition directory"),
        ),
        (
            vec!["p=%FF/f"],
            Some("'{root}/p=%FF': the URL-escaped value"),
        ),
    ];
    for (files, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::from_absolute_path(dir.path()).unwrap();
        for file in &files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            // A marker is empty; the other files hold a byte.
            let content: &[u8] = if *file == "p=2" { b"" } else { b"x" };
            std::fs::write(&path, content).unwrap();
            let location = Path::parse(format!("{root}/{file}")).unwrap();
            memory
                .put(&location, content.to_vec().into())
                .await
                .unwrap();
        }
        // Paths show as users write them: `/…` on the local file system; the memory
        // store's lister is not told its URL and shows the store's paths.
        for (store, shown_root) in [(&local, format!("/{root}")), (&memory, root.to_string())] {
            let lister = Lister::new(store, &ListingMemory::new());
            let listed = list_table(lister, &root, &keys, &filters).await;
            match (&listed, expected) {
                (Ok(listing), None) => assert_eq!(listing.files.len(), 1, "{files:?}"),
                (Err(e), Some(expected)) => {
                    let expected = expected.replace("{root}", &shown_root);
                    assert!(e.to_string().contains(&expected), "{e}")
                }
                _ => panic!("{files:?}: {listed:?}"),
            }
        }
    }
}

/// The empty object a directory marker is (`p=1/`, listed as `p=1`) is not a data file of
/// that directory; an empty file inside it, or a file named like a marker with bytes, is.
#[test]
fn a_directory_marker_is_not_a_data_file() {
    let meta = |location: &str, size: u64| ObjectMeta {
        location: Path::from(location),
        last_modified: Default::default(),
        size,
        e_tag: None,
        version: None,
    };
    let dir = Path::from("t/p=1");
    assert!(!is_data_file(&meta("t/p=1", 0), &dir));
    assert!(is_data_file(&meta("t/p=1/part-0.parquet", 0), &dir));
    assert!(is_data_file(&meta("t/p=1/part-0.parquet", 100), &dir));
    assert!(!is_data_file(&meta("t/p=1/_SUCCESS", 0), &dir));
}
