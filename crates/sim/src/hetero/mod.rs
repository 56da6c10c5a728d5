//! The heterogeneous simulator (issue 36): a cluster of several GPU types, jobs that run
//! at their own speed on each type, and the core's heterogeneity-aware policies
//! ([`gpusched_core::hetero`]) deciding round by round. docs/heterogeneous.md.
//!
//! Gavel's simulator, which this one is compared with, works in rounds (360 s by
//! default): a job runs a whole round on one type or not at all, arrivals wait for the
//! next round, and a round ends early only when every job in it finishes. This engine
//! does the same, so the policies of both are measured under the same mechanism; the
//! event-driven engine ([`crate::engine`]) is untouched and runs homogeneous clusters.

pub mod cluster;
mod engine;
pub mod table;

pub use cluster::{ClusterSpecError, HeteroCluster};
pub use engine::{simulate_hetero, HeteroError};
pub use table::{TableError, Throughputs};

/// A heterogeneous policy.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HeteroPolicy {
    /// FIFO, each job on a type chosen without looking at speeds (the most free GPUs).
    Fifo,
    /// FIFO, each job on its fastest type with room (Gavel's `fifo_perf` rule, direct).
    FifoAware,
    /// Least attained service by work done, types chosen without speeds.
    Las,
    /// Least attained service, fast GPUs to the chosen jobs that gain most (gpusched's).
    LasAware,
    /// Gavel's LAS: max-min fairness of time shares (`max_min_fairness`), Gavel's rounds.
    MaxMin,
    /// Gavel's heterogeneity-aware LAS (`max_min_fairness_perf`), Gavel's rounds.
    MaxMinAware,
    /// Gavel's FIFO as an allocation through Gavel's rounds (`fifo`).
    GavelFifo,
    /// Gavel's aware FIFO as an allocation through Gavel's rounds (`fifo_perf`).
    GavelFifoAware,
}

impl HeteroPolicy {
    pub const ALL: [HeteroPolicy; 8] = [
        HeteroPolicy::Fifo,
        HeteroPolicy::FifoAware,
        HeteroPolicy::Las,
        HeteroPolicy::LasAware,
        HeteroPolicy::MaxMin,
        HeteroPolicy::MaxMinAware,
        HeteroPolicy::GavelFifo,
        HeteroPolicy::GavelFifoAware,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HeteroPolicy::Fifo => "fifo",
            HeteroPolicy::FifoAware => "fifo-aware",
            HeteroPolicy::Las => "las",
            HeteroPolicy::LasAware => "las-aware",
            HeteroPolicy::MaxMin => "max-min",
            HeteroPolicy::MaxMinAware => "max-min-aware",
            HeteroPolicy::GavelFifo => "gavel-fifo",
            HeteroPolicy::GavelFifoAware => "gavel-fifo-aware",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether it looks at speeds.
    pub fn aware(self) -> bool {
        matches!(
            self,
            HeteroPolicy::FifoAware
                | HeteroPolicy::LasAware
                | HeteroPolicy::MaxMinAware
                | HeteroPolicy::GavelFifoAware
        )
    }
}

/// How to run the heterogeneous engine.
#[derive(Clone, Debug, PartialEq)]
pub struct HeteroOptions {
    pub policy: HeteroPolicy,
    /// Seconds per round (Gavel: 360).
    pub round: f64,
    /// Gavel's round rule: the least seconds between two recomputations of the
    /// allocation (Gavel: 1920).
    pub min_reset: f64,
}

impl HeteroOptions {
    pub fn new(policy: HeteroPolicy) -> Self {
        HeteroOptions {
            policy,
            round: 360.0,
            min_reset: 1920.0,
        }
    }
}

#[cfg(test)]
mod tests;
