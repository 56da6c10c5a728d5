//! What the server learns from the jobs that ran, and keeps over restarts and history
//! purges in the store's `meta` (never in the job rows):
//!
//! - **the run-time predictor** (`gpusched_core::predict`), fed every job that ends
//!   `succeeded` or `failed` with the time it ran over all its runs, from the features
//!   known at its submission (user, queue, name, command, GPUs, GPU model, walltime,
//!   submit time of day and week). A job the user gave no walltime gets the prediction as
//!   its estimate when it enters the queue (sjf, srtf, srsf and the start-time estimate
//!   use it; `backfill` does not: a job needs a walltime to backfill). Under `blend` every
//!   job also gets the predictor's belief of its run time (a distribution), which blend
//!   orders by. The prediction is
//!   fixed from then on (a restart predicts it again from what was learnt); a job that
//!   outlives it is never stopped for it, its estimate doubles (the core's rule). A job
//!   that enters the queue before any job has ended has no estimate (whether it may
//!   follow a running job is judged on the prediction at that time, `follow.rs`, which
//!   does not become its estimate).
//!   Stored under `predictor` in the round a job ends, unless it was written less than
//!   five seconds before; then the first round after that writes it (a tick at the
//!   latest). So a busy server writes it every five seconds at most, and a crash loses
//!   at most the last five seconds' ends. It keeps at most `MAX_PREDICTOR_KEYS` keys
//!   (one-off names forgotten first), so its memory and its write stay bounded however
//!   many distinct names the cluster has seen; a task of an array learns and predicts
//!   as its array (its name without the index).
//! - **attained service**: what each live job had run before its current run, stored
//!   under `attained` in the round it was requeued, so a preempted job keeps its service
//!   (tiresias' queue, srtf's remaining time) over a restart.
//!
//! Features are names hashed (FNV-1a), not interned: a hash needs no table to store and
//! is the same after a restart.

use std::collections::BTreeMap;

use gpusched_core::predict::{
    Features, Predictor, PredictorConfig, Snapshot, SnapshotGroup, BELIEF_MIN_JOBS,
};
use gpusched_core::PolicyKind;
use gpusched_wire::{JobState, JobView};
use serde::{Deserialize, Serialize};

use super::State;

/// The `meta` keys.
pub const PREDICTOR_KEY: &str = "predictor";
pub const ATTAINED_KEY: &str = "attained";
/// The predictor is written at most this often (ms).
const WRITE_EVERY_MS: u64 = 5000;
/// The most keys the predictor keeps (about 0.5 KiB each in memory, less stored):
/// one-off job names would otherwise grow it, its memory and its write, with every job
/// (`Predictor::bound_keys` forgets the rarest name keys first).
pub const MAX_PREDICTOR_KEYS: usize = 4096;

