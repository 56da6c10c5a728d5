//! Dependencies between jobs (Slurm's `afterok`, `afterany`, `afternotok`): when a
//! pending job may join the core's queue, when it can never run, and the words of what
//! it waits for. A job id is a job id here: an array's record ends through the same
//! `set_state` path as a job once its last task has, so nothing below knows of arrays.

use std::collections::BTreeMap;

use gpusched_core::live::Blocked;
use gpusched_wire::{JobState, JobSubmit, JobView};

use crate::record::JobRecord;

use super::State;

/// The pending jobs waiting for each job to end (so an end looks only at its own
/// dependents, not at every job).
#[derive(Debug, Default)]
pub(super) struct Dependents(BTreeMap<u64, Vec<u64>>);

impl Dependents {
    /// Notes that `id` waits for `dep` (once).
    fn add(&mut self, dep: u64, id: u64) {
        let list = self.0.entry(dep).or_default();
        if !list.contains(&id) {
            list.push(id);
        }
    }

    /// The jobs that waited for `dep`, which ended (they are no longer noted).
    pub(super) fn take(&mut self, dep: u64) -> Option<Vec<u64>> {
        self.0.remove(&dep)
    }
}

/// How a dependant waits for one of its dependencies (the core's, whose wait reasons
/// name it).
pub use gpusched_core::live::After as Kind;

/// Whether a dependency that ended `state` lets a dependant of `kind` run
/// (`Some(true)`), never will (`Some(false)`), or has not decided yet (`None`: it has
/// not ended).
pub fn met_by(kind: Kind, state: Option<JobState>) -> Option<bool> {
    let s = state.filter(|s| s.is_terminal())?;
    Some(match kind {
        Kind::Ok => s == JobState::Succeeded,
        Kind::Any => true,
        Kind::NotOk => s != JobState::Succeeded,
    })
}

/// The field of the API that names this kind.
pub fn field(kind: Kind) -> &'static str {
    match kind {
        Kind::Ok => "after",
        Kind::Any => "after_any",
        Kind::NotOk => "after_notok",
    }
}

/// The words of waiting for jobs of this kind ("to succeed").
fn waiting_for(kind: Kind) -> &'static str {
    match kind {
        Kind::Ok => "to succeed",
        Kind::Any => "to end (however it ends)",
        Kind::NotOk => "to end without succeeding",
    }
}

/// Every dependency of a job with its kind, in the order `after`, `after_any`,
/// `after_notok`.
pub fn edges(v: &JobView) -> impl Iterator<Item = (Kind, u64)> + '_ {
    v.after
        .iter()
        .map(|&d| (Kind::Ok, d))
        .chain(v.after_any.iter().map(|&d| (Kind::Any, d)))
        .chain(v.after_notok.iter().map(|&d| (Kind::NotOk, d)))
}

/// Where a pending job stands with its dependencies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Every dependency is met (or it has none).
    Ready,
    /// These have not ended yet.
    Waiting(Vec<(Kind, u64)>),
    /// This one ended so that the job can never run.
    Doomed {
        kind: Kind,
        dep: u64,
        ended: JobState,
    },
}

impl State {
    /// The final state of job `id` once it has ended; `None` while it is pending,
    /// starting or running (or is not known). The one place that answers "how did job X
    /// end", so where ended jobs are kept can change here alone.
    pub(super) fn final_state(&self, id: u64) -> Option<JobState> {
        self.row(id)
            .map(|j| j.view.state)
            .filter(|s| s.is_terminal())
    }

    /// Whether dependency `id` is gone from memory and not read back for this round:
    /// it ended, and was committed, in a way that did not end its dependants (an end
    /// that dooms a dependant ends it in the same round, and a submission naming such
    /// a job is refused), so every kind of edge to it is met.
    fn gone(&self, id: u64) -> bool {
        self.row(id).is_none()
    }

    /// Where job `v` stands with its dependencies: doomed by the first that decided
    /// against it, else waiting for those that have not ended, else ready.
    pub(super) fn standing(&self, v: &JobView) -> Standing {
        let mut waiting = Vec::new();
        for (kind, dep) in edges(v) {
            if self.gone(dep) {
                continue;
            }
            let ended = self.final_state(dep);
            match met_by(kind, ended) {
                Some(true) => {}
                Some(false) => {
                    return Standing::Doomed {
                        kind,
                        dep,
                        ended: ended.unwrap_or(JobState::Failed),
                    }
                }
                None => waiting.push((kind, dep)),
            }
        }
        if waiting.is_empty() {
            Standing::Ready
        } else {
            Standing::Waiting(waiting)
        }
    }

    /// Puts a pending job in the core's queue when its dependencies are met and it is
    /// not held; otherwise keeps it out, noted under each dependency that has not ended
    /// (so that end looks at it). True if it was queued.
    pub(super) fn queue_if_ready(&mut self, job: &JobRecord) -> bool {
        let standing = self.standing(&job.view);
        if let Standing::Waiting(deps) = &standing {
            for &(_, d) in deps {
                self.dependents.add(d, job.view.id);
            }
        }
        if standing == Standing::Ready && !job.view.held {
            self.enqueue(job);
            return true;
        }
        false
    }

