//! The gpusched node agent's building blocks: finding the node's GPUs ([`gpu`]), keeping
//! a durable record of every job attempt it was given ([`jobdir`]), and running those
//! attempts as processes ([`launcher`]), with their share of a GPU or MIG instance made
//! ready first ([`slices`]) and a service replica's port probed ([`probe`]); sampling its GPUs for the server ([`telemetry`]) and for
//! Prometheus ([`metrics`]).

pub mod ca;
pub mod cgroup;
pub mod clock;
#[doc(hidden)]
mod follow;
pub mod fuzz_entry;
pub mod gpu;
pub mod image;
pub mod job_metrics;
pub mod jobdir;
pub mod launcher;
pub mod logs;
pub mod metrics;
pub mod ports;
pub mod power;
pub mod probe;
pub mod retention;
mod route;
pub mod session;
pub mod slices;
pub mod spare_dirs;
pub mod steps;
pub mod telemetry;
