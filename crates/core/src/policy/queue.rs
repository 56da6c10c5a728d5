//! The waiting queue kept in policy order between passes, for the non-preemptive policies
//! whose order does not move while jobs wait.
//!
//! `fifo` and `backfill` order by submit time, `sjf` by estimate then submit time: fixed
//! keys. `priority` (and `drf`, which orders each tenant's jobs the same way) adds
//! `aging_per_hour` for every hour waited, the same shift for every job, so inside one
//! priority value the order is submit time, fixed too; the priority values (few) are
//! merged at each pass by their keys at that time, computed exactly as the sort did.
//!
//! Ties fall back, as in the sort, on the order of the previous pass. A sort renumbers
//! every waiting job above every rank given before, in sorted order; so among jobs of equal
//! key the order of a pass is the order of admission, except for a job that ran and came
//! back: if no pass ordered the queue since it started, it keeps its place; otherwise it
//! goes before every job that was ordered since, the jobs that came back in the order
//! they last started (pass, then place). [`QueueSlot::tie`] encodes exactly that, so the
//! queue reproduces the sort's order without sorting.
//!
//! Each entry also carries what `backfill`'s reservation reads of a waiting job (its GPUs
//! and estimated remaining time), so a pass can refuse a job without reading it: the
//! caller of [`crate::Scheduler::keep_ordered_queue`] leaves a waiting job's spec and
//! attained service as they were when it entered the queue.

use std::cmp::Ordering;
use std::collections::{btree_set, BTreeMap, BTreeSet};
use std::iter::Peekable;

use crate::policy::{order, PolicyConfig, PolicyKind};
use crate::schedule::SchedJob;
use crate::Seconds;

/// Where a job stands in the ordered queue (kept on the job by the scheduler).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueSlot {
    /// Admission number: grows with every enqueue; the caller's job slice keeps jobs in
    /// this order, so a job is found by binary search.
    pub admitted: u64,
    /// Tie-break among equal keys, smaller first.
    pub tie: i64,
    /// The number of ordering passes when the job last started.
    pub started_at: u64,
}

/// One waiting job: its key, then its tie-break; then what a pass may read of it without
/// the job (not part of the order).
#[derive(Copy, Clone, Debug)]
struct Entry {
    a: f64,
    b: f64,
    tie: i64,
    /// Its GPUs and remaining time, and its admission number: the last tie-break.
    queued: Queued,
}

/// What the queue knows of a waiting job, as it was when the job entered the queue.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Queued {
    /// The job's admission number ([`QueueSlot::admitted`]).
    pub admitted: u64,
    pub gpus: u32,
    /// [`SchedJob::estimated_remaining`].
    pub remaining: Seconds,
}

impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        self.a
            .total_cmp(&o.a)
            .then(self.b.total_cmp(&o.b))
            .then(self.tie.cmp(&o.tie))
            .then(self.queued.admitted.cmp(&o.queued.admitted))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Entry {}

/// The waiting jobs in policy order, by priority value (one class for the other
/// policies).
#[derive(Clone, Debug)]
pub struct OrderedQueue {
    kind: PolicyKind,
    aging_per_hour: f64,
    classes: BTreeMap<i32, BTreeSet<Entry>>,
    /// Ordering passes so far (a pass skipped for want of free GPUs does not count).
    pub(crate) passes: u64,
    /// Jobs that came back after a pass ordered the queue: (started_at, tie, admitted).
    returned: Vec<(u64, i64, u64)>,
    /// The smallest tie given so far; jobs that come back go below it.
    low_tie: i64,
    /// Queued jobs with a finite estimated remaining time, and the queued jobs' GPU
    /// counts (a multiset): when none has an estimate and none fits a reservation's
    /// extra GPUs, `backfill` stops its walk at once instead of refusing every job.
    finite: usize,
    gpus: BTreeMap<u32, usize>,
}

impl OrderedQueue {
    /// A queue for `cfg`, if its order is fixed while jobs wait.
    pub fn new(cfg: &PolicyConfig) -> Option<Self> {
        // Turns move a running job behind the waiting ones as time passes.
        let fixed = !cfg.sliced()
            && match cfg.kind {
                PolicyKind::Fifo | PolicyKind::Sjf | PolicyKind::Backfill => true,
                // Demotion moves a job as time passes: sorted each pass instead.
                PolicyKind::EdfBackfill => !cfg.deadline_demote,
                PolicyKind::Edf | PolicyKind::Rr => false,
                // Negative or infinite aging would not keep submit order inside a priority.
                PolicyKind::Priority | PolicyKind::Drf | PolicyKind::FairTree => {
                    cfg.aging_per_hour.is_finite() && cfg.aging_per_hour >= 0.0
                }
                PolicyKind::Srtf | PolicyKind::Srsf | PolicyKind::Tiresias | PolicyKind::Blend => {
                    false
                }
            };
        fixed.then(|| OrderedQueue {
            kind: cfg.kind,
            aging_per_hour: cfg.aging_per_hour,
            classes: BTreeMap::new(),
            passes: 0,
            returned: Vec::new(),
            low_tie: 0,
            finite: 0,
            gpus: BTreeMap::new(),
        })
    }