    /// Job `id` ended: each pending job that waited for it joins the queue once every
    /// dependency is met (unless held), or ends if this end means it can never run:
    /// failed for an unmet `after` (as before dependency kinds), cancelled for an
    /// `after_notok` whose dependency succeeded. Ending a dependant settles its own
    /// dependants in turn, so a chain ends at once.
    pub(super) fn settle_dependents(&mut self, id: u64, at_ms: u64) {
        let Some(waiting) = self.dependents.take(id) else {
            return;
        };
        for dep in waiting {
            let Some(job) = self.jobs.get(&dep) else {
                continue;
            };
            if job.view.state != JobState::Pending {
                continue; // cancelled (or ended by another dependency) meanwhile
            }
            match self.standing(&job.view) {
                Standing::Doomed {
                    kind,
                    dep: by,
                    ended,
                } => {
                    let (state, why) = doomed(kind, by, ended);
                    self.end(dep, state, why, at_ms);
                }
                Standing::Ready if !job.view.held => {
                    let record = job.clone();
                    self.enqueue(&record);
                    self.sched_due = true;
                }
                Standing::Ready | Standing::Waiting(_) => {}
            }
        }
    }

    /// Refuses a submission whose dependency is not known to `who`, or has already
    /// ended so that this job could never run. `Err` is the message of a 409.
    pub(super) fn check_deps(&self, j: &JobSubmit, who: &super::Who) -> Result<(), String> {
        let lists = [
            (Kind::Ok, &j.after),
            (Kind::Any, &j.after_any),
            (Kind::NotOk, &j.after_notok),
        ];
        for (kind, ids) in lists {
            for &dep in ids {
                // A job hidden by --private-jobs is as unknown here as anywhere.
                // An ended job is read back from the store for the round (the actor's
                // `recall_for_submit`), so `row` knows it too.
                let known = self.row(dep).is_some_and(|d| self.visible(&d.view, who));
                if !known {
                    return Err(format!("`{}`: there is no job {dep}", field(kind)));
                }
                if let Some(false) = met_by(kind, self.final_state(dep)) {
                    let ended = self.final_state(dep).map_or("", |s| s.name());
                    return Err(format!(
                        "`{}`: job {dep} already ended {ended}, so this job could never start",
                        field(kind)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether every dependency of `v` is met.
    pub(super) fn deps_ready(&self, v: &JobView) -> bool {
        self.standing(v) == Standing::Ready
    }

    /// What keeps pending job `v` out of the core's queue: a hold, dependencies that
    /// have not ended (the core says which comes first; `reasons.rs` words it).
    pub(super) fn blocked(&self, v: &JobView) -> Blocked {
        let unmet = match self.standing(v) {
            Standing::Waiting(deps) => deps,
            Standing::Ready | Standing::Doomed { .. } => Vec::new(),
        };
        Blocked {
            held: v.held,
            unmet,
        }
    }
}

/// How a dependant ends when `dep` ended `ended` against its `kind`.
fn doomed(kind: Kind, dep: u64, ended: JobState) -> (JobState, String) {
    match kind {
        Kind::NotOk => (
            JobState::Cancelled,
            format!(
                "dependency job {dep} succeeded, and this job was to run only if it did not \
                 (after_notok); it can never start"
            ),
        ),
        Kind::Ok | Kind::Any => (
            JobState::Failed,
            format!(
                "dependency job {dep} ended {}; it can never start",
                ended.name()
            ),
        ),
    }
}

/// "dependency: waiting for job 3 to succeed; jobs 4, 5 to end (however it ends)".
pub fn waiting_words(deps: &[(Kind, u64)]) -> String {
    let mut parts = Vec::new();
    for kind in [Kind::Ok, Kind::Any, Kind::NotOk] {
        let ids: Vec<String> = deps
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, d)| d.to_string())
            .collect();
        if ids.is_empty() {
            continue;
        }
        let jobs = if ids.len() == 1 { "job" } else { "jobs" };
        let words = waiting_for(kind);
        let words = if ids.len() > 1 {
            words.replace("it ends", "they end")
        } else {
            words.to_string()
        };
        parts.push(format!("{jobs} {} {words}", ids.join(", ")));
    }
    format!("dependency: waiting for {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_is_met_decided_or_open() {
        use JobState::*;
        assert_eq!(met_by(Kind::Ok, Some(Succeeded)), Some(true));
        assert_eq!(met_by(Kind::Ok, Some(Failed)), Some(false));
        assert_eq!(met_by(Kind::Ok, Some(Running)), None);
        assert_eq!(met_by(Kind::Any, Some(Cancelled)), Some(true));
        assert_eq!(met_by(Kind::Any, None), None);
        assert_eq!(met_by(Kind::NotOk, Some(Succeeded)), Some(false));
        assert_eq!(met_by(Kind::NotOk, Some(TimedOut)), Some(true));
        assert_eq!(met_by(Kind::NotOk, Some(Pending)), None);
    }

    #[test]
    fn waiting_words_name_each_kind() {
        assert_eq!(
            waiting_words(&[(Kind::Ok, 3)]),
            "dependency: waiting for job 3 to succeed"
        );
        assert_eq!(
            waiting_words(&[(Kind::Ok, 3), (Kind::Ok, 4)]),
            "dependency: waiting for jobs 3, 4 to succeed"
        );
        assert_eq!(
            waiting_words(&[(Kind::NotOk, 9), (Kind::Any, 5), (Kind::Any, 6)]),
            "dependency: waiting for jobs 5, 6 to end (however they end); \
             job 9 to end without succeeding"
        );
    }
}
