use super::*;
use crate::paths::PathResolver;
use iceberg::spec::Literal;

impl DeleteIndex {
    fn equality_deletes(&mut self, data: DataFileKey<'_>) -> Vec<Arc<DeleteFile>> {
        self.deletes(data).equality.clone()
    }

    fn position_deletes(&mut self, data: DataFileKey<'_>) -> Vec<Arc<DeleteFile>> {
        self.deletes(data).position.clone()
    }
}

fn location(p: &str) -> FileLocation {
    PathResolver::new(Some("/")).unwrap().resolve(p).unwrap()
}

fn delete(kind: DeleteKind, seq: i64, part: Option<&str>) -> DeleteFile {
    DeleteFile {
        written_path: "d".into(),
        location: location("/d"),
        kind,
        sequence_number: seq,
        spec_id: i32::from(part.is_some()),
        unpartitioned: part.is_none(),
        partition: match part {
            Some(p) => Struct::from_iter([Some(Literal::string(p))]),
            None => Struct::empty(),
        },
        referenced_data_file: None,
        referenced_written: None,
        record_count: 1,
        file_size: 1,
        format: Default::default(),
    }
}

#[test]
fn sequence_number_and_partition_rules() {
    let eq = || DeleteKind::Equality { field_ids: vec![1] };
    let mut index = DeleteIndexBuilder::default();
    index.add(delete(eq(), 2, None)).unwrap(); // global
    index.add(delete(eq(), 3, Some("a"))).unwrap();
    index.add(delete(eq(), 1, None)).unwrap(); // older than the data: does not apply
    let data_location = location("/f");
    let part_a = Struct::from_iter([Some(Literal::string("a"))]);
    let part_b = Struct::from_iter([Some(Literal::string("b"))]);
    let key = |partition| DataFileKey {
        location: &data_location,
        sequence_number: 1,
        spec_id: 1,
        partition,
    };
    let seqs = |files: Vec<Arc<DeleteFile>>| -> Vec<i64> {
        files.iter().map(|f| f.sequence_number).collect()
    };
    let mut index = index.build();
    assert_eq!(seqs(index.equality_deletes(key(&part_a))), [2, 3]);
    assert_eq!(seqs(index.equality_deletes(key(&part_b))), [2]);
    // Same sequence number: an equality delete does not apply, a position delete does.
    let mut same = DeleteIndexBuilder::default();
    same.add(delete(eq(), 1, None)).unwrap();
    same.add(delete(DeleteKind::Position, 1, Some("a")))
        .unwrap();
    let mut same = same.build();
    assert!(same.equality_deletes(key(&part_a)).is_empty());
    assert_eq!(same.position_deletes(key(&part_a)).len(), 1);
    assert!(same.position_deletes(key(&part_b)).is_empty());
    // The spec: a position delete of an unpartitioned spec applies to every partition.
    let mut unpartitioned = DeleteIndexBuilder::default();
    unpartitioned
        .add(delete(DeleteKind::Position, 1, None))
        .unwrap();
    let mut unpartitioned = unpartitioned.build();
    assert_eq!(unpartitioned.position_deletes(key(&part_b)).len(), 1);
    // A deletion vector applies only to the file it references.
    let mut dv = delete(
        DeleteKind::DeletionVector {
            offset: 4,
            length: 40,
        },
        5,
        None,
    );
    dv.referenced_data_file = Some(location("/other"));
    let mut dvs = DeleteIndexBuilder::default();
    dvs.add(dv.clone()).unwrap();
    let mut unrelated = delete(DeleteKind::Position, 5, None);
    unrelated.referenced_data_file = Some(location("/third"));
    dvs.add(unrelated).unwrap();
    // A second deletion vector for the same data file is an error naming both.
    let mut second = dv;
    second.written_path = "d2".into();
    second.referenced_written = Some("/other".into());
    let err = dvs.add(second).unwrap_err().to_string();
    assert!(
        err.contains("two deletion vectors for one data file ('d' and 'd2', both of '/other')"),
        "{err}"
    );
    let mut dvs = dvs.build();
    assert_eq!(dvs.len(), 2);
    assert!(dvs.position_deletes(key(&part_a)).is_empty());
    let other = location("/other");
    let of_other = DataFileKey {
        location: &other,
        ..key(&part_a)
    };
    assert_eq!(dvs.position_deletes(of_other).len(), 1);
}

/// What a lookup reads of a partition stays one group of 72 bytes (the type's doc).
#[test]
fn a_partition_group_is_72_bytes() {
    assert_eq!(std::mem::size_of::<PartitionGroup>(), 72);
}

/// `-0.0` and `0.0` hash alike (iceberg's `Literal` hashes floats by value) but are two
/// partitions (Java compares doubles with `Double.compare`): each data file gets its
/// own partition's deletes only.
#[test]
fn negative_and_positive_zero_are_two_partitions() {
    let mut builder = DeleteIndexBuilder::default();
    for (name, zero) in [("negative", -0.0), ("positive", 0.0)] {
        let mut file = delete(DeleteKind::Position, 3, Some("partitioned"));
        file.written_path = name.into();
        file.partition = Struct::from_iter([Some(Literal::double(zero))]);
        builder.add(file).unwrap();
    }
    let mut index = builder.build();
    let location = location("/f");
    for (name, zero) in [("negative", -0.0), ("positive", 0.0)] {
        let partition = Struct::from_iter([Some(Literal::double(zero))]);
        let found = index.deletes(DataFileKey {
            location: &location,
            sequence_number: 1,
            spec_id: 1,
            partition: &partition,
        });
        let names: Vec<_> = found
            .position
            .iter()
            .map(|f| f.written_path.as_str())
            .collect();
        assert_eq!(names, [name]);
    }
}

