//! GPU health from each node's samples, and operators' drains.
//!
//! A GPU is unhealthy, and leaves placement (the core never places on it: whole, share
//! or MIG), when a sample says NVML lost it, its uncorrectable ECC count rose above its
//! baseline, it reported a fatal Xid ([`FATAL_XIDS`]) or it is hotter than
//! `--gpu-temp-limit`. It stays unhealthy, and so does a drain, until `gpusched resume
//! NODE`: both are kept in the node's stored record, so a server or agent restart
//! forgets neither (an agent re-registering says nothing about health; only samples do,
//! and a GPU that failed once is an operator's call to put back).
//!
//! The jobs on a GPU found unhealthy follow `--unhealthy-jobs`: `finish` lets them run
//! on; `requeue` takes the preemption path (checkpoint signal, grace, requeued without
//! using a retry), as does `drain --now` for every job on the node.

use std::collections::BTreeMap;

use gpusched_wire::{Drain, DrainRequest, GpuHealth, GpuSample, JobState, NodeTelemetry, NodeView};

use gpusched_wire::history::AuditAction;

use super::{Fail, State, Who};
use crate::config::UnhealthyJobs;

/// Xid codes that take a GPU out of placement: those NVIDIA's Xid catalogue
/// (docs.nvidia.com/deploy/xid-errors, "Analyzing Xid Errors with the Xid Catalog")
/// resolves by resetting the GPU or servicing the node, rather than by restarting the
/// application:
/// 48 double-bit ECC error, 62 internal micro-controller halt, 63 and 64 page retirement
/// or row remapping recorded / failed (a reset is needed to apply it), 74 NVLink error,
/// 79 GPU has fallen off the bus, 95 uncontained ECC error, 119 and 120 GSP RPC timeout
/// and GSP error. Left out on purpose: 92 (high single-bit ECC rate, a warning) and 94
/// (contained ECC error: only the application that touched the memory is affected).
pub const FATAL_XIDS: &[u64] = &[48, 62, 63, 64, 74, 79, 95, 119, 120];

/// Why one sample makes its GPU unhealthy, if it does. `ecc_base` is the GPU's
/// uncorrectable ECC count when its node registered (0 for a node first seen).
pub fn verdict(s: &GpuSample, ecc_base: u64, temp_limit_c: u32) -> Option<String> {
    if s.lost {
        return Some("NVML lost the GPU (fallen off the bus)".to_string());
    }
    if let Some(x) = s.xids.iter().find(|x| FATAL_XIDS.contains(&x.code)) {
        return Some(format!("Xid {}", x.code));
    }
    if let Some(n) = s.ecc_uncorrected.filter(|&n| n > ecc_base) {
        let new = n - ecc_base;
        let noun = if new == 1 { "error" } else { "errors" };
        return Some(format!("{new} uncorrectable ECC {noun}"));
    }
    if let Some(t) = s.temp_c.filter(|&t| t > temp_limit_c) {
        return Some(format!("{t} C, above the {temp_limit_c} C limit"));
    }
    None
}

