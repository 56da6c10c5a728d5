//! A service's replicas are jobs: made from its template, placed by the core like any
//! job (above training: `LiveJob::serving`), told their port and readiness by their
//! agents, stopped by the controller, and counted as failures when they end on their
//! own.

use gpusched_wire::history::JobEventKind;
use gpusched_wire::{JobState, ReplicaOf, ReplicaPhase, ServeLaunch};

use super::State;
use crate::record::JobRecord;

/// Where a replica is in its life, from its job.
pub(super) fn phase(job: &JobRecord) -> ReplicaPhase {
    let v = &job.view;
    // Stopping (asked to, by its service or a person) is out of the endpoints too.
    if job.draining_ms.is_some() || v.cancel_requested {
        return ReplicaPhase::Draining;
    }
    match v.state {
        JobState::Pending => ReplicaPhase::Waiting,
        JobState::Running if v.service.as_ref().is_some_and(|s| s.ready) => ReplicaPhase::Ready,
        _ => ReplicaPhase::Starting,
    }
}

impl State {
    /// Makes `count` new replicas of the service's current version, pending in its
    /// queue. Their template was checked when the service was created or updated.
    pub(super) fn start_replicas(&mut self, name: &str, count: u32) {
        let Some(r) = self.services.records.get(name) else {
            return;
        };
        let (template, version, owner) = (r.spec.replica.clone(), r.version, r.user.clone());
        let now = self.now.ms;
        for _ in 0..count {
            let id = self.next_id;
            self.next_id += 1;
            let mut job = template.clone();
            job.env
                .insert("GPUSCHED_SERVICE".into(), name.to_string());
            job.env
                .insert("GPUSCHED_SERVICE_VERSION".into(), version.to_string());
            // A replica that dies is replaced by the service, not retried in place.
            job.max_retries = Some(0);
            let mut record = self.record_of(id, job, now);
            record.view.service = Some(ReplicaOf {
                service: name.to_string(),
                version,
                port: None,
                ready: false,
            });
            self.queue_if_ready(&record);
            self.count_pending(&record.view.user);
            self.jobs.insert(id, Box::new(record));
            self.note(
                id,
                JobEventKind::Submitted,
                format!("replica of service {name} version {version}, for {owner}"),
            );
            self.cfg.metrics.submitted();
            if let Some(soft) = self.services.soft.get_mut(name) {
                soft.replicas.insert(id);
            }
        }
        if count > 0 {
            self.sched_due = true;
        }
    }

    /// Stops a replica the controller no longer wants: a pending one ends now, a placed
    /// one is cancelled on its node (SIGTERM, the grace, SIGKILL).
    pub(super) fn stop_replica(&mut self, id: u64, why: &str) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let state = job.view.state;
        if state.is_terminal() || job.view.cancel_requested {
            return;
        }
        self.note(id, JobEventKind::CancelRequested, format!("by its service: {why}"));
        if state == JobState::Pending {
            self.end(id, JobState::Cancelled, why.to_string(), self.now.ms);
            return;
        }
        if let Some(job) = self.jobs.get_mut(&id) {
            job.view.cancel_requested = true;
            job.view.reason = format!("stopping: {why}");
        }
        self.bump_job(id);
    }

    /// Takes a replica out of the endpoints; the controller stops it after the drain.
    pub(super) fn drain_replica(&mut self, id: u64, why: &str) {
        let now = self.now.ms;
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        if job.draining_ms.is_some() || job.view.state.is_terminal() {
            return;
        }
        job.draining_ms = Some(now);
        job.view.reason = format!("draining: {why}");
    }

    /// The agent gave a replica its port.
    pub(in crate::state) fn replica_listening(&mut self, id: u64, port: u16) {
        if let Some(job) = self.jobs.get_mut(&id) {
            if let Some(s) = job.view.service.as_mut() {
                if s.port != Some(port) {
                    s.port = Some(port);
                }
            }
        }
    }

    /// A replica passes its readiness probe, or stopped passing it.
    pub(in crate::state) fn replica_ready(&mut self, id: u64, ready: bool, message: Option<&str>) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        let Some(s) = job.view.service.as_mut() else {
            return;
        };
        if s.ready == ready {
            return;
        }
        s.ready = ready;
        let name = s.service.clone();
        if job.draining_ms.is_none() && job.view.state == JobState::Running {
            job.view.reason = match (ready, message) {
                (true, _) => format!("ready: serving service {name}"),
                (false, Some(m)) => format!("not ready: {m}"),
                (false, None) => "not ready".into(),
            };
        }
        if ready {
            // A replica that serves ends a streak of failures.
            if let Some(r) = self.services.records.get(&name) {
                if r.failures > 0 {
                    if let Some(r) = self.services.records.get_mut(&name) {
                        r.failures = 0;
                    }
                }
            }
        }
    }

    /// A replica's job reached its end: one that ended without being asked to (it
    /// exited, failed its liveness probe, was lost) is a failure of its service, which
    /// starts the next one after a backoff.
    pub(in crate::state) fn replica_ended(&mut self, id: u64) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let Some(of) = &job.view.service else {
            return;
        };
        let name = of.service.clone();
        let asked = job.view.cancel_requested || job.draining_ms.is_some();
        let why = job.view.reason.clone();
        let now = self.now.ms;
        if let Some(soft) = self.services.soft.get_mut(&name) {
            soft.replicas.remove(&id);
        }
        if !asked {
            if let Some(r) = self.services.records.get_mut(&name) {
                if !r.deleting {
                    r.failures = r.failures.saturating_add(1);
                    r.last_failure_ms = Some(now);
                    r.last_failure = Some(format!("replica {id} ended: {why}"));
                }
            }
        }
        self.sched_due = true;
    }

    /// A replica placed again (a new attempt) has no port and is not ready until its
    /// agent says so.
    pub(in crate::state) fn replica_placed(&mut self, id: u64) {
        if let Some(job) = self.jobs.get_mut(&id) {
            if let Some(s) = job.view.service.as_mut() {
                s.port = None;
                s.ready = false;
            }
        }
    }

    /// What the agent needs to serve a replica: its probes (the service's current
    /// ones). `None` for any other job.
    pub(in crate::state) fn serve_launch(&self, job: &JobRecord) -> Option<ServeLaunch> {
        let of = job.view.service.as_ref()?;
        let spec = self.services.records.get(&of.service).map(|r| &r.spec);
        Some(ServeLaunch {
            readiness: spec.and_then(|s| s.readiness.clone()),
            liveness: spec.and_then(|s| s.liveness.clone()),
        })
    }

    /// `http://ADDRESS:PORT` of a replica on `node`: the address other hosts reach the
    /// node at, as its agent registered it.
    pub(super) fn replica_url(&self, node: &str, port: u16) -> String {
        let addr = self
            .nodes
            .get(node)
            .and_then(|n| n.record.register.advertise_addr.clone())
            .unwrap_or_else(|| "127.0.0.1".into());
        if addr.contains(':') && !addr.starts_with('[') {
            format!("http://[{addr}]:{port}")
        } else {
            format!("http://{addr}:{port}")
        }
    }
}