    fn place(&self, job: &SchedJob) -> (i32, Entry) {
        let (spec, slot) = (&job.spec, job.slot);
        let (class, a, b) = match self.kind {
            PolicyKind::Sjf => (0, spec.estimate.unwrap_or(f64::INFINITY), spec.submit),
            PolicyKind::Edf | PolicyKind::EdfBackfill => {
                (0, spec.deadline.unwrap_or(f64::INFINITY), spec.submit)
            }
            PolicyKind::Priority | PolicyKind::Drf | PolicyKind::FairTree => {
                (spec.priority, spec.submit, 0.0)
            }
            _ => (0, spec.submit, 0.0),
        };
        let entry = Entry {
            a,
            b,
            tie: slot.tie,
            queued: Queued {
                admitted: slot.admitted,
                gpus: spec.gpus,
                remaining: job.estimated_remaining(),
            },
        };
        (class, entry)
    }

    /// Adds a waiting job (replacing an entry of the same place, whose kept GPUs and
    /// remaining time may be older).
    pub fn insert(&mut self, job: &SchedJob) {
        let (class, entry) = self.place(job);
        if let Some(old) = self.classes.entry(class).or_default().replace(entry) {
            self.count(old.queued, false);
        }
        self.count(entry.queued, true);
    }

    fn count(&mut self, q: Queued, add: bool) {
        let finite = usize::from(q.remaining.is_finite());
        let n = self.gpus.entry(q.gpus).or_insert(0);
        if add {
            self.finite += finite;
            *n += 1;
        } else {
            self.finite -= finite;
            *n -= 1;
            if *n == 0 {
                self.gpus.remove(&q.gpus);
            }
        }
    }

    /// Whether no queued job could pass a `backfill` reservation with `extra` GPUs: none
    /// has an estimate (so none ends by the shadow) and none fits in the extra GPUs.
    pub fn none_can_pass(&self, extra: u64) -> bool {
        self.finite == 0
            && self
                .gpus
                .keys()
                .next()
                .is_none_or(|&g| u64::from(g) > extra)
    }

    /// Removes a job (it started or left); false if it was not queued.
    pub fn remove(&mut self, job: &SchedJob) -> bool {
        let (class, entry) = self.place(job);
        let Some(set) = self.classes.get_mut(&class) else {
            return false;
        };
        let removed = set.take(&entry);
        if set.is_empty() {
            self.classes.remove(&class);
        }
        if let Some(old) = removed {
            self.count(old.queued, false);
        }
        removed.is_some() || self.forget_returned(job.slot.admitted)
    }

    /// Removes the job admitted as `admitted`, wherever it is (a scan: only for jobs the
    /// caller dropped without saying).
    pub fn remove_admitted(&mut self, admitted: u64) {
        let mut gone = Vec::new();
        for set in self.classes.values_mut() {
            set.retain(|e| {
                let keep = e.queued.admitted != admitted;
                if !keep {
                    gone.push(e.queued);
                }
                keep
            });
        }
        for q in gone {
            self.count(q, false);
        }
        self.classes.retain(|_, set| !set.is_empty());
        self.forget_returned(admitted);
    }

    fn forget_returned(&mut self, admitted: u64) -> bool {
        let before = self.returned.len();
        self.returned.retain(|r| r.2 != admitted);
        self.returned.len() != before
    }

    /// A job that ran waits again. Returns true if it is queued now (no pass ordered the
    /// queue since it started); otherwise it is queued at the next pass, by
    /// [`Self::take_returned`].
    pub fn put_back(&mut self, job: &SchedJob) -> bool {
        let slot = job.slot;
        if slot.started_at == self.passes {
            self.insert(job);
            true
        } else {
            self.returned
                .push((slot.started_at, slot.tie, slot.admitted));
            false
        }
    }

    /// At the start of an ordering pass: the jobs that came back, with their new ties
    /// (below every tie given before, in the order they last started). The caller sets
    /// each job's tie and inserts it.
    pub fn take_returned(&mut self) -> Vec<(u64, i64)> {
        let mut back = std::mem::take(&mut self.returned);
        back.sort_unstable();
        let base = self.low_tie - back.len() as i64;
        self.low_tie = base;
        back.iter()
            .enumerate()
            .map(|(k, &(_, _, admitted))| (admitted, base + k as i64))
            .collect()
    }

    /// Visits the waiting jobs in policy order at `now` until `visit` returns false.
    pub fn walk(&self, now: Seconds, mut visit: impl FnMut(Queued) -> bool) {
        if self.classes.len() <= 1 {
            for set in self.classes.values() {
                for e in set {
                    if !visit(e.queued) {
                        return;
                    }
                }
            }
            return;
        }
        // Priority values merged by their keys at `now` (the sort's key, then the tie).
        let mut heads: Vec<(i32, Peekable<btree_set::Iter<Entry>>)> = self
            .classes
            .iter()
            .map(|(&p, set)| (p, set.iter().peekable()))
            .collect();
        loop {
            let mut best: Option<(usize, f64, Entry)> = None;
            for (h, (p, it)) in heads.iter_mut().enumerate() {
                let Some(&&e) = it.peek() else {
                    continue;
                };
                let k = order::aged_priority(self.aging_per_hour, *p, e.a, now);
                let better = match &best {
                    None => true,
                    Some((_, bk, be)) => k
                        .total_cmp(bk)
                        .then(e.a.total_cmp(&be.a))
                        .then(e.tie.cmp(&be.tie))
                        .then(e.queued.admitted.cmp(&be.queued.admitted))
                        .is_lt(),
                };
                if better {
                    best = Some((h, k, e));
                }
            }
            let Some((h, _, e)) = best else {
                return;
            };
            heads[h].1.next();
            if !visit(e.queued) {
                return;
            }
        }
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
