//! The starvation guard of the service- and size-ranked preemptive policies (`srtf`,
//! `srsf`, `blend`; issue 37): a promotion after a wait bounded by the job's own
//! service, Tiresias' rule carried over to a continuous rank.
//!
//! Ranking by attained service (or by a size that grows with it) lets a stream of
//! newcomers keep a long job waiting for as long as they come: on the Muri traces the
//! longest jobs finished later under `blend` than under Tiresias, whose last queue
//! serves them first come, first served. With [`PolicyConfig::promote_after`] `= K > 0`:
//!
//! - a job that has run and then waited `K` times the service it attained since its
//!   last promotion (its first start counts as one: `LasState::service` and
//!   `LasState::starved`, the counters Tiresias keeps for the same rule) is promoted at
//!   the first pass from then on: both counters restart;
//! - a promoted job ranks by the smaller of the policy's rank and its service since the
//!   promotion (seconds for `srtf`, times its GPUs for `srsf` and `blend`): it goes back
//!   among the freshest jobs, runs, and as its new service grows it falls back, to be
//!   promoted again after `K` times that service of waiting.
//!
//! So a job never waits more than `K` times what it has run since it last waited that
//! long, except while the promoted jobs themselves fill the cluster: at least `1 / (K +
//! 1)` of its time in the system is spent running once it has started. A job that has
//! never run is not promoted (as in Tiresias): its rank is the policy's alone.
//!
//! The due time of a waiting job, [`due`], is fixed when it stops (`LasState::due`), so
//! the key of a waiting job moves only at its promotion, which the ordered queue of
//! [`crate::policy::ranked`] hears of ([`crate::Scheduler`] keeps the due times in
//! order). A promotion happens at the first pass at or after the due time: the guard
//! asks for no wake-up of its own (with one, two promoted jobs passing each other at
//! each other's due times make ever more passes), so on a cluster where nothing
//! arrives or ends for a while the bound is late by that while.
//! Pure and deterministic; 0 leaves every key and decision as it was, bit for bit.

use crate::policy::{PolicyConfig, PolicyKind};
use crate::schedule::SchedJob;
use crate::Seconds;

/// Whether the guard is on for `cfg`.
pub fn applies(cfg: &PolicyConfig) -> bool {
    let k = cfg.promote_after;
    k > 0.0
        && k.is_finite()
        && matches!(
            cfg.kind,
            PolicyKind::Srtf | PolicyKind::Srsf | PolicyKind::Blend
        )
}

/// `rank` as the guard orders it: no later than the service since the last promotion
/// (times the GPUs for GPU-service ranks) once the job has been promoted.
pub fn guarded(cfg: &PolicyConfig, job: &SchedJob, rank: f64) -> f64 {
    if job.las.promotions == 0 || !applies(cfg) {
        return rank;
    }
    let service = match cfg.kind {
        PolicyKind::Srtf => job.las.service,
        _ => job.las.service * f64::from(job.spec.gpus.max(1)),
    };
    rank.min(service.max(0.0))
}

/// `key` as the long-job class ([`PolicyConfig::fifo_after`]) orders it: a job whose
/// attained GPU-service has reached the limit goes behind every job below it (first
/// half infinite: a policy's rank is finite GPU-seconds) and, among the long jobs, by
/// submit time. The class is Tiresias' last queue: ranking the longest jobs by service
/// or size shares the cluster among them and finishes all of them late, where first come,
/// first served finishes the oldest first. The key of a waiting job still does not move:
/// attained service grows only while it runs.
pub fn long_class(cfg: &PolicyConfig, job: &SchedJob, key: (f64, f64)) -> (f64, f64) {
    let limit = cfg.fifo_after;
    if !(limit > 0.0 && limit.is_finite()) {
        return key;
    }
    let service = job.attained.max(0.0) * f64::from(job.spec.gpus.max(1));
    if service >= limit {
        (f64::INFINITY, job.spec.submit)
    } else {
        key
    }
}

/// When job `job`, stopping now (its counters brought up to its stop), falls due for
/// promotion; `None` when the guard is off or the job has no service to count.
pub fn due(cfg: &PolicyConfig, job: &SchedJob) -> Option<Seconds> {
    if !applies(cfg) || job.las.service <= 0.0 {
        return None;
    }
    let wait = (job.las.service * cfg.promote_after - job.las.starved).max(0.0);
    Some(job.last_update + wait)
}

/// Promotes `job`: its counters restart, and it ranks by its new service from now on.
pub fn promote(job: &mut SchedJob) {
    job.las.service = 0.0;
    job.las.starved = 0.0;
    job.las.promotions += 1;
    job.las.due = None;
}

/// Whether waiting job `job` is due for promotion at `now`.
pub fn is_due(job: &SchedJob, now: Seconds) -> bool {
    !job.running && job.las.due.is_some_and(|d| d <= now)
}
