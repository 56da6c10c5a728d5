//! Idle GPUs in interactive allocations (issue 35; docs/interactive-alloc.md).
//!
//! Each report's GPU samples are read for the running allocations holding the GPUs:
//! - the time since a GPU's previous sample counts as held idle (GPU-ms, a share or MIG
//!   instance by its thousandths) when the sample is below the allocation's queue's
//!   threshold, as energy is charged (`energy.rs`): `JobView::idle_gpu_s` (whole
//!   seconds; the milliseconds here), which `usage` sums per user;
//! - the core's rule (`gpusched_core::idle`) decides, at the round's time, whether the
//!   allocation is warned (a `idle_warning` event, which `alloc` prints on its terminal)
//!   or ended (cancelled, its end reason naming the policy).
//!
//! The idle time is stored with the job's row (schema 15) whenever the row is written
//! (its state changes; at the latest as it ends), so `usage` counts ended allocations
//! from the store's aggregate; a restart resumes from the stored seconds. The watches
//! are the server's memory only: a restart starts each spell afresh (never ending a job
//! sooner).

use std::collections::{BTreeMap, HashMap};

use gpusched_core::idle::{IdleAction, IdlePolicy, IdleStep, IdleWatch};
use gpusched_wire::history::JobEventKind;
use gpusched_wire::{JobState, JobView, NodeTelemetry};

use super::State;

#[derive(Default)]
pub struct Idle {
    /// Each running allocation's watch.
    watches: BTreeMap<u64, IdleWatch>,
    /// Each live allocation's idle GPU-ms (its view says the whole seconds).
    idle_ms: BTreeMap<u64, u64>,
    /// Each GPU's previous sample time (the agent's clock), for the time a sample counts.
    last_at: HashMap<(String, u32), u64>,
    /// Allocations the policy asked to stop, with the end reason to give them.
    ending: BTreeMap<u64, String>,
}

impl Idle {
    /// The job is no longer held (ended or requeued): its spell is over.
    pub(super) fn forget(&mut self, id: u64) {
        self.watches.remove(&id);
    }

    /// The job has ended: nothing more is counted for it.
    pub(super) fn ended(&mut self, id: u64) {
        self.watches.remove(&id);
        self.idle_ms.remove(&id);
    }

    /// The end reason of an allocation the policy asked to stop (once).
    pub(super) fn take_ending(&mut self, id: u64) -> Option<String> {
        self.ending.remove(&id)
    }
}

/// A length of time as the warnings say it: `45s`, `30m`, `1h05m`.
pub(super) fn span(ms: u64) -> String {
    let s = ms / 1000;
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, 0, _) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

impl State {
    /// The idle policy of allocation `v` (checked when the file was read), and whose it
    /// is in words ("partition `debug`", "queue `research`"): the partition it runs in
    /// (the first of its partitions that holds its node) where that sets idle keys, over
    /// its queue's.
    fn idle_policy(&self, v: &JobView) -> (IdlePolicy, String) {
        let parts = &self.queues.partitions;
        let partition = v.node.as_deref().and_then(|node| {
            let features = self
                .nodes
                .get(node)
                .map(|n| crate::live_map::features(&n.record.register, &self.cfg.topology))
                .unwrap_or_default();
            let holding = parts.of_node(node, &features);
            let mine = v.rules.as_ref().map(|r| r.partitions.as_slice());
            mine.unwrap_or_default()
                .iter()
                .find(|p| holding.contains(p))
                .filter(|p| {
                    parts
                        .defs
                        .get(*p)
                        .is_some_and(|d| d.idle != Default::default())
                })
                .cloned()
        });
        let policy = self
            .queues
            .idle_policy_in(Some(&v.queue), partition.as_deref())
            .or_else(|_| self.queues.idle_policy(None))
            .unwrap_or(IdlePolicy {
                threshold_pct: 0,
                after_ms: u64::MAX,
                action: IdleAction::Off,
                grace_ms: 0,
            });
        let whose = match partition {
            Some(p) => format!("partition `{p}`"),
            None => format!("queue `{}`", v.queue),
        };
        (policy, whose)
    }

