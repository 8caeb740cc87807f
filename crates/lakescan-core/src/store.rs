//! [`StoreOptions`]: the object store a table's `LOCATION` names, configured the way
//! `datafusion-cli` users expect.
//!
//! ```sql
//! CREATE EXTERNAL TABLE t STORED AS HIVE LOCATION 's3://bucket/sales/'
//! OPTIONS ('aws.access_key_id' '…', 'aws.secret_access_key' '…', 'aws.region' 'eu-west-1',
//!          'aws.endpoint' 'http://127.0.0.1:9000', 'aws.allow_http' 'true');
//! ```
//!
//! Where a table's store comes from, first match wins:
//!
//! 1. `aws.*` options on the table: an `AmazonS3` client built from the `AWS_*` environment
//!    overridden by the options, registered for the location's bucket (replacing a store
//!    registered before for it);
//! 2. a store the application registered on the session for the location's URL
//!    (`RuntimeEnv::register_object_store`) — `memory://`, a custom `s3://` client, anything;
//! 3. for `s3://`, `s3a://` and `s3n://` locations: an `AmazonS3` client from the `AWS_*`
//!    environment alone, registered for the bucket.
//!
//! An `s3://` store also serves `s3a://` and `s3n://` URLs of the same bucket (Hadoop writers
//! put those in Hive locations and Iceberg metadata; Iceberg Java's `S3FileIO` reads all three).
//!
//! `aws.<key>` takes every key `object_store`'s `AmazonS3ConfigKey` knows (its client keys
//! too: `aws.timeout`, `aws.connect_timeout`), except `bucket`, which the location names;
//! lakescan adds the retry budget: `aws.max_retries` and `aws.retry_timeout`. Any other
//! `aws.*` key is an error. With both keys given the client never asks the instance-metadata
//! service for credentials. The options' values are kept only inside the client: this type's
//! `Debug` shows keys, never values, and errors name keys only.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use datafusion::common::{Result, plan_datafusion_err, plan_err};
use datafusion::execution::object_store::{
    DefaultObjectStoreRegistry, ObjectStoreRegistry, ObjectStoreUrl,
};
use datafusion::execution::runtime_env::RuntimeEnv;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::{ObjectStore, RetryConfig};
use url::Url;

use crate::requests::CountingConnector;

/// The prefix of the options that configure a table's S3 client.
pub const AWS_PREFIX: &str = "aws.";

/// The schemes an S3 bucket is addressed with.
const S3_SCHEMES: [&str; 3] = ["s3", "s3a", "s3n"];

/// lakescan's own `aws.*` keys: the retry budget (object_store's `RetryConfig`).
const RETRY_KEYS: [&str; 2] = ["max_retries", "retry_timeout"];

/// The `aws.*` options of one table (see the module docs).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StoreOptions {
    /// Key (without `aws.`, lower case) → value.
    aws: BTreeMap<String, String>,
}

