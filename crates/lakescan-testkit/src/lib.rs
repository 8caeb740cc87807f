//! Test support for lakescan: [`S3Server`], a real S3 server (moto) on loopback with armable
//! faults, and [`upload_dir`] to put a local table on it; [`rest_catalog::RestCatalogServer`],
//! an Iceberg REST catalog on loopback over any catalog; [`orc::write_orc`], ORC fixtures
//! written in process.
//!
//! The server is `moto`'s S3 (Python) behind a small WSGI wrapper (`moto.py`, embedded here
//! and run with `python -c`; [`python::interpreter`] finds or makes a Python with moto,
//! so a machine with a bare `python3` needs nothing installed by hand), bound to `127.0.0.1` on a
//! port the kernel chooses. The test that starts it stops it: dropping the [`S3Server`] kills
//! the process, and the process also exits when its standard input closes, so a test binary
//! that dies leaves no server behind. Every request made here has a time limit.

pub mod orc;
pub mod python;
pub mod rest_catalog;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use lakescan_core::api::CountingConnector;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
};

/// The wrapper around moto (see its docstring for the control routes).
const MOTO_SCRIPT: &str = include_str!("moto.py");

/// How long the server may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a control request may take.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(10);

/// The key pair tests use (moto accepts any signature).
pub const ACCESS_KEY_ID: &str = "lakescan-test-key";
/// See [`ACCESS_KEY_ID`].
pub const SECRET_ACCESS_KEY: &str = "lakescan-test-secret";
/// The region tests use.
pub const REGION: &str = "us-east-1";

/// An error of the harness (not of the code under test).
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// A fault the server injects into the next matching requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    kind: &'static str,
    count: u32,
    method: Option<&'static str>,
    path_contains: Option<String>,
    ranged_only: bool,
    secs: f64,
}

impl Fault {
    fn new(kind: &'static str) -> Self {
        Self {
            kind,
            count: 1,
            method: None,
            path_contains: None,
            ranged_only: false,
            secs: 0.0,
        }
    }

    /// An HTTP error answer: 503 (`SlowDown`), 500 (`InternalError`), 429 or 403.
    pub fn status(code: u16) -> Self {
        Self::new(match code {
            503 => "503",
            500 => "500",
            429 => "429",
            _ => "403",
        })
    }

    /// An answer delayed by `secs` (longer than the client's timeout: a stalled request).
    pub fn delay(secs: f64) -> Self {
        Self {
            secs,
            ..Self::new("delay")
        }
    }

    /// The real headers, half the body, then the connection closes.
    pub fn truncate() -> Self {
        Self::new("truncate")
    }

    /// The next `count` matching requests get the fault (1 by default).
    pub fn times(mut self, count: u32) -> Self {
        self.count = count;
        self
    }

    /// Only requests of this method (`GET`, `HEAD`, `PUT`, …); `LIST` is a `GET` of the bucket.
    pub fn on(mut self, method: &'static str) -> Self {
        self.method = Some(method);
        self
    }

    /// Only requests whose path contains `text`.
    pub fn path_contains(mut self, text: impl Into<String>) -> Self {
        self.path_contains = Some(text.into());
        self
    }

    /// Only requests with a `Range` header.
    pub fn ranged(mut self) -> Self {
        self.ranged_only = true;
        self
    }

    fn query(&self) -> String {
        let mut q = format!("kind={}&count={}&secs={}", self.kind, self.count, self.secs);
        if let Some(m) = self.method {
            q.push_str(&format!("&method={m}"));
        }
        if let Some(p) = &self.path_contains {
            q.push_str(&format!("&path_contains={p}"));
        }
        if self.ranged_only {
            q.push_str("&ranged=1");
        }
        q
    }
}

/// What a server answered, as counted by it (every attempt, retries included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Requests {
    /// GETs of objects (ranged or whole).
    pub get: u64,
    /// HEADs.
    pub head: u64,
    /// LISTs (GETs of a bucket).
    pub list: u64,
    /// Bytes of the GET answers (LIST answers included).
    pub get_bytes: u64,
}

impl Requests {
    /// All requests.
    pub fn total(&self) -> u64 {
        self.get + self.head + self.list
    }

