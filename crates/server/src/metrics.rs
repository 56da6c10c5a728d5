//! What the server tells Prometheus (`GET /metrics`).
//!
//! Two kinds of series:
//! - **events**, counted where they happen: submissions, starts and ends of jobs, the
//!   wait before a job's first start, the scheduling pass and the store commit. They are
//!   recorded in a [`Metrics`] the state and the actor call into (one line per call site).
//!   What the state records during a round is staged and counted only once the round's
//!   commit succeeded (`settle_round`): a round that fails is undone, so are its counts.
//! - **levels**, computed from the state when scraped (jobs by state and queue, queue use
//!   against quota, nodes and GPUs by state, who holds each GPU, and each GPU's latest
//!   sample under DCGM exporter's names): [`View`] is what the state task hands over,
//!   `sheet.rs` turns it into series after the state task has moved on.
//!
//! Label cardinality is bounded by queues, nodes and GPUs, never by jobs ever run: which
//! job holds a GPU is one info series per held GPU (`gpusched_gpu_job_info`).

mod cluster;
mod dcgm;
mod sheet;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use gpusched_core::JobState as Core;
use gpusched_wire::{JobState, JobView, NodeList, NodeTelemetry};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// Upper bounds of the wait histogram (seconds): a second to a day.
const WAIT_BUCKETS: [f64; 14] = [
    1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0, 43200.0,
    86400.0,
];
/// Upper bounds of the pass and commit histograms (seconds): 100 µs to 5 s.
const FAST_BUCKETS: [f64; 15] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

type StateLabel = Vec<(&'static str, &'static str)>;

/// What becomes of followers, the `event` label of `gpusched_follows_total`.
pub const FOLLOW_EVENTS: [&str; 3] = ["queued", "handed_over", "sent_back"];
type QueueLabel = Vec<(&'static str, String)>;
type WaitHistograms = Family<QueueLabel, Histogram, fn() -> Histogram>;

fn wait_histogram() -> Histogram {
    Histogram::new(WAIT_BUCKETS)
}

/// The server's event counters and histograms. Cheap to clone (one shared record).
#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

struct Inner {
    submitted: Counter,
    started: Counter,
    /// Followers (`state/follow.rs`) by what became of them: `queued` behind a running
    /// job, `handed_over` its GPUs when it ended, `sent_back` to the queue.
    follows: Family<StateLabel, Counter>,
    finished: Family<StateLabel, Counter>,
    /// By queue (a bounded label: queues are configured).
    wait: WaitHistograms,
    pass: Histogram,
    commit: Histogram,
    /// What the current round recorded, counted once its commit succeeds.
    staged: Mutex<Staged>,
    /// The last Xid each GPU reported (node, index) → (its time, its code), for
    /// `DCGM_FI_DEV_XID_ERRORS`: a sample carries only the Xids since the previous one.
    last_xid: Mutex<BTreeMap<(String, u32), (u64, u64)>>,
}

#[derive(Default)]
struct Staged {
    submitted: u64,
    started: u64,
    follows: BTreeMap<&'static str, u64>,
    finished: BTreeMap<JobState, u64>,
    waits: Vec<(String, f64)>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("submitted", &self.0.submitted.get())
            .field("started", &self.0.started.get())
            .finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        let finished = Family::default();
        // Every end state from the start, so a dashboard sees zeros, not gaps.
        for s in JobState::ALL.into_iter().filter(|s| s.is_terminal()) {
            let _ = finished.get_or_create(&vec![("state", s.name())]);
        }
        let follows = Family::default();
        for what in FOLLOW_EVENTS {
            let _ = follows.get_or_create(&vec![("event", what)]);
        }
        Metrics(Arc::new(Inner {
            submitted: Counter::default(),
            started: Counter::default(),
            follows,
            finished,
            wait: Family::new_with_constructor(wait_histogram as fn() -> Histogram),
            pass: Histogram::new(FAST_BUCKETS),
            commit: Histogram::new(FAST_BUCKETS),
            staged: Mutex::default(),
            last_xid: Mutex::default(),
        }))
    }
}

