//! Sort keys of the ordering policies. A smaller key runs first; ties fall back to the
//! job's rank from the previous pass, which makes every sort stable across passes.

use crate::policy::{guard, PolicyConfig, PolicyKind};
use crate::schedule::SchedJob;
use crate::Seconds;

/// The key of `job` under `cfg` at time `now`.
pub fn key(cfg: &PolicyConfig, job: &SchedJob, now: Seconds) -> (f64, f64) {
    let spec = &job.spec;
    match cfg.kind {
        PolicyKind::Fifo | PolicyKind::Backfill => (spec.submit, 0.0),
        // drf orders each tenant's jobs like `priority` (tiers with aging); with equal
        // priorities that is submit order. So does fairtree each association's.
        PolicyKind::Priority | PolicyKind::Drf | PolicyKind::FairTree => (
            aged_priority(cfg.aging_per_hour, spec.priority, spec.submit, now),
            spec.submit,
        ),
        PolicyKind::Sjf => (spec.estimate.unwrap_or(f64::INFINITY), spec.submit),
        PolicyKind::Srtf => guard::long_class(
            cfg,
            job,
            (guard::guarded(cfg, job, job.remaining_or_estimate()), 0.0),
        ),
        PolicyKind::Srsf => guard::long_class(
            cfg,
            job,
            (
                guard::guarded(cfg, job, job.remaining_or_estimate() * spec.gpus as f64),
                0.0,
            ),
        ),
        PolicyKind::Tiresias => (job.las.level as f64, job.las.seq as f64),
        PolicyKind::Blend => guard::long_class(
            cfg,
            job,
            (
                guard::guarded(cfg, job, crate::policy::blend::key(job)),
                0.0,
            ),
        ),
        PolicyKind::Edf | PolicyKind::EdfBackfill => crate::deadline::key(cfg, job, now),
        PolicyKind::Rr => crate::policy::rr::key(cfg, job, now),
    }
}

/// `priority`'s first key: the priority plus aging, negated (the ordered queue computes it
/// the same way, bit for bit).
pub fn aged_priority(aging_per_hour: f64, priority: i32, submit: Seconds, now: Seconds) -> f64 {
    let waited_hours = (now - submit).max(0.0) / 3600.0;
    -(priority as f64 + aging_per_hour * waited_hours)
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
