//! Inference services: the core's decisions for a service's replicas (jobs the server
//! creates for it, placed like any job but in the serving tier above all training; see
//! `live/serving.rs` for their preemption). Pure like the rest of the core: the server
//! hands in what it knows and the time, and carries the decisions out.
//!
//! - [`mod@reconcile`]: which replicas to start, drain and stop now, for a version rollout
//!   (Kubernetes' rolling update, in replicas), a scale, a node being left, a failed
//!   replica's back-off, or the service's deletion.
//! - [`autoscale`]: how many replicas the load asks for, stabilised so the count does
//!   not flap (Kubernetes HPA's stabilisation windows, Knative's scale to and from zero).

pub mod autoscale;
pub mod reconcile;

#[cfg(test)]
mod autoscale_tests;
#[cfg(test)]
mod reconcile_tests;

pub use autoscale::{AutoscaleRule, Autoscaler, Load};
pub use reconcile::{
    backoff_ms, reconcile, ReplicaFacts, ReplicaPhase, ServiceFacts, ServicePlan, ServiceStatus,
};
