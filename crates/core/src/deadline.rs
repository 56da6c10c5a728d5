//! Deadlines (issue 37): a job may say when it must be finished (`--deadline`), and
//! two policies order by it.
//!
//! - `edf`: earliest deadline first, preemptive. Jobs with a deadline run in deadline
//!   order, jobs without one after them in submit order, on whatever GPUs are free; a
//!   job due sooner stops one due later or a best-effort one (the checkpoint contract
//!   on a live cluster), so best-effort jobs keep moving on the GPUs deadline jobs do
//!   not need and give them back when they do.
//! - `edf-backfill`: the same order for a cluster that must not preempt, with
//!   `backfill`'s pass: the first job that does not fit reserves its GPUs, and later
//!   jobs (best-effort ones among them) start only where they do not delay it.
//!
//! Plain EDF is known to fail badly under overload (the "domino effect": a job that can
//! no longer make its deadline still goes first, and makes the next one late too). So
//! both demote a *hopeless* job, one whose known remaining time (the simulator's oracle,
//! else its estimate) already ends past its deadline, to the best-effort class: it
//! still runs, behind the jobs that can still make theirs ([`PolicyConfig::deadline_demote`],
//! on by default; off gives textbook EDF, the baseline). A job with no estimate is never
//! judged hopeless: nothing says it is.
//!
//! That judgement needs a run time it can trust. A job whose run time is the
//! predictor's *belief* (a distribution, [`SchedJob::belief`], with no true remaining
//! time) is not put in deadline order on a point estimate: a prediction too long marks
//! a job that would make it hopeless, one too short keeps a hopeless one first until it
//! outlives it (issue 37: Philly with predictions, docs/deadlines.md). Such a job is
//! ranked instead by the Gittins rank of its belief *within its deadline*
//! ([`crate::predict::Belief::rank_within`]: the GPU-service it is expected to take per
//! chance of ending by its deadline), after the deadline-ordered jobs, before the
//! best-effort ones: a job likely to make it soon goes first, one whose chance shrinks
//! as it runs or as its deadline nears falls back, and one the belief gives no chance
//! comes after them by attained service (the belief may be wrong), still before the
//! best-effort jobs. Neither counted nor dropped by Moore and Hodgson's rule, whose sums
//! are only as good as the estimates in them.
//!
//! At submission the caller asks [`answer`] with the job's estimated finish (its
//! estimated start plus its estimate): met, or at risk with the finish it expects.
//!
//! [`PolicyConfig::deadline_demote`]: crate::policy::PolicyConfig::deadline_demote

use crate::policy::PolicyConfig;
use crate::schedule::SchedJob;
use crate::Seconds;

/// Whether `job`'s run time is a belief to rank by ([`key`]) rather than a number to
/// order and judge by: it has a belief that knows something, and no true remaining time.
pub fn believed(job: &SchedJob) -> bool {
    job.remaining.is_none() && job.belief.as_ref().is_some_and(|b| !b.bins().is_empty())
}

/// The remaining run time the scheduler knows for `job`: the oracle's (simulator), else
/// the estimate less what it ran; none without either.
fn known_remaining(job: &SchedJob) -> Option<Seconds> {
    job.remaining
        .or_else(|| job.spec.estimate.map(|e| (e - job.attained).max(0.0)))
}

/// Whether `job` can no longer make its deadline by what is known: started now, it
/// would end after it; for a [`believed`] job, its belief gives it no chance of ending
/// by it.
pub fn hopeless(job: &SchedJob, now: Seconds) -> bool {
    if believed(job) {
        return match (job.spec.deadline, &job.belief) {
            (Some(d), Some(b)) => b.rank_within(job.attained, d - now).is_none(),
            _ => false,
        };
    }
    match (job.spec.deadline, known_remaining(job)) {
        (Some(d), Some(r)) => now + r > d,
        _ => false,
    }
}

