//! The routing table: the services the server last sent, their ready endpoints, which
//! service serves each model, and the choice of a replica for a request (the fewest
//! outstanding requests, ties in turn, a replica that just failed a connection left
//! alone for a while).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use gpusched_wire::service::{EndpointSet, ModelConfig, ServeProtocol};
use tokio::sync::watch;

use crate::load::Load;

/// How long a replica whose connection failed gets no new request (passive ejection):
/// long enough to skip a replica that is going away, short enough that one that had a
/// hiccup is back soon.
pub const EJECT_FOR: Duration = Duration::from_secs(5);

/// One ready replica and what this gateway has sent it.
#[derive(Debug)]
pub struct EndpointState {
    pub job: u64,
    pub url: String,
    outstanding: AtomicU32,
    /// Batches at it now (a batcher sends a model's next batch to a replica with room).
    batches: AtomicU32,
    bad_until: Mutex<Option<Instant>>,
}

impl EndpointState {
    fn new(job: u64, url: String) -> Self {
        EndpointState {
            job,
            url,
            outstanding: AtomicU32::new(0),
            batches: AtomicU32::new(0),
            bad_until: Mutex::new(None),
        }
    }

    pub fn outstanding(&self) -> u32 {
        self.outstanding.load(Ordering::Relaxed)
    }

    pub fn batches(&self) -> u32 {
        self.batches.load(Ordering::Relaxed)
    }

    fn is_bad(&self, now: Instant) -> bool {
        self.bad_until
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some_and(|t| t > now)
    }

    /// A connection to it failed: no new request for [`EJECT_FOR`].
    pub fn eject(&self) {
        *self.bad_until.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Instant::now() + EJECT_FOR);
    }
}

/// A request (or a batch) assigned to a replica, counted there until dropped.
#[derive(Debug)]
pub struct Lease {
    pub endpoint: Arc<EndpointState>,
    batch: bool,
}

