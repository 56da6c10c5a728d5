//! Inference services: what their owners asked for (a [`ServiceRecord`] each, stored),
//! and the commands on them (create, update, delete, list, show). The replicas are jobs
//! (`replicas.rs`); every round the core decides what each service does next and this
//! server applies it (`reconcile.rs`); gateways sync their load and learn the endpoints
//! (`gateway.rs`). What is not stored (the autoscalers' windows, the gateways' loads, the
//! last status) is rebuilt after a restart from the replicas and the next syncs.

mod gateway;
mod reconcile;
mod replicas;
mod words;

use std::collections::{BTreeMap, BTreeSet};

use gpusched_core::services::Autoscaler;
use gpusched_store::ServiceRecord;
use gpusched_wire::{ReplicaPhase, ReplicaView, ServiceList, ServiceSpec, ServiceView};

use super::{Fail, State, Tracked, Who};
use crate::groups::UserGroups;

pub(super) use gateway::GatewayLoads;

/// The services of the cluster: their records (one row each) and what this server
/// keeps of them in memory only.
#[derive(Default)]
pub struct Services {
    /// By name; every change is written at the end of its round, a removal deletes the
    /// row.
    pub records: Tracked<String, ServiceRecord>,
    /// Per service: its live replicas (job ids) and what is not stored.
    soft: BTreeMap<String, Soft>,
    /// The load each gateway last reported (`gateway.rs`).
    pub(super) loads: GatewayLoads,
}

/// What a server keeps of a service in memory only.
#[derive(Default)]
struct Soft {
    /// Its replicas that have not ended, by job id.
    replicas: BTreeSet<u64>,
    /// The autoscaler's windows (a service that autoscales).
    scaler: Option<Autoscaler>,
    /// What it is doing, in words, as of the last round.
    status: String,
}

impl Services {
    /// Whether any service exists (the controller's fast path).
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// Whether the replica template changed (a new version rolls out) between two specs;
/// the count, the autoscaler and the rollout's own settings apply in place.
fn template_changed(old: &ServiceSpec, new: &ServiceSpec) -> bool {
    old.replica != new.replica
        || old.readiness != new.readiness
        || old.liveness != new.liveness
        || old.protocol != new.protocol
        || old.models != new.models
}

impl State {
    /// The services as stored, after the jobs were loaded (each finds its replicas
    /// among them).
    pub fn restore_services(&mut self, records: Vec<ServiceRecord>) {
        let mut services = Services {
            records: Tracked::stored(records.into_iter().map(|r| (r.spec.name.clone(), r))),
            ..Default::default()
        };
        for name in services.records.keys() {
            services.soft.insert(name.clone(), Soft::default());
        }
        for (id, job) in self.jobs.iter() {
            let Some(of) = job.view.service.as_ref() else {
                continue;
            };
            if let Some(soft) = services.soft.get_mut(&of.service) {
                soft.replicas.insert(*id);
            }
        }
        self.services = services;
    }

    /// `POST /api/services`.
    pub fn create_service(
        &mut self,
        spec: ServiceSpec,
        who: &Who,
        groups: &UserGroups,
    ) -> Result<ServiceView, Fail> {
        spec_fits_itself(&spec)?;
        if self
            .services
            .records
            .get(&spec.name)
            .is_some_and(|r| r.deleting)
        {
            return Err(Fail::Conflict(format!(
                "service {} is being deleted; create it again once its replicas have stopped \
                 (`gpusched service ls` shows them)",
                spec.name
            )));
        }
        if self.services.records.contains_key(&spec.name) {
            return Err(Fail::Conflict(format!(
                "a service named {} exists; choose another name, or `gpusched service update` it",
                spec.name
            )));
        }
        let spec = self.checked_template(spec, who, groups)?;
        let user = spec
            .replica
            .user
            .clone()
            .unwrap_or_else(|| who.user.clone());
        let now = self.now.ms;
        let record = ServiceRecord {
            desired: spec.initial_replicas(),
            spec,
            user,
            version: 1,
            created_ms: now,
            updated_ms: now,
            failures: 0,
            last_failure_ms: None,
            last_failure: None,
            deleting: false,
        };
        let name = record.spec.name.clone();
        self.services.records.insert(name.clone(), record);
        self.services.soft.entry(name.clone()).or_default();
        self.sched_due = true;
        self.reconcile_service(&name);
        self.service_view(&name, who)
    }

