//! [`RestCatalogServer`]: the read endpoints of the Iceberg REST catalog specification over
//! any `iceberg::Catalog` (the tests' SQLite catalog), on `127.0.0.1`, as Iceberg Java's
//! tests serve a catalog through `RESTCatalogAdapter`.
//!
//! | request                                   | answer                                        |
//! |-------------------------------------------|-----------------------------------------------|
//! | `GET /v1/config`                          | `{"defaults": {}, "overrides": {}}`           |
//! | `GET /v1/namespaces[?parent=…]`           | `{"namespaces": [[…], …]}`                    |
//! | `GET`/`HEAD /v1/namespaces/{ns}`          | `{"namespace": […], "properties": {…}}` / 204 |
//! | `GET /v1/namespaces/{ns}/tables`          | `{"identifiers": [{"namespace": […], "name": …}]}` |
//! | `GET`/`HEAD /v1/namespaces/{ns}/tables/{t}` | `{"metadata-location": …, "metadata": {…}, "config": {}}` / 204 |
//! | anything else                             | 400 with the specification's error model      |
//!
//! Multi-level namespaces are joined with U+001F (`%1F`), as the specification and the
//! `iceberg-catalog-rest` client write them. With a token, every request must carry
//! `Authorization: Bearer <token>`: a missing or wrong one gets 401 (`NotAuthorizedException`).
//! A missing namespace or table gets 404 (`NoSuchNamespaceException`, `NoSuchTableException`).
//!
//! The server is a loop over one listener bound to port 0 (the kernel's choice), stopped when
//! the [`RestCatalogServer`] drops; each connection is one request (`Connection: close`),
//! read with a size limit and a time limit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use iceberg::{Catalog, ErrorKind, NamespaceIdent, TableIdent};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::Error;

/// The largest request read (request line and headers; the read endpoints have no body).
const MAX_REQUEST: usize = 64 * 1024;

/// How long a connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A REST catalog on `127.0.0.1` serving `catalog`, stopped when dropped.
#[derive(Debug)]
pub struct RestCatalogServer {
    port: u16,
    task: tokio::task::JoinHandle<()>,
    log: Arc<Mutex<Vec<String>>>,
}

impl RestCatalogServer {
    /// Serves `catalog`; with `token`, only requests bearing it.
    pub async fn start(catalog: Arc<dyn Catalog>, token: Option<String>) -> Result<Self, Error> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let served = Arc::clone(&log);
        let task = tokio::spawn(async move {
            // Until dropped (the task is aborted); a failed accept (a full file table) is
            // tried again after a pause.
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let (catalog, token, log) =
                    (Arc::clone(&catalog), token.clone(), Arc::clone(&served));
                tokio::spawn(async move {
                    let _ = serve(stream, &*catalog, token.as_deref(), &log).await;
                });
            }
        });
        Ok(Self { port, task, log })
    }

    /// `http://127.0.0.1:PORT`, the catalog's URI.
    pub fn uri(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests answered so far, as `METHOD path status`.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for RestCatalogServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One HTTP request as the server reads it.
struct Request {
    method: String,
    path: String,
    query: HashMap<String, String>,
    authorization: Option<String>,
}

/// Reads one request from `stream`, answers it and closes the connection.
async fn serve(
    mut stream: TcpStream,
    catalog: &dyn Catalog,
    token: Option<&str>,
    log: &Mutex<Vec<String>>,
) -> Result<(), Error> {
    let request = tokio::time::timeout(READ_TIMEOUT, read_request(&mut stream))
        .await
        .map_err(|_| "the client sent no request in time")??;
    let (status, body) = match authorized(&request, token) {
        true => answer(&request, catalog).await,
        false => error(
            401,
            "NotAuthorizedException",
            "missing or wrong bearer token",
        ),
    };
    if let Ok(mut log) = log.lock() {
        log.push(format!("{} {} {status}", request.method, request.path));
    }
    let reason = match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        _ => "Internal Server Error",
    };
    let body = match (status, request.method.as_str()) {
        (204, _) | (_, "HEAD") => String::new(),
        _ => body.to_string(),
    };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await?;
    Ok(())
}

/// The request line and headers of the request on `stream`.
async fn read_request(stream: &mut TcpStream) -> Result<Request, Error> {
    let mut buffer = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_REQUEST {
            return Err("request headers too long".into());
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err("connection closed before the request ended".into());
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_string();
    let target = request_line.next().unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let query = query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decoded(k), decoded(v))
        })
        .collect();
    let authorization = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.trim().to_string());
    Ok(Request {
        method,
        path: path.to_string(),
        query,
        authorization,
    })
}

