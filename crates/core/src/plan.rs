//! Estimated start times for waiting jobs ("why pending, and until when?").
//!
//! Replays the queue forward from `now`: every running job ends at its estimate (the
//! walltime on the live cluster), and waiting jobs start in the order of the last pass as
//! soon as the placement strategy finds room, none before the one ahead of it (strict
//! order, so for `backfill` and `drf` the estimate is an upper bound). A job whose start
//! would need the GPUs of a job without an estimate gets no estimate, nor do the jobs
//! behind it. Queue caps are not replayed.
//!
//! Under turns (`rr`, or time slicing under another policy: [`PolicyConfig::rr_quantum`])
//! a job holds its GPUs while others wait only until its turn ends, estimate or none: a
//! running job gives them back at the end of its turn (at once when its turn is over),
//! a job the replay starts after at most one quantum. A job that makes way waits again
//! behind every job waiting now (the turns' order puts it after those that were ready
//! before its turn ended), so it never comes before them in the replay, and only its
//! GPUs count. The checkpoint's save and restore are not counted.
//!
//! [`PolicyConfig::rr_quantum`]: crate::PolicyConfig::rr_quantum

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};

use crate::ids::JobId;
use crate::job::JobSpec;
use crate::placement::{place_job, Placement};
use crate::room;
use crate::schedule::{SchedJob, Scheduler};
use crate::Seconds;

/// GPUs out of placement (unhealthy, or on a drained node; see `live/`), which the
/// replay never gives to a waiting job: those free now, by node, and those each running
/// job holds, by (job, node), which its end does not give back.
#[derive(Clone, Debug, Default)]
pub struct OutOfService {
    pub free: Vec<(crate::ids::NodeId, u32)>,
    pub held: BTreeMap<(JobId, crate::ids::NodeId), u32>,
}

/// A job ending in the replay: when, and the GPUs it gives back.
struct End {
    at: Seconds,
    placement: Placement,
    /// The job, when it holds room on its node (room reserved and asked for).
    held: Option<JobSpec>,
    job: JobId,
}

impl PartialEq for End {
    fn eq(&self, other: &Self) -> bool {
        self.at.total_cmp(&other.at) == Ordering::Equal
    }
}
impl Eq for End {}
impl PartialOrd for End {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for End {
    // Earliest first in a max-heap.
    fn cmp(&self, other: &Self) -> Ordering {
        other.at.total_cmp(&self.at)
    }
}

impl Scheduler {
    /// The estimated start of each waiting job that has one.
    pub fn estimate_starts(&self, jobs: &[SchedJob], now: Seconds) -> BTreeMap<JobId, Seconds> {
        self.estimate_starts_without(jobs, now, &OutOfService::default())
    }

