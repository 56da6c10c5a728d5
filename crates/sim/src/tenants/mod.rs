//! Per-tenant views of a run: who held the GPUs over time, and how each tenant's jobs
//! fared. A tenant is a user, or a queue with `--fair-by queue` (for Philly, the
//! virtual cluster either way).
//!
//! - [`usage`]: what the engine records while it runs (GPU-seconds per tenant per bin).
//! - [`summary`]: per-tenant JCT, wait and GPU-hours, max-min fair entitlements and
//!   Jain's index over them.
//! - [`table`]: the side-by-side per-tenant table and the CSVs.
//! - [`plot`]: each tenant's share of the busy GPUs over time, stacked.

pub mod plot;
pub mod summary;
pub mod table;
pub mod usage;

pub use summary::{TenantReport, TenantSummary};
pub use usage::TenantUsage;