impl fmt::Debug for StoreOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Values may be secrets: only the keys are shown.
        f.debug_struct("StoreOptions")
            .field("aws", &self.aws.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl StoreOptions {
    /// Takes the `aws.*` keys out of a table's `options`; returns them and the other options.
    /// An unknown `aws.*` key is an error naming it.
    pub fn split(options: &HashMap<String, String>) -> Result<(Self, HashMap<String, String>)> {
        let mut aws = BTreeMap::new();
        let mut rest = HashMap::new();
        for (key, value) in options {
            let lower = key.to_lowercase();
            let Some(bare) = lower.strip_prefix(AWS_PREFIX) else {
                rest.insert(key.clone(), value.clone());
                continue;
            };
            if !RETRY_KEYS.contains(&bare) {
                let known = bare.parse::<AmazonS3ConfigKey>().is_ok();
                if !known || matches!(bare.parse(), Ok(AmazonS3ConfigKey::Bucket)) {
                    return plan_err!(
                        "unknown option '{lower}': aws.* options are object_store's S3 keys \
                         (access_key_id, secret_access_key, session_token, region, endpoint, \
                         allow_http, skip_signature, virtual_hosted_style_request, timeout, \
                         connect_timeout, …) and max_retries, retry_timeout; the bucket comes \
                         from the LOCATION"
                    );
                }
            }
            aws.insert(bare.to_string(), value.clone());
        }
        Ok((Self { aws }, rest))
    }

    /// Whether no `aws.*` option was given.
    pub fn is_empty(&self) -> bool {
        self.aws.is_empty()
    }

    /// Makes sure `runtime` has a store for `location` (see the module docs for the order).
    /// Locations of other schemes need no options and take none.
    pub fn register_for(&self, location: &Url, runtime: &RuntimeEnv) -> Result<()> {
        let scheme = location.scheme();
        if !S3_SCHEMES.contains(&scheme) {
            if !self.is_empty() {
                return plan_err!(
                    "aws.* options configure s3:// locations; '{}' is a {scheme}:// location",
                    without_credentials(location)
                );
            }
            return Ok(());
        }
        let Some(bucket) = location.host_str().filter(|b| !b.is_empty()) else {
            return plan_err!(
                "the location '{}' names no bucket",
                without_credentials(location)
            );
        };
        let registered = S3_SCHEMES
            .iter()
            .filter_map(|scheme| bucket_url(scheme, bucket).ok())
            .find_map(|url| runtime.object_store(&url).ok());
        let store = match registered {
            Some(store) if self.is_empty() => store,
            _ => self.build_s3(bucket)?,
        };
        for scheme in S3_SCHEMES {
            let url = bucket_url(scheme, bucket)?;
            let missing = runtime.object_store(&url).is_err();
            if missing || !self.is_empty() {
                runtime.register_object_store(url.as_ref(), Arc::clone(&store));
            }
        }
        Ok(())
    }

    /// An S3 client for `bucket`: the `AWS_*` environment, then the options.
    pub fn build_s3(&self, bucket: &str) -> Result<Arc<dyn ObjectStore>> {
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        let mut retry = RetryConfig::default();
        let has = |k: &str| self.aws.contains_key(k);
        if has("access_key_id") != has("secret_access_key") {
            return plan_err!("aws.access_key_id and aws.secret_access_key are given together");
        }
        for (key, value) in &self.aws {
            match key.as_str() {
                "max_retries" => {
                    retry.max_retries = value.trim().parse().map_err(|_| {
                        plan_datafusion_err!(
                            "option aws.max_retries must be a count, got '{value}'"
                        )
                    })?
                }
                "retry_timeout" => retry.retry_timeout = parse_duration("retry_timeout", value)?,
                _ => {
                    // `split` checked every other key.
                    let key: AmazonS3ConfigKey = key
                        .parse()
                        .map_err(|_| plan_datafusion_err!("unknown option '{AWS_PREFIX}{key}'"))?;
                    builder = builder.with_config(key, value);
                }
            }
        }
        let builder = builder
            .with_retry(retry)
            .with_http_connector(CountingConnector);
        let store = builder.build().map_err(|e| {
            // object_store's builder errors name keys and URLs, not secret values.
            plan_datafusion_err!("cannot configure the S3 client of bucket '{bucket}': {e}")
        })?;
        Ok(Arc::new(store))
    }
}

/// The object stores of a process that runs other processes' plans (a distributed engine's
/// scheduler or executor): where no `CREATE` registered a table's store, an `s3://` (`s3a://`,
/// `s3n://`) bucket gets a client from this process's `AWS_*` environment on first use, as
/// step 3 of the module docs does for a session. Plans carry no credentials: each process
/// reads its own.
#[derive(Debug, Default)]
pub struct EnvironmentStores {
    inner: DefaultObjectStoreRegistry,
}

impl ObjectStoreRegistry for EnvironmentStores {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.inner.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.inner.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        if let Ok(store) = self.inner.get_store(url) {
            return Ok(store);
        }
        let bucket = url.host_str().filter(|b| !b.is_empty());
        let (true, Some(bucket)) = (S3_SCHEMES.contains(&url.scheme()), bucket) else {
            return self.inner.get_store(url);
        };
        let store = StoreOptions::default().build_s3(bucket)?;
        for scheme in S3_SCHEMES {
            let url = bucket_url(scheme, bucket)?;
            self.inner.register_store(url.as_ref(), Arc::clone(&store));
        }
        Ok(store)
    }
}

/// `scheme://bucket`.
fn bucket_url(scheme: &str, bucket: &str) -> Result<ObjectStoreUrl> {
    ObjectStoreUrl::parse(format!("{scheme}://{bucket}"))
}

/// `location` without a user name or password (`s3://key:secret@bucket/…` would print them).
pub fn without_credentials(location: &Url) -> String {
    let mut shown = location.clone();
    // Both fail only for URLs that cannot have credentials, which then have none to hide.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string()
}

