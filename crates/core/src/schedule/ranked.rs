//! The preemptive pass over the queue kept in policy order ([`RankedQueue`]): the same
//! steps as the sorting pass with `PreemptMode::Repack` (the uncontended shortcut, then
//! the greedy packing from an idle cluster in policy order), visiting only the running
//! jobs, the jobs admitted or put back since the last pass, and the waiting jobs before
//! the point where no GPU is left.

use std::collections::BTreeSet;

use super::{find_admitted, find_admitted_after, PassOutcome, Scheduler};
use crate::placement::Placement;
use crate::policy::order;
use crate::policy::ranked::{key_bits, Key, RankedQueue};
use crate::schedule::SchedJob;
use crate::Seconds;

/// A job of the pass's order: its key, its label, its index in the job slice.
type Item = (Key, i64, usize);

impl Scheduler {
    pub(super) fn ranked_pass(
        &mut self,
        q: &mut RankedQueue,
        jobs: &mut [SchedJob],
        now: Seconds,
        out: &mut PassOutcome,
    ) {
        // The waiting jobs admitted or put back since the last pass, with their keys.
        let mut moved = self.keyed(&mut q.pending, jobs, now);
        moved.sort_unstable_by_key(|&(key, label, _)| (key, label));
        if q.waiting_gpus <= self.actual.total_free()
            && self.ranked_start_all(q, jobs, &moved, now, out)
        {
            return;
        }
        // With the running jobs (their keys moved as they ran), in order.
        moved.extend(self.keyed(&mut q.running, jobs, now));
        moved.sort_unstable_by_key(|&(key, label, _)| (key, label));

        // The sort's order (the waiting jobs merged with the moving ones), packed greedily
        // from an idle cluster as `pack_from_idle` does, while a job may still be placed.
        self.work.reset_from(&self.idle);
        let mut smallest_failure = u32::MAX;
        let mut fits: Vec<(usize, Option<Placement>)> = Vec::with_capacity(moved.len());
        let mut walked: Vec<(Key, usize)> = Vec::new();
        let mut waiting = q.waiting.iter().peekable();
        let mut m = 0;
        loop {
            // With no GPU left no waiting job that asks for one can be placed, and nothing
            // happens to it: the walk leaves the rest of them (the moving ones still count).
            let no_room = self.work.total_free() == 0 && q.zero_gpu == 0;
            let next = waiting.peek().filter(|_| !no_room).map(|(&at, &v)| (at, v));
            let take_waiting = match (next, moved.get(m)) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((at, _)), Some(&(key, label, _))) => at < (key, label),
            };
            let i = match next {
                Some(((key, _), (admitted, _))) if take_waiting => {
                    waiting.next();
                    let i = find_admitted(jobs, admitted).expect(
                        "a waiting job of the queue is in the slice (the caller's promise)",
                    );
                    debug_assert_eq!(
                        key_bits(order::key(&self.policy, &jobs[i], now)),
                        key,
                        "a waiting job's key moved (the caller's promise)"
                    );
                    walked.push((key, i));
                    i
                }
                _ => {
                    m += 1;
                    moved[m - 1].2
                }
            };
            let placed = self.place_from_idle(&jobs[i].spec, &mut smallest_failure);
            fits.push((i, placed));
        }
        for (i, placed) in fits {
            let job = &mut jobs[i];
            match (placed, job.running) {
                (Some(p), true) => job.placement = Some(p),
                (Some(p), false) => {
                    q.count_waiting(job, false);
                    Self::start(job, i, p, now, out);
                }
                (None, true) => {
                    Self::preempt(job, i, now, out);
                    q.count_waiting(job, true);
                }
                (None, false) => {}
            }
        }
        std::mem::swap(&mut self.actual, &mut self.work);

        // The moving jobs' labels in the new order (what renumbering the ranks gives),
        // computed while the waiting jobs that started still hold their places.
        let at: Vec<(Key, i64)> = moved.iter().map(|&(k, l, _)| (k, l)).collect();
        let labels = match q.labels_between(&at) {
            Some(labels) => labels,
            None => relabel_all(q, jobs, &moved),
        };
        // Waiting jobs that started move (their labels stay).
        for &(key, i) in &walked {
            if jobs[i].running {
                q.waiting.remove(&(key, jobs[i].slot.tie));
                q.running.insert(jobs[i].slot.admitted);
            }
        }
        // Moving jobs that wait now (stopped, or admitted and not placed) wait with the
        // key of this pass, which stays until they run again.
        for (&(key, _, i), &label) in moved.iter().zip(&labels) {
            let job = &mut jobs[i];
            job.slot.tie = label;
            let admitted = job.slot.admitted;
            if job.running {
                q.pending.remove(&admitted);
                q.running.insert(admitted);
            } else {
                q.running.remove(&admitted);
                q.pending.remove(&admitted);
                q.waiting.insert((key, label), (admitted, job.spec.gpus));
            }
        }
    }

    /// The jobs of `set` with their keys now, in no order; those no longer in the slice
    /// (the caller dropped them without saying) leave it, as they leave the sort.
    fn keyed(&self, set: &mut BTreeSet<u64>, jobs: &[SchedJob], now: Seconds) -> Vec<Item> {
        let mut items = Vec::with_capacity(set.len());
        let mut stale = Vec::new();
        // (Not `retain`: it costs a tenth of a `blend` run.) Both are in admission order:
        // each search gallops on from the job found before.
        let mut next = 0;
        for &admitted in set.iter() {
            match find_admitted_after(jobs, next, admitted) {
                Some(i) => {
                    next = i + 1;
                    let key = key_bits(order::key(&self.policy, &jobs[i], now));
                    items.push((key, jobs[i].slot.tie, i));
                }
                None => stale.push(admitted),
            }
        }
        for admitted in stale {
            set.remove(&admitted);
        }
        items
    }

    /// [`Self::start_all_waiting`] over the ranked queue: when every waiting job fits the
    /// GPUs free now, they start there in policy order, nobody moves, and (as there) the
    /// ranks are not renumbered. False, and nothing changes, if one does not fit.
    /// `pending`: the waiting jobs not in the tree, in order.
    fn ranked_start_all(
        &mut self,
        q: &mut RankedQueue,
        jobs: &mut [SchedJob],
        pending: &[Item],
        now: Seconds,
        out: &mut PassOutcome,
    ) -> bool {
        let mut pending = pending.iter().peekable();
        let mut waiting = q.waiting.iter().peekable();
        self.work.clone_from(&self.actual);
        let mut placed = Vec::new();
        loop {
            let take_waiting = match (waiting.peek(), pending.peek()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((&at, _)), Some(&&(key, label, _))) => at < (key, label),
            };
            let i = if take_waiting {
                let (_, &(admitted, _)) = waiting.next().expect("peeked");
                find_admitted(jobs, admitted)
                    .expect("a waiting job of the queue is in the slice (the caller's promise)")
            } else {
                pending.next().expect("peeked").2
            };
            let spec = &jobs[i].spec;
            match self.placement.place_spec(&mut self.work, spec) {
                Some(p) => placed.push((i, p)),
                None => return false,
            }
        }
        std::mem::swap(&mut self.actual, &mut self.work);
        for (i, p) in placed {
            q.count_waiting(&jobs[i], false);
            q.pending.remove(&jobs[i].slot.admitted);
            q.running.insert(jobs[i].slot.admitted);
            Self::start(&mut jobs[i], i, p, now, out);
        }
        q.waiting.clear();
        true
    }
}

