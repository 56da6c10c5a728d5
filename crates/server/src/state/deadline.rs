//! Deadlines on the live server (issue 37; docs/deadlines.md): a job may say when it
//! must be finished (`deadline_ms`, `--deadline`). The core's `edf` policies order by
//! it (`LiveJob::deadline`); this module answers how a job stands against it.
//!
//! The answer: a waiting job's expected finish is its estimated start (the core's replay
//! of the queue, `State::plan`) plus its estimate (the walltime, else the predictor's
//! run time); a running job's is its start plus that estimate. `on_track` when that is
//! at or before the deadline, `at_risk` when after it or when nothing estimates the run
//! time; once ended, `met` (succeeded by the deadline) or `missed`; unfinished past it,
//! `missed`. Worked out when a view is asked for, as the pending reason is; stored is
//! only the deadline itself (the placement rules' JSON).
//!
//! At submission the answer comes back with the ids. A queue with
//! `refuse_late_deadlines` refuses (409) a job its estimate says would be late: the
//! check places it in the core's queue, replays, and takes it out again before anything
//! is accepted.

use gpusched_wire::{DeadlineStatus, JobDeadline, JobState, JobSubmit, JobView};

use super::{Fail, State};

/// A deadline as stored: its time only, the rest worked out when viewed.
pub(crate) fn stored(at_ms: u64) -> Box<JobDeadline> {
    Box::new(JobDeadline {
        at_ms,
        status: DeadlineStatus::AtRisk,
        finish_ms: None,
        slack_s: None,
    })
}

/// A submission's deadline must be ahead (409: the form is right, the time is not).
pub(super) fn check(j: &JobSubmit, now_ms: u64) -> Result<(), Fail> {
    match j.deadline_ms {
        Some(at) if at <= now_ms => Err(Fail::Conflict(format!(
            "deadline_ms {at} is {} s in the past: give a time still ahead (the CLI takes \
             --deadline +6h or 2026-12-08T06:00)",
            (now_ms - at) / 1000
        ))),
        _ => Ok(()),
    }
}

/// How `v` stands against its deadline `at_ms`, given when it is expected to finish.
fn standing(v: &JobView, at_ms: u64, finish_ms: Option<u64>, now_ms: u64) -> JobDeadline {
    let slack = |f: u64| (at_ms as i64 - f as i64) / 1000;
    let ended = matches!(
        v.state,
        JobState::Succeeded | JobState::Failed | JobState::Cancelled | JobState::TimedOut
    );
    let status = if ended {
        match (v.state, v.end_ms) {
            (JobState::Succeeded, Some(e)) if e <= at_ms => DeadlineStatus::Met,
            _ => DeadlineStatus::Missed,
        }
    } else if now_ms > at_ms {
        DeadlineStatus::Missed
    } else {
        match finish_ms {
            Some(f) if f <= at_ms => DeadlineStatus::OnTrack,
            _ => DeadlineStatus::AtRisk,
        }
    };
    let finish_ms = if ended { v.end_ms } else { finish_ms };
    JobDeadline {
        at_ms,
        status,
        finish_ms,
        slack_s: finish_ms.map(slack),
    }
}

impl State {
    /// When `v` is expected to finish: its estimated start (`est_start_ms`, for a waiting
    /// job) or its start, plus the core's estimate of its run time.
    fn expected_finish(&self, v: &JobView, est_start_ms: Option<u64>) -> Option<u64> {
        let (secs, _) = self.cluster.estimate(v.id)?;
        let start = match v.state {
            JobState::Running | JobState::Starting => v.start_ms.unwrap_or(self.now.ms),
            _ => est_start_ms?,
        };
        Some(start.saturating_add((secs * 1000.0).round() as u64))
    }

    /// `v`'s deadline as the API shows it now (none without one).
    pub(super) fn deadline_view(
        &self,
        v: &JobView,
        est_start_ms: Option<u64>,
    ) -> Option<Box<JobDeadline>> {
        let at = v.deadline.as_ref()?.at_ms;
        let finish = self.expected_finish(v, est_start_ms);
        Some(Box::new(standing(v, at, finish, self.now.ms)))
    }

