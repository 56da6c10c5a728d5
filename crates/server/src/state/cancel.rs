//! `cancel`: one job (a pending one ends now, a running one is asked to stop), or
//! several at once (`gpusched cancel A B C`).

use gpusched_wire::history::{AuditAction, JobEventKind};
use gpusched_wire::{CancelManyResult, CancelOutcome, CancelResult, JobState};

use super::privacy::no_such_job;
use super::{Fail, State, Who};

impl State {
    /// A cancel asked for job `id` of `owner` by `who`: an event in its timeline, and an
    /// audit entry when an admin cancels another user's job (only admins get that far:
    /// `owned_job`). `what` describes the job for the audit log.
    pub(super) fn record_cancel_request(&mut self, id: u64, owner: &str, who: &Who, what: String) {
        self.note(
            id,
            JobEventKind::CancelRequested,
            format!("by {}", who.user),
        );
        if owner != who.user {
            self.audit(
                &who.user,
                AuditAction::CancelOther,
                format!("job {id}"),
                format!("of {owner}, {what}"),
            );
        }
    }

    pub fn cancel(&mut self, id: u64, who: &Who) -> Result<CancelResult, Fail> {
        if self.jobs.get(&id).is_some_and(|j| j.view.array.is_some()) {
            return self.cancel_array(id, who);
        }
        let job = self.owned_job(id, who, "cancel it")?;
        let state = job.view.state;
        let owner = job.view.user.clone();
        let asked = job.view.cancel_requested;
        if !state.is_terminal() && !asked {
            self.record_cancel_request(id, &owner, who, state.name().to_string());
        }
        let result = match state {
            s if s.is_terminal() => "already_ended",
            JobState::Pending => {
                self.end(
                    id,
                    JobState::Cancelled,
                    "cancelled before it started".into(),
                    self.now.ms,
                );
                "cancelled"
            }
            _ => {
                // Asking again changes nothing (and so writes nothing).
                if !asked {
                    let job = self.jobs.get_mut(&id).ok_or_else(|| no_such_job(id))?;
                    job.view.cancel_requested = true;
                    let on = super::gang::nodes_of(&job.view);
                    job.view.reason = if job.view.parts.len() > 1 {
                        format!("cancel requested; {on} are stopping it")
                    } else {
                        format!("cancel requested; {on} is stopping it")
                    };
                    // Every part's node is told.
                    self.bump_job(id);
                }
                "cancelling"
            }
        };
        Ok(CancelResult {
            id,
            result: result.into(),
            // An ended job's row was read from the store: its state is the one above.
            state: self.jobs.get(&id).map_or(state, |j| j.view.state),
        })
    }

    /// Cancels every id in this one round of the state task, so the scheduling pass that
    /// follows sees them all gone: GPUs freed by a running one cannot start a pending one
    /// of the same list. An id that cannot be cancelled (unknown, someone else's) is
    /// answered `refused` with the reason; the others are cancelled all the same.
    pub fn cancel_many(&mut self, ids: &[u64], who: &Who) -> Result<CancelManyResult, Fail> {
        if ids.is_empty() {
            return Err(Fail::BadRequest(
                "`ids` is empty: give at least one job id to cancel".into(),
            ));
        }
        let max = self.cfg.limits.max_batch;
        if ids.len() > max {
            return Err(Fail::BadRequest(format!(
                "{} ids in one cancel; this server takes at most {max} (--max-batch): split it",
                ids.len()
            )));
        }
        let results = ids
            .iter()
            .map(|&id| match self.cancel(id, who) {
                Ok(r) => CancelOutcome {
                    id,
                    result: r.result,
                    state: Some(r.state),
                    error: None,
                },
                Err(f) => CancelOutcome {
                    id,
                    result: "refused".into(),
                    state: None,
                    error: Some(f.message().to_string()),
                },
            })
            .collect();
        Ok(CancelManyResult { results })
    }
}