/// Marks the jobs to demote this pass ([`SchedJob::demoted`]): the hopeless ones, and
/// those Moore and Hodgson's rule drops. Their rule maximises the number of jobs that
/// meet their deadlines on one machine: take the jobs in deadline order, and whenever
/// the one just added would end late, drop the longest taken so far. Here the machine is
/// the cluster's GPUs as one fluid (a job of G GPUs and R seconds left is G x R
/// GPU-seconds of work, done at `gpus` GPU-seconds per second), so a job is dropped when
/// the due work before it cannot be done by its deadline even with every GPU on it: a
/// bound the real cluster can only do worse than. Jobs whose remaining time is unknown
/// or [`believed`] are neither counted nor dropped. Deterministic: ties by deadline then
/// id.
pub fn mark_demoted(jobs: &mut [SchedJob], now: Seconds, gpus: f64) {
    let mut due: Vec<(Seconds, u64, usize, f64)> = Vec::new();
    for (i, j) in jobs.iter_mut().enumerate() {
        j.demoted = hopeless(j, now);
        if believed(j) {
            continue;
        }
        if let (Some(d), Some(r), false) = (j.spec.deadline, known_remaining(j), j.demoted) {
            due.push((d, j.spec.id.0, i, r * j.spec.gpus as f64));
        }
    }
    if due.is_empty() || gpus <= 0.0 {
        return;
    }
    due.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    // The taken jobs' work, largest on top (ties: the later deadline, then the larger id).
    let mut taken: std::collections::BinaryHeap<(Work, usize)> = Default::default();
    let mut work = 0.0;
    for &(d, id, i, w) in &due {
        work += w;
        taken.push((Work(w, d, id), i));
        while now + work / gpus > d {
            let Some((Work(w, _, _), k)) = taken.pop() else {
                break;
            };
            work -= w;
            jobs[k].demoted = true;
        }
    }
}

/// A taken job's work, ordered for the heap: the most GPU-seconds, then the later
/// deadline, then the larger id.
#[derive(PartialEq)]
struct Work(f64, Seconds, u64);

impl Eq for Work {}

impl PartialOrd for Work {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Work {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0
            .total_cmp(&other.0)
            .then(self.1.total_cmp(&other.1))
            .then(self.2.cmp(&other.2))
    }
}

/// The first key of the [`believed`] jobs' class: after every deadline (a time).
const BELIEVED: f64 = f64::MAX / 2.0;
/// The first key of the believed jobs whose belief gives them no chance any more: after
/// those with one, before the best-effort class (infinite).
const BELIEVED_LATE: f64 = f64::MAX;

/// The sort key under `edf`/`edf-backfill` (smaller first): the deadline for a job that
/// can still make it; then, with demotion on, the [`believed`] jobs with a chance by
/// their rank within the deadline times their GPUs, and those without one by attained
/// GPU-service (least attained service, as `blend` ranks a job past its belief: the
/// belief may be wrong); then everyone else by submit time.
pub fn key(cfg: &PolicyConfig, job: &SchedJob, now: Seconds) -> (f64, f64) {
    let best_effort = (f64::INFINITY, job.spec.submit);
    match job.spec.deadline {
        Some(d) if cfg.deadline_demote && believed(job) => {
            let belief = job.belief.as_ref().expect("believed");
            let gpus = job.spec.gpus.max(1) as f64;
            match belief.rank_within(job.attained.max(0.0), d - now) {
                Some(r) => (BELIEVED, r * gpus),
                None => (BELIEVED_LATE, job.attained.max(0.0) * gpus),
            }
        }
        Some(d) if !(cfg.deadline_demote && (job.demoted || hopeless(job, now))) => {
            (d, job.spec.submit)
        }
        _ => best_effort,
    }
}

/// What a submission with a deadline is told.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// Its estimated finish is at or before the deadline, by `slack` seconds.
    Met { finish: Seconds, slack: Seconds },
    /// Its estimated finish is after the deadline (`slack` < 0), or unknown (no
    /// estimate: `finish` none).
    AtRisk {
        finish: Option<Seconds>,
        slack: Option<Seconds>,
    },
}

/// The answer for a job due at `deadline` expected to finish at `finish`.
pub fn answer(deadline: Seconds, finish: Option<Seconds>) -> Answer {
    match finish {
        Some(f) if f <= deadline => Answer::Met {
            finish: f,
            slack: deadline - f,
        },
        Some(f) => Answer::AtRisk {
            finish: Some(f),
            slack: Some(deadline - f),
        },
        None => Answer::AtRisk {
            finish: None,
            slack: None,
        },
    }
}

#[cfg(test)]
mod tests;
