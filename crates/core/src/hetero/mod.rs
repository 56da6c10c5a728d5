//! Heterogeneity-aware scheduling (issue 36): which job runs on which GPU type, when the
//! cluster mixes types and each job runs at its own speed on each ([`crate::speed`]).
//!
//! The view is Gavel's (Narayanan et al., OSDI 2020): a cluster is a count of GPUs per
//! type, a job asks for `gpus` GPUs of one type and runs at `speeds[type]` (work per
//! second against the reference type; 0: it cannot run there). Time is cut into rounds;
//! each round a policy says which jobs run and on which type. Two mechanisms:
//!
//! - direct: the policy decides each round from the state now ([`fifo::choose`],
//!   [`las::choose`]): FIFO placing each job on the free type where it runs fastest,
//!   and least-attained-service ordered by work done;
//! - allocation: the policy computes a matrix of the time share each job should get on
//!   each type ([`fifo::allocation`], [`maxmin::allocation`], an LP), and Gavel's round
//!   rule ([`rounds::Rounds`]) turns it into rounds: on each type the job that received
//!   the smallest part of its share so far goes first.
//!
//! The simulator's heterogeneous engine (`gpusched-sim::hetero`) drives both; the live
//! server can call the same functions with its own types and speeds. Pure: no I/O, no
//! clock, no randomness; every tie is broken by the job's index (its arrival order) and
//! then the type's index.

pub mod assign;
pub mod fifo;
pub mod las;
pub mod maxmin;
pub mod rounds;

use crate::ids::JobId;

/// The GPU types of a cluster: names (the models as the cluster calls them) and how many
/// GPUs of each it has, in the cluster's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuTypes {
    pub names: Vec<String>,
    pub gpus: Vec<u32>,
}

impl GpuTypes {
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// A job as the heterogeneous policies see it.
#[derive(Clone, Debug, PartialEq)]
pub struct HeteroJob {
    pub id: JobId,
    /// GPUs it needs, all of one type.
    pub gpus: u32,
    /// Work per second on each type, against the reference type (one entry per type of
    /// [`GpuTypes`]); 0 where it cannot run.
    pub speeds: Vec<f64>,
    /// Its weight (priority) in max-min fairness: a job of weight 2 is owed twice the
    /// normalised throughput of a job of weight 1.
    pub weight: f64,
    /// Work done so far, in reference GPU-seconds (seconds run x speed x GPUs), what
    /// least-attained-service orders by.
    pub attained: f64,
}

/// Where a round runs each job: `Some(type)` or `None` (it waits this round).
pub type RoundPlan = Vec<Option<usize>>;

/// The type of `types` with room for `gpus` where the job runs fastest (aware), or the
/// one with the most free GPUs (agnostic: it does not look at speeds); ties to the lower
/// index. Types where the job cannot run (speed 0) are never chosen.
pub fn pick_type(job: &HeteroJob, free: &[u32], aware: bool) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (k, &f) in free.iter().enumerate() {
        if f < job.gpus || job.speeds[k] <= 0.0 {
            continue;
        }
        let score = if aware { job.speeds[k] } else { f as f64 };
        if best.is_none_or(|b| score > b.1) {
            best = Some((k, score));
        }
    }
    best.map(|b| b.0)
}

#[cfg(test)]
mod tests;
