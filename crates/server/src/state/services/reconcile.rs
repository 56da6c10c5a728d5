//! Each round, every service's next step: its autoscaler's count from the gateways'
//! load, then the core's plan (`gpusched_core::services::reconcile`: replicas to start,
//! to take out of the endpoints, to stop), applied here. A service being deleted goes
//! with the last of its replicas.

use gpusched_core::services::{
    self as core, AutoscaleRule, Autoscaler, Load, ReplicaFacts, ServiceFacts,
};
use gpusched_wire::JobState;

use super::{replicas, State};

impl State {
    /// Runs every service's controller (each round, before the core's pass, so new
    /// replicas are placed in the same round).
    pub(in crate::state) fn reconcile_services(&mut self) {
        if self.services.is_empty() {
            return;
        }
        self.services.loads.expire(self.now.ms);
        let names: Vec<String> = self.services.records.keys().cloned().collect();
        for name in names {
            self.reconcile_service(&name);
        }
    }

    /// One service's controller step.
    pub(super) fn reconcile_service(&mut self, name: &str) {
        let now = self.now.ms;
        self.autoscale(name);
        let Some(r) = self.services.records.get(name) else {
            return;
        };
        let facts = ServiceFacts {
            version: r.version,
            desired: r.desired,
            max_surge: r.spec.rollout.max_surge,
            max_unavailable: r.spec.rollout.max_unavailable,
            drain_ms: u64::from(r.spec.rollout.drain_s) * 1000,
            failures: r.failures,
            last_failure_ms: r.last_failure_ms,
            deleting: r.deleting,
        };
        let replicas = self.replica_facts(name);
        let plan = core::reconcile(&facts, &replicas, now);
        for id in &plan.stop {
            let why = self.stop_reason(name, *id);
            self.stop_replica(*id, &why);
        }
        for id in &plan.drain {
            let why = self.stop_reason(name, *id);
            self.drain_replica(*id, &why);
        }
        self.start_replicas(name, plan.start);
        let deleting = facts.deleting;
        let last_failure = self
            .services
            .records
            .get(name)
            .and_then(|r| r.last_failure.clone());
        let alive = self
            .services
            .soft
            .get(name)
            .map_or(0, |s| s.replicas.len() as u32);
        let status = super::words::status(&plan.status, now, last_failure.as_deref(), alive);
        let soft = self.services.soft.entry(name.to_string()).or_default();
        soft.status = status;
        if deleting && soft.replicas.is_empty() {
            self.services.soft.remove(name);
            self.services.records.remove(name);
        }
    }

    /// The service's live replicas as the core sees them, in job order.
    fn replica_facts(&mut self, name: &str) -> Vec<ReplicaFacts> {
        let ids: Vec<u64> = self
            .services
            .soft
            .get(name)
            .map(|s| s.replicas.iter().copied().collect())
            .unwrap_or_default();
        let mut facts = Vec::with_capacity(ids.len());
        let mut gone = Vec::new();
        for id in ids {
            let Some(job) = self.jobs.get(&id).filter(|j| !j.view.state.is_terminal()) else {
                gone.push(id);
                continue;
            };
            let Some(of) = &job.view.service else {
                gone.push(id);
                continue;
            };
            // Being stopped: it no longer counts (as a terminating pod does not), and
            // its replacement may start while it ends.
            if job.view.cancel_requested {
                continue;
            }
            let phase = match replicas::phase(job) {
                gpusched_wire::ReplicaPhase::Waiting => core::ReplicaPhase::Waiting,
                gpusched_wire::ReplicaPhase::Starting => core::ReplicaPhase::Starting,
                gpusched_wire::ReplicaPhase::Ready => core::ReplicaPhase::Ready,
                gpusched_wire::ReplicaPhase::Draining => core::ReplicaPhase::Draining {
                    since_ms: job.draining_ms.unwrap_or(self.now.ms),
                },
            };
            let node_leaving = job.view.state != JobState::Pending
                && job.view.node.as_deref().is_some_and(|n| self.replica_node_leaving(n));
            facts.push(ReplicaFacts {
                job: id,
                version: of.version,
                phase,
                node_leaving,
            });
        }
        if let Some(soft) = self.services.soft.get_mut(name) {
            for id in gone {
                soft.replicas.remove(&id);
            }
        }
        facts
    }

    /// A node whose replicas move elsewhere: drained, or its agent unheard.
    fn replica_node_leaving(&self, node: &str) -> bool {
        self.nodes
            .get(node)
            .is_none_or(|n| n.record.drain.is_some() || !n.online())
    }

    /// Why the controller takes a replica away, for its job's reason.
    fn stop_reason(&self, name: &str, id: u64) -> String {
        let Some(r) = self.services.records.get(name) else {
            return format!("service {name} is gone");
        };
        let Some(job) = self.jobs.get(&id) else {
            return String::new();
        };
        let version = job.view.service.as_ref().map_or(0, |s| s.version);
        if r.deleting {
            format!("service {name} is being deleted")
        } else if version != r.version {
            format!("replaced by version {} of service {name}", r.version)
        } else if job.view.node.as_deref().is_some_and(|n| self.replica_node_leaving(n)) {
            format!(
                "moved off {}, which is drained or unreachable",
                job.view.node.as_deref().unwrap_or("its node")
            )
        } else {
            format!("service {name} scaled down to {}", r.desired)
        }
    }

    /// The autoscaler's count for a service that autoscales, from the gateways' load.
    fn autoscale(&mut self, name: &str) {
        let now = self.now.ms;
        let Some(r) = self.services.records.get(name) else {
            return;
        };
        let Some(a) = r.spec.autoscale.as_ref().filter(|_| !r.deleting) else {
            return;
        };
        let rule = AutoscaleRule {
            min: a.min,
            max: a.max,
            target_in_flight: a.target_in_flight,
            latency_p95_ms: a.latency_p95_ms,
            up_window_ms: u64::from(a.up_window_s) * 1000,
            down_window_ms: u64::from(a.down_window_s) * 1000,
            idle_to_zero_ms: u64::from(a.idle_to_zero_s) * 1000,
        };
        let current = r.desired;
        let l = self.services.loads.of(name, now);
        let load = Load {
            in_flight: l.in_flight,
            queued: l.queued,
            p95_ms: l.p95_ms,
        };
        let soft = self.services.soft.entry(name.to_string()).or_default();
        let scaler = soft
            .scaler
            .get_or_insert_with(|| Autoscaler::new(current));
        let desired = scaler.desired(&rule, load, now);
        if desired != current {
            if let Some(r) = self.services.records.get_mut(name) {
                tracing::info!(service = name, from = current, to = desired, "autoscaled");
                r.desired = desired;
            }
        }
    }
}