impl Metrics {
    fn staged(&self) -> std::sync::MutexGuard<'_, Staged> {
        self.0.staged.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A job was accepted (counted at the round's commit).
    pub fn submitted(&self) {
        self.staged().submitted += 1;
    }

    /// Job `v` moved from `from` along `path` (the state's `set_state`), at `now_ms`: a
    /// start (its first one also gives the wait since submission) or an end.
    pub fn moved(&self, v: &JobView, from: JobState, path: &[Core], now_ms: u64) {
        let started = from != JobState::Running && path.contains(&Core::Running);
        let mut s = self.staged();
        if started {
            s.started += 1;
            // The wait before the first attempt; a requeued job's later starts would
            // count its earlier runs as waiting.
            if v.attempt == 1 {
                let waited = now_ms.saturating_sub(v.submit_ms) as f64 / 1000.0;
                s.waits.push((v.queue.clone(), waited));
            }
        }
        if v.state.is_terminal() {
            *s.finished.entry(v.state).or_default() += 1;
        }
    }

    /// A follower was queued, handed GPUs, or sent back (one of [`FOLLOW_EVENTS`]).
    pub fn followed(&self, event: &'static str, n: u64) {
        *self.staged().follows.entry(event).or_default() += n;
    }

    /// The round's commit succeeded: what it recorded counts.
    pub fn settle_round(&self) {
        let s = std::mem::take(&mut *self.staged());
        self.0.submitted.inc_by(s.submitted);
        self.0.started.inc_by(s.started);
        for (what, n) in s.follows {
            self.0
                .follows
                .get_or_create(&vec![("event", what)])
                .inc_by(n);
        }
        for (state, n) in s.finished {
            self.0
                .finished
                .get_or_create(&vec![("state", state.name())])
                .inc_by(n);
        }
        for (queue, w) in s.waits {
            self.0
                .wait
                .get_or_create(&vec![("queue", queue)])
                .observe(w);
        }
    }

    /// The round's commit failed and the round is undone: so is what it recorded.
    pub fn discard_round(&self) {
        *self.staged() = Staged::default();
    }

    /// A scheduling pass that began at `began` (None: no pass was due) has ended.
    pub fn pass_took(&self, began: Option<Instant>) {
        if let Some(t) = began {
            self.0.pass.observe(t.elapsed().as_secs_f64());
        }
    }

    /// Times a store commit until dropped.
    pub fn commit_timer(&self) -> CommitTimer<'_> {
        CommitTimer {
            metrics: self,
            began: Instant::now(),
        }
    }

    /// A node's report carried samples: remember each GPU's last Xid.
    pub fn saw_telemetry(&self, node: &str, t: &NodeTelemetry) {
        let mut last = self.0.last_xid.lock().unwrap_or_else(|p| p.into_inner());
        for g in &t.gpus {
            let Some(x) = g.xids.iter().max_by_key(|x| x.at_ms) else {
                continue;
            };
            // An agent sends an Xid again until a report of it is acknowledged: a late
            // copy must not replace a newer one.
            let slot = last.entry((node.to_string(), g.index)).or_insert((0, 0));
            if x.at_ms >= slot.0 {
                *slot = (x.at_ms, x.code);
            }
        }
    }

    fn last_xids(&self) -> BTreeMap<(String, u32), u64> {
        let last = self.0.last_xid.lock().unwrap_or_else(|p| p.into_inner());
        last.iter()
            .map(|(k, &(_, code))| (k.clone(), code))
            .collect()
    }

    /// The event series, registered (shared, not copied) into a scrape's registry.
    fn register(&self, r: &mut Registry) {
        let m = &self.0;
        r.register(
            "gpusched_jobs_submitted",
            "Jobs accepted by the server",
            m.submitted.clone(),
        );
        r.register(
            "gpusched_jobs_started",
            "Job attempts that started running (a requeued job starts again)",
            m.started.clone(),
        );
        r.register(
            "gpusched_follows",
            "Short jobs queued behind a running job of their kind (`queued`), started on its \
             GPUs when it ended (`handed_over`), or sent back to the queue (`sent_back`)",
            m.follows.clone(),
        );
        r.register(
            "gpusched_jobs_finished",
            "Jobs that ended, by end state (a pending job cancelled counts as cancelled)",
            m.finished.clone(),
        );
        r.register_with_unit(
            "gpusched_job_wait",
            "Time from submission to the start of a job's first attempt, by queue",
            Unit::Seconds,
            m.wait.clone(),
        );
        r.register_with_unit(
            "gpusched_schedule_pass",
            "Duration of a scheduling pass (only rounds where one was due)",
            Unit::Seconds,
            m.pass.clone(),
        );
        r.register_with_unit(
            "gpusched_store_commit",
            "Duration of a store transaction, begin to fsync'd commit",
            Unit::Seconds,
            m.commit.clone(),
        );
    }
}

