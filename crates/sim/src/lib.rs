//! The trace simulator of gpusched: trace readers, a discrete-event loop over the shared
//! scheduling core, metrics, reports and plots.

pub mod accounts;
pub mod deadlines;
pub mod elastic;
pub mod engine;
pub mod estimates;
#[doc(hidden)]
pub mod fuzz_entry;
pub mod hetero;
pub mod metrics;
pub mod overhead;
pub mod plot;
pub mod power;
pub mod power_sweep;
pub mod reclaim;
pub mod report;
pub mod sharing;
pub mod tenants;
pub mod trace;

pub use engine::{simulate, JobOutcome, SimError, SimOptions, SimRun};
pub use estimates::{Estimates, PredictionReport};
pub use metrics::Summary;
