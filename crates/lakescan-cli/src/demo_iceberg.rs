//! The Iceberg part of `lakescan demo`: writes a small Iceberg table with lakescan's table
//! writer (two data files, then a position delete, an equality delete and a deletion
//! vector), registers it in an embedded SQLite catalog and queries it as `ice.db.orders`.
//! With `--s3`, again with the table and the catalog's warehouse on the demo's S3 server.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, StringArray};
use datafusion::error::DataFusionError;
use iceberg::spec::{NestedField, PrimitiveType, Schema, Type};
use iceberg::{NamespaceIdent, TableIdent};
use lakescan::iceberg::catalog::{connect, register_catalog, shown_uri};
use lakescan_iceberg_writer::TableWriter;
use lakescan_testkit::{S3Server, upload_dir};

use crate::demo_query::{DemoQuery, run_query};
use crate::error::{CliError, CliResult};
use crate::exec::new_context;

/// Customers of the demo orders; `globex` is deleted by an equality delete.
const CUSTOMERS: [&str; 4] = ["acme", "initech", "globex", "umbrella"];
/// Orders per data file.
const ORDERS_PER_FILE: i64 = 500;

fn iceberg_error(e: iceberg::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// The order rows `first..=last` as Iceberg columns (name, field id, values).
fn orders(first: i64, last: i64) -> Vec<(&'static str, i32, ArrayRef)> {
    let ids: Vec<i64> = (first..=last).collect();
    let customers: Vec<&str> = ids.iter().map(|i| CUSTOMERS[(*i % 4) as usize]).collect();
    let amounts: Vec<f64> = ids.iter().map(|i| (*i % 97) as f64 * 1.5).collect();
    vec![
        ("order_id", 1, Arc::new(Int64Array::from(ids)) as ArrayRef),
        (
            "customer",
            2,
            Arc::new(StringArray::from(customers)) as ArrayRef,
        ),
        (
            "amount",
            3,
            Arc::new(Float64Array::from(amounts)) as ArrayRef,
        ),
    ]
}

/// The bucket of the table on S3 and its catalog's warehouse there.
const BUCKET: &str = "demo-iceberg";

/// Writes the table into `table_dir` (replacing an earlier one), recording `location` as its
/// location when given; returns the path of its metadata file as recorded.
async fn write_table(table_dir: &Path, location: Option<&str>) -> CliResult<String> {
    if table_dir.exists() {
        std::fs::remove_dir_all(table_dir)?;
    }
    let schema = Schema::builder()
        .with_fields(vec![
            Arc::new(NestedField::required(
                1,
                "order_id",
                Type::Primitive(PrimitiveType::Long),
            )),
            Arc::new(NestedField::optional(
                2,
                "customer",
                Type::Primitive(PrimitiveType::String),
            )),
            Arc::new(NestedField::optional(
                3,
                "amount",
                Type::Primitive(PrimitiveType::Double),
            )),
        ])
        .build()
        .map_err(iceberg_error)?;
    let mut table = TableWriter::new(table_dir, schema)?;
    if let Some(location) = location {
        table = table.with_location(location);
    }
    let first = table.data_file(orders(1, ORDERS_PER_FILE))?;
    let second = table.data_file(orders(ORDERS_PER_FILE + 1, 2 * ORDERS_PER_FILE))?;
    let (first_path, second_path) = (
        first.file_path().to_string(),
        second.file_path().to_string(),
    );
    table.commit(vec![first, second], vec![]).await?;
    // Orders 1..=10 (positions 0..10 of the first file) and every order of globex.
    let rows: Vec<(&str, i64)> = (0..10).map(|pos| (first_path.as_str(), pos)).collect();
    let positions = table.position_delete_file(rows)?;
    let globex: ArrayRef = Arc::new(StringArray::from(vec!["globex"]));
    let equality = table.equality_delete_file(vec![2], vec![("customer", 2, globex)])?;
    table.commit(vec![], vec![positions, equality]).await?;
    // Orders 501..=505: a deletion vector of the second file.
    let vector = table.deletion_vector(&second_path, &second_path, &[0, 1, 2, 3, 4])?;
    Ok(table.commit(vec![], vec![vector]).await?)
}

/// Writes the table, registers it in a SQLite catalog and runs the Iceberg demo queries;
/// with `s3`, the table and the catalog's warehouse are on that server.
pub async fn run(dir: &Path, s3: Option<&S3Server>) -> CliResult<()> {
    let base = dir.join(if s3.is_some() {
        "iceberg-s3"
    } else {
        "iceberg"
    });
    let table_dir = base.join("db").join("orders");
    let catalog_file = base.join("catalog.db");
    let ctx = new_context()?;
    let (metadata, uri) = match s3 {
        None => (
            write_table(&table_dir, None).await?,
            format!("sqlite://{}", catalog_file.display()),
        ),
        Some(server) => {
            let s3_error = |e: lakescan_testkit::Error| CliError::Invalid(format!("--s3: {e}"));
            let metadata =
                write_table(&table_dir, Some(&format!("s3://{BUCKET}/wh/db/orders"))).await?;
            server.create_bucket(BUCKET).map_err(s3_error)?;
            let store = server.store(BUCKET).map_err(s3_error)?;
            upload_dir(&store, &table_dir, "wh/db/orders")
                .await
                .map_err(|e| CliError::Invalid(format!("--s3: cannot upload the table: {e}")))?;
            let uri = format!(
                "sqlite://{}?warehouse=s3://{BUCKET}/wh&{}",
                catalog_file.display(),
                server.uri_params()
            );
            (metadata, uri)
        }
    };
    if catalog_file.exists() {
        std::fs::remove_file(&catalog_file)?;
    }
    let catalog = connect("ice", &uri, &ctx.runtime_env()).await?;
    let namespace = NamespaceIdent::new("db".into());
    catalog
        .create_namespace(&namespace, Default::default())
        .await
        .map_err(iceberg_error)?;
    catalog
        .register_table(&TableIdent::new(namespace, "orders".into()), metadata)
        .await
        .map_err(iceberg_error)?;
    register_catalog(&ctx, "ice", &uri).await?;
    if s3.is_some() {
        println!("-- Iceberg on S3: the same table in s3://{BUCKET}/wh/db/orders/, its catalog's");
        println!(
            "-- warehouse s3://{BUCKET}/wh (metadata, manifests, deletes and data through one"
        );
        println!(
            "-- S3 client): lakescan --iceberg-catalog 'ice={}'\n",
            shown_uri(&uri)
        );
    } else {
        println!(
            "-- Iceberg: 1000 orders in two data files, then a position delete (orders 1-10),"
        );
        println!(
            "-- an equality delete (customer = 'globex') and a deletion vector (orders 501-505),"
        );
        println!(
            "-- in a SQLite catalog registered as `ice` (lakescan --iceberg-catalog ice={uri})\n"
        );
    }
    let on_s3 = s3.is_some();
    let queries = [
        DemoQuery {
            title: if on_s3 {
                "S3: Iceberg rows left after every delete"
            } else {
                "Iceberg: rows left after every delete"
            },
            sql: "SELECT count(*) AS orders FROM ice.db.orders".into(),
        },
        DemoQuery {
            title: if on_s3 {
                "S3: Iceberg per customer"
            } else {
                "Iceberg: per customer (globex is gone)"
            },
            sql: "SELECT customer, count(*) AS orders, sum(amount) AS amount FROM ice.db.orders \
                  GROUP BY customer ORDER BY customer"
                .into(),
        },
    ];
    for query in &queries {
        run_query(&ctx, query).await?;
    }
    Ok(())
}
