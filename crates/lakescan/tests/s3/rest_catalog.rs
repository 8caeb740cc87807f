//! A REST catalog on loopback (`lakescan_testkit::rest_catalog`: the specification's read
//! endpoints over the SQLite catalog, as Iceberg Java's tests serve a catalog through
//! `RESTCatalogAdapter`), its warehouse on the S3 server: namespaces, tables, metadata
//! tables and deletes read through it, with a bearer token; a wrong or missing token is a
//! clear error naming the catalog, never showing the token.

use std::collections::HashMap;

use iceberg::{NamespaceIdent, TableIdent};
use lakescan::iceberg::catalog::{connect, register_catalog};
use lakescan_testkit::rest_catalog::RestCatalogServer;

use super::*;

const TOKEN: &str = "lakescan-rest-token";

#[tokio::test]
async fn rest_catalog_over_sqlite_with_the_warehouse_on_s3() {
    bounded(async {
        let (server, dir, metadata) = orders_on_s3().await;
        // The catalog the REST server serves: SQLite, its warehouse on S3.
        let sqlite = format!(
            "sqlite://{}?warehouse=s3://lake/wh&{}",
            dir.path().join("catalog.db").display(),
            server.uri_params()
        );
        let backing = connect("backing", &sqlite, &session().runtime_env())
            .await
            .unwrap();
        let db = NamespaceIdent::new("db".into());
        backing.create_namespace(&db, HashMap::new()).await.unwrap();
        backing
            .register_table(&TableIdent::new(db, "orders".into()), metadata)
            .await
            .unwrap();
        let rest = RestCatalogServer::start(backing, Some(TOKEN.into()))
            .await
            .unwrap();

        let uri = |token: &str| {
            format!(
                "{}?token={token}&warehouse=s3://lake/wh&{}",
                rest.uri(),
                server.uri_params()
            )
        };
        let ctx = session();
        register_catalog(&ctx, "rest", &uri(TOKEN)).await.unwrap();
        let out = rows(&ctx, "SELECT id FROM rest.db.orders ORDER BY id")
            .await
            .unwrap();
        let ids = first_column(&out);
        assert_eq!(ids, ["1", "3", "4", "6"], "the position delete applies");
        let out = rows(
            &ctx,
            r#"SELECT count(*) AS n FROM rest.db."orders$snapshots""#,
        )
        .await
        .unwrap();
        assert!(out.contains("| 2 |"), "{out}");
        let log = rest.log();
        assert!(log.iter().any(|l| l == "GET /v1/config 200"), "{log:?}");
        assert!(
            log.iter()
                .any(|l| l == "GET /v1/namespaces/db/tables/orders 200"),
            "{log:?}"
        );

        // A wrong token, and none: clear errors naming the catalog, without the token.
        for uri in [
            uri("wrong-token"),
            format!("{}?warehouse=s3://lake/wh", rest.uri()),
        ] {
            let ctx = session();
            let err = register_catalog(&ctx, "rest", &uri)
                .await
                .unwrap_err()
                .to_string();
            assert!(err.contains(&rest.uri()), "{err}");
            assert!(
                err.contains("401") || err.contains("NotAuthorized"),
                "{err}"
            );
            assert!(!err.contains("wrong-token"), "{err}");
        }
    })
    .await
}