    /// `PUT /api/services/{name}`: a new version rolls out when the replica template
    /// changed; the count, the autoscaler and the rollout settings apply in place.
    pub fn update_service(
        &mut self,
        name: &str,
        spec: ServiceSpec,
        who: &Who,
        groups: &UserGroups,
    ) -> Result<ServiceView, Fail> {
        if spec.name != name {
            // Both well-formed: they conflict (409, as a batch naming one client token
            // twice does).
            return Err(Fail::Conflict(format!(
                "the body names service {} but the URL {name}; a service cannot be renamed \
                 (create one under the new name, then delete this one)",
                spec.name
            )));
        }
        spec_fits_itself(&spec)?;
        let old = self.owned_service(name, who, "update it")?;
        if old.deleting {
            return Err(Fail::Conflict(format!(
                "service {name} is being deleted; create it again once it is gone"
            )));
        }
        let owner = old.user.clone();
        let owner_who = Who {
            user: owner.clone(),
            admin: who.admin,
        };
        let mut spec = spec;
        if spec.replica.user.is_none() {
            spec.replica.user = Some(owner.clone());
        }
        let spec = self.checked_template(spec, &owner_who, groups)?;
        let now = self.now.ms;
        let Some(record) = self.services.records.get_mut(name) else {
            return Err(no_such_service(name));
        };
        if template_changed(&record.spec, &spec) {
            record.version += 1;
            // A new version deserves a fresh start.
            record.failures = 0;
            record.last_failure_ms = None;
        }
        record.desired = match &spec.autoscale {
            Some(a) => record.desired.clamp(a.min, a.max),
            None => spec.replicas.unwrap_or(1),
        };
        record.spec = spec;
        record.updated_ms = now;
        if let Some(soft) = self.services.soft.get_mut(name) {
            // New bounds or windows: the autoscaler starts from the count it has.
            soft.scaler = None;
        }
        self.sched_due = true;
        self.reconcile_service(name);
        self.service_view(name, who)
    }

    /// `DELETE /api/services/{name}`: its replicas drain and stop; the service goes
    /// with the last of them.
    pub fn delete_service(&mut self, name: &str, who: &Who) -> Result<ServiceView, Fail> {
        self.owned_service(name, who, "delete it")?;
        if let Some(r) = self.services.records.get_mut(name) {
            if !r.deleting {
                r.deleting = true;
                r.updated_ms = self.now.ms;
            }
        }
        let view = self.service_view(name, who)?;
        self.reconcile_service(name);
        Ok(view)
    }

    /// Every service; another user's without its command and environment (they may
    /// hold secrets, as a job's command line may).
    pub fn list_services(&self, who: &Who) -> ServiceList {
        ServiceList {
            services: self
                .services
                .records
                .keys()
                .filter_map(|n| self.service_view(n, who).ok())
                .collect(),
        }
    }

    /// `GET /api/services/{name}`: a service being deleted is gone for the API (404,
    /// saying so) while its replicas stop; `service ls` still lists it until they have.
    pub fn get_service(&self, name: &str, who: &Who) -> Result<ServiceView, Fail> {
        let view = self.service_view(name, who)?;
        if self.services.records.get(name).is_some_and(|r| r.deleting) {
            return Err(Fail::NotFound(format!(
                "service {name} was deleted: {}; `gpusched service ls` lists it until its \
                 replicas have stopped",
                view.status
            )));
        }
        Ok(view)
    }

    pub fn service_view(&self, name: &str, who: &Who) -> Result<ServiceView, Fail> {
        let mut view = self.whole_service_view(name)?;
        if view.user != who.user && !who.admin {
            view.spec.replica.command = Vec::new();
            for value in view.spec.replica.env.values_mut() {
                value.clear();
            }
        }
        Ok(view)
    }