    /// [`Scheduler::estimate_starts`] with GPUs out of placement never coming free.
    pub fn estimate_starts_without(
        &self,
        jobs: &[SchedJob],
        now: Seconds,
        closed: &OutOfService,
    ) -> BTreeMap<JobId, Seconds> {
        let mut map = self.free_map().clone();
        for &(node, k) in &closed.free {
            map.take(node, k.min(map.free(node)));
        }
        let mut room = self.room().cloned();
        let holds =
            |spec: &JobSpec, reserved: bool| (reserved && room::asks(spec)).then(|| spec.clone());
        let mut ends = BinaryHeap::new();
        // Under turns: how long a job holds its GPUs while others wait, at most.
        let quantum = self.policy().turn();
        // Preemptive EDF stops a running job for a waiting one due sooner: such a running
        // job gives its GPUs back at once and waits again with what it has left (the
        // `--min-runtime` protection is not modelled), so an answer to a deadline job's
        // submission does not wait for a best-effort job that will make way for it.
        let requeued = self.edf_requeued(jobs, now);
        let requeued_ids: std::collections::BTreeSet<JobId> =
            requeued.iter().map(|r| r.spec.id).collect();
        let is_requeued = |id: JobId| requeued_ids.contains(&id);
        for j in jobs.iter().filter(|j| j.running && is_requeued(j.spec.id)) {
            if let Some(p) = &j.placement {
                for &(node, k) in &p.parts {
                    let kept = closed.held.get(&(j.spec.id, node)).copied().unwrap_or(0);
                    map.give(node, k.saturating_sub(kept));
                }
            }
        }
        for j in jobs.iter().filter(|j| j.running && !is_requeued(j.spec.id)) {
            // Remaining as of `now`, not as of the job's last accounting: the live
            // cluster asks between passes, and a blocker's end must stay where its start
            // and estimate put it, not move on with the clock.
            let since = (now - j.last_update).max(0.0);
            let left = (j.estimated_remaining() - since).max(0.0);
            // Under turns, its turn's end if that comes first (now, when it is over).
            let until = match quantum {
                Some(q) => (j.turn + q).max(now).min(now + left),
                None => now + left,
            };
            if let (true, Some(p)) = (until.is_finite(), &j.placement) {
                ends.push(End {
                    at: until,
                    placement: p.clone(),
                    held: holds(&j.spec, room.is_some()),
                    job: j.spec.id,
                });
            }
        }
        let mut waiting: Vec<&SchedJob> = jobs.iter().filter(|j| !j.running).collect();
        waiting.extend(requeued.iter());
        waiting.sort_by_key(|j| (j.rank, j.spec.id));
        // Under the deadline policies a job submitted since the last pass takes its place
        // by deadline at once: the answer to its submission depends on it.
        if self.policy().kind.deadlines() {
            let policy = self.policy();
            waiting.sort_by(|a, b| {
                crate::deadline::key(policy, a, now)
                    .partial_cmp(&crate::deadline::key(policy, b, now))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        let mut out = BTreeMap::new();
        let mut t = now;
        'jobs: for j in waiting {
            loop {
                let spec = &j.spec;
                if let Some(p) = place_job(self.strategy(), &mut map, room.as_mut(), spec) {
                    out.insert(spec.id, t);
                    // Without an estimate it would hold its GPUs for an unknown time:
                    // nobody behind it can count on them (under turns, one quantum).
                    let holds_for = match (spec.estimate, quantum) {
                        (Some(e), Some(q)) => Some(e.min(q)),
                        (e, q) => e.or(q),
                    };
                    if let Some(e) = holds_for {
                        ends.push(End {
                            at: t + e,
                            placement: p,
                            held: holds(spec, room.is_some()),
                            job: spec.id,
                        });
                    }
                    continue 'jobs;
                }
                match ends.pop() {
                    Some(end) => {
                        t = t.max(end.at);
                        for &(node, k) in &end.placement.parts {
                            let kept = closed.held.get(&(end.job, node)).copied().unwrap_or(0);
                            map.give(node, k.saturating_sub(kept));
                        }
                        if let (Some(r), Some(spec)) = (&mut room, &end.held) {
                            for node in crate::schedule::room_nodes(spec, &end.placement) {
                                r.give(node, spec);
                            }
                        }
                    }
                    None => break 'jobs,
                }
            }
        }
        for r in &requeued {
            out.remove(&r.spec.id);
        }
        out
    }

    /// Under preemptive `edf`, the running jobs a waiting job due sooner would stop: each
    /// as a waiting job with its remaining estimate (none when it has none).
    fn edf_requeued(&self, jobs: &[SchedJob], now: Seconds) -> Vec<SchedJob> {
        let policy = self.policy();
        if policy.kind != crate::policy::PolicyKind::Edf {
            return Vec::new();
        }
        let key = |j: &SchedJob| crate::deadline::key(policy, j, now);
        let Some(first) = jobs
            .iter()
            .filter(|j| !j.running)
            .map(key)
            .min_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal))
        else {
            return Vec::new();
        };
        jobs.iter()
            .filter(|j| j.running && key(j) > first)
            .map(|j| {
                let mut r = j.clone();
                let left = j.estimated_remaining();
                r.spec.estimate = left.is_finite().then_some(left);
                r.attained = 0.0;
                r.running = false;
                r.placement = None;
                r
            })
            .collect()
    }
}
