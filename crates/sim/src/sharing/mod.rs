//! The FGD paper's GPU-sharing experiment on the Alibaba v2023 trace, run on gpusched's
//! sharing placement (`gpusched_core::sharing`).
//!
//! - [`gorand`]: Go's `math/rand`, so the peer's seeds give the peer's pod order.
//! - [`arrivals`]: shuffled pods inflated to 1.3x the cluster's GPUs, and node ranks.
//! - [`experiment`]: arrivals only, failed pods counted, one sample per arrival.
//! - [`bins`]: samples binned by arrived load, with the peer's rounding.
//! - [`plot`]: unallocated GPU against arrived load, one line per strategy.

pub mod arrivals;
pub mod bins;
pub mod experiment;
pub mod gorand;
pub mod plot;

pub use bins::{bin_by_arrived, mean_bins, Bins};
pub use experiment::{run, run_with, RunOptions, Sample, ShareRun, ShareWorkload};