    fn whole_service_view(&self, name: &str) -> Result<ServiceView, Fail> {
        let r = self
            .services
            .records
            .get(name)
            .ok_or_else(|| no_such_service(name))?;
        let soft = self.services.soft.get(name);
        let mut replicas_list = Vec::new();
        for id in soft.map(|s| &s.replicas).into_iter().flatten() {
            let Some(job) = self.jobs.get(id) else {
                continue;
            };
            let Some(of) = &job.view.service else {
                continue;
            };
            let phase = replicas::phase(job);
            let url = match (&job.view.node, of.port) {
                (Some(node), Some(port)) if !job.view.state.is_terminal() => {
                    Some(self.replica_url(node, port))
                }
                _ => None,
            };
            replicas_list.push(ReplicaView {
                job: *id,
                version: of.version,
                phase,
                node: job.view.node.clone(),
                url,
            });
        }
        let ready = replicas_list
            .iter()
            .filter(|v| v.phase == ReplicaPhase::Ready)
            .count() as u32;
        let updated_ready = replicas_list
            .iter()
            .filter(|v| v.phase == ReplicaPhase::Ready && v.version == r.version)
            .count() as u32;
        let load = self.services.loads.of(name, self.now.ms);
        Ok(ServiceView {
            spec: r.spec.clone(),
            user: r.user.clone(),
            version: r.version,
            created_ms: r.created_ms,
            updated_ms: r.updated_ms,
            desired: r.desired,
            ready,
            updated_ready,
            failures: r.failures,
            backoff_until_ms: r
                .last_failure_ms
                .filter(|_| r.failures > 0)
                .map(|at| at + gpusched_core::services::backoff_ms(r.failures))
                .filter(|&until| until > self.now.ms),
            status: soft.map(|s| s.status.clone()).unwrap_or_default(),
            in_flight: load.in_flight + load.queued,
            replicas_list,
        })
    }

    /// The service, if `who` owns it or is an admin.
    fn owned_service(&self, name: &str, who: &Who, what: &str) -> Result<&ServiceRecord, Fail> {
        let r = self
            .services
            .records
            .get(name)
            .ok_or_else(|| no_such_service(name))?;
        if r.user != who.user && !who.admin {
            return Err(Fail::Forbidden(format!(
                "service {name} is {}'s; only its owner or an admin may {what}",
                r.user
            )));
        }
        Ok(r)
    }

    /// The spec with its replica checked as a submission is (queue, access, limits,
    /// whether any node could ever hold it), its user, queue and priority filled in.
    fn checked_template(
        &mut self,
        mut spec: ServiceSpec,
        who: &Who,
        groups: &UserGroups,
    ) -> Result<ServiceSpec, Fail> {
        let mut replica = spec.replica.clone();
        if replica.name.is_none() {
            replica.name = Some(spec.name.clone());
        }
        let checked = self
            .check_batch(vec![replica], who, groups)
            .map_err(|f| in_service(&spec.name, f))?;
        spec.replica = checked.into_iter().next().unwrap_or_default();
        Ok(spec)
    }
}

/// The spec's own checks: a malformed name is a 400 (the schema's pattern says it); the
/// rest are fields each well-formed that conflict with each other or with what a replica
/// may be (a gang, an array, batching an OpenAI service...): 409, as the contract has it
/// (docs/contract.md).
fn spec_fits_itself(spec: &ServiceSpec) -> Result<(), Fail> {
    if let Some(p) = spec.name_problem() {
        return Err(Fail::BadRequest(p));
    }
    match spec.problem() {
        Some(p) => Err(Fail::Conflict(p)),
        None => Ok(()),
    }
}

fn no_such_service(name: &str) -> Fail {
    Fail::NotFound(format!(
        "no service named {name}; `gpusched service ls` lists them"
    ))
}

/// A refusal of the replica's job, said of the service.
fn in_service(name: &str, f: Fail) -> Fail {
    let say = |m: &str| format!("service {name}: its replica: {m}");
    match f {
        Fail::BadRequest(m) => Fail::BadRequest(say(&m)),
        Fail::NotFound(m) => Fail::NotFound(say(&m)),
        Fail::Conflict(m) => Fail::Conflict(say(&m)),
        Fail::Unavailable(m) => Fail::Unavailable(say(&m)),
        Fail::Forbidden(m) => Fail::Forbidden(say(&m)),
    }
}