/// Relabels every job in the pass's order (the waiting jobs merged with the moving ones,
/// `moved` in order), when a gap between labels is too narrow; returns the moving jobs'
/// new labels. A walk over every waiting job, rare: labels are 2^32 apart.
fn relabel_all(q: &mut RankedQueue, jobs: &mut [SchedJob], moved: &[Item]) -> Vec<i64> {
    let mut order: Vec<(Key, i64)> = Vec::with_capacity(q.waiting.len() + moved.len());
    let mut index: Vec<(usize, bool)> = Vec::with_capacity(order.capacity());
    let mut waiting = q.waiting.iter().peekable();
    let mut m = 0;
    loop {
        let take_waiting = match (waiting.peek(), moved.get(m)) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((&at, _)), Some(&(key, label, _))) => at < (key, label),
        };
        if take_waiting {
            let (&at, &(admitted, _)) = waiting.next().expect("peeked");
            let i = find_admitted(jobs, admitted)
                .expect("a waiting job of the queue is in the slice (the caller's promise)");
            order.push(at);
            index.push((i, false));
        } else {
            let (key, label, i) = moved[m];
            m += 1;
            order.push((key, label));
            index.push((i, true));
        }
    }
    let labels = q.relabel(&order);
    let mut moved_labels = Vec::with_capacity(moved.len());
    for (&(i, is_moving), &label) in index.iter().zip(&labels) {
        if is_moving {
            moved_labels.push(label);
        } else {
            jobs[i].slot.tie = label;
        }
    }
    moved_labels
}

#[cfg(test)]
#[path = "ranked_tests.rs"]
mod tests;