    /// The answer for job `id` just accepted (the plan replayed with it in the queue).
    pub(super) fn deadline_answer(&self, id: u64) -> Option<JobDeadline> {
        let v = &self.jobs.get(&id)?.view;
        v.deadline.as_ref()?;
        let plan = self.plan();
        self.deadline_view(v, plan.get(&id).copied()).map(|d| *d)
    }

    /// For a queue that refuses late deadlines: job `j` (checked, not yet accepted) placed
    /// in the core's queue as `id`, the queue replayed, and the job taken out again. An
    /// error names the expected finish.
    pub(super) fn refuse_if_late(&mut self, j: &JobSubmit, id: u64) -> Result<(), Fail> {
        let (Some(at), Some(queue)) = (j.deadline_ms, j.queue.as_deref()) else {
            return Ok(());
        };
        if !self
            .queues
            .defs
            .get(queue)
            .is_some_and(|q| q.refuse_late_deadlines)
            || j.array.is_some()
        {
            return Ok(());
        }
        let now = self.now.ms;
        let record = self.record_of(id, j.clone(), now);
        let q = self.queue_id(queue);
        let live = self.live_job(&record.view, q);
        self.cluster.add(&live);
        self.predict_estimate(&record.view);
        let start = self.plan().get(&id).copied();
        let estimate = self.cluster.estimate(id);
        let answer = standing(
            &record.view,
            at,
            self.expected_finish(&record.view, start),
            now,
        );
        self.cluster.remove(id, self.now.secs());
        self.forget_prediction(id);
        if answer.status == DeadlineStatus::OnTrack {
            return Ok(());
        }
        let when = match (answer.finish_ms, estimate) {
            (Some(f), _) => format!(
                "its estimate says it would finish {} s after it",
                (f.saturating_sub(at)) / 1000
            ),
            (None, None) => "nothing estimates its run time (give --walltime)".to_string(),
            (None, Some(_)) => "nothing says when it could start (a job it would wait \
                                behind has no estimate of its run time)"
                .to_string(),
        };
        Err(Fail::Conflict(format!(
            "queue `{queue}` refuses jobs that would miss their deadline, and {when}; give a \
             later --deadline, a shorter --walltime, or submit to another queue"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(state: JobState, end_ms: Option<u64>) -> JobView {
        let mut v: JobView = serde_json::from_value(serde_json::json!({
            "id": 1, "name": "j", "user": "u", "state": "pending", "reason": "",
            "command": ["true"], "cwd": "/", "gpus": 1, "queue": "default",
            "priority": 0, "attempt": 0, "max_retries": 0, "submit_ms": 0,
            "gpu_indices": [], "cancel_requested": false
        }))
        .expect("a minimal view");
        v.state = state;
        v.end_ms = end_ms;
        v
    }

    #[test]
    fn standing_is_on_track_at_risk_met_or_missed() {
        let s = |v: &JobView, f: Option<u64>, now: u64| {
            let d = standing(v, 10_000, f, now);
            format!("{} {:?} {:?}", d.status.name(), d.finish_ms, d.slack_s)
        };
        let pending = view(JobState::Pending, None);
        assert_eq!(s(&pending, Some(4_000), 0), "on track Some(4000) Some(6)");
        assert_eq!(s(&pending, Some(10_000), 0), "on track Some(10000) Some(0)");
        assert_eq!(s(&pending, Some(13_000), 0), "at risk Some(13000) Some(-3)");
        assert_eq!(s(&pending, None, 0), "at risk None None");
        assert_eq!(
            s(&pending, Some(4_000), 11_000),
            "missed Some(4000) Some(6)"
        );
        let done = view(JobState::Succeeded, Some(9_000));
        assert_eq!(s(&done, None, 20_000), "met Some(9000) Some(1)");
        let late = view(JobState::Succeeded, Some(12_000));
        assert_eq!(s(&late, None, 20_000), "missed Some(12000) Some(-2)");
        let failed = view(JobState::Failed, Some(9_000));
        assert_eq!(s(&failed, None, 20_000), "missed Some(9000) Some(1)");
    }
}
