//! Deletes as a state of the reader: loaded after pruning, applied by position.

use super::*;
use crate::deleted_rows::DeletedRows;
use crate::reader::{DeleteSource, Deletes};
use async_trait::async_trait;

/// Every split deletes the rows `deleted` lists; each load counts one delete file.
#[derive(Debug)]
struct FixedDeletes(Arc<DeletedRows>);

impl TableAdapter for FixedDeletes {
    fn deletes(&self, _split: &FileSplit) -> Result<Option<Box<dyn DeleteSource>>> {
        Ok(Some(Box::new(FixedDeleteSource(Arc::clone(&self.0)))))
    }
}

#[derive(Debug)]
struct FixedDeleteSource(Arc<DeletedRows>);

#[async_trait]
impl DeleteSource for FixedDeleteSource {
    async fn load(self: Box<Self>, context: &SplitContext) -> Result<Deletes> {
        context.metrics.delete_files_loaded.add(1);
        Ok(Deletes {
            positions: Some(self.0),
            stages: vec![],
        })
    }
}

/// Every 10th row deleted, at positions 7, 17, 27, … of 20 000.
fn every_tenth_deleted() -> Arc<FixedDeletes> {
    Arc::new(FixedDeletes(Arc::new(DeletedRows {
        by_deletion_vector: (0..20_000u64).filter(|p| p % 10 == 7).collect(),
        ..Default::default()
    })))
}

/// Rows deleted by position at scattered positions, and a dynamic filter that runs inside
/// the decoder (a one-column conjunct no interval describes): the decoder yields only the
/// rows the filter keeps, so the deletes must be a row selection, not a mask that assumes
/// every row comes out.
#[tokio::test]
async fn scattered_deletes_under_a_decoder_dynamic_filter_keep_their_positions() {
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{binary, col, lit};
    let dir = tempfile::tempdir().unwrap();
    let size = write_c0(dir.path());
    let schema = Schema::new(vec![
        Field::new("c0", DataType::Int64, true),
        Field::new("p", DataType::Int32, true),
    ]);
    let modulo = binary(
        col("c0", &schema).unwrap(),
        Operator::Modulo,
        lit(3i64),
        &schema,
    );
    let multiple_of_3 = binary(modulo.unwrap(), Operator::Eq, lit(0i64), &schema).unwrap();
    let (mut source, dynamic, _) = dynamic_filter_source_with(dir.path(), every_tenth_deleted());
    dynamic.update(multiple_of_3).unwrap();
    let split = partition_1_split(size);
    assert!(source.add_split(split).await.unwrap());
    let mut rows = 0;
    while let Some(batch) = source.next().await.unwrap() {
        rows += batch.num_rows();
    }
    let expected = (0..20_000i64)
        .filter(|i| i % 10 != 7 && (i % 20) % 3 == 0)
        .count();
    assert_eq!(rows, expected);
}

/// Deletes are loaded after pruning: a split that statistics prune loads none of its delete
/// files; one left with rows to read loads them, and its deleted rows are not returned.
#[tokio::test]
async fn a_split_pruned_by_statistics_loads_no_delete_file() {
    let dir = tempfile::tempdir().unwrap();
    let size = write_c0_sorted(dir.path());
    let (mut source, dynamic, metrics) =
        dynamic_filter_source_with(dir.path(), every_tenth_deleted());
    // c0 is 0..20 000: statistics prune every row group.
    dynamic.update(c0_above(50_000)).unwrap();
    assert!(!source.add_split(partition_1_split(size)).await.unwrap());
    assert_eq!(metrics.splits_pruned_statistics.value(), 1);
    assert_eq!(metrics.delete_files_loaded.value(), 0);
    // 19 990..20 000 survive; 19 997 is deleted.
    dynamic.update(c0_above(19_989)).unwrap();
    assert!(source.add_split(partition_1_split(size)).await.unwrap());
    let mut rows = vec![];
    while let Some(batch) = source.next().await.unwrap() {
        rows.extend(
            batch
                .column(0)
                .as_primitive::<Int64Type>()
                .values()
                .iter()
                .copied(),
        );
    }
    assert_eq!(metrics.delete_files_loaded.value(), 1);
    let expected: Vec<i64> = (19_990..20_000).filter(|v| v % 10 != 7).collect();
    assert_eq!(rows, expected);
}