fn decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

fn authorized(request: &Request, token: Option<&str>) -> bool {
    match token {
        None => true,
        Some(token) => request.authorization.as_deref() == Some(&format!("Bearer {token}")),
    }
}

/// The specification's error model with HTTP `status`.
fn error(status: u16, kind: &str, message: &str) -> (u16, Value) {
    let body = json!({"error": {"message": message, "type": kind, "code": status}});
    (status, body)
}

/// The catalog's error as the specification's.
fn catalog_error(e: iceberg::Error) -> (u16, Value) {
    match e.kind() {
        ErrorKind::NamespaceNotFound => error(404, "NoSuchNamespaceException", &e.to_string()),
        ErrorKind::TableNotFound => error(404, "NoSuchTableException", &e.to_string()),
        _ => error(500, "ServerError", &e.to_string()),
    }
}

fn namespace_of(segment: &str) -> Result<NamespaceIdent, (u16, Value)> {
    let levels = decoded(segment)
        .split('\u{1f}')
        .map(str::to_string)
        .collect();
    NamespaceIdent::from_vec(levels).map_err(|e| error(400, "BadRequestException", &e.to_string()))
}

/// The answer to an authorized request.
async fn answer(request: &Request, catalog: &dyn Catalog) -> (u16, Value) {
    let segments: Vec<&str> = request.path.trim_matches('/').split('/').collect();
    let result = match (request.method.as_str(), segments.as_slice()) {
        ("GET", ["v1", "config"]) => Ok((200, json!({"defaults": {}, "overrides": {}}))),
        ("GET", ["v1", "namespaces"]) => list_namespaces(request, catalog).await,
        (method @ ("GET" | "HEAD"), ["v1", "namespaces", ns]) => {
            namespace(method, ns, catalog).await
        }
        ("GET", ["v1", "namespaces", ns, "tables"]) => list_tables(ns, catalog).await,
        (method @ ("GET" | "HEAD"), ["v1", "namespaces", ns, "tables", table]) => {
            load_table(method, ns, table, catalog).await
        }
        _ => Err(error(
            400,
            "BadRequestException",
            &format!("no route for {} {}", request.method, request.path),
        )),
    };
    result.unwrap_or_else(|e| e)
}

type Answer = Result<(u16, Value), (u16, Value)>;

async fn list_namespaces(request: &Request, catalog: &dyn Catalog) -> Answer {
    let parent = match request.query.get("parent") {
        Some(parent) => Some(namespace_of(parent)?),
        None => None,
    };
    let namespaces = catalog
        .list_namespaces(parent.as_ref())
        .await
        .map_err(catalog_error)?;
    let names: Vec<Value> = namespaces.into_iter().map(|n| json!(n.inner())).collect();
    Ok((200, json!({ "namespaces": names })))
}

async fn namespace(method: &str, ns: &str, catalog: &dyn Catalog) -> Answer {
    let ident = namespace_of(ns)?;
    let found = catalog.get_namespace(&ident).await.map_err(catalog_error)?;
    match method {
        "HEAD" => Ok((204, Value::Null)),
        _ => Ok((
            200,
            json!({"namespace": ident.inner(), "properties": found.properties()}),
        )),
    }
}

async fn list_tables(ns: &str, catalog: &dyn Catalog) -> Answer {
    let ident = namespace_of(ns)?;
    let tables = catalog.list_tables(&ident).await.map_err(catalog_error)?;
    let identifiers: Vec<Value> = tables
        .into_iter()
        .map(|t| json!({"namespace": t.namespace().clone().inner(), "name": t.name()}))
        .collect();
    Ok((200, json!({ "identifiers": identifiers })))
}

async fn load_table(method: &str, ns: &str, table: &str, catalog: &dyn Catalog) -> Answer {
    let ident = TableIdent::new(namespace_of(ns)?, decoded(table));
    let loaded = catalog.load_table(&ident).await.map_err(catalog_error)?;
    if method == "HEAD" {
        return Ok((204, Value::Null));
    }
    let metadata = serde_json::to_value(loaded.metadata())
        .map_err(|e| error(500, "ServerError", &e.to_string()))?;
    Ok((
        200,
        json!({
            "metadata-location": loaded.metadata_location(),
            "metadata": metadata,
            "config": {},
        }),
    ))
}
