//! Who may see which jobs, and which parts of them.
//!
//! - A job's command, output (every attempt's logs), environment and checkpoint
//!   information belong to its owner and the admins; anyone else asking gets 403 (or,
//!   for the command and the checkpoint time in a job's view, nothing). As Slurm's
//!   `squeue`, everyone sees that other users' jobs exist, their names, shapes, states
//!   and times, which is what sharing a cluster needs; a command line may hold secrets
//!   (tokens, passwords in arguments), so it is the owner's. One rule for every answer
//!   that carries a job: the job list, one job, `wait`, an array's tasks and the history
//!   export all go through [`redact`].
//! - With `--private-jobs` (Slurm's `PrivateData=jobs`) a non-admin user does not even
//!   learn that other users' jobs exist: they are missing from lists, single-job calls
//!   answer 404 exactly as for an id never issued, and GPUs they hold show an anonymous
//!   holder.

use crate::record::JobRecord;
use gpusched_wire::JobView;

use super::{Fail, State, Who};

/// What a node listing shows in place of a hidden job's owner.
pub const ANOTHER_USER: &str = "(another user)";

pub(super) fn no_such_job(id: u64) -> Fail {
    Fail::NotFound(format!(
        "no job with id {id}; `gpusched queue --all` lists the known jobs"
    ))
}

/// The job's owner or an admin.
pub fn owns(v: &JobView, who: &Who) -> bool {
    who.admin || v.user == who.user
}

/// Blanks what only the owner (or an admin) may read of a job's view.
pub fn redact(v: &mut JobView, who: &Who) {
    if !owns(v, who) {
        v.last_checkpoint_ms = None;
        v.command = Vec::new();
        // A step's command line is its job's owner's as much as the job's.
        for s in v.steps.iter_mut().flat_map(|s| s.iter_mut()) {
            s.command = Vec::new();
        }
    }
}

/// The refusal for someone else's job (when its existence is not secret).
pub fn not_yours(v: &JobView, who: &Who, what: &str) -> Fail {
    Fail::Forbidden(format!(
        "job {} belongs to {}; only its owner or an admin may {what} (you are {})",
        v.id, v.user, who.user
    ))
}

impl State {
    /// Whether `who` may know that the job exists at all.
    pub fn visible(&self, v: &JobView, who: &Who) -> bool {
        !self.cfg.private_jobs || owns(v, who)
    }

    /// The job `id` if `who` may know of it; otherwise the very answer an unknown id
    /// gets, so a private job's existence does not leak.
    pub(super) fn job_for(&self, id: u64, who: &Who) -> Result<&JobRecord, Fail> {
        // Live jobs from memory, ended ones as the actor read them from the store.
        self.row(id)
            .filter(|j| self.visible(&j.view, who))
            .ok_or_else(|| no_such_job(id))
    }

    /// The job `id` if `who` owns it (or is an admin); 403 if they may only see it.
    pub(super) fn owned_job(&self, id: u64, who: &Who, what: &str) -> Result<&JobRecord, Fail> {
        let job = self.job_for(id, who)?;
        if !owns(&job.view, who) {
            return Err(not_yours(&job.view, who, what));
        }
        Ok(job)
    }

    /// The user a job on a node is shown under: its owner, or an anonymous holder for a
    /// job `who` may not see.
    pub(super) fn holder_name(&self, job: u64, who: &Who) -> Option<String> {
        let j = self.jobs.get(&job)?;
        Some(if self.visible(&j.view, who) {
            j.view.user.clone()
        } else {
            ANOTHER_USER.to_string()
        })
    }

    /// A job id on a node as `who` may see it (none for a hidden job).
    pub(super) fn holder_id(&self, job: u64, who: &Who) -> Option<u64> {
        self.jobs
            .get(&job)
            .filter(|j| self.visible(&j.view, who))
            .map(|_| job)
    }
}