impl State {
    /// A node's latest samples: kept for `nodes` and metrics, and judged. A GPU found
    /// unhealthy leaves placement now (its record is written) and its jobs follow
    /// `--unhealthy-jobs`.
    pub(super) fn judge_samples(&mut self, node: &str, t: &NodeTelemetry) {
        let limit = self.cfg.gpu_temp_limit_c;
        let now = self.now.ms;
        let Some(n) = self.nodes.get(node) else {
            return;
        };
        let base = n.ecc_base.clone();
        let fresh: Vec<(u32, String)> = t
            .gpus
            .iter()
            .filter(|s| !n.record.gpu_health.contains_key(&s.index))
            .filter(|s| n.record.register.gpus.iter().any(|g| g.index == s.index))
            .filter_map(|s| {
                // No baseline yet (a restart of the server or a re-registration): the
                // first sample is it.
                let b = base.as_ref().map_or(s.ecc_uncorrected.unwrap_or(0), |b| {
                    b.get(&s.index).copied().unwrap_or(0)
                });
                Some((s.index, verdict(s, b, limit)?))
            })
            .collect();
        if base.is_none() {
            let b: BTreeMap<u32, u64> = t
                .gpus
                .iter()
                .filter_map(|s| Some((s.index, s.ecc_uncorrected?)))
                .collect();
            if let Some(n) = self.nodes.get_mut_unstored(node) {
                n.ecc_base = Some(b);
            }
        }
        if fresh.is_empty() {
            return;
        }
        let Some(n) = self.nodes.get_mut(node) else {
            return;
        };
        for (index, reason) in &fresh {
            tracing::warn!(node, gpu = index, reason = %reason, "GPU unhealthy: out of placement");
            n.record.gpu_health.insert(
                *index,
                GpuHealth::Unhealthy {
                    reason: reason.clone(),
                    since_ms: now,
                },
            );
        }
        self.refresh_nodes();
        if self.cfg.unhealthy_jobs == UnhealthyJobs::Requeue {
            for (index, reason) in fresh {
                let why = format!("GPU {index} of {node} is unhealthy ({reason})");
                for id in self.cluster.gpu_jobs(node, index) {
                    self.preempt_for(id, &why);
                }
            }
        }
    }

