//! Tiresias' discretized two-dimensional least-attained-service (2D-LAS).
//!
//! A job's attained service is its run time times its GPUs. Queues are numbered from 0;
//! every job enters queue 0 and is demoted one queue when its service reaches the
//! queue's limit (`las_limits`). Queues are served in order, each first-come first-served
//! with running jobs kept ahead of waiting ones, so a job is not preempted by a peer of
//! its own queue. A job waiting in a lower queue for `starvation` times its service is
//! promoted back to queue 0 with its service count restarted.
//!
//! Demotion and promotion happen at passes; [`next_change`] tells the caller when the
//! next one falls due, so it can wake the scheduler then.

use crate::policy::PolicyConfig;
use crate::schedule::SchedJob;
use crate::Seconds;

/// Per-job bookkeeping of 2D-LAS.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LasState {
    /// Queue number, 0 first.
    pub level: u8,
    /// Position inside the queue; larger is later.
    pub seq: u64,
    /// Run time counted towards demotion (restarted by a promotion).
    pub service: Seconds,
    /// Time waited since the job last ran, counted once it has run at all.
    pub starved: Seconds,
    pub promotions: u32,
    /// The starvation guard of `srtf`, `srsf` and `blend` ([`crate::policy::guard`]):
    /// when this waiting job falls due for promotion (set when it stops).
    pub due: Option<Seconds>,
}

/// Demotes running jobs that reached their queue's limit and promotes starved waiting
/// jobs, in the order of `jobs`, giving each moved job the back of its new queue.
pub fn update_queues(cfg: &PolicyConfig, jobs: &mut [SchedJob], next_seq: &mut u64) {
    let last = cfg.las_limits.len() as u8;
    for job in jobs.iter_mut() {
        let las = &mut job.las;
        if job.running {
            if las.level < last {
                let gpu_service = las.service * job.spec.gpus as f64;
                if gpu_service >= cfg.las_limits[las.level as usize] {
                    las.level += 1;
                    las.seq = bump(next_seq);
                }
            }
        } else if cfg.starvation > 0.0
            && las.level > 0
            && job.attained > 0.0
            && las.service > 0.0
            && las.starved >= (las.service * cfg.starvation).trunc()
        {
            las.service = 0.0;
            las.starved = 0.0;
            las.level = 0;
            las.seq = bump(next_seq);
            las.promotions += 1;
        }
    }
}

/// After a pass: inside each queue, running jobs go ahead of waiting ones, each group
/// keeping its order. `order` lists job indices queue by queue, as the pass used them.
pub fn requeue_after_pass(jobs: &mut [SchedJob], order: &[usize], next_seq: &mut u64) {
    let mut start = 0;
    while start < order.len() {
        let level = jobs[order[start]].las.level;
        let end = start
            + order[start..]
                .iter()
                .position(|&i| jobs[i].las.level != level)
                .unwrap_or(order.len() - start);
        for want_running in [true, false] {
            for &i in &order[start..end] {
                if jobs[i].running == want_running {
                    jobs[i].las.seq = bump(next_seq);
                }
            }
        }
        start = end;
    }
}

/// When the next demotion or promotion falls due, if any.
pub fn next_change(cfg: &PolicyConfig, jobs: &[SchedJob], now: Seconds) -> Option<Seconds> {
    let last = cfg.las_limits.len() as u8;
    let mut next = f64::INFINITY;
    for job in jobs {
        let las = &job.las;
        if job.running {
            if las.level < last {
                let limit = cfg.las_limits[las.level as usize];
                let at = (limit / job.spec.gpus as f64).ceil() - las.service + now;
                next = next.min(at);
            }
        } else if cfg.starvation > 0.0 && las.level > 0 && job.attained > 0.0 && las.service > 0.0 {
            let wait = (las.service * cfg.starvation - las.starved).trunc();
            if wait > 0.0 {
                next = next.min((wait + now).trunc());
            }
        }
    }
    next.is_finite().then_some(next)
}

fn bump(next: &mut u64) -> u64 {
    *next += 1;
    *next
}
