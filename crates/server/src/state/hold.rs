//! Hold, release and update of pending jobs (Slurm's `scontrol hold/release/update`).
//! A held job is out of the core's queue, so it neither starts nor holds a place in
//! anyone's estimates; its dependencies still settle it (a held job whose dependency
//! dooms it ends as any other). Only the job's owner or an admin may; an admin's change
//! to another user's job goes to the audit log.

use gpusched_wire::history::{AuditAction, JobEventKind};
use gpusched_wire::{JobState, JobUpdate, JobView};

use super::{validate, Fail, State, Who};
use crate::groups::UserGroups;

/// The note a held job keeps (its stored reason): who held it.
pub(super) fn held_by(user: &str) -> String {
    format!("held by {user}")
}

impl State {
    /// Takes pending job `id` out of the queue until `release`. Holding a held job is
    /// refused (409), naming who holds it.
    pub fn hold(&mut self, id: u64, who: &Who) -> Result<JobView, Fail> {
        let v = &self.pending_job(id, who, "hold it")?.view;
        if v.held {
            return Err(Fail::Conflict(format!(
                "job {id} is already {}; `gpusched release {id}` releases it",
                v.reason
            )));
        }
        let owner = v.user.clone();
        self.unqueue(id);
        self.sched_due = true;
        if let Some(job) = self.jobs.get_mut(&id) {
            job.view.held = true;
            job.view.reason = held_by(&who.user);
        }
        self.note(id, JobEventKind::Held, format!("by {}", who.user));
        self.audit_other(who, &owner, AuditAction::HoldOther, id);
        self.get(id, who)
    }

    /// Lets held job `id` wait again: it joins the queue at once if its dependencies are
    /// met (its submit time is kept, so under fifo it goes back where it was). Releasing
    /// a job that is not held is refused (409).
    pub fn release_hold(&mut self, id: u64, who: &Who) -> Result<JobView, Fail> {
        let job = self.pending_job(id, who, "release it")?;
        if !job.view.held {
            return Err(Fail::Conflict(format!(
                "job {id} is not held, so there is nothing to release; `gpusched hold {id}` \
                 holds it"
            )));
        }
        let owner = job.view.user.clone();
        let held = job.view.reason.clone();
        let job = self
            .jobs
            .get_mut(&id)
            .ok_or_else(|| super::privacy::no_such_job(id))?;
        job.view.held = false;
        job.view.reason = String::new();
        let record = job.clone();
        self.queue_if_ready(&record);
        self.sched_due = true;
        self.note(
            id,
            JobEventKind::Released,
            format!("by {} ({held})", who.user),
        );
        self.audit_other(who, &owner, AuditAction::ReleaseOther, id);
        self.get(id, who)
    }

    /// Changes a pending job's priority, walltime or queue. The new values pass the very
    /// checks of a submit (walltime range; the queue's access, `max`, `max_gpus_per_user`;
    /// `max_priority` unless an admin asks). The job keeps its id and submit time: under
    /// fifo its place does not move; under priority, sjf and backfill the new values
    /// order it from the next pass on. `groups` are the owner's Unix groups.
    pub fn update(
        &mut self,
        id: u64,
        up: &JobUpdate,
        who: &Who,
        groups: &UserGroups,
    ) -> Result<JobView, Fail> {
        let v = self.pending_job(id, who, "update it")?.view.clone();
        validate::check_walltime(up.walltime_s).map_err(Fail::BadRequest)?;
        let queue = up.queue.clone().unwrap_or_else(|| v.queue.clone());
        if up.queue.is_some() {
            if !self.queues.defs.contains_key(&queue) {
                return Err(Fail::Conflict(format!(
                    "no queue named `{queue}`; the queues are: {}",
                    self.queues.names()
                )));
            }
            if !self.queues.allows(&queue, &v.user, groups.of(&v.user)) {
                return Err(Fail::Forbidden(format!(
                    "{} may not submit to queue `{queue}`; ask an admin to add them to its \
                     users or groups",
                    v.user
                )));
            }
        }
        let priority = up.priority.unwrap_or(v.priority);
        // A slice counts as one GPU, as at submit.
        let need = if v.slice.is_some() { 1 } else { v.gpus };
        // Only what changes is checked against `max_priority`: moving a job an admin
        // raised to another queue of the same bounds keeps its priority.
        let check = (!who.admin).then_some(priority);
        self.queue_fit(&queue, check, need.max(1), need)
            .map_err(Fail::Conflict)?;
        let mut changes = Vec::new();
        if priority != v.priority {
            changes.push(format!("priority {} -> {priority}", v.priority));
        }
        if let Some(w) = up.walltime_s.filter(|w| Some(*w) != v.walltime_s) {
            let old = v.walltime_s.map_or("none".to_string(), |o| format!("{o}s"));
            changes.push(format!("walltime {old} -> {w}s"));
        }
        if queue != v.queue {
            changes.push(format!("queue {} -> {queue}", v.queue));
        }
        if changes.is_empty() {
            // Nothing differs: nothing is written.
            return self.get(id, who);
        }
        let job = self
            .jobs
            .get_mut(&id)
            .ok_or_else(|| super::privacy::no_such_job(id))?;
        job.view.priority = priority;
        if up.walltime_s.is_some() {
            job.view.walltime_s = up.walltime_s;
        }
        job.view.queue = queue;
        let record = job.clone();
        // The core's copy has the old values: it is put in again with the new ones (a
        // held or dependent job is not in it and gets them when it joins).
        self.unqueue(id);
        self.queue_if_ready(&record);
        self.sched_due = true;
        let detail = format!("by {}: {}", who.user, changes.join(", "));
        self.note(id, JobEventKind::Updated, detail);
        self.audit_other(who, &v.user, AuditAction::UpdateOther, id);
        self.get(id, who)
    }

    /// Job `id`, if `who` may change it (`what`: the words of the 403) and it is pending
    /// (409 naming its state otherwise).
    fn pending_job(
        &self,
        id: u64,
        who: &Who,
        what: &str,
    ) -> Result<&crate::record::JobRecord, Fail> {
        let job = self.owned_job(id, who, what)?;
        if let Some(why) = self.follow_refusal(id) {
            return Err(Fail::Conflict(why));
        }
        if job.view.state != JobState::Pending {
            return Err(Fail::Conflict(format!(
                "job {id} is {}, not pending: only a pending job can be held, released or \
                 updated",
                job.view.state.name()
            )));
        }
        Ok(job)
    }

    /// An admin's action on another user's job, for the audit log.
    fn audit_other(&mut self, who: &Who, owner: &str, action: AuditAction, id: u64) {
        if owner != who.user {
            self.audit(
                &who.user,
                action,
                format!("job {id}"),
                format!("of {owner}"),
            );
        }
    }
}
