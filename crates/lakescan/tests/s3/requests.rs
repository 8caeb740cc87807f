//! Every request a query sends shows in its metrics: planning (`requests_planning`), data
//! files (`requests_get`) and delete files (`requests_deletes`) add up to what the S3 server
//! answered, and `requests_retried` counts the retries of their GETs. A small delete file
//! costs one GET, and a Puffin file holding two deletion vectors one GET for both.

use super::*;

/// The value of the metric `name` in a `LakeScanExec` line.
fn metric(scan: &str, name: &str) -> u64 {
    let at = scan
        .find(&format!(" {name}="))
        .unwrap_or_else(|| panic!("no {name} in {scan}"));
    scan[at + name.len() + 2..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

/// An Iceberg table of 3 data files of 4 rows (`id` 0..12) recorded at `location`, written
/// under `dir`: a position-delete file deletes ids 1 and 2 (file 0), one Puffin file holds
/// the deletion vectors of files 1 (id 4) and 2 (ids 9 and 11). Returns its metadata path.
async fn table_with_deletes(dir: &Path, location: &str) -> String {
    use arrow::array::{ArrayRef, Int64Array};
    use iceberg::spec::FormatVersion;

    let mut table = lakescan_iceberg_writer::TableWriter::new(dir, id_schema())
        .unwrap()
        .with_format_version(FormatVersion::V3)
        .unwrap()
        .with_location(location);
    let files: Vec<_> = (0..3)
        .map(|f| {
            let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(f * 4..f * 4 + 4));
            table.data_file(vec![("id", 1, ids)]).unwrap()
        })
        .collect();
    let paths: Vec<String> = files.iter().map(|f| f.file_path().to_string()).collect();
    table.commit(files, vec![]).await.unwrap();
    let positions = table
        .position_delete_file(vec![(paths[0].as_str(), 1), (paths[0].as_str(), 2)])
        .unwrap();
    let mut deletes = vec![positions];
    deletes.extend(
        table
            .deletion_vectors(&[(paths[1].as_str(), &[0]), (paths[2].as_str(), &[1, 3])])
            .unwrap(),
    );
    table.commit(vec![], deletes).await.unwrap()
}

#[tokio::test]
async fn every_request_of_an_iceberg_query_is_counted() {
    bounded(async {
        let server = S3Server::start().unwrap();
        server.create_bucket("lake").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join("ice");
        let metadata = table_with_deletes(&local, "s3://lake/ice").await;
        upload_dir(&server.store("lake").unwrap(), &local, "ice")
            .await
            .unwrap();
        let ctx = session();
        ctx.sql(&format!(
            "CREATE EXTERNAL TABLE t STORED AS ICEBERG LOCATION '{metadata}' OPTIONS ({})",
            server.sql_options()
        ))
        .await
        .unwrap();
        let out = rows(&ctx, "SELECT id FROM t ORDER BY id").await.unwrap();
        let ids = first_column(&out);
        assert_eq!(ids, ["0", "3", "5", "6", "7", "8", "10"]);
        // Each query reads its deletes again (once); a retried GET of the Puffin file, of the
        // manifest list (planning) and of a data file are counted as retries.
        let faults = [
            None,
            Some(Fault::status(503).times(1).path_contains("puffin")),
            Some(Fault::status(503).times(1).path_contains("snap-")),
            Some(Fault::status(503).times(1).path_contains(".parquet")),
        ];
        for fault in faults {
            if let Some(fault) = &fault {
                server.arm(fault).unwrap();
            }
            let before = server.requests().unwrap();
            let plan = rows(&ctx, "EXPLAIN ANALYZE SELECT id FROM t")
                .await
                .unwrap();
            let paid = server.requests().unwrap().since(&before);
            server.disarm().unwrap();
            let scan = scan_line(&plan);
            let counted = metric(scan, "requests_planning")
                + metric(scan, "requests_get")
                + metric(scan, "requests_deletes")
                + metric(scan, "requests_retried");
            assert_eq!(
                counted,
                paid.total(),
                "{scan}\nthe server answered {paid:?}"
            );
            // One GET per small file: three data files, the position-delete file, the
            // Puffin file (both vectors).
            assert_eq!(metric(scan, "requests_get"), 3, "{scan}");
            assert_eq!(metric(scan, "requests_deletes"), 2, "{scan}");
            let retried = u64::from(fault.is_some());
            assert_eq!(metric(scan, "requests_retried"), retried, "{scan}");
            assert_eq!(paid.head, 0, "{scan}");
        }
    })
    .await
}
