//! Requests to the servers: the current one first, a follower's redirect followed to
//! the leader, and the backoff (with what to say) when none can be reached.

use std::time::Duration;

use reqwest::StatusCode;

use super::Shared;

/// Sends a request (built by `build` for a URL) to the current server, following a
/// follower's 307 to the leader with the request rebuilt there (body and join token
/// kept). A server that cannot be reached, or answers 503, is left for the next one
/// of the list at the next try; one that answers is remembered.
pub(super) async fn send(
    sh: &Shared,
    path: &str,
    build: impl Fn(String) -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, reqwest::Error> {
    let mut base = sh.servers.current();
    let mut hops = 0;
    loop {
        let r = match build(format!("{base}{path}")).send().await {
            Ok(r) => r,
            Err(e) => {
                sh.servers.skip();
                return Err(e);
            }
        };
        if r.status() == StatusCode::TEMPORARY_REDIRECT && hops < 4 {
            let to = r
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(gpusched_wire::servers::origin_of);
            if let Some(origin) = to {
                hops += 1;
                base = origin;
                continue;
            }
        }
        if r.status() == StatusCode::SERVICE_UNAVAILABLE {
            sh.servers.skip();
        } else {
            sh.servers.answered(&base);
        }
        return Ok(r);
    }
}

/// Why the server at `server` could not be reached (`chain`: the request's error with its
/// causes, where a refused certificate is named), and for a refused certificate what to
/// give the agent instead.
pub(super) fn unreachable(server: &str, chain: &str, ca_cert: Option<&std::path::Path>) -> String {
    match crate::ca::certificate_advice(server, chain, ca_cert) {
        Some(advice) => format!("cannot reach the server: {advice}; retrying"),
        None => format!("cannot reach the server at {server} ({chain}); retrying"),
    }
}

/// 100 ms doubling to 2 s; logs the first failure of a run of them, then every 10th.
pub(super) struct Backoff {
    delay: Duration,
    failures: u32,
}

impl Backoff {
    pub(super) fn new() -> Self {
        Backoff {
            delay: Duration::from_millis(100),
            failures: 0,
        }
    }
    pub(super) fn reset(&mut self) {
        *self = Backoff::new();
    }
    pub(super) fn note(
        &mut self,
        server: &str,
        e: &reqwest::Error,
        ca_cert: Option<&std::path::Path>,
    ) {
        if self.failures.is_multiple_of(10) {
            let chain = crate::ca::error_chain(e);
            tracing::warn!("{}", unreachable(server, &chain, ca_cert));
        }
        self.failures += 1;
    }
    pub(super) async fn sleep(&mut self) {
        tokio::time::sleep(self.delay).await;
        self.delay = (self.delay * 2).min(Duration::from_secs(2));
    }
}
