//! The cluster's levels at scrape time: jobs by state and queue, queues against their
//! quotas, nodes and GPUs by state, and who holds each GPU.

use std::collections::BTreeMap;

use gpusched_wire::{GpuHealth, GpuView, JobState, NodeState, NodeView};

use super::sheet::{Labels, Sheet};
use super::View;

/// The states `gpusched_nodes` counts, every one written (zeros too).
pub const NODE_STATES: [&str; 4] = ["online", "unreachable", "offline", "drained"];
/// The states `gpusched_gpus` counts: a partition of every registered GPU.
pub const GPU_STATES: [&str; 6] = [
    "free",
    "used",
    "unhealthy",
    "drained",
    "unreachable",
    "offline",
];

/// A node's state for `gpusched_nodes`: offline or unreachable first (a drained node
/// that died is offline), then drained.
pub fn node_state(n: &NodeView) -> &'static str {
    match n.state {
        NodeState::Offline => "offline",
        NodeState::Unreachable => "unreachable",
        _ if n.drain.is_some() => "drained",
        _ => "online",
    }
}

/// Whether anything of the GPU is held: whole, or any share or MIG instance with a job.
fn held(g: &GpuView) -> bool {
    g.job.is_some() || g.user.is_some() || g.slices.iter().any(|s| s.job.is_some())
}

fn unhealthy(n: &NodeView, index: u32) -> bool {
    matches!(n.gpu_health.get(&index), Some(GpuHealth::Unhealthy { .. }))
}

/// A GPU's state for `gpusched_gpus`: the node offline or unreachable (what its jobs do
/// there is not known now), else unhealthy (held or not: it takes no new work), else
/// used, else drained (free on a drained node), else free.
pub fn gpu_state(n: &NodeView, g: &GpuView) -> &'static str {
    if n.state == NodeState::Offline {
        "offline"
    } else if n.state == NodeState::Unreachable {
        "unreachable"
    } else if unhealthy(n, g.info.index) {
        "unhealthy"
    } else if held(g) {
        "used"
    } else if n.drain.is_some() {
        "drained"
    } else {
        "free"
    }
}