/// Records the time from its creation to its drop as one store commit.
pub struct CommitTimer<'a> {
    metrics: &'a Metrics,
    began: Instant,
}

impl Drop for CommitTimer<'_> {
    fn drop(&mut self) {
        self.metrics
            .0
            .commit
            .observe(self.began.elapsed().as_secs_f64());
    }
}

/// What the state task hands to a scrape: the state's levels at one round.
pub struct View {
    /// Every node as an admin sees it (holders included; `private` decides what of
    /// them is shown).
    pub nodes: NodeList,
    /// Every configured queue, in name order.
    pub queues: Vec<QueueLevel>,
    /// Jobs by queue and state.
    pub jobs: BTreeMap<(String, JobState), u64>,
    /// The server runs with `--private-jobs`: no job ids or users in the series.
    pub private: bool,
    /// The event series, rendered with the levels.
    pub metrics: Metrics,
    /// Every inference service, in name order.
    pub services: Vec<ServiceLevel>,
    /// The power budget, consolidation and its hook (docs/power.md).
    pub power: PowerLevel,
    /// The slowest of the latest checkpoints measured (from the stop asked to the
    /// preempted end), seconds; None before the first (`state/checkpoint_cost.rs`).
    pub checkpoint_slowest_s: Option<f64>,
    /// `rr`'s turn now, seconds (None under another policy).
    pub rr_quantum_s: Option<f64>,
}

/// The power levels `/metrics` shows (`gpusched_power_*`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PowerLevel {
    /// Some power setting is on; without one no `gpusched_power_*` series is shown.
    pub on: bool,
    pub view: gpusched_core::live::PowerView,
    pub idle_nodes: u64,
    pub down_nodes: u64,
    pub idle_node_seconds: f64,
    pub down_node_seconds: f64,
    pub idle_joules: f64,
    pub hook_calls: u64,
    pub hook_failures: u64,
}

/// A service's replicas and load (kube-state-metrics' deployment series, in ours).
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceLevel {
    pub name: String,
    pub version: u32,
    pub desired: u32,
    pub ready: u32,
    pub updated_ready: u32,
    pub failures: u32,
    /// Requests in flight and queued at the gateways heard from lately.
    pub in_flight: u32,
}

/// A queue's GPUs: held now, guaranteed, and the most it may hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueLevel {
    pub name: String,
    pub used: u32,
    pub quota: u32,
    pub max: Option<u32>,
}

/// The two text formats Prometheus reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenMetrics 1.0 text, what Prometheus asks for first.
    OpenMetrics,
    /// Prometheus text 0.0.4, for every other client (curl, older scrapers).
    Text,
}

impl Format {
    /// The format a request's `Accept` header asks for.
    pub fn from_accept(accept: &str) -> Format {
        if accept.contains("application/openmetrics-text") {
            Format::OpenMetrics
        } else {
            Format::Text
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Text => prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        }
    }
}

/// Every series, in `format`.
pub fn render(view: &View, format: Format) -> Result<String, std::fmt::Error> {
    let mut r = Registry::default();
    // Every configured queue's wait histogram, zeros before its first start.
    for q in &view.queues {
        let _ = view
            .metrics
            .0
            .wait
            .get_or_create(&vec![("queue", q.name.clone())]);
    }
    view.metrics.register(&mut r);
    let mut sheet = sheet::Sheet::default();
    cluster::levels(view, &mut sheet);
    dcgm::gpus(&view.nodes, &view.metrics.last_xids(), &mut sheet);
    r.register_collector(Box::new(sheet));
    let mut out = String::new();
    match format {
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, &r)?,
        Format::Text => prometheus_client::encoding::prometheus_text::encode(&mut out, &r)?,
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
