//! The jobs of a preemptive policy kept in policy order between passes (`srtf`, `srsf`,
//! `blend` with [`crate::schedule::PreemptMode::Repack`]), so that a contended pass costs
//! the running jobs and the jobs it places, not a sort of every job (issue 31: with a long
//! queue, srtf and srsf without estimates took 74-88 s on Philly 64x8).
//!
//! The sorting pass orders every job by its key, ties by the rank the previous sort gave
//! (its place in that order; a job admitted since ranks after all), and renumbers the
//! ranks in the new order. A waiting job's key does not move while it waits (`srtf`,
//! `srsf`: its remaining time, or estimate less attained service; `blend`: its belief or
//! estimate and attained service; none reads the time), so the waiting jobs keep their
//! order relative to each other from one sort to the next: only the running jobs and the
//! jobs admitted or put back since the last sort can move.
//!
//! So this queue keeps the waiting jobs in a B-tree by (key, label), where a job's label
//! (its [`crate::policy::queue::QueueSlot::tie`]) is ordered as its rank would be, and the
//! few others apart ("moving": running, or admitted or put back since the last pass). A
//! pass that cannot start every waiting job where GPUs are free (the uncontended
//! shortcut, which reads no running job) sorts the moving jobs by (key, label), merges them
//! with the B-tree's order, which is the sort's order, and walks it only as long as a job
//! could still be placed (no GPU left: the rest of the waiting jobs cannot start, and
//! nothing happens to them). The waiting jobs keep their labels, which are already in the
//! new order; each moving job gets a label between those of its waiting neighbours in the
//! new order (all jobs are relabelled, in that order, when a gap is too narrow). Labels
//! are thereby ordered exactly as the renumbered ranks, and each pass decides exactly as
//! the sorting pass (tested in lockstep, `schedule/ranked_tests.rs`).
//!
//! The caller promises what [`crate::Scheduler::keep_ordered_queue`] asks: jobs passed in
//! the order they were enqueued, a waiting job's spec, attained service and remaining
//! time left as they were when it stopped, and `rank` not read (passes no longer
//! renumber it).

use std::collections::{BTreeMap, BTreeSet};

use crate::policy::backfill::total_order_key;
use crate::policy::{PolicyConfig, PolicyKind};
use crate::schedule::{PreemptMode, SchedJob};

/// A policy key as integers ordered as [`f64::total_cmp`] orders the floats.
pub(crate) type Key = (i64, i64);

/// `(a, b)` of [`crate::policy::order::key`] as a [`Key`].
pub(crate) fn key_bits((a, b): (f64, f64)) -> Key {
    (total_order_key(a), total_order_key(b))
}

/// Labels of jobs before the first waiting job are spread above this.
const LOW: i64 = i64::MIN / 4;
/// Labels beyond this are relabelled (far above anything reached).
const HIGH: i64 = i64::MAX / 4;

/// See the module documentation.
#[derive(Clone, Debug)]
pub struct RankedQueue {
    /// Waiting jobs whose key has not moved since they got their label: (key, label) ->
    /// (admission number, GPUs).
    pub(crate) waiting: BTreeMap<(Key, i64), (u64, u32)>,
    /// Running jobs, by admission number.
    pub(crate) running: BTreeSet<u64>,
    /// Waiting jobs admitted or put back since the last pass, by admission number.
    pub(crate) pending: BTreeSet<u64>,
    /// GPUs of the waiting jobs (in `waiting` or `pending`).
    pub(crate) waiting_gpus: u64,
    /// Waiting jobs that ask for no GPU (they may start with every GPU taken).
    pub(crate) zero_gpu: usize,
    /// Above every label given; the next admitted job's label.
    pub(crate) next_label: i64,
    /// The distance between labels given in a row.
    pub(crate) spacing: i64,
    /// The starvation guard's due times of stopped jobs ([`crate::policy::guard`]), as
    /// (due time as a [`Key`] half, admission number); entries of jobs that have run
    /// again since are dropped when reached.
    pub(crate) due: BTreeSet<(i64, u64)>,
}

impl RankedQueue {
    /// A queue for `cfg` under `mode`, if its order can be kept (see the module
    /// documentation); `tiresias` moves waiting jobs between its queues and keeps sorting.
    pub fn new(cfg: &PolicyConfig, mode: PreemptMode) -> Option<Self> {
        let kept = matches!(
            cfg.kind,
            PolicyKind::Srtf | PolicyKind::Srsf | PolicyKind::Blend
        );
        (kept && mode == PreemptMode::Repack && !cfg.sliced()).then(|| Self::with_spacing(1 << 32))
    }