fn l(pairs: &[(&'static str, &str)]) -> Labels {
    pairs.iter().map(|&(k, v)| (k, v.to_string())).collect()
}

pub fn levels(view: &View, out: &mut Sheet) {
    checkpoints(view, out);
    jobs(view, out);
    queues(view, out);
    nodes(view, out);
    holders(view, out);
    services(view, out);
    power(view, out);
}

/// The power budget at the nodes' caps, the jobs it holds back, and consolidation's idle
/// and down nodes (docs/power.md). The budgets appear only when set.
fn power(view: &View, out: &mut Sheet) {
    let p = &view.power;
    if !p.on {
        return;
    }
    if let Some(w) = p.view.budget_w {
        out.gauge(
            "gpusched_power_budget_watts",
            "The cluster's power budget (--power-budget), counted at the nodes' caps",
        );
        out.add(Vec::new(), w as f64);
    }
    if let Some(w) = p.view.node_budget_w {
        out.gauge(
            "gpusched_power_node_budget_watts",
            "Each node's power budget (--node-power-budget), counted at its caps",
        );
        out.add(Vec::new(), w as f64);
    }
    let series: [(&'static str, &'static str, f64); 8] = [
        (
            "gpusched_power_drawn_at_caps_watts",
            "What the online nodes' GPUs draw at most: busy GPUs at their power cap, idle ones at their idle draw",
            p.view.drawn_w as f64,
        ),
        (
            "gpusched_power_held_jobs",
            "Waiting jobs the last pass held back because starting them would pass the power budget",
            p.view.held_jobs as f64,
        ),
        (
            "gpusched_power_idle_nodes",
            "Online nodes running nothing now",
            p.idle_nodes as f64,
        ),
        (
            "gpusched_power_down_nodes",
            "Nodes consolidation took down (--consolidate-after) and has not brought up",
            p.down_nodes as f64,
        ),
        (
            "gpusched_power_idle_node_seconds",
            "Node-seconds online nodes ran nothing, since the server started: what powering them down could save",
            p.idle_node_seconds,
        ),
        (
            "gpusched_power_idle_energy_joules",
            "What the GPUs of idle nodes that were up drew idle since the server started: the energy powering them down would save",
            p.idle_joules,
        ),
        (
            "gpusched_power_hook_calls",
            "Power hook calls (--power-hook) since the server started",
            p.hook_calls as f64,
        ),
        (
            "gpusched_power_hook_failures",
            "Power hook calls that failed or timed out since the server started",
            p.hook_failures as f64,
        ),
    ];
    for (name, help, v) in series {
        out.gauge(name, help);
        out.add(Vec::new(), v);
    }
}

/// One number of a service's level.
type ServiceField = fn(&crate::metrics::ServiceLevel) -> u32;

/// Each service's replicas (as kube-state-metrics' `kube_deployment_*` say them for a
/// Deployment) and its load at the gateways; the gateways' own request series are on
/// their `/metrics` (docs/gateway.md).
fn services(view: &View, out: &mut Sheet) {
    let ss = &view.services;
    let series: [(&str, &str, ServiceField); 6] = [
        (
            "gpusched_service_replicas_desired",
            "Replicas a service wants now (its autoscaler's count, else its replicas)",
            |s| s.desired,
        ),
        (
            "gpusched_service_replicas_ready",
            "Replicas of a service passing their readiness probe, in the gateways' endpoints",
            |s| s.ready,
        ),
        (
            "gpusched_service_replicas_updated_ready",
            "Ready replicas of a service's current version",
            |s| s.updated_ready,
        ),
        (
            "gpusched_service_version",
            "A service's version (one more at each update of its replica template)",
            |s| s.version,
        ),
        (
            "gpusched_service_failures",
            "Replicas of a service that ended on their own in a row (its restart backoff grows with it)",
            |s| s.failures,
        ),
        (
            "gpusched_service_in_flight",
            "Requests in flight and queued for a service at the gateways heard from lately",
            |s| s.in_flight,
        ),
    ];
    for (name, help, of) in series {
        out.gauge(name, help);
        for s in ss {
            out.add(l(&[("service", &s.name)]), f64::from(of(s)));
        }
    }
}

fn jobs(view: &View, out: &mut Sheet) {
    // Every queue configured or holding jobs, with every state (zeros too), so a panel
    // of one state shows 0 rather than nothing.
    let mut queues: Vec<&str> = view.queues.iter().map(|q| q.name.as_str()).collect();
    for (q, _) in view.jobs.keys() {
        if !queues.contains(&q.as_str()) {
            queues.push(q);
        }
    }
    out.gauge("gpusched_jobs", "Jobs by state and queue");
    for q in queues {
        for s in JobState::ALL {
            let n = view.jobs.get(&(q.to_string(), s)).copied().unwrap_or(0);
            out.add(l(&[("state", s.name()), ("queue", q)]), n as f64);
        }
    }
}

/// What checkpoints cost, and `rr`'s turn that follows it (`state/checkpoint_cost.rs`).
fn checkpoints(view: &View, out: &mut Sheet) {
    if let Some(s) = view.checkpoint_slowest_s {
        out.gauge(
            "gpusched_checkpoint_save_seconds",
            "The slowest of the latest 32 checkpoints: from a running job asked to stop to its preempted end",
        );
        out.add(l(&[]), s);
    }
    if let Some(q) = view.rr_quantum_s {
        out.gauge(
            "gpusched_rr_quantum_seconds",
            "the turn now (rr, or --time-slice): --quantum, or --quantum-floor times gpusched_checkpoint_save_seconds where longer",
        );
        out.add(l(&[]), q);
    }
}

fn queues(view: &View, out: &mut Sheet) {
    let qs = &view.queues;
    out.gauge(
        "gpusched_queue_gpus_used",
        "GPUs held by a queue's starting and running jobs (a slice counts as its fraction, rounded up over the queue)",
    );
    for q in qs {
        out.add(l(&[("queue", &q.name)]), f64::from(q.used));
    }
    out.gauge(
        "gpusched_queue_gpus_quota",
        "GPUs guaranteed to a queue (its quota in the queue file; 0: none)",
    );
    for q in qs {
        out.add(l(&[("queue", &q.name)]), f64::from(q.quota));
    }
    out.gauge(
        "gpusched_queue_gpus_max",
        "The most GPUs a queue may hold, quota plus borrowing (absent: no limit)",
    );
    for q in qs {
        if let Some(max) = q.max {
            out.add(l(&[("queue", &q.name)]), f64::from(max));
        }
    }
}

fn nodes(view: &View, out: &mut Sheet) {
    let nodes = &view.nodes.nodes;
    let mut by_state: BTreeMap<&str, u64> = NODE_STATES.iter().map(|s| (*s, 0)).collect();
    let mut gpus: BTreeMap<&str, u64> = GPU_STATES.iter().map(|s| (*s, 0)).collect();
    for n in nodes {
        *by_state.entry(node_state(n)).or_default() += 1;
        for g in &n.gpus {
            *gpus.entry(gpu_state(n, g)).or_default() += 1;
        }
    }
    out.gauge(
        "gpusched_nodes",
        "Registered nodes by state (unreachable: its agent is silent past the heartbeat timeout, its jobs kept; offline: its agent stopped or was silent for the node lease; drained: online, an operator stopped new work)",
    );
    for s in NODE_STATES {
        out.add(l(&[("state", s)]), by_state[s] as f64);
    }
    out.gauge(
        "gpusched_gpus",
        "Registered GPUs by state (offline node, unreachable node, unhealthy, used, free on a drained node, free)",
    );
    for s in GPU_STATES {
        out.add(l(&[("state", s)]), gpus[s] as f64);
    }
    out.gauge(
        "gpusched_node_last_seen_seconds",
        "Time since the node's agent was last heard from",
    );
    for n in nodes {
        out.add(l(&[("node", &n.name)]), n.last_seen_ms_ago as f64 / 1000.0);
    }
    out.gauge(
        "gpusched_gpu_healthy",
        "1 if the GPU may take work, 0 if the server took it out of placement (lost, ECC, Xid, temperature)",
    );
    for n in nodes.iter().filter(|n| n.state != NodeState::Offline) {
        for g in &n.gpus {
            let v = if unhealthy(n, g.info.index) { 0.0 } else { 1.0 };
            out.add(
                l(&[("node", &n.name), ("gpu", &g.info.index.to_string())]),
                v,
            );
        }
    }
}

/// One info series per held GPU (per job on it, for shares and MIG instances), so the
/// cardinality follows the GPUs, not the jobs ever run. Under `--private-jobs` the job
/// and user labels are left out: the series says only that the GPU is held.
fn holders(view: &View, out: &mut Sheet) {
    out.info(
        "gpusched_gpu_job",
        "A job holds (all or part of) this GPU: one series per held GPU and job",
    );
    let mut seen = std::collections::BTreeSet::new();
    for n in view
        .nodes
        .nodes
        .iter()
        .filter(|n| n.state != NodeState::Offline)
    {
        for g in &n.gpus {
            let gpu = g.info.index.to_string();
            let whole = g.job.map(|j| (j, g.user.clone(), "whole"));
            let slices = g
                .slices
                .iter()
                .filter_map(|s| Some((s.job?, s.user.clone(), s.kind.as_str())));
            for (job, user, kind) in whole.into_iter().chain(slices) {
                let mut labels: Labels = vec![("node", n.name.clone()), ("gpu", gpu.clone())];
                if !view.private {
                    labels.push(("job_id", job.to_string()));
                    labels.push(("user", user.unwrap_or_default()));
                }
                labels.push(("kind", kind.to_string()));
                // Under --private-jobs two shares of one GPU are the same series.
                if seen.insert(labels.clone()) {
                    out.add(labels, 1.0);
                }
            }
        }
    }
}