    /// Asks a starting or running job to stop through the preemption path: the agent
    /// sends the checkpoint signal, waits the grace, and the job is requeued without
    /// using a retry (`requeue_preempted`). `why` is shown while it stops.
    pub(super) fn preempt_for(&mut self, id: u64, why: &str) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let v = &job.view;
        let live = matches!(v.state, JobState::Starting | JobState::Running);
        if !live || v.preempt_requested || v.cancel_requested {
            return;
        }
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.view.preempt_requested = true;
        job.view.reason = format!("being requeued: {why}");
        self.bump_job(id);
        self.note(
            id,
            gpusched_wire::history::JobEventKind::Preempted,
            why.to_string(),
        );
    }

    /// Why a job being preempted is: a drain of one of its nodes, or an unhealthy GPU
    /// it holds; `None` for a quota reclaim.
    pub(super) fn preempt_cause(&self, id: u64) -> Option<String> {
        let v = &self.jobs.get(&id)?.view;
        let mut nodes: Vec<&String> = v.parts.iter().map(|p| &p.node).collect();
        nodes.extend(v.node.as_ref());
        for name in nodes {
            let Some(n) = self.nodes.get(name) else {
                continue;
            };
            if let Some(d) = n.record.drain.as_ref().filter(|d| d.now) {
                return Some(format!("{name} was drained ({})", d.reason));
            }
            let gpus = v
                .parts
                .iter()
                .filter(|p| &p.node == name)
                .flat_map(|p| p.gpu_indices.iter().copied())
                .chain(v.slice_at.as_ref().map(|a| a.gpu));
            for g in gpus {
                if let Some(GpuHealth::Unhealthy { reason, .. }) = n.record.gpu_health.get(&g) {
                    return Some(format!("GPU {g} of {name} is unhealthy ({reason})"));
                }
            }
        }
        None
    }

    /// The node `name`, or a 404 naming the known ones.
    fn known(&self, name: &str) -> Result<(), Fail> {
        if self.nodes.get(name).is_some() {
            return Ok(());
        }
        let known: Vec<&str> = self.nodes.keys().map(String::as_str).collect();
        Err(Fail::NotFound(if known.is_empty() {
            format!("no node {name:?}: no node has registered yet")
        } else {
            format!("no node {name:?}; the nodes are: {}", known.join(", "))
        }))
    }

    fn admin_only(who: &Who, what: &str) -> Result<(), Fail> {
        if who.admin {
            return Ok(());
        }
        Err(Fail::Forbidden(format!(
            "only an admin may {what} a node ({} is not one); ask an admin, or use an admin \
             token",
            who.user
        )))
    }

    /// `gpusched drain NODE`: nothing new starts there; running jobs finish, or with
    /// `now` are requeued through the preemption path. Draining a drained node replaces
    /// its drain (so `--now` can follow a plain drain).
    pub fn drain(&mut self, who: &Who, name: &str, req: &DrainRequest) -> Result<NodeView, Fail> {
        Self::admin_only(who, "drain")?;
        self.known(name)?;
        let reason = req
            .reason
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .unwrap_or("drained by an admin")
            .to_string();
        if reason.chars().count() > 256 {
            return Err(Fail::BadRequest(
                "the drain reason is longer than 256 characters; shorten it".into(),
            ));
        }
        let drain = Drain {
            reason: reason.clone(),
            since_ms: self.now.ms,
            by: who.user.clone(),
            now: req.now,
        };
        if let Some(n) = self.nodes.get_mut(name) {
            n.record.drain = Some(drain);
        }
        tracing::info!(node = name, by = %who.user, now = req.now, reason = %reason, "node drained");
        let mode = if req.now {
            "now: its jobs are requeued"
        } else {
            "its jobs finish"
        };
        self.audit(
            &who.user,
            AuditAction::Drain,
            name.to_string(),
            format!("{reason} ({mode})"),
        );
        self.refresh_nodes();
        if req.now {
            let why = format!("{name} is drained ({reason})");
            for id in self.jobs_on(name) {
                self.preempt_for(id, &why);
            }
        }
        self.bump(name);
        Ok(self.node_view(who, name))
    }

    /// `gpusched resume NODE`: ends its drain and forgets its GPUs' failures (the next
    /// sample judges them afresh, against a new ECC baseline).
    pub fn resume(&mut self, who: &Who, name: &str) -> Result<NodeView, Fail> {
        Self::admin_only(who, "resume")?;
        self.known(name)?;
        let changed = self
            .nodes
            .get(name)
            .is_some_and(|n| n.record.drain.is_some() || !n.record.gpu_health.is_empty());
        if changed {
            if let Some(n) = self.nodes.get_mut(name) {
                n.record.drain = None;
                n.record.gpu_health.clear();
            }
            if let Some(n) = self.nodes.get_mut_unstored(name) {
                n.ecc_base = None;
            }
            tracing::info!(node = name, by = %who.user, "node resumed");
            self.audit(
                &who.user,
                AuditAction::Resume,
                name.to_string(),
                String::new(),
            );
            self.refresh_nodes();
        }
        Ok(self.node_view(who, name))
    }

    fn node_view(&self, who: &Who, name: &str) -> NodeView {
        self.node_list(who)
            .nodes
            .into_iter()
            .find(|n| n.name == name)
            .expect("the caller checked the node exists")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusched_wire::XidEvent;

    fn sample() -> GpuSample {
        GpuSample {
            index: 0,
            temp_c: Some(60),
            ecc_uncorrected: Some(2),
            ..Default::default()
        }
    }

    #[test]
    fn each_rule_has_its_reason() {
        assert_eq!(verdict(&sample(), 2, 90), None, "healthy at its baseline");
        let lost = GpuSample {
            lost: true,
            ..sample()
        };
        assert!(verdict(&lost, 2, 90).is_some_and(|r| r.contains("lost")));
        let xid = |code| GpuSample {
            xids: vec![XidEvent { code, at_ms: 1 }],
            ..sample()
        };
        assert_eq!(verdict(&xid(79), 2, 90).as_deref(), Some("Xid 79"));
        assert_eq!(verdict(&xid(13), 2, 90), None, "an application's Xid");
        assert_eq!(
            verdict(&sample(), 1, 90).as_deref(),
            Some("1 uncorrectable ECC error")
        );
        let hot = GpuSample {
            temp_c: Some(91),
            ..sample()
        };
        assert_eq!(
            verdict(&hot, 2, 90).as_deref(),
            Some("91 C, above the 90 C limit")
        );
        assert_eq!(verdict(&hot, 2, 91), None, "at the limit is fine");
    }
}
