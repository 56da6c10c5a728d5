//! Preemptive policies on the live cluster (`srtf`, `srsf`, `tiresias`, `blend`): the core's
//! deferred pass (`gpusched_core::schedule`'s `PreemptMode::Deferred`) names the running
//! jobs the policy wants stopped; they take the preemption path every preemption takes
//! (the checkpoint signal, `--preempt-grace`, requeued without using a retry, their
//! attained service kept by the core and, over a restart, by `learn.rs`).
//!
//! No preemption loops: a job that started (or restarted) less than `--min-runtime` ago,
//! or is being cancelled, is protected from the pass; so is every job while it is still
//! starting.

use gpusched_wire::history::JobEventKind;
use gpusched_wire::JobState;

use super::State;

impl State {
    /// Under a preemptive policy, or with a queue that preempts lower priority tiers
    /// (`tiers.rs`), a pass is due on every tick: time alone changes the order (tiresias
    /// demotes by attained service) and ends protections.
    pub fn schedule_if_preemptive(&mut self) {
        if self.cfg.policy.preemptive()
            || self.queues.defs.values().any(|q| q.preempt_lower_priority)
        {
            self.sched_due = true;
        }
    }

    /// Before a pass: the running jobs it must not preempt.
    pub(super) fn protect_recent(&mut self) {
        if !self.cfg.policy.preemptive() {
            return;
        }
        let now = self.now.ms;
        let min_ms = self.cfg.min_runtime.as_millis() as u64;
        let protected: Vec<u64> = self
            .placed()
            .filter(|j| {
                let v = &j.view;
                v.cancel_requested
                    || v.state != JobState::Running
                    || v.start_ms.is_none_or(|s| now.saturating_sub(s) < min_ms)
            })
            .map(|j| j.view.id)
            .collect();
        self.queue.set_protected(protected);
    }

    /// After a pass: the jobs it wants stopped are asked to, through the preemption path
    /// (each once; a job already stopping is left to it).
    pub(super) fn preempt_victims(&mut self) {
        let policy = self.cfg.policy.name();
        for id in self.queue.take_preemptions() {
            let Some(job) = self.jobs.get_mut(&id) else {
                continue;
            };
            let v = &mut job.view;
            if v.state != JobState::Running || v.preempt_requested || v.cancel_requested {
                continue;
            }
            let why = format!(
                "preempted by policy `{policy}`: jobs ahead of it in the policy's order need \
                 its GPUs"
            );
            v.preempt_requested = true;
            v.reason = format!("being requeued: {why}");
            tracing::info!(job = id, policy, "preempting for the policy's order");
            self.policy_preempted.insert(id, why.clone());
            self.bump_job(id);
            self.note(id, JobEventKind::Preempted, why);
        }
    }
}
