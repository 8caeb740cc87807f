use super::*;
use crate::hash::{BucketingVersion, StringHashing};
use arrow::datatypes::Field;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::Operator;
use object_store::path::Path;

#[test]
fn bucket_numbers_of_every_writer_s_file_names() {
    let cases = [
        ("000003_0", Some(3)),
        ("000003_0_copy_1", Some(3)),
        ("000012_0.parquet", Some(12)),
        (
            "000003_0_3f1c0c3e-1b2a-4c5d-9e8f-000000000000_20240101_120000_00001_abcde",
            Some(3),
        ),
        ("bucket_00003", Some(3)),
        ("bucket_00003_1", Some(3)),
        ("20180102_030405_00641_x1y2z_bucket-00234", Some(234)),
        ("bucket-00007.parquet", Some(7)),
        (
            "part-00000-4cc5d5e2-6b1b-4a42-8b2f-2d0b6c2f0b6a_00003.c000.snappy.parquet",
            Some(3),
        ),
        (
            "part-00005-4cc5d5e2-6b1b-4a42-8b2f-2d0b6c2f0b6a.c000.snappy.parquet",
            Some(5),
        ),
        ("data.parquet", None),
        ("part.parquet", None),
    ];
    for (name, expected) in cases {
        assert_eq!(bucket_of_file_name(name).unwrap(), expected, "{name}");
    }
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        location: Path::from(format!("t/ds=1/{name}")),
        last_modified: Default::default(),
        size: 10,
        e_tag: None,
        version: None,
    }
}

#[test]
fn a_partition_s_bucket_count_is_its_highest_bucket_plus_one() {
    let files = [
        "000000_0",
        "000001_0",
        "000001_0_copy_1",
        "000002_0",
        "000003_0",
    ]
    .map(meta);
    let p = partition_buckets(
        "t",
        "ds=1",
        files.to_vec(),
        8,
        &ObjectStoreUrl::local_filesystem(),
    )
    .unwrap();
    assert_eq!(p.count, 4);
    assert_eq!(p.files.len(), 5);
}

#[test]
fn gaps_unparsable_names_and_incompatible_counts_name_the_partition() {
    let gap = ["000000_0", "000002_0"].map(meta).to_vec();
    let err = partition_buckets("t", "ds=1", gap, 4, &ObjectStoreUrl::local_filesystem())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("partition 'ds=1'") && err.contains("no file for bucket 1"),
        "{err}"
    );
    let bad = ["000000_0", "notes.parquet"].map(meta).to_vec();
    let err = partition_buckets("t", "ds=1", bad, 4, &ObjectStoreUrl::local_filesystem())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("notes.parquet") && err.contains("not named like a bucket"),
        "{err}"
    );
    let three = ["000000_0", "000001_0", "000002_0"].map(meta).to_vec();
    let err = partition_buckets("t", "ds=1", three, 8, &ObjectStoreUrl::local_filesystem())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("3 buckets") && err.contains("8 buckets"),
        "{err}"
    );
}

#[test]
fn four_buckets_serve_eight() {
    // Old bucket 1 of 4 serves new buckets 1 and 5, filtering rows (h 1, 5, 9, 13 → 1, 5, 1, 5).
    let reads = reads_of_file(1, 4, 8);
    let served: Vec<_> = reads.iter().map(|r| r.table_bucket).collect();
    assert_eq!(served, [1, 5]);
    assert!(reads.iter().all(|r| r.conversion.is_some()));
    for (h, b) in [(1, 1), (5, 5), (9, 1), (13, 5)] {
        assert_eq!(bucket_number(h, 8), b);
        assert_eq!(bucket_number(h, 4), 1);
    }
    // 16 buckets serving 8: file 13 serves table bucket 5, no filtering.
    let reads = reads_of_file(13, 16, 8);
    assert_eq!(reads.len(), 1);
    assert_eq!(reads[0].table_bucket, 5);
    assert!(reads[0].conversion.is_none());
}

fn bucketing(version: BucketingVersion) -> Bucketing {
    let schema = Schema::new(vec![
        Field::new("custkey", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
    ]);
    let options = BucketingOptions {
        columns: vec!["custkey".into()],
        count: 8,
        version,
        strings: StringHashing::HiveString,
    };
    Bucketing::try_new(&options, &schema).unwrap()
}

#[test]
fn point_filters_prune_to_the_files_of_their_hashes() {
    let b = bucketing(BucketingVersion::V2);
    let v = |x: i64| ScalarValue::Int64(Some(x));
    let eq = Filter::compare(&DataType::Int64, Operator::Eq, &v(42)).unwrap();
    let filters = BTreeMap::from([(Subfield::column("custkey"), eq)]);
    let f = BucketFilter::try_new(&b, &filters).unwrap();
    let h = b
        .hash
        .hash_array(&arrow::array::Int64Array::from(vec![42]))
        .unwrap()[0];
    let kept: Vec<u32> = (0..8)
        .filter(|&n| f.allows(&reads_of_file(n, 8, 8)[0], 8, 8).unwrap())
        .collect();
    assert_eq!(kept, [bucket_number(h, 8)]);
    // A range is not a point filter: nothing pruned.
    let gt = Filter::compare(&DataType::Int64, Operator::Gt, &v(42)).unwrap();
    let filters = BTreeMap::from([(Subfield::column("custkey"), gt)]);
    assert!(BucketFilter::try_new(&b, &filters).unwrap().is_all());
    // $bucket = 3
    let b3 = Filter::compare(&DataType::Int32, Operator::Eq, &ScalarValue::Int32(Some(3))).unwrap();
    let filters = BTreeMap::from([(Subfield::column("$bucket"), b3)]);
    let f = BucketFilter::try_new(&b, &filters).unwrap();
    let kept: Vec<u32> = (0..8)
        .filter(|&n| f.allows(&reads_of_file(n, 8, 8)[0], 8, 8).unwrap())
        .collect();
    assert_eq!(kept, [3]);
    // A table bucket beyond the filter's table is a bug, not a pruned file.
    let beyond = reads_of_file(9, 16, 16)[0].clone();
    let err = f.allows(&beyond, 16, 16).unwrap_err().to_string();
    assert!(
        err.contains("table bucket 9 of a file is beyond the table's 8 buckets"),
        "{err}"
    );
}

#[test]
fn unknown_or_unhashable_bucketing_columns_are_rejected() {
    let schema = Schema::new(vec![Field::new("u", DataType::UInt32, true)]);
    let options = BucketingOptions {
        columns: vec!["u".into()],
        count: 4,
        version: BucketingVersion::V1,
        strings: StringHashing::HiveString,
    };
    let err = Bucketing::try_new(&options, &schema)
        .unwrap_err()
        .to_string();
    assert!(err.contains("'u'") && err.contains("UInt32"), "{err}");
    let missing = BucketingOptions {
        columns: vec!["nope".into()],
        ..options
    };
    let err = Bucketing::try_new(&missing, &schema)
        .unwrap_err()
        .to_string();
    assert!(err.contains("'nope'"), "{err}");
}
