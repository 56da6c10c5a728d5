//! `checkpoint`: a running job's owner (or an admin) says it saved a checkpoint now.

use gpusched_wire::history::JobEventKind;
use gpusched_wire::{JobState, JobView};

use super::privacy::no_such_job;
use super::{Fail, State, Who};

impl State {
    /// Records that a running job saved a checkpoint now (its owner or an admin says so);
    /// preemption then picks jobs that lose the least work.
    pub fn checkpoint(&mut self, id: u64, who: &Who) -> Result<JobView, Fail> {
        let job = self.owned_job(id, who, "report its checkpoints")?;
        if job.view.state != JobState::Running {
            return Err(Fail::Conflict(format!(
                "job {id} is {}, not running: there is nothing to checkpoint",
                job.view.state.name()
            )));
        }
        let job = self.jobs.get_mut(&id).ok_or_else(|| no_such_job(id))?;
        job.view.last_checkpoint_ms = Some(self.now.ms);
        self.note(
            id,
            JobEventKind::Checkpoint,
            format!("reported by {} through the API", who.user),
        );
        self.get(id, who)
    }
}
