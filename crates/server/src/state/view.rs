//! One job as the API shows it (`get`): its pending reason and estimated start worked
//! out when asked.

use std::collections::BTreeMap;

use crate::record::JobRecord;
use gpusched_core::live::WaitContext;
use gpusched_core::QueueId;
use gpusched_wire::{JobState, JobView};

use super::privacy;
use super::reasons;
use super::{Fail, State, Who};

/// Shared inputs of the pending reasons of one request.
pub(super) struct ReasonContext {
    plan: BTreeMap<u64, u64>,
    /// What the core's wait reasons need (usage per queue and user, queue order).
    wait: WaitContext,
}

impl State {
    /// Estimated starts of the pending jobs, from the core's replay of the queue.
    pub fn plan(&self) -> BTreeMap<u64, u64> {
        self.cluster
            .estimate_starts(self.now.secs())
            .into_iter()
            .map(|(id, t)| (id, (t * 1000.0).round() as u64))
            .collect()
    }

    /// What every pending job's reason needs, worked out once per request (not once per
    /// job: a list of 100k pending jobs must stay linear).
    pub(super) fn reason_context(&self) -> ReasonContext {
        ReasonContext {
            plan: self.plan(),
            wait: self.cluster.wait_context(),
        }
    }

    /// A job as the API shows it; a pending job's reason is worked out now.
    pub fn view(&self, job: &JobRecord) -> JobView {
        match job.view.state {
            JobState::Pending => self.view_with(job, Some(&self.reason_context())),
            _ => self.view_with(job, None),
        }
    }

    pub(super) fn view_with(&self, job: &JobRecord, ctx: Option<&ReasonContext>) -> JobView {
        let mut v = job.view.clone();
        if v.array.is_some() {
            v.array_counts = Some(Box::new(self.array_counts(job)));
            if v.state == JobState::Pending && self.deps_ready(&v) {
                // Not in the core's queue itself: its tasks are (or will be).
                v.reason = if v.held {
                    "held".into()
                } else {
                    "its first tasks wait in the queue; `gpusched queue --tasks ID` shows why"
                        .replace("ID", &v.id.to_string())
                };
                return v;
            }
        }
        if v.deadline.is_some() {
            let start = ctx.and_then(|c| c.plan.get(&v.id).copied());
            v.deadline = self.deadline_view(&v, start);
        }
        if let (JobState::Pending, Some(ctx)) = (v.state, ctx) {
            v.est_start_ms = ctx.plan.get(&v.id).copied();
            let why = self.pending_reason(&v, ctx);
            // A held job's stored note is who held it, already in `why`.
            v.reason = if v.reason.is_empty() || v.held {
                why
            } else {
                format!("{why} ({})", v.reason)
            };
        }
        // Where the estimate sjf/srtf and the start estimates use came from, when it is
        // a prediction (a walltime shows as such; no estimate, nothing).
        if matches!(
            v.state,
            JobState::Pending | JobState::Starting | JobState::Running
        ) {
            if let Some(estimate) = self.estimate_words(v.id) {
                v.reason = format!("{}; {estimate}", v.reason);
            }
        }
        v
    }

    fn pending_reason(&self, v: &JobView, ctx: &ReasonContext) -> String {
        // Queue ids only grow; a queue the core never saw has no caps.
        let queue = self
            .queue_ids
            .get(&v.queue)
            .copied()
            .unwrap_or(QueueId(u32::MAX));
        let job = self.live_job(v, queue);
        let why = self.cluster.wait_reason(&job, &self.blocked(v), &ctx.wait);
        reasons::wait(&why, v, self.cfg.policy.name(), self.now.secs())
    }

    /// One job as `who` may see it (404 for a job hidden from them).
    pub fn get(&self, id: u64, who: &Who) -> Result<JobView, Fail> {
        let mut v = self.view(self.job_for(id, who)?);
        let steps = self.steps_of(id);
        v.steps = (!steps.is_empty()).then(|| Box::new(steps));
        v.speed = self.speed_view(&v);
        privacy::redact(&mut v, who);
        Ok(v)
    }
}