impl Lease {
    fn new(endpoint: Arc<EndpointState>, batch: bool) -> Self {
        endpoint.outstanding.fetch_add(1, Ordering::AcqRel);
        if batch {
            endpoint.batches.fetch_add(1, Ordering::AcqRel);
        }
        Lease { endpoint, batch }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.endpoint.outstanding.fetch_sub(1, Ordering::AcqRel);
        if self.batch {
            self.endpoint.batches.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// A service as last synced.
#[derive(Debug)]
pub struct Service {
    pub name: String,
    pub protocol: ServeProtocol,
    pub models: Vec<ModelConfig>,
    pub endpoints: Vec<Arc<EndpointState>>,
    pub desired: u32,
    pub load: Arc<Load>,
    rotate: Arc<AtomicUsize>,
}

impl Service {
    pub fn model(&self, name: &str) -> Option<&ModelConfig> {
        self.models.iter().find(|m| m.name == name)
    }

    /// The replica for a new request: the fewest outstanding among those not ejected
    /// (all of them when every one is), ties taken in turn from a rotating start so equal
    /// replicas share the load; `except` (the one that just failed) only when it is the
    /// only one. `batch_slots`: a batch goes only to a replica with fewer batches at it.
    pub fn pick(&self, except: Option<&str>, batch_slots: Option<u32>) -> Option<Lease> {
        let now = Instant::now();
        let n = self.endpoints.len();
        if n == 0 {
            return None;
        }
        let start = self.rotate.fetch_add(1, Ordering::Relaxed);
        let fits = |e: &EndpointState| batch_slots.is_none_or(|s| e.batches() < s);
        // Preference: not the failed one, not ejected; then relax each in turn.
        for relax in 0..3 {
            let mut best: Option<&Arc<EndpointState>> = None;
            for i in 0..n {
                let e = &self.endpoints[(start + i) % n];
                if !fits(e)
                    || (relax < 2 && except == Some(e.url.as_str()))
                    || (relax < 1 && e.is_bad(now))
                {
                    continue;
                }
                if best.is_none_or(|b| e.outstanding() < b.outstanding()) {
                    best = Some(e);
                }
            }
            if let Some(b) = best {
                return Some(Lease::new(b.clone(), batch_slots.is_some()));
            }
        }
        None
    }
}

/// The services as last synced; one immutable snapshot replaced whole at each sync.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub services: HashMap<String, Arc<Service>>,
    /// Model name to the service listing it.
    pub models: HashMap<String, Arc<Service>>,
}

/// The table, its change notifications (held requests and batchers wait on them) and
/// the state that outlives a sync (loads, endpoints' counters, rotations).
#[derive(Debug)]
pub struct Table {
    current: RwLock<Arc<Snapshot>>,
    changed: watch::Sender<u64>,
    synced: std::sync::atomic::AtomicBool,
    loads: Mutex<HashMap<String, Arc<Load>>>,
    kept: Mutex<HashMap<(u64, String), Arc<EndpointState>>>,
    rotations: Mutex<HashMap<String, Arc<AtomicUsize>>>,
}

impl Default for Table {
    fn default() -> Self {
        Table {
            current: RwLock::default(),
            changed: watch::channel(0).0,
            synced: Default::default(),
            loads: Mutex::default(),
            kept: Mutex::default(),
            rotations: Mutex::default(),
        }
    }
}

impl Table {
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn synced(&self) -> bool {
        self.synced.load(Ordering::Acquire)
    }

    /// A receiver that wakes at each change of the table.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// A service's load (created at first use: a request may arrive before a sync).
    pub fn load(&self, service: &str) -> Arc<Load> {
        self.loads
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(service.to_string())
            .or_default()
            .clone()
    }

    /// Every service's load, for the sync and the metrics.
    pub fn loads(&self) -> Vec<(String, Arc<Load>)> {
        let l = self.loads.lock().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<_> = l.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// Replaces the table with the server's answer. A replica still listed keeps its
    /// counters and ejection; one no longer listed gets no new request (those at it
    /// finish); a model listed by two services goes to the first (the server forbids it).
    pub fn apply(&self, set: &EndpointSet) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let mut next_kept = HashMap::new();
        let mut snap = Snapshot::default();
        for s in &set.services {
            let endpoints = s
                .endpoints
                .iter()
                .map(|e| {
                    let key = (e.job, e.url.trim_end_matches('/').to_string());
                    let st = kept
                        .get(&key)
                        .cloned()
                        .unwrap_or_else(|| Arc::new(EndpointState::new(key.0, key.1.clone())));
                    next_kept.insert(key, st.clone());
                    st
                })
                .collect();
            let rotate = self
                .rotations
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(s.name.clone())
                .or_default()
                .clone();
            let svc = Arc::new(Service {
                name: s.name.clone(),
                protocol: s.protocol,
                models: s.models.clone(),
                endpoints,
                desired: s.desired,
                load: self.load(&s.name),
                rotate,
            });
            for m in &s.models {
                snap.models
                    .entry(m.name.clone())
                    .or_insert_with(|| svc.clone());
            }
            snap.services.insert(s.name.clone(), svc);
        }
        *kept = next_kept;
        drop(kept);
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snap);
        self.synced.store(true, Ordering::Release);
        self.changed.send_modify(|v| *v += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusched_wire::service::{Endpoint, ServiceEndpoints};

    fn set(urls: &[&str]) -> EndpointSet {
        EndpointSet {
            services: vec![ServiceEndpoints {
                name: "s".into(),
                protocol: ServeProtocol::Oip,
                models: vec![ModelConfig {
                    name: "m".into(),
                    batching: None,
                }],
                endpoints: urls
                    .iter()
                    .enumerate()
                    .map(|(i, u)| Endpoint {
                        job: i as u64,
                        url: u.to_string(),
                    })
                    .collect(),
                desired: urls.len() as u32,
            }],
            sync_ms: 1000,
        }
    }

    #[test]
    fn the_least_outstanding_is_picked_and_ties_rotate() {
        let t = Table::default();
        t.apply(&set(&["http://a", "http://b", "http://c"]));
        let s = t.snapshot().models["m"].clone();
        let a = s.pick(None, None).unwrap();
        let b = s.pick(None, None).unwrap();
        let c = s.pick(None, None).unwrap();
        let mut got = [&a, &b, &c].map(|l| l.endpoint.url.clone());
        got.sort();
        assert_eq!(got, ["http://a", "http://b", "http://c"]);
        let b_url = b.endpoint.url.clone();
        drop(b);
        assert_eq!(s.pick(None, None).unwrap().endpoint.url, b_url);
    }

    #[test]
    fn an_ejected_or_failed_replica_is_avoided_while_another_exists() {
        let t = Table::default();
        t.apply(&set(&["http://a", "http://b"]));
        let s = t.snapshot().services["s"].clone();
        s.endpoints[0].eject();
        for _ in 0..4 {
            assert_eq!(s.pick(None, None).unwrap().endpoint.url, "http://b");
        }
        assert_eq!(
            s.pick(Some("http://b"), None).unwrap().endpoint.url,
            "http://a",
            "ejected beats the one that just failed"
        );
        // A resync keeps the ejection of a replica still listed.
        t.apply(&set(&["http://a", "http://b"]));
        let s = t.snapshot().services["s"].clone();
        assert_eq!(s.pick(None, None).unwrap().endpoint.url, "http://b");
    }

    #[test]
    fn a_replica_no_longer_listed_gets_nothing_new_and_its_requests_finish() {
        let t = Table::default();
        t.apply(&set(&["http://a", "http://b"]));
        let old = t.snapshot().services["s"].clone();
        let at_a = old.endpoints[0].clone();
        let lease = Lease::new(at_a.clone(), false);
        t.apply(&set(&["http://b"]));
        let s = t.snapshot().services["s"].clone();
        for _ in 0..4 {
            assert_eq!(s.pick(None, None).unwrap().endpoint.url, "http://b");
        }
        assert_eq!(
            at_a.outstanding(),
            1,
            "the request under way is still counted"
        );
        drop(lease);
        assert_eq!(at_a.outstanding(), 0);
    }

    #[test]
    fn a_batch_goes_only_where_there_is_room() {
        let t = Table::default();
        t.apply(&set(&["http://a"]));
        let s = t.snapshot().services["s"].clone();
        let one = s.pick(None, Some(1)).unwrap();
        assert!(s.pick(None, Some(1)).is_none());
        drop(one);
        assert!(s.pick(None, Some(1)).is_some());
    }
}
