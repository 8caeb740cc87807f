//! [`CountingConnector`]: the HTTP requests an object-store read really sends, retries
//! included, counted for the scan that sent them.
//!
//! object_store retries inside one call (`get_opts` retries a 503, resumes a body cut off
//! halfway with a range request) and reports neither. A client built with this connector
//! counts every HTTP request into the [`Attempts`] of the read in progress: the read runs
//! inside [`Attempts::count`], and the connector finds it in a tokio task-local (object_store
//! sends its requests from the task that polls the call). A read that took `n` requests was
//! retried `n - 1` times. Requests are also told apart by kind: a `HEAD`, a listing (a `GET`
//! of S3's `list-type=2` or Azure's `comp=list`), every other one a read. Stores without the
//! connector count no attempts, so their reads show no retries; lakescan builds its S3 clients with it (`crate::store`), and an
//! application can too (`AmazonS3Builder::with_http_connector(CountingConnector)`).

use std::future::Future;

use async_trait::async_trait;
use datafusion::physical_plan::metrics::Count;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpService, ReqwestConnector,
};
use object_store::{ClientOptions, Result};

tokio::task_local! {
    /// The attempts of the reads the current task is doing, innermost last (a footer read
    /// inside a planning step counts for both).
    static ATTEMPTS: Vec<Attempts>;
}

/// What an HTTP request asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Head,
    List,
    Other,
}

impl Kind {
    fn of(request: &HttpRequest) -> Self {
        if request.method() == http::Method::HEAD {
            return Kind::Head;
        }
        let query = request.uri().query().unwrap_or("");
        let lists = query
            .split('&')
            .any(|kv| kv.starts_with("list-type=") || kv == "comp=list");
        if request.method() == http::Method::GET && lists {
            Kind::List
        } else {
            Kind::Other
        }
    }
}

/// The HTTP requests of one read. Clones share the counts.
#[derive(Debug, Clone, Default)]
pub struct Attempts {
    sent: Count,
    heads: Count,
    lists: Count,
    /// Retries of the single reads ([`single_read`]) inside these attempts.
    retried: Count,
}

/// The requests counted by an [`Attempts`], by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Every request.
    pub sent: usize,
    /// `HEAD` requests.
    pub heads: usize,
    /// Listings.
    pub lists: usize,
    /// Of `sent`, retries of single reads ([`single_read`]).
    pub retried: usize,
}

impl Tally {
    /// The planning metrics of these requests: `requests_planning` (all but the retries of
    /// single reads, which go to `requests_retried` with the scan's other retries),
    /// `requests_list` and `requests_head` (a scan lists and asks for sizes only while it
    /// plans).
    pub fn planning_metrics(&self) -> [(&'static str, usize); 4] {
        [
            ("requests_planning", self.sent.saturating_sub(self.retried)),
            ("requests_retried", self.retried),
            ("requests_list", self.lists),
            ("requests_head", self.heads),
        ]
    }
}

impl Attempts {
    /// Runs `read`, counting the HTTP requests it sends through a [`CountingConnector`]
    /// (into the enclosing reads' attempts too).
    pub async fn count<F: Future>(&self, read: F) -> F::Output {
        let mut counts = ATTEMPTS.try_with(Vec::clone).unwrap_or_default();
        counts.push(self.clone());
        ATTEMPTS.scope(counts, read).await
    }

    fn add(&self, kind: Kind) {
        self.sent.add(1);
        match kind {
            Kind::Head => self.heads.add(1),
            Kind::List => self.lists.add(1),
            Kind::Other => {}
        }
    }

    /// How many requests were sent.
    pub fn sent(&self) -> usize {
        self.sent.value()
    }

    /// The requests by kind.
    pub fn tally(&self) -> Tally {
        Tally {
            sent: self.sent(),
            heads: self.heads.value(),
            lists: self.lists.value(),
            retried: self.retried.value(),
        }
    }

    /// How many of them were retries (every request after the first).
    pub fn retries(&self) -> usize {
        self.sent().saturating_sub(1)
    }
}

/// Runs `read`, one object-store call (a GET, however many HTTP requests its retries take),
/// inside the reads in progress: they count its requests, and its retries as retries
/// ([`Tally::retried`]).
pub async fn single_read<F: Future>(read: F) -> F::Output {
    let one = Attempts::default();
    let output = one.count(read).await;
    let retries = one.retries();
    let _ = ATTEMPTS.try_with(|counts| counts.iter().for_each(|c| c.retried.add(retries)));
    output
}

/// object_store's reqwest connector, counting each request into the current read's
/// [`Attempts`] (see the module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingConnector;

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(CountingService { inner }))
    }
}

#[derive(Debug)]
struct CountingService {
    inner: HttpClient,
}

#[async_trait]
impl HttpService for CountingService {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        // Outside a counted read there is nothing to count into.
        let kind = Kind::of(&request);
        let _ = ATTEMPTS.try_with(|counts| counts.iter().for_each(|c| c.add(kind)));
        self.inner.execute(request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn attempts_count_inside_their_read_only() {
        let attempts = Attempts::default();
        let inner = Attempts::default();
        attempts
            .count(async {
                ATTEMPTS.with(|a| a.iter().for_each(|c| c.add(Kind::Other)));
                ATTEMPTS.with(|a| a.iter().for_each(|c| c.add(Kind::Other)));
                ATTEMPTS.with(|a| a.iter().for_each(|c| c.add(Kind::List)));
                inner
                    .count(async { ATTEMPTS.with(|a| a.iter().for_each(|c| c.add(Kind::Head))) })
                    .await;
            })
            .await;
        assert_eq!((attempts.sent(), attempts.retries()), (4, 3));
        let tally = attempts.tally();
        assert_eq!((tally.lists, tally.heads), (1, 1));
        assert_eq!(inner.sent(), 1, "a nested read counts for both");
        assert_eq!(inner.tally().heads, 1);
        // Outside: no read to count into, and no panic.
        assert!(ATTEMPTS.try_with(|_| ()).is_err());
        assert_eq!(Attempts::default().retries(), 0);
    }

    #[test]
    fn requests_are_told_apart_by_method_and_query() {
        let request = |method: http::Method, uri: &str| {
            http::Request::builder()
                .method(method)
                .uri(uri)
                .body(object_store::client::HttpRequestBody::empty())
                .unwrap()
        };
        let kind = |m, u| Kind::of(&request(m, u));
        assert_eq!(kind(http::Method::HEAD, "http://h/b/k"), Kind::Head);
        assert_eq!(
            kind(http::Method::GET, "http://h/b?list-type=2&prefix=t%2F"),
            Kind::List
        );
        assert_eq!(
            kind(http::Method::GET, "http://h/c?restype=container&comp=list"),
            Kind::List
        );
        assert_eq!(kind(http::Method::GET, "http://h/b/k"), Kind::Other);
        assert_eq!(
            kind(http::Method::PUT, "http://h/b/k?list-type=2"),
            Kind::Other
        );
    }
}