    /// What was answered since `before`.
    pub fn since(&self, before: &Requests) -> Requests {
        Requests {
            get: self.get - before.get,
            head: self.head - before.head,
            list: self.list - before.list,
            get_bytes: self.get_bytes - before.get_bytes,
        }
    }
}

/// moto's S3 on `127.0.0.1`, started by a test and stopped when dropped.
#[derive(Debug)]
pub struct S3Server {
    child: Child,
    /// Held open: the server exits when it closes.
    _stdin: Option<ChildStdin>,
    port: u16,
}

impl S3Server {
    /// Starts a server (about half a second); an error says what is missing.
    pub fn start() -> Result<Self, Error> {
        let python = python::interpreter()?;
        let mut child = python
            .command()
            .arg("-c")
            .arg(MOTO_SCRIPT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start {} for the moto S3 server: {e}",
                    python.program.display()
                )
            })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("moto server: no stdout")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(START_TIMEOUT) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the moto S3 server did not start within 30 s".into());
            }
        };
        let port = line
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok());
        let Some(port) = port else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the moto S3 server did not start: {}", line.trim()).into());
        };
        Ok(Self {
            child,
            _stdin: stdin,
            port,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Creates bucket `name`.
    pub fn create_bucket(&self, name: &str) -> Result<(), Error> {
        let (status, body) = self.request("PUT", &format!("/{name}"))?;
        if status != 200 {
            return Err(format!("creating bucket {name}: {status} {body}").into());
        }
        Ok(())
    }

    /// Arms `fault` (replacing the one armed before).
    pub fn arm(&self, fault: &Fault) -> Result<(), Error> {
        self.control("POST", &format!("/_fault?{}", fault.query()))
    }

    /// Disarms the fault.
    pub fn disarm(&self) -> Result<(), Error> {
        self.control("DELETE", "/_fault")
    }

    /// Adds `ms` milliseconds before every S3 answer (a far-away region).
    pub fn set_latency(&self, ms: u64) -> Result<(), Error> {
        self.control("POST", &format!("/_latency?ms={ms}"))
    }

    /// The server's counters as JSON: requests by kind, bytes of GET answers, faults
    /// injected.
    pub fn stats(&self) -> Result<String, Error> {
        let (_, body) = self.request("GET", "/_stats")?;
        Ok(body)
    }

    /// The server's request counters.
    pub fn requests(&self) -> Result<Requests, Error> {
        let json = self.stats()?;
        let number = |key: &str| -> u64 {
            let Some(at) = json.find(&format!("\"{key}\": ")) else {
                return 0;
            };
            json[at + key.len() + 4..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap_or(0)
        };
        Ok(Requests {
            get: number("GET"),
            head: number("HEAD"),
            list: number("LIST"),
            get_bytes: number("bytes"),
        })
    }

    /// The `aws.*` options (key, value) of a client of this server, with a small retry
    /// budget (3 retries, 1 s per request).
    pub fn options(&self) -> Vec<(&'static str, String)> {
        vec![
            ("aws.access_key_id", ACCESS_KEY_ID.to_string()),
            ("aws.secret_access_key", SECRET_ACCESS_KEY.to_string()),
            ("aws.region", REGION.to_string()),
            ("aws.endpoint", self.endpoint()),
            ("aws.allow_http", "true".to_string()),
            ("aws.max_retries", "3".to_string()),
            ("aws.retry_timeout", "20s".to_string()),
            ("aws.timeout", "1s".to_string()),
        ]
    }

    /// [`Self::options`] as the `OPTIONS` of a `CREATE EXTERNAL TABLE`.
    pub fn sql_options(&self) -> String {
        let pairs: Vec<String> = self
            .options()
            .into_iter()
            .map(|(k, v)| format!("'{k}' '{v}'"))
            .collect();
        pairs.join(", ")
    }

    /// [`Self::options`] as the query parameters of an Iceberg catalog URI (`k=v&…`).
    pub fn uri_params(&self) -> String {
        let pairs: Vec<String> = self
            .options()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        pairs.join("&")
    }

    /// A client of `bucket` on this server: 3 retries with short backoffs, 1 s per request,
    /// requests counted for the scans' `requests_retried` (lakescan's `CountingConnector`).
    pub fn builder(&self, bucket: &str) -> AmazonS3Builder {
        let retry = RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(10),
                max_backoff: Duration::from_millis(50),
                base: 2.0,
            },
            max_retries: 3,
            retry_timeout: Duration::from_secs(20),
        };
        AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_virtual_hosted_style_request(false)
            .with_bucket_name(bucket)
            .with_region(REGION)
            .with_access_key_id(ACCESS_KEY_ID)
            .with_secret_access_key(SECRET_ACCESS_KEY)
            .with_retry(retry)
            .with_client_options(
                ClientOptions::new()
                    .with_allow_http(true)
                    .with_timeout(Duration::from_secs(1)),
            )
            .with_http_connector(CountingConnector)
    }

    /// [`Self::builder`], built.
    pub fn store(&self, bucket: &str) -> Result<Arc<dyn ObjectStore>, Error> {
        Ok(Arc::new(self.builder(bucket).build()?))
    }

    fn control(&self, method: &str, path: &str) -> Result<(), Error> {
        let (status, body) = self.request(method, path)?;
        if status != 200 {
            return Err(format!("{method} {path}: {status} {body}").into());
        }
        Ok(())
    }

    /// One plain HTTP/1.0 request; the status and the body.
    fn request(&self, method: &str, path: &str) -> Result<(u16, String), Error> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))?;
        stream.set_read_timeout(Some(CONTROL_TIMEOUT))?;
        stream.set_write_timeout(Some(CONTROL_TIMEOUT))?;
        write!(
            stream,
            "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\n\r\n",
            self.port
        )?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        let status = answer
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{method} {path}: no HTTP answer: {answer}"))?;
        let body = answer
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        Ok((status, body))
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Puts every file under `local` into `store` under `prefix` (keys keep the relative paths);
/// returns how many. Eight uploads at a time.
pub async fn upload_dir(
    store: &Arc<dyn ObjectStore>,
    local: &Path,
    prefix: &str,
) -> Result<usize, Error> {
    let mut files = Vec::new();
    collect_files(local, &mut files)?;
    let count = files.len();
    futures::stream::iter(files)
        .map(|file| {
            let store = Arc::clone(store);
            let key = relative_key(local, &file, prefix);
            async move {
                let bytes = tokio::fs::read(&file).await?;
                store
                    .put(&object_path(&key), PutPayload::from(bytes))
                    .await?;
                Ok::<_, Error>(())
            }
        })
        .buffer_unordered(8)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(count)
}

