//! The sync loop: every `sync_ms` (the server's word), the gateway reports its load per
//! service and gets the endpoints back. While no server answers it keeps routing to the
//! endpoints it last had, tries the next server, and says so once (and once when a
//! server answers again), not at every try.

use std::sync::Arc;
use std::time::Duration;

use gpusched_wire::service::{GatewaySync, ServiceLoad};

use crate::table::Table;
use crate::upstream::Upstream;

/// Before the first answer, and the bounds on what a server may ask: a sync more often
/// than 50 ms is load for nothing, one rarer than a minute leaves dead replicas listed.
const FIRST_MS: u64 = 1000;
const MIN_MS: u64 = 50;
const MAX_MS: u64 = 60_000;
/// After a failed sync, the next try comes within this (the servers may be failing
/// over: find the new leader soon).
const RETRY_MS: u64 = 1000;

/// The load of every service in the table, and of any other with requests still under
/// way or answered since the last report (a service deleted meanwhile); its report
/// resets the answers and latencies it counted since the last sync.
pub fn report(table: &Table, gateway: &str) -> GatewaySync {
    let listed = table.snapshot();
    let load = table
        .loads()
        .into_iter()
        .filter_map(|(service, l)| {
            let r = l.report();
            let idle = r.in_flight == 0 && r.queued == 0 && r.answered == 0;
            (listed.services.contains_key(&service) || !idle).then_some(ServiceLoad {
                service,
                in_flight: r.in_flight,
                queued: r.queued,
                p95_ms: r.p95_ms,
                answered: r.answered,
            })
        })
        .collect();
    GatewaySync {
        gateway: gateway.to_string(),
        load,
    }
}

/// Runs until the task is dropped.
pub async fn run(table: Arc<Table>, upstream: Arc<Upstream>, gateway: String) {
    let mut every = FIRST_MS;
    // None: no sync yet; Some(true): the last one worked; Some(false): failing.
    let mut state: Option<bool> = None;
    let mut server_was = String::new();
    loop {
        let body = report(&table, &gateway);
        match upstream.sync(&body).await {
            Ok((server, set)) => {
                every = set.sync_ms.clamp(MIN_MS, MAX_MS);
                table.apply(&set);
                if state != Some(true) || server != server_was {
                    let n: usize = set.services.iter().map(|s| s.endpoints.len()).sum();
                    tracing::info!(
                        "synced with the server at {server}: {} services, {n} ready replicas; \
                         syncing every {every} ms",
                        set.services.len()
                    );
                }
                state = Some(true);
                server_was = server;
            }
            Err(e) => {
                // The answers counted in the lost report are lost with it: the next
                // report covers the next interval only, which the server averages anyway.
                if state != Some(false) {
                    let keeping = if table.synced() {
                        "routing to the endpoints it last sent"
                    } else {
                        "no endpoints yet: inference requests are held, then refused"
                    };
                    tracing::warn!(
                        "gateway sync failed: {e}; {keeping}; retrying the servers {} \
                         (logged again when a server answers)",
                        upstream.shown()
                    );
                }
                state = Some(false);
                tokio::time::sleep(Duration::from_millis(every.min(RETRY_MS))).await;
                continue;
            }
        }
        tokio::time::sleep(Duration::from_millis(every)).await;
    }
}
