//! Gateways sync with the leader: each reports its load per service and learns where
//! every service can be called. The load is soft state: the latest report of each
//! gateway, forgotten when the gateway falls silent, summed over gateways for the
//! autoscaler (a restarted server hears every gateway again within one sync).

use std::collections::BTreeMap;

use gpusched_wire::{
    Endpoint, EndpointSet, GatewaySync, ReplicaPhase, ServiceEndpoints, ServiceLoad,
};

use super::{replicas, State};

/// How often gateways sync (ms): the endpoints they route to are at most this old, and
/// a replica leaving drains for at least this long (`Rollout::drain_s` defaults to 2 s).
pub const SYNC_MS: u64 = 500;

/// A gateway silent for this long no longer counts (it died, or lost its way to us).
const SILENT_MS: u64 = 10 * SYNC_MS;

/// The most gateways whose loads are kept (each sync replaces its own entry).
const MAX_GATEWAYS: usize = 1024;

/// What each gateway last said, by its identity.
#[derive(Default)]
pub struct GatewayLoads {
    by_gateway: BTreeMap<String, Heard>,
}

struct Heard {
    at_ms: u64,
    load: Vec<ServiceLoad>,
}

/// One service's load summed over the gateways heard lately.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summed {
    pub in_flight: u32,
    pub queued: u32,
    /// The worst gateway's p95.
    pub p95_ms: Option<f64>,
}

impl GatewayLoads {
    fn heard(&mut self, gateway: &str, load: Vec<ServiceLoad>, now_ms: u64) {
        if !self.by_gateway.contains_key(gateway) && self.by_gateway.len() >= MAX_GATEWAYS {
            return;
        }
        self.by_gateway
            .insert(gateway.to_string(), Heard { at_ms: now_ms, load });
    }

    /// Forgets gateways silent for too long.
    pub fn expire(&mut self, now_ms: u64) {
        self.by_gateway
            .retain(|_, h| now_ms.saturating_sub(h.at_ms) < SILENT_MS);
    }

    pub fn of(&self, service: &str, now_ms: u64) -> Summed {
        let mut s = Summed::default();
        for h in self.by_gateway.values() {
            if now_ms.saturating_sub(h.at_ms) >= SILENT_MS {
                continue;
            }
            for l in h.load.iter().filter(|l| l.service == service) {
                s.in_flight = s.in_flight.saturating_add(l.in_flight);
                s.queued = s.queued.saturating_add(l.queued);
                if let Some(p) = l.p95_ms.filter(|p| p.is_finite()) {
                    s.p95_ms = Some(s.p95_ms.map_or(p, |q: f64| q.max(p)));
                }
            }
        }
        s
    }

}

impl State {
    /// `POST /api/gateway/sync`: keeps the gateway's load, answers the endpoints.
    pub fn gateway_sync(&mut self, sync: GatewaySync) -> EndpointSet {
        let now = self.now.ms;
        // Only the services that exist: a gateway cannot make the server keep more.
        let load: Vec<ServiceLoad> = sync
            .load
            .into_iter()
            .filter(|l| self.services.records.contains_key(&l.service))
            .collect();
        let queued_somewhere = load.iter().any(|l| l.queued > 0);
        self.services.loads.heard(&sync.gateway, load, now);
        if queued_somewhere {
            // A request held for a service scaled to zero must not wait for a tick.
            self.sched_due = true;
        }
        let services = self
            .services
            .records
            .iter()
            .filter(|(_, r)| !r.deleting)
            .map(|(name, r)| ServiceEndpoints {
                name: name.clone(),
                protocol: r.spec.protocol,
                models: r.spec.served_models(),
                endpoints: self.ready_endpoints(name),
                desired: r.desired,
            })
            .collect();
        EndpointSet {
            services,
            sync_ms: SYNC_MS,
        }
    }

    /// The replicas of a service that take traffic: running, passing their readiness
    /// probe, not draining, with a port, on a node whose agent is heard.
    fn ready_endpoints(&self, name: &str) -> Vec<Endpoint> {
        let Some(soft) = self.services.soft.get(name) else {
            return Vec::new();
        };
        soft.replicas
            .iter()
            .filter_map(|id| {
                let job = self.jobs.get(id)?;
                if replicas::phase(job) != ReplicaPhase::Ready {
                    return None;
                }
                let port = job.view.service.as_ref()?.port?;
                let node = job.view.node.as_deref()?;
                if !self.nodes.get(node)?.online() {
                    return None;
                }
                Some(Endpoint {
                    job: *id,
                    url: self.replica_url(node, port),
                })
            })
            .collect()
    }
}
