//! Every job state change goes through the core's lifecycle
//! (`gpusched_core::JobState::transition`). The API's states are the core's less its two
//! intermediate ones: `lost` and `preempting` are steps of the requeue paths (a run lost
//! or preempted goes back to `pending` through them) and are never stored.

use gpusched_core::JobState as Core;
use gpusched_wire::JobState;

use super::State;

/// The core's state of an API state.
pub(super) fn to_core(s: JobState) -> Core {
    match s {
        JobState::Pending => Core::Pending,
        JobState::Starting => Core::Starting,
        JobState::Running => Core::Running,
        JobState::Succeeded => Core::Succeeded,
        JobState::Failed => Core::Failed,
        JobState::Cancelled => Core::Cancelled,
        JobState::TimedOut => Core::TimedOut,
    }
}

/// The API state of a core state; `None` for the intermediate ones.
pub(super) fn to_wire(s: Core) -> Option<JobState> {
    Some(match s {
        Core::Pending => JobState::Pending,
        Core::Starting => JobState::Starting,
        Core::Running => JobState::Running,
        Core::Succeeded => JobState::Succeeded,
        Core::Failed => JobState::Failed,
        Core::Cancelled => JobState::Cancelled,
        Core::TimedOut => JobState::TimedOut,
        Core::Preempting | Core::Lost => return None,
    })
}

/// Where `path` leads from `from`, if every step is one the lifecycle allows and the
/// end is a state the API has.
pub(super) fn walk(from: JobState, path: &[Core]) -> Result<JobState, String> {
    let mut at = to_core(from);
    for &step in path {
        at = at.transition(step).map_err(|e| e.to_string())?;
    }
    to_wire(at).ok_or_else(|| format!("a job cannot rest in {at:?}"))
}

impl State {
    /// Moves job `id` along `path` (usually one step; a requeue goes through `Lost` or
    /// `Preempting`). A move the lifecycle does not allow is a bug elsewhere: it is
    /// logged and refused, and nothing changes. True if the job moved.
    pub(super) fn set_state(&mut self, id: u64, path: &[Core]) -> bool {
        // Looked at first: a refused move must not mark the row as changed.
        let Some(from) = self.jobs.get(&id).map(|j| j.view.state) else {
            return false;
        };
        match walk(from, path) {
            Ok(to) => {
                if let Some(job) = self.jobs.get_mut(&id) {
                    job.view.state = to;
                    self.cfg.metrics.moved(&job.view, from, path, self.now.ms);
                }
                if to.is_terminal() {
                    self.idle.ended(id);
                } else if to == JobState::Pending {
                    // Not held any more: its idle spell is over.
                    self.idle.forget(id);
                }
                if to.is_terminal() {
                    // It holds no GPU any more: nothing more will be charged to it.
                    self.forget_energy(id);
                    // Its row stays in the store only, once this round has committed.
                    self.leaving(id);
                }
                true
            }
            Err(e) => {
                tracing::error!(job = id, ?from, ?path, "state change refused: {e}");
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_states_map_onto_the_core_and_back() {
        for s in JobState::ALL {
            assert_eq!(to_wire(to_core(s)), Some(s));
        }
        assert_eq!(to_wire(Core::Lost), None);
    }

    #[test]
    fn requeues_pass_through_the_cores_intermediate_states() {
        let lost = walk(JobState::Running, &[Core::Lost, Core::Pending]);
        assert_eq!(lost, Ok(JobState::Pending));
        let preempted = walk(JobState::Running, &[Core::Preempting, Core::Pending]);
        assert_eq!(preempted, Ok(JobState::Pending));
        assert_eq!(
            walk(JobState::Starting, &[Core::Running, Core::Succeeded]),
            Ok(JobState::Succeeded)
        );
        assert!(
            walk(JobState::Running, &[Core::Lost]).is_err(),
            "never rests in lost"
        );
    }

    /// A state with one pending job (id 1).
    fn one_pending() -> State {
        let mut st = super::super::tests::one_gpu_state();
        let who = super::super::Who {
            user: "ann".into(),
            admin: false,
        };
        let job = gpusched_wire::JobSubmit {
            command: vec!["/bin/true".into()],
            ..Default::default()
        };
        st.submit(vec![job], &who, &crate::groups::UserGroups::default())
            .unwrap_or_else(|e| panic!("submitted: {}", e.message()));
        st.take_touched();
        st
    }

    #[test]
    fn the_state_refuses_an_illegal_change_and_changes_nothing() {
        let mut st = one_pending();
        assert!(
            !st.set_state(1, &[Core::Running]),
            "must pass through starting"
        );
        assert_eq!(st.jobs[&1].view.state, JobState::Pending);
        assert!(st.take_touched().jobs.is_empty(), "nothing to persist");
        assert!(!st.set_state(1, &[Core::Lost, Core::Pending]), "never ran");
        assert!(st.set_state(1, &[Core::Starting]));
        assert_eq!(st.jobs[&1].view.state, JobState::Starting);
        assert!(st.take_touched().jobs.contains(&1));
    }

    #[test]
    fn an_illegal_change_is_refused() {
        let e = walk(JobState::Succeeded, &[Core::Running]).unwrap_err();
        assert!(e.contains("Succeeded") && e.contains("Running"), "{e}");
        assert!(walk(JobState::Pending, &[Core::Running]).is_err());
        assert!(walk(JobState::Cancelled, &[Core::Cancelled]).is_err());
        assert!(walk(JobState::Pending, &[Core::Lost, Core::Pending]).is_err());
    }
}
