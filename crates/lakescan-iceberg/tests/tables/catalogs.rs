//! Iceberg catalogs registered as DataFusion catalogs: `catalog.namespace.table`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::util::pretty::pretty_format_batches;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::prelude::SessionContext;
use iceberg::{NamespaceIdent, TableIdent};
use lakescan_iceberg::catalog::{IcebergCatalogProvider, connect, register_catalog};

use crate::position_deletes::{column, table};

async fn fixture_table() -> (crate::fixture::Fixture, String) {
    let mut t = table();
    let a = t.data_file(vec![(
        "v",
        1,
        Arc::new(Int64Array::from(vec![3, 1, 2])) as ArrayRef,
    )]);
    let metadata = t.commit(vec![a], vec![]).await;
    (t, metadata)
}

async fn rows(ctx: &SessionContext, sql: &str) -> String {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    pretty_format_batches(&batches).unwrap().to_string()
}

/// A SQLite catalog file holding the fixture table as `db.t`, closed; its URI.
async fn sqlite_catalog() -> (crate::fixture::Fixture, String) {
    let (t, metadata) = fixture_table().await;
    let db = t.path().join("catalog.db");
    let uri = format!("sqlite://{}", db.display());
    let catalog = connect("ice", &uri, &RuntimeEnv::default()).await.unwrap();
    let ns = NamespaceIdent::new("db".into());
    catalog.create_namespace(&ns, HashMap::new()).await.unwrap();
    catalog
        .register_table(&TableIdent::new(ns, "t".into()), metadata)
        .await
        .unwrap();
    (t, uri)
}

#[tokio::test]
async fn sqlite_catalog_tables_by_three_part_names() {
    let (_t, uri) = sqlite_catalog().await;

    // A new connection to the same file sees the table.
    let ctx = SessionContext::new();
    register_catalog(&ctx, "ice", &uri).await.unwrap();
    let out = rows(&ctx, "SELECT v FROM ice.db.t ORDER BY v").await;
    assert_eq!(column(&out), ["1", "2", "3"]);
    // The table's metadata tables resolve through the catalog too.
    let out = rows(&ctx, r#"SELECT operation FROM ice.db."t$snapshots""#).await;
    assert_eq!(column(&out), ["append"]);
    let out = rows(&ctx, r#"SELECT record_count FROM ice.db."t$files""#).await;
    assert_eq!(column(&out), ["3"]);
    let err = ctx
        .sql("SELECT * FROM ice.db.nope")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("nope"), "{err}");
}

/// Catalog tables show the metadata columns of the session setting
/// `lakescan.iceberg_metadata_columns` at the time they are loaded.
#[tokio::test]
async fn catalog_tables_take_metadata_columns_from_the_session() {
    let (_t, uri) = sqlite_catalog().await;
    let config = datafusion::prelude::SessionConfig::new()
        .with_option_extension(lakescan_core::api::LakeScanConfig::default());
    let ctx = SessionContext::new_with_config(config);
    register_catalog(&ctx, "ice", &uri).await.unwrap();
    let err = ctx.sql("SELECT _pos FROM ice.db.t").await.unwrap_err();
    assert!(err.to_string().contains("_pos"), "{err}");
    ctx.sql("SET lakescan.iceberg_metadata_columns = '_pos,_spec_id'")
        .await
        .unwrap();
    let out = rows(&ctx, "SELECT v, _pos, _spec_id FROM ice.db.t ORDER BY v").await;
    assert!(out.contains("| 1 | 1    | 0        |"), "{out}");
    assert!(out.contains("| 3 | 0    | 0        |"), "{out}");
    ctx.sql("SET lakescan.iceberg_metadata_columns = '_nope'")
        .await
        .unwrap();
    let err = ctx.sql("SELECT v FROM ice.db.t").await.unwrap_err();
    assert!(
        err.to_string().contains("unknown metadata column '_nope'"),
        "{err}"
    );
}

#[tokio::test]
async fn memory_catalog_and_bad_uris() {
    let (t, metadata) = fixture_table().await;
    let uri = format!("memory://?warehouse={}", t.path().display());
    let catalog = connect("mem", &uri, &RuntimeEnv::default()).await.unwrap();
    let ns = NamespaceIdent::new("ns".into());
    catalog.create_namespace(&ns, HashMap::new()).await.unwrap();
    catalog
        .register_table(&TableIdent::new(ns, "t".into()), metadata)
        .await
        .unwrap();
    let ctx = SessionContext::new();
    let provider =
        IcebergCatalogProvider::try_new(catalog, lakescan_iceberg::schema::StringTypes::Views)
            .await
            .unwrap();
    ctx.register_catalog("mem", Arc::new(provider));
    let out = rows(&ctx, "SELECT count(*) AS n FROM mem.ns.t").await;
    assert_eq!(column(&out), ["3"]);

    let err = connect("x", "ftp://nowhere", &RuntimeEnv::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("sqlite:///path.db"), "{err}");
    let err = connect("x", "sqlite://relative.db", &RuntimeEnv::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("absolute"), "{err}");
    let err = connect("x", "memory://", &RuntimeEnv::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("warehouse"), "{err}");
}
