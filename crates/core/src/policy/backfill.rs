//! EASY backfilling (Lifka, 1995; Slurm's `sched/backfill` without multiple
//! reservations): the first waiting job that does not fit gets a reservation at the
//! earliest time enough GPUs will be free (the "shadow time", from running jobs'
//! estimates); a later job may start now if it fits and either ends by the shadow time
//! or only uses GPUs the reserved job will not need then ("extra" GPUs).
//!
//! The reservation counts GPUs across the cluster and ignores topology; a job without an
//! estimate is taken to run forever, so it never delays the reserved job.

use crate::schedule::SchedJob;
use crate::Seconds;

/// The reservation of the blocked head job.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Reservation {
    pub shadow: Seconds,
    pub extra: u64,
}

/// Computes the head job's reservation from the running jobs' expected ends.
pub fn reserve(jobs: &[SchedJob], head_gpus: u32, free_now: u64, now: Seconds) -> Reservation {
    let mut ends: Vec<(Seconds, u32)> = jobs
        .iter()
        .filter(|j| j.running)
        .map(|j| (now + j.estimated_remaining(), j.spec.gpus))
        .collect();
    ends.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut free = free_now;
    for (end, gpus) in ends {
        if !end.is_finite() {
            break;
        }
        free += gpus as u64;
        if free >= head_gpus as u64 {
            return Reservation {
                shadow: end,
                extra: free - head_gpus as u64,
            };
        }
    }
    Reservation {
        shadow: f64::INFINITY,
        extra: 0,
    }
}

impl Reservation {
    /// Whether `job` may jump the queue now: it ends by the shadow time, or it fits in
    /// the extra GPUs.
    pub fn allows(&self, job: &SchedJob, now: Seconds) -> bool {
        now + job.estimated_remaining() <= self.shadow || job.spec.gpus as u64 <= self.extra
    }

    /// Records that `job` (which [`Self::allows`]) started: a job that outlives the
    /// shadow time spends extra GPUs.
    pub fn admit(&mut self, job: &SchedJob, now: Seconds) {
        if now + job.estimated_remaining() > self.shadow {
            self.extra -= job.spec.gpus as u64;
        }
    }
}
