//! Max-min fairness across GPU types: Gavel's LAS policy (its `max_min_fairness` and,
//! heterogeneity-aware, `max_min_fairness_perf`), an allocation computed by a linear
//! program.
//!
//! Each job j gets a share x[j][k] of the time of its GPUs on each type k. Its
//! normalised throughput is sum_k speed[j][k] * x[j][k], divided by what it would get
//! with an equal share of every type (each type's share of the cluster's GPUs), times its
//! GPUs over its weight. The program maximises the smallest normalised throughput:
//!
//!   max t  s.t.  sum_k c[j][k] x[j][k] >= t        (every job)
//!                sum_k x[j][k] <= 1                 (a job runs on one type at a time)
//!                sum_j gpus[j] x[j][k] <= gpus[k]   (a type's GPUs)
//!                x >= 0
//!
//! with c[j][k] = speed[j][k] * gpus[j] / (weight[j] * equal_share_throughput[j]).
//! Agnostic, every speed is read as 1 (where the job can run at all): the program shares
//! GPU time, not work, and has a closed form ([`shares_of_time`]). A max-min optimum is
//! rarely unique; Gavel's solver (ECOS, interior point) returns an interior optimum.
//! Ours, a simplex (microlp), returns a vertex, so a second program keeps t at its
//! optimum and maximises the total normalised throughput, a Pareto-efficient choice
//! among the optima (documented in docs/heterogeneous.md as a difference from Gavel).

use microlp::{ComparisonOp, OptimizationDirection, Problem};

use super::{GpuTypes, HeteroJob};

/// The time shares x[j][k], one row per job (in `jobs`' order), each in [0, 1]. Empty
/// rows (all 0) when the program fails, which a well-formed input never does.
pub fn allocation(jobs: &[HeteroJob], types: &GpuTypes, aware: bool) -> Vec<Vec<f64>> {
    let n = types.len();
    if jobs.is_empty() || n == 0 {
        return vec![vec![0.0; n]; jobs.len()];
    }
    let total: f64 = types.gpus.iter().map(|&g| g as f64).sum();
    if !aware {
        return shares_of_time(jobs, types);
    }
    let speed = |j: &HeteroJob, k: usize| -> f64 {
        match (aware, j.speeds[k] > 0.0) {
            (_, false) => 0.0,
            (true, true) => j.speeds[k],
            (false, true) => 1.0,
        }
    };
    let coeff: Vec<Vec<f64>> = jobs
        .iter()
        .map(|j| {
            let equal: f64 = (0..n)
                .map(|k| speed(j, k) * types.gpus[k] as f64 / total)
                .sum();
            (0..n)
                .map(|k| {
                    if equal > 0.0 {
                        speed(j, k) * j.gpus as f64 / (j.weight.max(1e-9) * equal)
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect();
    let Some(best) = solve(jobs, types, &coeff, None) else {
        return vec![vec![0.0; n]; jobs.len()];
    };
    // Keep the minimum (less a hair for the solver's rounding) and use what is left.
    let floor = best.0 * (1.0 - 1e-7);
    solve(jobs, types, &coeff, Some(floor))
        .map(|s| s.1)
        .unwrap_or(best.1)
}

/// The agnostic program in closed form. With every speed read as 1 a job's normalised
/// throughput is its GPUs over its weight times its total share r[j], so max-min fills
/// r[j] = min(1, t x weight[j] / gpus[j]) up to the cluster's GPUs (water-filling on t),
/// and each job's share is spread over the types in proportion to their GPUs: the
/// symmetric optimum, the one an interior-point solver such as Gavel's converges to
/// (a simplex would pin each job to one type, an arbitrary vertex of the same optima).
/// Types where a job cannot run are the exception: the closed form assumes it can run
/// on every type, so such a job falls back to the program.
fn shares_of_time(jobs: &[HeteroJob], types: &GpuTypes) -> Vec<Vec<f64>> {
    let n = types.len();
    if jobs.iter().any(|j| j.speeds.iter().any(|&s| s <= 0.0)) {
        let ones: Vec<HeteroJob> = jobs
            .iter()
            .map(|j| HeteroJob {
                speeds: j
                    .speeds
                    .iter()
                    .map(|&s| if s > 0.0 { 1.0 } else { 0.0 })
                    .collect(),
                ..j.clone()
            })
            .collect();
        return allocation(&ones, types, true);
    }
    let total: f64 = types.gpus.iter().map(|&g| g as f64).sum();
    // Each job's level at which its share reaches 1: gpus / weight.
    let mut caps: Vec<(f64, f64, f64)> = jobs
        .iter()
        .map(|j| {
            let w = j.weight.max(1e-9);
            (j.gpus as f64 / w, j.gpus as f64, w)
        })
        .collect();
    caps.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Walk the caps: below level t, job j uses min(gpus, t * weight) GPUs.
    let mut full = 0.0; // GPUs of the jobs already at share 1
    let mut weights: f64 = caps.iter().map(|c| c.2).sum();
    let mut level = f64::INFINITY;
    for c in &caps {
        // The level at which the cluster fills with the jobs not yet at share 1.
        let t = (total - full) / weights;
        if t <= c.0 {
            level = t;
            break;
        }
        full += c.1;
        weights -= c.2;
    }
    jobs.iter()
        .map(|j| {
            let r = (level * j.weight.max(1e-9) / j.gpus as f64).min(1.0);
            (0..n).map(|k| r * types.gpus[k] as f64 / total).collect()
        })
        .collect()
}

/// One program: with `floor` unset, max t; with it, t >= floor and max the total of the
/// normalised throughputs. Returns (t, x).
fn solve(
    jobs: &[HeteroJob],
    types: &GpuTypes,
    coeff: &[Vec<f64>],
    floor: Option<f64>,
) -> Option<(f64, Vec<Vec<f64>>)> {
    let n = types.len();
    let mut p = Problem::new(OptimizationDirection::Maximize);
    let scale = 1.0 / jobs.len() as f64;
    let t = match floor {
        None => p.add_var(1.0, (0.0, f64::INFINITY)),
        Some(f) => p.add_var(0.0, (f.max(0.0), f64::INFINITY)),
    };
    let x: Vec<Vec<microlp::Variable>> = coeff
        .iter()
        .map(|row| {
            row.iter()
                .map(|&c| {
                    let obj = if floor.is_some() { c * scale } else { 0.0 };
                    // A type where the job cannot run gets no share.
                    let max = if c > 0.0 { 1.0 } else { 0.0 };
                    p.add_var(obj, (0.0, max))
                })
                .collect()
        })
        .collect();
    for (j, row) in coeff.iter().enumerate() {
        let mut expr: Vec<(microlp::Variable, f64)> = (0..n).map(|k| (x[j][k], row[k])).collect();
        expr.push((t, -1.0));
        p.add_constraint(expr.as_slice(), ComparisonOp::Ge, 0.0);
        let one: Vec<(microlp::Variable, f64)> = (0..n).map(|k| (x[j][k], 1.0)).collect();
        p.add_constraint(one.as_slice(), ComparisonOp::Le, 1.0);
    }
    for (k, &cap) in types.gpus.iter().enumerate() {
        let col: Vec<(microlp::Variable, f64)> = jobs
            .iter()
            .zip(&x)
            .map(|(job, row)| (row[k], job.gpus as f64))
            .collect();
        p.add_constraint(col.as_slice(), ComparisonOp::Le, cap as f64);
    }
    let s = p.solve().ok()?;
    let alloc = x
        .iter()
        .map(|row| row.iter().map(|&v| s[v].clamp(0.0, 1.0)).collect())
        .collect();
    Some((s[t], alloc))
}
