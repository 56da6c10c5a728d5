//! What a job asks for, and the lifecycle it moves through.

use std::collections::BTreeMap;

use crate::ids::{JobId, QueueId, UserId};
use crate::Seconds;

/// The immutable part of a job: what was submitted.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    pub id: JobId,
    /// Whole GPUs wanted (this scheduler places whole GPUs; see
    /// [`crate::resources::ResourceRequest`] for the full request language).
    pub gpus: u32,
    /// Accepted GPU model prefix, if the job is picky.
    pub gpu_model: Option<String>,
    pub user: UserId,
    pub queue: QueueId,
    /// The account it is charged to, with `user` its association under the `fairtree`
    /// policy ([`crate::policy::fairtree`]); the root (default) without accounts.
    pub account: crate::policy::fairtree::AccountId,
    /// Larger runs first under the `priority` policy.
    pub priority: i32,
    pub submit: Seconds,
    /// The user's (or a predictor's) estimate of the run time, used by `sjf` and
    /// `backfill`; never trusted to end a job.
    pub estimate: Option<Seconds>,
    /// CPUs (thousandths) and memory the job asks for: weighed by `drf`'s dominant
    /// share, and held on its node while it runs when the scheduler reserves node
    /// resources ([`crate::Scheduler::reserve_node_resources`]; the simulator does not).
    /// 0: not counted.
    pub cpu_milli: u64,
    pub mem_mib: u64,
    /// Generic counted resources (`fpga = 1`) it needs on its node, held while it runs
    /// when the scheduler reserves node resources. Empty for most jobs.
    pub generic: BTreeMap<String, u64>,
    /// `Some` for a job whose GPUs span several nodes as one all-or-nothing placement
    /// ([`crate::gang`]); `gpus` is then the total over every node. `None`: placed by
    /// the strategy as before (the simulator's traces never set it).
    pub gang: Option<crate::gang::Gang>,
    /// The node sets it may use, tried in order (one per partition, `crate::eligible`);
    /// empty: any node. Made by the caller from the job's rules and the nodes it knows.
    pub nodes: Vec<crate::eligible::NodeMask>,
    /// GPU models it runs fastest on, fastest first (`crate::speed`): in each node set
    /// they are tried in this order before any model, so where several types are free
    /// it goes to the one where it gains most. Empty (or with `gpu_model` set): no
    /// preference. Made by the caller, which knows the cluster's models.
    pub prefer: Vec<String>,
    /// When the job should be finished (`--deadline`), if it has one: `edf` and
    /// `edf-backfill` run jobs with the earliest deadline first ([`crate::deadline`]).
    pub deadline: Option<Seconds>,
}

impl JobSpec {
    /// What each of its node sets accepts, in order: one [`Want`] per set, or one that
    /// accepts every node of its model; in each, first its preferred models one by one
    /// (`prefer`), then any.
    ///
    /// [`Want`]: crate::freemap::Want
    pub fn wants(&self) -> impl Iterator<Item = crate::freemap::Want<'_>> {
        let model = self.gpu_model.as_deref();
        let prefer: &[String] = if model.is_none() { &self.prefer } else { &[] };
        let any = self.nodes.is_empty().then_some(None);
        any.into_iter()
            .chain(self.nodes.iter().map(Some))
            .flat_map(move |nodes| {
                prefer
                    .iter()
                    .map(|m| Some(m.as_str()))
                    .chain(std::iter::once(model))
                    .map(move |model| crate::freemap::Want { model, nodes })
            })
    }

    /// Whether node `i` (the scheduler's index) is in one of its node sets.
    pub fn may_use(&self, i: usize) -> bool {
        self.nodes.is_empty() || self.nodes.iter().any(|m| m.contains(i))
    }

    /// Whether it may use node `i` of `map`: its model and its node sets.
    pub fn admits(&self, map: &crate::freemap::FreeMap, i: usize) -> bool {
        map.model_matches(i, self.gpu_model.as_deref()) && self.may_use(i)
    }

    /// Whether it accepts every node (no model, no node set).
    pub fn any_node(&self) -> bool {
        self.gpu_model.is_none() && self.nodes.is_empty()
    }
}

/// The states of DESIGN.md's job lifecycle.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JobState {
    Pending,
    Starting,
    Running,
    Preempting,
    Succeeded,
    Failed,
    Cancelled,
    TimedOut,
    Lost,
}

/// A transition the lifecycle does not allow.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("a job cannot go from {from:?} to {to:?}")]
pub struct TransitionError {
    pub from: JobState,
    pub to: JobState,
}

impl JobState {
    /// Whether the job will never run again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Cancelled | JobState::TimedOut
        )
    }

    /// Checks one step of `pending → starting → running → {succeeded, failed, cancelled,
    /// timed_out}`, `running → preempting → pending`, `running|starting → lost → pending`,
    /// `pending → failed` (a dependency failed), and cancellation from any live state.
    pub fn transition(self, to: JobState) -> Result<JobState, TransitionError> {
        use JobState::*;
        let ok = match (self, to) {
            (Pending, Starting) | (Starting, Running) => true,
            (Running, Succeeded | Failed | TimedOut | Preempting) => true,
            (Starting, Failed) => true,
            // A job whose dependency failed can never start.
            (Pending, Failed) => true,
            (Preempting, Pending) | (Lost, Pending) => true,
            (Running | Starting | Preempting, Lost) => true,
            (Lost, Failed) => true, // out of retries
            (from, Cancelled) => !from.is_terminal(),
            _ => false,
        };
        if ok {
            Ok(to)
        } else {
            Err(TransitionError { from: self, to })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::JobState::*;

    #[test]
    fn the_happy_path_and_requeues_are_allowed() {
        let s = Pending.transition(Starting).unwrap();
        let s = s.transition(Running).unwrap();
        let s = s.transition(Preempting).unwrap();
        let s = s.transition(Pending).unwrap();
        assert_eq!(s, Pending);
        assert!(Running
            .transition(Lost)
            .unwrap()
            .transition(Pending)
            .is_ok());
        assert!(Running.transition(TimedOut).unwrap().is_terminal());
        assert!(Pending.transition(Failed).is_ok(), "a dependency failed");
        assert!(Pending.transition(Succeeded).is_err(), "it never ran");
    }

    #[test]
    fn terminal_states_stay_terminal() {
        for t in [Succeeded, Failed, Cancelled, TimedOut] {
            assert!(t.transition(Pending).is_err());
            assert!(t.transition(Cancelled).is_err());
        }
        assert!(
            Pending.transition(Running).is_err(),
            "must pass through starting"
        );
        let e = Succeeded.transition(Running).unwrap_err().to_string();
        assert!(e.contains("Succeeded") && e.contains("Running"), "{e}");
    }
}