/// A duration: a number of seconds, or a number with `ms`, `s` or `min`.
fn parse_duration(key: &str, value: &str) -> Result<Duration> {
    let text = value.trim();
    let (number, unit) = match text.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let seconds = match (number.parse::<f64>(), unit.trim()) {
        (Ok(n), "ms") => n / 1000.0,
        (Ok(n), "s") => n,
        (Ok(n), "min") => n * 60.0,
        _ => f64::NAN,
    };
    if !seconds.is_finite() || seconds < 0.0 {
        return plan_err!(
            "option aws.{key} must be a duration such as '20s', '500ms' or '2min', got '{value}'"
        );
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A cluster process: an `s3://` bucket no `CREATE` registered gets one client (from the
    /// environment), shared by its `s3a://` and `s3n://` URLs and kept; other schemes are the
    /// registry's as before; a registered store wins.
    #[test]
    fn environment_stores_make_one_client_per_bucket() -> Result<()> {
        let stores = EnvironmentStores::default();
        let url = |u: &str| Url::parse(u).map_err(|e| plan_datafusion_err!("{e}"));
        let first = stores.get_store(&url("s3://lake/t/f.parquet")?)?;
        let again = stores.get_store(&url("s3a://lake/")?)?;
        assert!(Arc::ptr_eq(&first, &again));
        assert!(stores.get_store(&url("file:///")?).is_ok());
        assert!(stores.get_store(&url("memory://elsewhere/")?).is_err());
        let memory: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        stores.register_store(&url("s3://other")?, Arc::clone(&memory));
        assert!(Arc::ptr_eq(
            &stores.get_store(&url("s3://other/x")?)?,
            &memory
        ));
        Ok(())
    }

    #[test]
    fn aws_keys_are_taken_out_and_the_rest_kept() {
        let (store, rest) = StoreOptions::split(&options(&[
            ("AWS.Region", "us-east-1"),
            ("aws.allow_http", "true"),
            ("aws.timeout", "5s"),
            ("aws.max_retries", "3"),
            ("format.split_size", "1024"),
        ]))
        .unwrap();
        assert_eq!(
            store.aws.keys().collect::<Vec<_>>(),
            ["allow_http", "max_retries", "region", "timeout"]
        );
        assert_eq!(rest, options(&[("format.split_size", "1024")]));
    }

    #[test]
    fn unknown_aws_keys_and_the_bucket_are_errors() {
        for key in ["aws.acces_key_id", "aws.bucket", "aws.", "aws.retries"] {
            let err = StoreOptions::split(&options(&[(key, "x")]))
                .unwrap_err()
                .to_string();
            assert!(err.contains(&format!("unknown option '{key}'")), "{err}");
        }
    }

    #[test]
    fn debug_shows_keys_never_values() {
        let (store, _) = StoreOptions::split(&options(&[
            ("aws.access_key_id", "AKIDSECRETVALUE"),
            ("aws.secret_access_key", "VERYSECRET"),
        ]))
        .unwrap();
        let shown = format!("{store:?}");
        assert!(shown.contains("access_key_id"), "{shown}");
        assert!(!shown.contains("SECRET"), "{shown}");
    }

    #[test]
    fn half_a_key_pair_and_bad_budgets_are_errors() {
        let half = StoreOptions::split(&options(&[("aws.access_key_id", "a")]))
            .unwrap()
            .0;
        let err = half.build_s3("b").unwrap_err().to_string();
        assert!(err.contains("given together"), "{err}");
        for (key, value) in [("aws.max_retries", "many"), ("aws.retry_timeout", "soon")] {
            let (o, _) = StoreOptions::split(&options(&[(key, value)])).unwrap();
            let err = o.build_s3("b").unwrap_err().to_string();
            assert!(err.contains(key) && err.contains(value), "{err}");
        }
    }

    #[test]
    fn durations() {
        let d = |v| parse_duration("k", v).unwrap();
        assert_eq!(d("20"), Duration::from_secs(20));
        assert_eq!(d("500ms"), Duration::from_millis(500));
        assert_eq!(d("2min"), Duration::from_secs(120));
        assert_eq!(d("1.5s"), Duration::from_millis(1500));
        assert!(parse_duration("k", "-1s").is_err());
        assert!(parse_duration("k", "1h").is_err());
    }

    #[test]
    fn s3_stores_are_registered_for_all_three_schemes_and_a_registered_one_is_kept() {
        let runtime = RuntimeEnv::default();
        let location = Url::parse("s3://lake/t/").unwrap();
        let mine: Arc<dyn ObjectStore> = Arc::new(object_store::memory::InMemory::new());
        runtime.register_object_store(&Url::parse("s3://lake").unwrap(), Arc::clone(&mine));
        StoreOptions::default()
            .register_for(&location, &runtime)
            .unwrap();
        for scheme in S3_SCHEMES {
            let got = runtime
                .object_store(bucket_url(scheme, "lake").unwrap())
                .unwrap();
            assert!(Arc::ptr_eq(&got, &mine), "{scheme}");
        }
        // Options replace it with a client of their own.
        let (o, _) = StoreOptions::split(&options(&[
            ("aws.access_key_id", "k"),
            ("aws.secret_access_key", "s"),
            ("aws.region", "us-east-1"),
        ]))
        .unwrap();
        o.register_for(&location, &runtime).unwrap();
        let got = runtime
            .object_store(bucket_url("s3", "lake").unwrap())
            .unwrap();
        assert!(!Arc::ptr_eq(&got, &mine));
        assert!(got.to_string().contains("AmazonS3"), "{got}");
    }

    #[test]
    fn aws_options_on_other_schemes_are_errors() {
        let (o, _) = StoreOptions::split(&options(&[("aws.region", "x")])).unwrap();
        let runtime = RuntimeEnv::default();
        let url = Url::parse("memory://x/t/").unwrap();
        let err = o.register_for(&url, &runtime).unwrap_err().to_string();
        assert!(err.contains("memory:// location"), "{err}");
        StoreOptions::default()
            .register_for(&url, &runtime)
            .unwrap();
    }

    #[test]
    fn credentials_in_a_url_are_not_shown() {
        let url = Url::parse("s3://key:secret@bucket/t/").unwrap();
        assert_eq!(without_credentials(&url), "s3://bucket/t/");
    }
}