    /// One report's samples of `node`: idle time counted, the policy applied to the
    /// running allocations holding its GPUs. O(GPUs of the node).
    pub(super) fn watch_idle(&mut self, node: &str, t: &NodeTelemetry) {
        let now = self.now.ms;
        let max_gap_ms = self.cfg.heartbeat_timeout.as_millis() as u64;
        // Per allocation on this node: any of its GPUs busy, and its policy.
        let mut seen: BTreeMap<u64, (bool, IdlePolicy)> = BTreeMap::new();
        let mut charges: Vec<(u64, u64)> = Vec::new();
        for s in &t.gpus {
            let key = (node.to_string(), s.index);
            if s.lost {
                self.idle.last_at.remove(&key);
                continue;
            }
            let prev = self.idle.last_at.insert(key, s.at_ms);
            for (job, milli) in self.cluster.gpu_holders(node, s.index) {
                let Some(v) = self.jobs.get(&job).map(|j| &j.view) else {
                    continue;
                };
                if !v.interactive || v.state != JobState::Running {
                    continue;
                }
                let policy = match seen.get(&job) {
                    Some((_, p)) => *p,
                    None => self.idle_policy(v).0,
                };
                let idle = policy.idle(s.util_pct);
                seen.entry(job).or_insert((false, policy)).0 |= !idle;
                let step = prev
                    .filter(|&p| s.at_ms > p && s.at_ms - p <= max_gap_ms)
                    .map_or(0, |p| s.at_ms - p);
                charges.push((
                    job,
                    if idle {
                        step * u64::from(milli) / 1000
                    } else {
                        0
                    },
                ));
            }
        }
        // Soft state, as energy: it rides on the row's next write and is not stored yet.
        for (job, ms) in charges {
            // From what the view says (restored from the store after a restart).
            let stored = self.jobs.get(&job).and_then(|j| j.view.idle_gpu_s);
            let total = (self.idle.idle_ms)
                .entry(job)
                .or_insert_with(|| stored.map_or(0, |s| u64::from(s) * 1000));
            *total += ms;
            let secs = u32::try_from(*total / 1000).unwrap_or(u32::MAX);
            if let Some(rec) = self.jobs.get_mut_unstored(&job) {
                rec.view.idle_gpu_s = Some(secs);
            }
        }
        for (job, (busy, policy)) in seen {
            let nodes = self.jobs.get(&job).map_or(1, |j| j.view.parts.len().max(1));
            let watch = self.idle.watches.entry(job).or_default();
            watch.observe(node, busy, now);
            match watch.decide(&policy, nodes, now) {
                IdleStep::Nothing => {}
                IdleStep::Warn {
                    idle_ms,
                    ends_in_ms,
                } => self.idle_warn(job, &policy, idle_ms, ends_in_ms),
                IdleStep::End { idle_ms } => self.idle_end(job, &policy, idle_ms),
            }
        }
    }

    fn idle_warn(&mut self, id: u64, p: &IdlePolicy, idle_ms: u64, ends_in_ms: Option<u64>) {
        let Some(whose) = self.jobs.get(&id).map(|j| self.idle_policy(&j.view).1) else {
            return;
        };
        let then = match ends_in_ms {
            Some(ms) => format!("it will be ended in {} unless they are used", span(ms)),
            None => "release them (leave the shell) if you no longer need them".to_string(),
        };
        self.note(
            id,
            JobEventKind::IdleWarning,
            format!(
                "its GPUs have been below {}% utilisation for {} (the idle policy of \
                 {whose}); {then}",
                p.threshold_pct,
                span(idle_ms)
            ),
        );
    }

    /// Asks the allocation's agents to stop it, as a cancel does; its end reason names
    /// the policy. Asked once: a job already being cancelled is left as it is.
    fn idle_end(&mut self, id: u64, p: &IdlePolicy, idle_ms: u64) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        if job.view.cancel_requested || job.view.state.is_terminal() {
            return;
        }
        let whose = self.idle_policy(&job.view).1;
        let why = format!(
            "ended by the idle policy of {whose}: its GPUs were below {}% utilisation for {}",
            p.threshold_pct,
            span(idle_ms)
        );
        self.note(
            id,
            JobEventKind::CancelRequested,
            format!("by the idle policy of {whose}"),
        );
        let job = self.jobs.get_mut(&id).expect("looked up above");
        job.view.cancel_requested = true;
        let on = super::gang::nodes_of(&job.view);
        job.view.reason = format!("ending (idle policy); {on} releasing it");
        self.idle.ending.insert(id, why);
        self.bump_job(id);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn spans_read_as_people_write_them() {
        let s = |secs: u64| super::span(secs * 1000);
        assert_eq!(s(45), "45s");
        assert_eq!(s(1800), "30m");
        assert_eq!(s(90), "1m30s");
        assert_eq!(s(3600), "1h");
        assert_eq!(s(3900), "1h05m");
    }
}
