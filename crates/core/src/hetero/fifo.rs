//! First in, first out across GPU types.
//!
//! [`choose`] (direct): running jobs are never stopped (FIFO does not preempt); waiting
//! jobs start in arrival order, each on the type [`super::pick_type`] picks (aware: where
//! it runs fastest, so under contention a fast GPU goes to the first job in line that
//! can use it, at the speed that job gets there); the first job that fits no type stops
//! the walk (strict FIFO: no job jumps the line). Aware, a running job then moves, in
//! arrival order, to a type where it runs faster if what the starts left has room for
//! it: a K80 job moves up as a V100 frees rather than finishing at K80 speed while the
//! V100 idles. Moves come after starts, so no waiting job is held back for one. (Gavel's
//! aware FIFO gets the same effect by recomputing every job's type each round; a move
//! costs nothing here, as in Gavel's simulator; on a live cluster it is a checkpoint
//! and a restart.)
//!
//! [`allocation`]: the same rule as a Gavel allocation matrix (1.0 on the type chosen),
//! for [`super::rounds`]. Gavel's agnostic FIFO keeps each job's type and picks a
//! random type with room for a new one; here the type with the most free GPUs (no
//! randomness in the core). Its aware FIFO recomputes every job's type at each
//! allocation, in arrival order, fastest type first: so does this one.

use super::{pick_type, GpuTypes, HeteroJob, RoundPlan};

/// Direct FIFO: `running[i]` is job i's type if it runs; returns the plan for the round.
pub fn choose(
    jobs: &[HeteroJob],
    running: &[Option<usize>],
    types: &GpuTypes,
    aware: bool,
) -> RoundPlan {
    let mut free = types.gpus.clone();
    let mut plan: RoundPlan = running.to_vec();
    for (i, r) in running.iter().enumerate() {
        if let Some(k) = *r {
            free[k] -= jobs[i].gpus;
        }
    }
    for (i, job) in jobs.iter().enumerate() {
        if plan[i].is_some() {
            continue;
        }
        match pick_type(job, &free, aware) {
            Some(k) => {
                free[k] -= job.gpus;
                plan[i] = Some(k);
            }
            None => break,
        }
    }
    if aware {
        move_up(jobs, running, &mut free, &mut plan);
    }
    plan
}

/// Each job of `running`, in arrival order, moves to the type where it runs fastest of
/// those `free` has room on, if it runs faster there than where it runs.
fn move_up(jobs: &[HeteroJob], running: &[Option<usize>], free: &mut [u32], plan: &mut RoundPlan) {
    for (i, job) in jobs.iter().enumerate() {
        let Some(k) = running[i] else { continue };
        let mut best = k;
        for (t, &f) in free.iter().enumerate() {
            if f >= job.gpus && job.speeds[t] > job.speeds[best] {
                best = t;
            }
        }
        if best != k {
            free[k] += job.gpus;
            free[best] -= job.gpus;
            plan[i] = Some(best);
        }
    }
}

/// FIFO as an allocation matrix: `previous[i]` is the type job i had in the last
/// allocation (kept when agnostic). Row i is 1.0 on job i's type, zeros where it waits.
pub fn allocation(
    jobs: &[HeteroJob],
    previous: &[Option<usize>],
    types: &GpuTypes,
    aware: bool,
) -> Vec<Vec<f64>> {
    let kept: Vec<Option<usize>> = if aware {
        vec![None; jobs.len()]
    } else {
        previous.to_vec()
    };
    let plan = choose(jobs, &kept, types, aware);
    plan.iter()
        .map(|p| {
            let mut row = vec![0.0; types.len()];
            if let Some(k) = *p {
                row[k] = 1.0;
            }
            row
        })
        .collect()
}