    /// A queue whose labels are `spacing` apart (small in tests, to relabel often).
    pub(crate) fn with_spacing(spacing: i64) -> Self {
        RankedQueue {
            waiting: BTreeMap::new(),
            running: BTreeSet::new(),
            pending: BTreeSet::new(),
            waiting_gpus: 0,
            zero_gpu: 0,
            next_label: 0,
            spacing: spacing.max(1),
            due: BTreeSet::new(),
        }
    }

    /// Counts `job` in (or out of) the waiting jobs' GPUs.
    pub(crate) fn count_waiting(&mut self, job: &SchedJob, add: bool) {
        let gpus = u64::from(job.spec.gpus);
        let zero = usize::from(job.spec.gpus == 0);
        if add {
            self.waiting_gpus += gpus;
            self.zero_gpu += zero;
        } else {
            self.waiting_gpus -= gpus;
            self.zero_gpu -= zero;
        }
    }

    /// A job joins (enqueued): it ranks after every job so far, as a new rank does.
    pub(crate) fn admit(&mut self, job: &mut SchedJob) {
        job.slot.tie = self.next_label;
        self.next_label = self.next_label.saturating_add(self.spacing);
        self.pending.insert(job.slot.admitted);
        self.count_waiting(job, true);
    }

    /// A waiting job started outside a pass ([`crate::Scheduler::start_at`]), `key` its
    /// key while it waited.
    pub(crate) fn started(&mut self, job: &SchedJob, key: Key) {
        if self.waiting.remove(&(key, job.slot.tie)).is_some()
            || self.pending.remove(&job.slot.admitted)
        {
            self.count_waiting(job, false);
        }
        self.running.insert(job.slot.admitted);
    }

    /// A running job waits again, outside a pass ([`crate::Scheduler::preempt_now`]): it
    /// stays with the moving jobs (its key moved while it ran) until the next pass.
    pub(crate) fn put_back(&mut self, job: &SchedJob) {
        self.running.remove(&job.slot.admitted);
        self.pending.insert(job.slot.admitted);
        self.count_waiting(job, true);
    }

    /// A job leaves (ended, or cancelled while waiting with key `key`).
    pub(crate) fn remove(&mut self, job: &SchedJob, key: Key) {
        let admitted = job.slot.admitted;
        if job.running {
            self.running.remove(&admitted);
        } else if self.pending.remove(&admitted)
            || self.waiting.remove(&(key, job.slot.tie)).is_some()
        {
            self.count_waiting(job, false);
        }
    }

    /// Labels for the moving jobs of a pass, given in their new order (sorted by key and
    /// old label, `(key, label)` each): each strictly between the labels of its waiting
    /// neighbours in the merged order. `None` when some gap is too narrow for the jobs
    /// that fall in it, or labels grew too large: then [`Self::relabel`].
    pub(crate) fn labels_between(&self, moved: &[(Key, i64)]) -> Option<Vec<i64>> {
        let mut out = Vec::with_capacity(moved.len());
        let mut k = 0;
        while k < moved.len() {
            let at = moved[k];
            let below = self.waiting.range(..at).next_back().map(|(w, _)| w.1);
            let above = self.waiting.range(at..).next();
            // The moving jobs before the same waiting job share the gap.
            let mut end = k + 1;
            match above {
                Some((w, _)) => {
                    while end < moved.len() && moved[end] < *w {
                        end += 1;
                    }
                }
                None => end = moved.len(),
            }
            let lo = below.unwrap_or(LOW);
            let hi = above.map_or(self.next_label, |(w, _)| w.1);
            let n = (end - k) as i128;
            let step = (i128::from(hi) - i128::from(lo)) / (n + 1);
            if step < 1 || hi > HIGH {
                return None;
            }
            for j in 0..n {
                out.push((i128::from(lo) + step * (j + 1)) as i64);
            }
            k = end;
        }
        Some(out)
    }

    /// New labels for every job, `spacing` apart in `order` (the pass's order, waiting
    /// and moving jobs merged): returns each job's label in that order, and moves the
    /// waiting jobs' entries to their new labels.
    pub(crate) fn relabel(&mut self, order: &[(Key, i64)]) -> Vec<i64> {
        let labels: Vec<i64> = (0..order.len() as i64)
            .map(|k| (k + 1) * self.spacing)
            .collect();
        let mut by_old: BTreeMap<(Key, i64), i64> = BTreeMap::new();
        for (at, &label) in order.iter().zip(&labels) {
            by_old.insert(*at, label);
        }
        let old = std::mem::take(&mut self.waiting);
        for ((key, label), v) in old {
            self.waiting.insert((key, by_old[&(key, label)]), v);
        }
        self.next_label = (order.len() as i64 + 1) * self.spacing;
        labels
    }
}
