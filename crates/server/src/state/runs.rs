//! The core decides preemptions from what it knows of each placed job's run (the core's
//! `live/runs.rs`: started, last checkpoint, being cancelled or stopped). The server
//! owns those facts in its job rows and tells the core whenever a row changed: every
//! change to a row marks it (`tracked.rs`), so telling the core the runs of the marked
//! rows, before each round and once more before the marks are cleared, misses none.

use gpusched_core::live::RunFacts;
use gpusched_wire::{JobState, JobView};

use super::State;

/// What the core needs of a placed job's run, from its view.
pub(super) fn run_facts(v: &JobView) -> RunFacts {
    RunFacts {
        running: v.state == JobState::Running,
        start_ms: v.start_ms,
        saved_ms: v.last_checkpoint_ms,
        cancelling: v.cancel_requested,
        stopping: v.preempt_requested,
    }
}

impl State {
    /// Tells the core the runs of the rows changed since the marks were last cleared.
    /// Also where a stop being asked of a running job is first seen, for the
    /// checkpoint's cost (`checkpoint_cost.rs`).
    pub(super) fn tell_runs_touched(&mut self) {
        let now = self.now.ms;
        for &id in self.jobs.touched() {
            match self.jobs.get(&id) {
                Some(j) => {
                    let v = &j.view;
                    self.cluster.set_run(id, run_facts(v));
                    if v.preempt_requested && v.state == JobState::Running {
                        self.checkpoint_cost.asked(id, now);
                    } else if !v.preempt_requested {
                        self.checkpoint_cost.not_asked(id);
                    }
                }
                None => self.checkpoint_cost.not_asked(id),
            }
        }
    }

    /// Tells the core the runs of every placed job (after a restart rebuilt it).
    pub(super) fn tell_runs_all(&mut self) {
        for id in self.cluster.placed() {
            if let Some(j) = self.jobs.get(&id) {
                self.cluster.set_run(id, run_facts(&j.view));
            }
        }
    }
}
