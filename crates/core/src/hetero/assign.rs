//! Which type each job of a round's chosen set runs on.
//!
//! Aware: the set is placed by regret (Vogel's rule for transport problems): at each
//! step, the job that would lose most if it did not get its fastest type with room (its
//! best speed less its second best) gets it; ties go to the earlier job in the policy's
//! order. So when few fast GPUs are free they go to the jobs that gain most from them,
//! not merely to the jobs first in line. Agnostic: in order, each job on the type with
//! the most free GPUs ([`super::pick_type`]). A job no type has room for waits.

use super::{pick_type, HeteroJob, RoundPlan};

/// Places `chosen` (indices into `jobs`, in the policy's order) on `free` GPUs, which it
/// takes; writes each job's type into `plan`.
pub fn place(
    jobs: &[HeteroJob],
    chosen: &[usize],
    free: &mut [u32],
    aware: bool,
    plan: &mut RoundPlan,
) {
    if !aware {
        for &i in chosen {
            if let Some(k) = pick_type(&jobs[i], free, false) {
                free[k] -= jobs[i].gpus;
                plan[i] = Some(k);
            }
        }
        return;
    }
    let mut left: Vec<usize> = chosen.to_vec();
    while !left.is_empty() {
        // (position in `left`, type, regret)
        let mut best: Option<(usize, usize, f64)> = None;
        let mut stuck = Vec::new();
        for (pos, &i) in left.iter().enumerate() {
            let job = &jobs[i];
            let mut first: Option<(usize, f64)> = None;
            let mut second = 0.0f64;
            for (k, &f) in free.iter().enumerate() {
                let s = job.speeds[k];
                if f < job.gpus || s <= 0.0 {
                    continue;
                }
                match first {
                    Some((_, b)) if s <= b => second = second.max(s),
                    Some((_, b)) => {
                        second = b;
                        first = Some((k, s));
                    }
                    None => first = Some((k, s)),
                }
            }
            match first {
                None => stuck.push(pos),
                Some((k, s)) => {
                    let regret = s - second;
                    if best.is_none_or(|b| regret > b.2) {
                        best = Some((pos, k, regret));
                    }
                }
            }
        }
        let Some((pos, k, _)) = best else { break };
        let i = left[pos];
        free[k] -= jobs[i].gpus;
        plan[i] = Some(k);
        // Jobs with no room now never get any later in this round: drop them with it.
        stuck.push(pos);
        stuck.sort_unstable();
        for p in stuck.into_iter().rev() {
            left.remove(p);
        }
    }
}
