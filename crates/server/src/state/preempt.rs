//! Preemptive policies on the live cluster (`srtf`, `srsf`, `tiresias`, `blend`): the core's
//! deferred pass (`gpusched_core::schedule`'s `PreemptMode::Deferred`) names the running
//! jobs the policy wants stopped; they take the preemption path every preemption takes
//! (the checkpoint signal, `--preempt-grace`, requeued without using a retry, their
//! attained service kept by the core and, over a restart, by `learn.rs`).
//!
//! No preemption loops: a job that started (or restarted) less than `--min-runtime` ago,
//! or is being cancelled, is protected from the pass; so is every job while it is still
//! starting (the core's `live/runs.rs` decides, from the facts `runs.rs` here tells it).

use gpusched_wire::history::JobEventKind;

use super::State;

impl State {
    /// Under a preemptive policy, with a queue that preempts lower priority tiers
    /// (`tiers.rs`), or while an elastic job runs (`elastic.rs`), a pass is due on every
    /// tick: time alone changes the order (tiresias demotes by attained service) and
    /// ends protections and cooldowns.
    pub fn schedule_if_preemptive(&mut self) {
        if self.cfg.policy.preemptive()
            || self.cfg.takes_turns()
            || self.queues.defs.values().any(|q| q.preempt_lower_priority)
            || self.cluster.elastic_running()
        {
            self.sched_due = true;
        }
    }

    /// The victims the core's round chose for the policy's order: each is asked to stop
    /// through the preemption path (the core skipped those already leaving).
    pub(super) fn preempt_for_policy(&mut self, victims: &[u64]) {
        let policy = self.cfg.policy.name();
        // Taking turns, a running job is a victim only once its turn is over (the core
        // keeps a turn whole): say so rather than blame the order.
        let turns = self.cfg.takes_turns().then(|| self.rr_quantum());
        for &id in victims {
            let Some(job) = self.jobs.get_mut(&id) else {
                continue;
            };
            let v = &mut job.view;
            let why = match turns {
                Some(q) => format!(
                    "preempted by policy `{policy}` taking turns: it has run its turn of {q:.0} s \
                     and a waiting job takes its GPUs"
                ),
                None => format!(
                    "preempted by policy `{policy}`: jobs ahead of it in the policy's order \
                     need its GPUs"
                ),
            };
            v.preempt_requested = true;
            v.reason = format!("being requeued: {why}");
            tracing::info!(job = id, policy, "preempting for the policy's order");
            self.policy_preempted.insert(id, why.clone());
            self.bump_job(id);
            self.note(id, JobEventKind::Preempted, why);
        }
    }
}
