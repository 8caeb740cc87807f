//! [`CountingConnector`]: the HTTP requests an object-store read really sends, retries
//! included, counted for the scan that sent them.
//!
//! object_store retries inside one call (`get_opts` retries a 503, resumes a body cut off
//! halfway with a range request) and reports neither. A client built with this connector
//! counts every HTTP request into the [`Attempts`] of the read in progress: the read runs
//! inside [`Attempts::count`], and the connector finds it in a tokio task-local (object_store
//! sends its requests from the task that polls the call). A read that took `n` requests was
//! retried `n - 1` times. Stores without the connector count no attempts, so their reads
//! show no retries; lakescan builds its S3 clients with it (`crate::store`), and an
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
    static ATTEMPTS: Vec<Count>;
}

/// The HTTP requests of one read.
#[derive(Debug, Clone, Default)]
pub struct Attempts(Count);

impl Attempts {
    /// Runs `read`, counting the HTTP requests it sends through a [`CountingConnector`]
    /// (into the enclosing reads' attempts too).
    pub async fn count<F: Future>(&self, read: F) -> F::Output {
        let mut counts = ATTEMPTS.try_with(Vec::clone).unwrap_or_default();
        counts.push(self.0.clone());
        ATTEMPTS.scope(counts, read).await
    }

    /// How many requests were sent.
    pub fn sent(&self) -> usize {
        self.0.value()
    }

    /// How many of them were retries (every request after the first).
    pub fn retries(&self) -> usize {
        self.sent().saturating_sub(1)
    }
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
        // Outside a counted read (listing, planning) there is nothing to count into.
        let _ = ATTEMPTS.try_with(|counts| counts.iter().for_each(|c| c.add(1)));
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
                ATTEMPTS.with(|a| a.iter().for_each(|c| c.add(3)));
                inner
                    .count(async { ATTEMPTS.with(|a| a.iter().for_each(|c| c.add(1))) })
                    .await;
            })
            .await;
        assert_eq!((attempts.sent(), attempts.retries()), (4, 3));
        assert_eq!(inner.sent(), 1, "a nested read counts for both");
        // Outside: no read to count into, and no panic.
        assert!(ATTEMPTS.try_with(|_| ()).is_err());
        assert_eq!(Attempts::default().retries(), 0);
    }
}