/// The object path of `key` exactly as written: a file named `k=a%2Fb` (a Hive writer's
/// escaped partition value) is the key `k=a%2Fb`, not `k=a%252Fb`.
pub fn object_path(key: &str) -> ObjectPath {
    ObjectPath::parse(key).unwrap_or_else(|_| ObjectPath::from(key))
}

/// The key of `file` (under `root`) below `prefix`.
pub fn relative_key(root: &Path, file: &Path, prefix: &str) -> String {
    let relative = file.strip_prefix(root).unwrap_or(file);
    let relative = relative.to_string_lossy();
    let prefix = prefix.trim_matches('/');
    if prefix.is_empty() {
        relative.into_owned()
    } else {
        format!("{prefix}/{relative}")
    }
}

/// Every regular file under `dir`, recursively.
pub fn collect_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect_files(&entry.path(), out)?;
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_server_serves_and_faults_and_stops() {
        let server = S3Server::start().unwrap();
        server.create_bucket("kit").unwrap();
        let store = server.store("kit").unwrap();
        let path = ObjectPath::from("a/b.txt");
        store.put(&path, "hello".into()).await.unwrap();
        // Two 503s are retried.
        server.arm(&Fault::status(503).times(2).on("GET")).unwrap();
        let got = store.get(&path).await.unwrap().bytes().await.unwrap();
        assert_eq!(&got[..], b"hello");
        let stats = server.stats().unwrap();
        assert!(stats.contains("\"injected\": 2"), "{stats}");
        let counted = server.requests().unwrap();
        assert_eq!(counted.get, 3, "{stats}");
        assert!(counted.get_bytes >= 5, "{stats}");
        store.list(None).try_collect::<Vec<_>>().await.unwrap();
        assert_eq!(server.requests().unwrap().since(&counted).list, 1);
        // A permanent 403 is an error.
        server.arm(&Fault::status(403).times(100)).unwrap();
        assert!(store.head(&path).await.is_err());
        server.disarm().unwrap();
        let port = server.port;
        drop(server);
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    }
}
