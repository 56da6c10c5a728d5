//! What every request handler shares: the table, the HTTP client to the replicas, the
//! limits, the metrics and the batchers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::metrics::Metrics;
use crate::oip::batcher::Batcher;
use crate::table::Table;

/// The limits on waiting (see the `gateway` command's flags).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Requests waiting in the gateway per service (held and in batch queues).
    pub max_queue: u32,
    /// The longest a request waits for a ready replica, and the longest any request
    /// waits in the gateway.
    pub hold_timeout: Duration,
    /// `Retry-After` seconds on a 503.
    pub retry_after: u64,
}

pub struct Gateway {
    pub table: Arc<Table>,
    /// To the replicas: no redirects (a replica's answer goes back as it is), pooled
    /// connections, no overall timeout (a stream may last minutes).
    pub http: reqwest::Client,
    pub limits: Limits,
    pub metrics: Metrics,
    /// One batcher per batched model, started at its first request.
    pub batchers: Mutex<HashMap<String, Arc<Batcher>>>,
    /// Bumped when a batch ends: a replica has room for another.
    pub room: tokio::sync::watch::Sender<u64>,
}

impl Gateway {
    pub fn new(table: Arc<Table>, limits: Limits) -> Result<Self, crate::GatewayError> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(3))
            .tcp_nodelay(true)
            .pool_max_idle_per_host(256)
            .tls_built_in_root_certs(false)
            .build()
            .map_err(|e| crate::GatewayError::Client(e.to_string()))?;
        Ok(Gateway {
            table,
            http,
            limits,
            metrics: Metrics::default(),
            batchers: Mutex::default(),
            room: tokio::sync::watch::channel(0).0,
        })
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        // The batchers' tasks hold the gateway weakly; stop them with it.
        for b in self
            .batchers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            b.stop();
        }
    }
}
