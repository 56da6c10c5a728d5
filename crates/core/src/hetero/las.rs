//! Least attained service across GPU types (gpusched's, in rounds).
//!
//! Jobs are ordered by the work they have done, in reference GPU-seconds (seconds run x
//! speed x GPUs, so a job that ran on a fast GPU has attained more), least first, ties to
//! the earlier job. Each round takes jobs in that order while the cluster has GPUs for
//! them (a job larger than every type's free GPUs is passed over, as Gavel's round rule
//! does), places the set with [`super::assign::place`] (aware: by regret, so the fast
//! GPUs go to the chosen jobs that gain most from them), then lets the jobs next in order
//! fill what the placement left. Unlike Gavel's LAS (max-min fairness of the throughput
//! each job gets now, [`super::maxmin`]), it orders by what each job has had, which
//! favours short jobs: the order shortest-remaining-first would take when run times are
//! unknown and heavy-tailed.

use super::assign::place;
use super::{pick_type, GpuTypes, HeteroJob, RoundPlan};

/// The plan of one round.
pub fn choose(jobs: &[HeteroJob], types: &GpuTypes, aware: bool) -> RoundPlan {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| {
        jobs[a]
            .attained
            .total_cmp(&jobs[b].attained)
            .then(a.cmp(&b))
    });
    let mut plan: RoundPlan = vec![None; jobs.len()];
    let mut free = types.gpus.clone();
    let largest = |free: &[u32]| free.iter().copied().max().unwrap_or(0);
    let mut total: u32 = free.iter().sum();
    let mut chosen = Vec::new();
    for &i in &order {
        let g = jobs[i].gpus;
        if g <= total && g <= largest(&free) {
            total -= g;
            chosen.push(i);
        }
    }
    place(jobs, &chosen, &mut free, aware, &mut plan);
    // What placement could not fit (types too fragmented) and the jobs passed over, in
    // order, on what is left.
    for &i in &order {
        if plan[i].is_none() {
            if let Some(k) = pick_type(&jobs[i], &free, aware) {
                free[k] -= jobs[i].gpus;
                plan[i] = Some(k);
            }
        }
    }
    plan
}