/// Data files of one partition and sequence number share what they are given (one
/// `Arc`), and a data file named by a position delete gets a value of its own.
#[test]
fn data_files_that_get_the_same_deletes_share_them() {
    let mut builder = DeleteIndexBuilder::default();
    builder
        .add(delete(DeleteKind::Position, 3, Some("a")))
        .unwrap();
    builder
        .add(delete(DeleteKind::Equality { field_ids: vec![1] }, 3, None))
        .unwrap();
    let mut named = delete(DeleteKind::Position, 3, Some("a"));
    named.written_path = "named".into();
    named.referenced_data_file = Some(location("/f2"));
    builder.add(named).unwrap();
    let mut index = builder.build();
    let part_a = Struct::from_iter([Some(Literal::string("a"))]);
    let (f1, f2, f3) = (location("/f1"), location("/f2"), location("/f3"));
    let key = |location, sequence_number| DataFileKey {
        location,
        sequence_number,
        spec_id: 1,
        partition: &part_a,
    };
    let first = index.deletes(key(&f1, 2));
    assert_eq!((first.position.len(), first.equality.len()), (1, 1));
    assert!(Arc::ptr_eq(&first, &index.deletes(key(&f3, 2))));
    let names = |files: &[Arc<DeleteFile>]| -> Vec<String> {
        files.iter().map(|f| f.written_path.clone()).collect()
    };
    // Another sequence number: the same files, given apart.
    let older = index.deletes(key(&f3, 1));
    assert!(!Arc::ptr_eq(&first, &older));
    assert_eq!(names(&older.position), names(&first.position));
    let second = index.deletes(key(&f2, 2));
    assert_eq!(names(&second.position), ["named", "d"]);
    assert_eq!(names(&second.equality), names(&first.equality));
    // A partition without deletes: the global ones, shared too.
    let part_b = Struct::from_iter([Some(Literal::string("b"))]);
    let in_b = |location| DataFileKey {
        partition: &part_b,
        ..key(location, 2)
    };
    let of_b = index.deletes(in_b(&f1));
    assert_eq!((of_b.position.len(), of_b.equality.len()), (0, 1));
    assert!(Arc::ptr_eq(&of_b, &index.deletes(in_b(&f3))));
    // Newer than every delete: nothing applies.
    assert!(index.deletes(key(&f1, 4)).is_empty());
}

/// The index finds what a scan of every delete file finds, for deletes of several
/// specs, partitions, sequence numbers and kinds (the rules of the module table).
#[test]
fn the_index_agrees_with_the_rules_applied_to_every_file() {
    let parts = ["a", "b", "c"];
    let mut all = vec![];
    for seq in 0..6i64 {
        for (n, part) in parts.iter().enumerate() {
            let kind = match (seq + n as i64) % 3 {
                0 => DeleteKind::Position,
                1 => DeleteKind::Equality { field_ids: vec![1] },
                _ => DeleteKind::Position,
            };
            let mut file = delete(kind, seq, (seq % 4 != 3).then_some(*part));
            file.written_path = format!("d{seq}{part}");
            if seq % 5 == 2 && file.kind == DeleteKind::Position {
                file.referenced_data_file = Some(location(&format!("/{part}")));
            }
            all.push(file);
        }
    }
    let mut builder = DeleteIndexBuilder::default();
    for file in &all {
        builder.add(file.clone()).unwrap();
    }
    let mut index = builder.build();
    let names = |files: Vec<Arc<DeleteFile>>| -> Vec<String> {
        let mut names: Vec<String> = files.iter().map(|f| f.written_path.clone()).collect();
        names.sort();
        names
    };
    for part in parts {
        let partition = Struct::from_iter([Some(Literal::string(part))]);
        let data_location = location(&format!("/{part}"));
        for seq in 0..7 {
            let data = DataFileKey {
                location: &data_location,
                sequence_number: seq,
                spec_id: 1,
                partition: &partition,
            };
            let same = |d: &DeleteFile| d.spec_id == 1 && same_values(&d.partition, &partition);
            let equality = all.iter().filter(|d| {
                matches!(d.kind, DeleteKind::Equality { .. })
                    && d.sequence_number > seq
                    && (d.unpartitioned || same(d))
            });
            let position = all.iter().filter(|d| {
                d.kind == DeleteKind::Position
                    && d.sequence_number >= seq
                    && match &d.referenced_data_file {
                        Some(r) => r == &data_location,
                        None => d.unpartitioned || same(d),
                    }
            });
            let expected = |it: &mut dyn Iterator<Item = &DeleteFile>| {
                let mut names: Vec<String> = it.map(|f| f.written_path.clone()).collect();
                names.sort();
                names
            };
            assert_eq!(
                names(index.equality_deletes(data)),
                expected(&mut equality.into_iter())
            );
            assert_eq!(
                names(index.position_deletes(data)),
                expected(&mut position.into_iter())
            );
        }
    }
}