#[derive(Default)]
pub(super) struct Learnt {
    predictor: Predictor,
    /// Run times per (user and name, GPU model): how fast jobs of a kind run on each
    /// model (`speed.rs`), stored with the predictor.
    pub(super) speeds: gpusched_core::speed::Learned,
    /// Seconds each live job had run before its current run (requeued jobs only).
    prior: BTreeMap<u64, f64>,
    /// Each waiting or running job's prediction (reference seconds on a cluster of
    /// several models, `speed.rs`) and the key it came from.
    pub(super) predicted: BTreeMap<u64, (f64, &'static str)>,
    predictor_dirty: bool,
    attained_dirty: bool,
    last_write_ms: Option<u64>,
    /// Jobs the predictor learnt from since this server started, and the count at which
    /// the waiting jobs without a belief are next given one ([`State::refresh_beliefs`]).
    observed: u64,
    next_refresh: u64,
}

/// The stored form of the predictor (version 1), with the speeds learnt per GPU model
/// (`speed.rs`; absent in what older servers wrote).
#[derive(Serialize, Deserialize)]
struct StoredPredictor {
    version: u32,
    quantile: f64,
    min_samples: u32,
    groups: Vec<StoredGroup>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    speeds: Vec<(String, String, u32, f64)>,
}

/// A key as stored: (level, key, [(bucket, count)]).
type StoredGroup = (u8, [u64; 4], Vec<(u16, u32)>);

fn fnv(s: &str) -> u64 {
    fnv_on(FNV_START, s.bytes())
}

const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv_on(h: u64, bytes: impl Iterator<Item = u8>) -> u64 {
    bytes.fold(h, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `fnv` of the words joined by NULs, without joining them (features run at every
/// admission and every end).
fn fnv_joined(words: &[String]) -> u64 {
    words.iter().enumerate().fold(FNV_START, |h, (i, w)| {
        let h = if i > 0 {
            fnv_on(h, std::iter::once(0))
        } else {
            h
        };
        fnv_on(h, w.bytes())
    })
}

/// A task's name without its `[index]` suffix (`name` when it has none).
fn without_index(name: &str, index: u32) -> &str {
    name.strip_suffix(']')
        .and_then(|r| r.rsplit_once('['))
        .filter(|(_, digits)| is_decimal_of(digits, index))
        .map_or(name, |(base, _)| base)
}

/// Whether `digits` is `index` as `format!` writes it.
fn is_decimal_of(digits: &str, index: u32) -> bool {
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'))
        && digits.parse() == Ok(index)
}

/// What is known of a job at submission, as the predictor's features. The submit time
/// is moved so its origin is a Monday midnight (the epoch was a Thursday).
pub fn features(v: &JobView) -> Features {
    // A task of an array is the array's kind of job: its name without the `[index]`.
    let name = match v.array_task {
        Some(t) => without_index(&v.name, t.index),
        None => &v.name,
    };
    // `join` is empty only for no words or one empty word.
    let words_empty = v.command.len() <= 1 && v.command.iter().all(String::is_empty);
    Features {
        user: fnv(&v.user),
        queue: fnv(&v.queue),
        name: (!name.is_empty()).then(|| fnv(name)),
        detail: (!words_empty).then(|| fnv_joined(&v.command)),
        gpus: v.gpus,
        gpu_model: v.gpu_model.as_deref().map(fnv),
        walltime: v.walltime_s.map(|w| w as f64),
        submit: v.submit_ms as f64 / 1000.0 + 3.0 * 86_400.0,
    }
}

/// [`State::estimate_for`], from the parts of the state it reads (so the core can ask
/// while the state lends it the queue).
pub(super) fn estimate_for(learnt: &Learnt, policy: PolicyKind, v: &JobView) -> Option<f64> {
    if let Some(w) = v.walltime_s {
        return Some(w as f64);
    }
    if policy.backfills() {
        return None;
    }
    learnt.predictor.predict(&features(v)).map(|p| p.seconds)
}

impl Learnt {
    /// From what the store kept (each `None` when never written). A value this code
    /// cannot read is logged and ignored: learning starts again, nothing else is lost.
    pub fn load(predictor: Option<&str>, attained: Option<&str>) -> Self {
        let mut l = Learnt::default();
        if let Some(text) = predictor {
            match serde_json::from_str::<StoredPredictor>(text)
                .map_err(|e| e.to_string())
                .and_then(|mut s| {
                    l.speeds =
                        gpusched_core::speed::Learned::from_entries(std::mem::take(&mut s.speeds));
                    Predictor::from_snapshot(&Snapshot {
                        quantile: s.quantile,
                        min_samples: s.min_samples,
                        groups: s
                            .groups
                            .into_iter()
                            .map(|(level, key, buckets)| SnapshotGroup {
                                level,
                                key,
                                buckets,
                            })
                            .collect(),
                    })
                }) {
                Ok(p) => l.predictor = p,
                Err(e) => tracing::warn!("the stored run-time predictor is unreadable ({e}); it learns again from the jobs that end from now on"),
            }
        } else {
            l.predictor = Predictor::new(PredictorConfig::default());
        }
        if let Some(text) = attained {
            match serde_json::from_str::<BTreeMap<u64, f64>>(text) {
                Ok(m) => l.prior = m,
                Err(e) => tracing::warn!("the stored attained service is unreadable ({e}); requeued jobs start their service count again"),
            }
        }
        l
    }

    fn predictor_json(&self) -> String {
        let s = self.predictor.snapshot();
        let stored = StoredPredictor {
            version: 1,
            quantile: s.quantile,
            min_samples: s.min_samples,
            groups: s
                .groups
                .into_iter()
                .map(|g| (g.level, g.key, g.buckets))
                .collect(),
            speeds: self
                .speeds
                .entries()
                .map(|(k, m, n, s)| (k.to_string(), m.to_string(), n, s))
                .collect(),
        };
        serde_json::to_string(&stored).unwrap_or_default()
    }
}

impl State {
    /// Loads what was learnt (the store's `meta` values) after the jobs were restored:
    /// each live job gets its attained service back (plus, for a running one, its
    /// current run so far), and waiting jobs without a walltime a prediction.
    pub fn restore_learnt(&mut self, predictor: Option<&str>, attained: Option<&str>) {
        self.learnt = Learnt::load(predictor, attained);
        let now = self.now.ms;
        let live: Vec<(u64, Option<u64>, bool)> = self
            .jobs
            .values()
            .filter(|j| !j.view.state.is_terminal())
            .map(|j| {
                let running = matches!(j.view.state, JobState::Running);
                (j.view.id, j.view.start_ms, running)
            })
            .collect();
        self.learnt
            .prior
            .retain(|id, _| live.iter().any(|l| l.0 == *id));
        for (id, start, running) in live {
            let prior = self.learnt.prior.get(&id).copied().unwrap_or(0.0);
            let current = match (running, start) {
                (true, Some(s)) => now.saturating_sub(s) as f64 / 1000.0,
                _ => 0.0,
            };
            if prior + current > 0.0 {
                self.cluster.restore_attained(id, prior + current);
            }
            if let Some(view) = self.jobs.get(&id).map(|j| j.view.clone()) {
                self.predict_estimate(&view);
            }
        }
    }

    /// A job entered the core's queue: without a walltime, it gets a predicted estimate
    /// (not under `backfill`, where only walltimes count). Under `blend` every job also
    /// gets the predictor's belief of its run time (capped at its walltime, if any),
    /// which `blend` orders by; a job with neither is ordered by attained service. Under
    /// `edf` a job without a walltime gets its belief too.
    pub(super) fn predict_estimate(&mut self, v: &JobView) {
        if self.cfg.policy.backfills() {
            return;
        }
        let f = features(v);
        // Under `edf` a job without a walltime is ranked by its chance of making its
        // deadline (the core's `deadline.rs`), which its belief gives; as in the
        // simulator, a job with a walltime is judged on it.
        let believed = match self.cfg.policy {
            PolicyKind::Blend => true,
            p => p.deadlines() && v.walltime_s.is_none(),
        };
        if believed {
            if let Some(b) = self.learnt.predictor.belief(&f) {
                self.cluster.set_belief(v.id, b);
            }
        }
        if v.walltime_s.is_some() {
            return;
        }
        let Some(p) = self.learnt.predictor.predict(&f) else {
            return;
        };
        // In reference seconds on a cluster of several models (`speed.rs`).
        let secs = self.secs_on_model(v, p.seconds, None);
        self.cluster.set_predicted(v.id, secs);
        self.learnt
            .predicted
            .insert(v.id, (p.seconds, p.level.name()));
    }

    /// Forgets job `id`'s prediction (it left the queue without running: a what-if of
    /// `deadline.rs`).
    pub(super) fn forget_prediction(&mut self, id: u64) {
        self.learnt.predicted.remove(&id);
    }

    /// The estimate a job like `v` would get when it enters the queue: its walltime, else
    /// the prediction (none under `backfill`, as in [`State::predict_estimate`]).
    pub(super) fn estimate_for(&self, v: &JobView) -> Option<f64> {
        estimate_for(&self.learnt, self.cfg.policy, v)
    }

    /// Where a job's estimate came from, for its view: `walltime`, `predicted from
    /// past jobs of the same KEY`, or none.
    pub(super) fn estimate_words(&self, id: u64) -> Option<String> {
        let (secs, predicted) = self.cluster.estimate(id)?;
        if !predicted {
            return None;
        }
        let from = match self.learnt.predicted.get(&id).map(|p| p.1) {
            Some("all") | None => "every past job (too few of its kind yet)".to_string(),
            Some(key) => format!("past jobs of the same {key}"),
        };
        Some(format!(
            "run time predicted {} from {from}",
            short_duration(secs)
        ))
    }

    /// A job ended: the predictor learns how long it ran (over every run), if it ran to
    /// an outcome of its own.
    pub(super) fn learn_from_end(&mut self, id: u64, state: JobState, at_ms: u64) {
        // Its run is charged to its account: the fair-share usage is due (`accounts.rs`).
        self.fair_writes.ended = true;
        let prior = self.learnt.prior.remove(&id);
        self.learnt.predicted.remove(&id);
        if prior.is_some() {
            self.learnt.attained_dirty = true;
        }
        if !matches!(state, JobState::Succeeded | JobState::Failed) {
            return;
        }
        let Some(v) = self.jobs.get(&id).map(|j| &j.view) else {
            return;
        };
        let Some(start) = v.start_ms else {
            return;
        };
        if v.array.is_some() || v.slice.is_some() {
            return;
        }
        let ran = prior.unwrap_or(0.0) + at_ms.saturating_sub(start) as f64 / 1000.0;
        // A run wholly on one model teaches its speed there (a requeued job's earlier
        // runs may have been elsewhere).
        if prior.is_none() {
            self.learn_speed(id, ran);
        }
        let Some(v) = self.jobs.get(&id).map(|j| &j.view) else {
            return;
        };
        let f = features(v);
        // A requeued job's runs may have been on several models: counted as seconds.
        let ran = if prior.is_none() {
            self.in_reference_secs(v, ran)
        } else {
            ran
        };
        self.learnt.predictor.observe(&f, ran);
        self.learnt.predictor.bound_keys(MAX_PREDICTOR_KEYS);
        self.learnt.predictor_dirty = true;
        self.learnt.observed += 1;
        if self.learnt.observed >= self.learnt.next_refresh.max(u64::from(BELIEF_MIN_JOBS)) {
            self.learnt.next_refresh = self.learnt.observed.saturating_mul(2);
            self.refresh_beliefs();
        }
    }

    /// Gives the waiting jobs that got no belief when they were queued (before the
    /// predictor had learnt from enough jobs: a new cluster's first batch) the one it can
    /// give now, with their predicted estimate, under the policies that read beliefs
    /// (`blend`, `edf`). Run once enough jobs have ended and at each doubling since, as the
    /// simulator does, so a first batch is not ranked by attained service alone (or, under
    /// `edf`, in deadline order ahead of every believed job) for good.
    fn refresh_beliefs(&mut self) {
        if !(self.cfg.policy == PolicyKind::Blend || self.cfg.policy.deadlines()) {
            return;
        }
        for id in self.cluster.waiting_unbelieved() {
            let Some(v) = self.jobs.get(&id).map(|j| j.view.clone()) else {
                continue;
            };
            if self.cluster.estimate(id).is_none() {
                // No walltime and no prediction yet: both, as at its enqueue.
                self.predict_estimate(&v);
            } else if self.cfg.policy == PolicyKind::Blend
                || (self.cfg.policy.deadlines() && v.walltime_s.is_none())
            {
                if let Some(b) = self.learnt.predictor.belief(&features(&v)) {
                    self.cluster.set_belief(id, b);
                }
            }
        }
    }

    /// A job's run ended and it waits again: remember the service it attained (the core
    /// keeps it in memory; this keeps it over a restart).
    pub(super) fn remember_attained(&mut self, id: u64) {
        if let Some(a) = self.cluster.attained(id).filter(|&a| a > 0.0) {
            self.learnt.prior.insert(id, a);
            self.learnt.attained_dirty = true;
        }
    }

    /// The `meta` values this round must write (see the module docs for when).
    pub fn take_learnt_writes(&mut self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let now = self.now.ms;
        let l = &mut self.learnt;
        let due = l
            .last_write_ms
            .is_none_or(|t| now.saturating_sub(t) >= WRITE_EVERY_MS);
        if l.predictor_dirty && due {
            out.push((PREDICTOR_KEY, l.predictor_json()));
            l.predictor_dirty = false;
            l.last_write_ms = Some(now);
        }
        if l.attained_dirty {
            out.push((
                ATTAINED_KEY,
                serde_json::to_string(&l.prior).unwrap_or_default(),
            ));
            l.attained_dirty = false;
        }
        out.extend(self.take_fair_usage_write());
        out
    }
}

/// `45s`, `12m`, `3.5h`, `2.0d`: a prediction is rough, so is its wording.
fn short_duration(secs: f64) -> String {
    match secs {
        s if s < 120.0 => format!("{}s", s.round() as u64),
        s if s < 7200.0 => format!("{}m", (s / 60.0).round() as u64),
        s if s < 172_800.0 => format!("{:.1}h", s / 3600.0),
        s => format!("{:.1}d", s / 86_400.0),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn features_hash_what_joining_would_without_joining() {
        for words in [
            vec![],
            vec![""],
            vec!["a"],
            vec!["", ""],
            vec!["python", "train.py", "--lr=1"],
        ] {
            let words: Vec<String> = words.into_iter().map(String::from).collect();
            let joined = words.join("\0");
            assert_eq!(
                (!joined.is_empty()).then(|| fnv(&joined)),
                (!(words.len() <= 1 && words.iter().all(String::is_empty)))
                    .then(|| fnv_joined(&words)),
                "{words:?}"
            );
        }
        for (name, index) in [
            ("sweep[7]", 7),
            ("sweep[07]", 7),
            ("sweep[+7]", 7),
            ("sweep[7]", 8),
            ("sweep", 7),
            ("[0]", 0),
            ("a[1][12]", 12),
            ("a[]", 0),
            ("a[4294967295]", u32::MAX),
        ] {
            let by_format = name.strip_suffix(&format!("[{index}]")).unwrap_or(name);
            assert_eq!(without_index(name, index), by_format, "{name} {index}");
        }
    }
    use super::*;

    #[test]
    fn the_tasks_of_an_array_are_one_kind_of_job() {
        let mut v: JobView = serde_json::from_value(serde_json::json!({
            "id": 12, "user": "alice", "queue": "batch", "gpus": 1, "state": "pending",
            "submit_ms": 0, "command": ["python", "train.py"], "priority": 0,
            "reason": "", "attempt": 1, "max_retries": 0, "name": "sweep", "cwd": "/",
            "gpu_indices": [], "cancel_requested": false
        }))
        .expect("a view");
        let plain = features(&v);
        let task = |i: u32| {
            let mut t = v.clone();
            t.name = format!("sweep[{i}]");
            t.array_task = Some(gpusched_wire::ArrayTask {
                array_id: 9,
                index: i,
            });
            features(&t)
        };
        assert_eq!(task(3), plain);
        assert_eq!(task(4000), plain);
        // A job whose own name ends in brackets keeps it.
        v.name = "sweep[3]".into();
        assert_ne!(features(&v), plain);
    }
}
