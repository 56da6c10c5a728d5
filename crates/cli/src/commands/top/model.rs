//! What `gpusched top` shows, worked out from one fetch of the API: the cluster's totals,
//! one row per GPU and one per active job, as plain strings and a state for colour. Pure:
//! the clock comes in with the snapshot, so fixtures render the same every time.

use gpusched_wire::{GpuHealth, GpuView, JobState, JobView, NodeState, NodeView, QueueView};

use crate::commands::fmt::{elapsed, gpus_asked, nodes_of};

/// One fetch of the three lists `top` reads, and what became of the latest try.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// The server as the user named it (`unix:...`, `http://...`).
    pub server: String,
    pub nodes: Vec<NodeView>,
    /// Pending, starting and running jobs.
    pub jobs: Vec<JobView>,
    pub queues: Vec<QueueView>,
    /// The server had more active jobs than one page (`jobs` holds the newest).
    pub more_jobs: bool,
    /// The clock the ages and waits are counted against (Unix ms).
    pub now_ms: u64,
    /// When the lists above were fetched; `None` until a fetch succeeded.
    pub fetched_ms: Option<u64>,
    /// Why the latest fetch failed (the lists are then the previous fetch's, if any).
    pub error: Option<String>,
    /// How often the live view fetches, for the header.
    pub interval_ms: u64,
}

/// Cluster totals for the header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Online and not drained.
    pub nodes_up: usize,
    /// Online and drained (running jobs finish, nothing new starts).
    pub nodes_drained: usize,
    pub nodes_offline: usize,
    /// Held whole or in part (a share or a MIG instance) by a job.
    pub gpus_busy: usize,
    /// Could take a job now: on an up node, healthy, held by nobody.
    pub gpus_free: usize,
    /// Marked unhealthy by the server (out of placement), wherever they are.
    pub gpus_unhealthy: usize,
    /// Idle but not placeable for another reason: on a drained or offline node.
    pub gpus_out: usize,
    /// Running or starting.
    pub jobs_running: usize,
    pub jobs_pending: usize,
    /// Sum of the latest power readings of online nodes' GPUs; `None` when no GPU
    /// reported one.
    pub power_mw: Option<u64>,
}

/// How a GPU row is coloured.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GpuKind {
    Busy,
    Free,
    Unhealthy,
    Drained,
    Offline,
}

/// One GPU as the node panel shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuRow {
    pub node: String,
    pub index: String,
    pub model: String,
    pub holder: String,
    pub util: String,
    pub mem: String,
    pub temp: String,
    pub power: String,
    pub status: String,
    pub kind: GpuKind,
    /// At or above [`HOT_C`].
    pub hot: bool,
}

/// The temperature shown in red: NVIDIA's data-centre GPUs start slowing down near here.
pub const HOT_C: u32 = 85;

/// One active job as the queue panel shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRow {
    pub id: String,
    pub user: String,
    pub queue: String,
    pub gpus: String,
    pub state: String,
    pub running: bool,
    pub nodes: String,
    /// Run time so far for a running job, wait so far for a pending one.
    pub time: String,
    pub est_start: String,
    pub reason: String,
}

/// The orders the queue panel cycles through with `s`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum JobSort {
    /// Running first, then pending; each by id (what `queue` shows, grouped).
    #[default]
    State,
    /// Newest first.
    Newest,
    /// Longest in the system first (oldest submission).
    Age,
    /// Most GPUs first.
    Gpus,
    /// By user name.
    User,
}

impl JobSort {
    pub fn next(self) -> JobSort {
        match self {
            JobSort::State => JobSort::Newest,
            JobSort::Newest => JobSort::Age,
            JobSort::Age => JobSort::Gpus,
            JobSort::Gpus => JobSort::User,
            JobSort::User => JobSort::State,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            JobSort::State => "state",
            JobSort::Newest => "newest",
            JobSort::Age => "age",
            JobSort::Gpus => "gpus",
            JobSort::User => "user",
        }
    }
}

fn running(s: JobState) -> bool {
    matches!(s, JobState::Running | JobState::Starting)
}

pub fn totals(snap: &Snapshot) -> Totals {
    let mut t = Totals::default();
    let mut power: Option<u64> = None;
    for n in &snap.nodes {
        let online = n.state == NodeState::Online;
        match (online, n.drain.is_some()) {
            (false, _) => t.nodes_offline += 1,
            (true, true) => t.nodes_drained += 1,
            (true, false) => t.nodes_up += 1,
        }
        for g in &n.gpus {
            match gpu_kind(n, g) {
                GpuKind::Busy => t.gpus_busy += 1,
                GpuKind::Free => t.gpus_free += 1,
                GpuKind::Unhealthy => t.gpus_unhealthy += 1,
                GpuKind::Drained | GpuKind::Offline => t.gpus_out += 1,
            }
        }
        if online {
            let samples = n.telemetry.iter().flat_map(|t| &t.gpus);
            for mw in samples.filter(|s| !s.lost).filter_map(|s| s.power_mw) {
                *power.get_or_insert(0) += u64::from(mw);
            }
        }
    }
    t.power_mw = power;
    if snap.more_jobs && !snap.queues.is_empty() {
        // The job list is one page; the queues count every job (running includes
        // starting, as here).
        t.jobs_running = snap.queues.iter().map(|q| q.running as usize).sum();
        t.jobs_pending = snap.queues.iter().map(|q| q.pending as usize).sum();
        return t;
    }
    for j in &snap.jobs {
        if running(j.state) {
            t.jobs_running += 1;
        } else if j.state == JobState::Pending {
            t.jobs_pending += 1;
        }
    }
    t
}

/// A job holds the GPU whole, or one of its slices.
fn busy(g: &GpuView) -> bool {
    g.job.is_some()
        || g.user.is_some()
        || g.slices.iter().any(|s| s.job.is_some() || s.user.is_some())
}

/// Health first (an unhealthy GPU is out whatever else holds), then the node's state,
/// then whether a job holds it: a drained node's busy GPU is busy, as its job still runs.
fn gpu_kind(n: &NodeView, g: &GpuView) -> GpuKind {
    let sick = matches!(
        n.gpu_health.get(&g.info.index),
        Some(GpuHealth::Unhealthy { .. })
    );
    if n.state != NodeState::Online {
        GpuKind::Offline
    } else if sick {
        GpuKind::Unhealthy
    } else if busy(g) {
        GpuKind::Busy
    } else if n.drain.is_some() {
        GpuKind::Drained
    } else {
        GpuKind::Free
    }
}

/// Who holds a GPU: `job 12 alice`, the slices' holders, or `-`.
fn holder(g: &GpuView) -> String {
    match (g.job, &g.user) {
        (Some(j), Some(u)) => return format!("job {j} {u}"),
        (Some(j), None) => return format!("job {j}"),
        // Another user's job, hidden by the server's --private-jobs.
        (None, Some(u)) => return u.clone(),
        (None, None) => {}
    }
    let held: Vec<String> = g
        .slices
        .iter()
        .filter_map(|s| match (s.job, &s.user) {
            (Some(j), Some(u)) => Some(format!("{j} {u}")),
            (Some(j), None) => Some(j.to_string()),
            (None, Some(u)) => Some(u.clone()),
            (None, None) => None,
        })
        .collect();
    let sliced = g.info.mig.is_some() || !g.slices.is_empty();
    match (held.is_empty(), sliced) {
        (false, _) => format!(
            "{}: {}",
            gpusched_wire::count(g.slices.len() as u64, "slice"),
            held.join(", ")
        ),
        (true, true) => "sliced, idle".into(),
        (true, false) => "-".into(),
    }
}

fn gib(mib: u64) -> String {
    format!("{:.1}", mib as f64 / 1024.0)
}

pub fn gpu_rows(snap: &Snapshot) -> Vec<GpuRow> {
    let mut rows = Vec::new();
    for n in &snap.nodes {
        for g in &n.gpus {
            let i = g.info.index;
            let sample = n
                .telemetry
                .as_ref()
                .and_then(|t| t.gpus.iter().find(|s| s.index == i))
                // Readings of an offline node are stale: show none rather than old ones.
                .filter(|_| n.state == NodeState::Online);
            let dash = || "-".to_string();
            let live = sample.filter(|s| !s.lost);
            let kind = gpu_kind(n, g);
            let status = match (&kind, n.gpu_health.get(&i)) {
                (GpuKind::Offline, _) => "offline".to_string(),
                (_, Some(GpuHealth::Unhealthy { reason, .. })) => format!("unhealthy: {reason}"),
                _ if sample.is_some_and(|s| s.lost) => "lost".into(),
                _ => match &n.drain {
                    Some(d) => format!("drained: {}", d.reason),
                    None => "ok".into(),
                },
            };
            let temp = live.and_then(|s| s.temp_c);
            rows.push(GpuRow {
                node: n.name.clone(),
                index: i.to_string(),
                model: g.info.model.clone(),
                holder: holder(g),
                util: live
                    .and_then(|s| s.util_pct)
                    .map_or_else(dash, |u| format!("{u}%")),
                // A declared GPU without a memory size has nothing to show.
                mem: match (live.and_then(|s| s.mem_used_mib), g.info.mem_mib) {
                    (None, 0) => dash(),
                    (Some(used), _) => format!("{}/{} GiB", gib(used), gib(g.info.mem_mib)),
                    (None, total) => format!("-/{} GiB", gib(total)),
                },
                temp: temp.map_or_else(dash, |t| format!("{t} C")),
                power: live
                    .and_then(|s| s.power_mw)
                    .map_or_else(dash, |p| format!("{:.0} W", f64::from(p) / 1000.0)),
                status,
                kind,
                hot: temp.is_some_and(|t| t >= HOT_C),
            });
        }
    }
    rows
}

/// `now`, `in 5:00`, or `unknown` (it depends on a job without a walltime).
fn est_start(j: &JobView, now: u64) -> String {
    if j.state != JobState::Pending {
        return String::new();
    }
    match j.est_start_ms {
        Some(t) if t <= now => "now".into(),
        Some(t) => format!("in {}", elapsed(t - now)),
        None => "unknown".into(),
    }
}

pub fn job_rows(snap: &Snapshot, sort: JobSort) -> Vec<JobRow> {
    let now = snap.now_ms;
    let mut jobs: Vec<&JobView> = snap
        .jobs
        .iter()
        .filter(|j| !j.state.is_terminal())
        .collect();
    // GPUs asked for, with a slice as the thousandths of one GPU it stands for.
    let weight = |j: &JobView| -> u64 {
        match j.slice.as_deref() {
            Some(gpusched_wire::SliceAsk::Share { milli }) => u64::from(*milli),
            Some(_) => 1,
            None => u64::from(j.gpus) * 1000,
        }
    };
    match sort {
        JobSort::State => jobs.sort_by_key(|j| (!running(j.state), j.id)),
        JobSort::Newest => jobs.sort_by_key(|j| std::cmp::Reverse(j.id)),
        JobSort::Age => jobs.sort_by_key(|j| (j.submit_ms, j.id)),
        JobSort::Gpus => jobs.sort_by_key(|j| (std::cmp::Reverse(weight(j)), j.id)),
        JobSort::User => jobs.sort_by(|a, b| a.user.cmp(&b.user).then(a.id.cmp(&b.id))),
    }
    jobs.into_iter()
        .map(|j| {
            let time = match j.start_ms {
                Some(s) if running(j.state) => elapsed(now.saturating_sub(s)),
                _ => elapsed(now.saturating_sub(j.submit_ms)),
            };
            let state = if j.cancel_requested {
                "cancelling".to_string()
            } else if j.preempt_requested {
                "preempting".to_string()
            } else {
                j.state.name().to_string()
            };
            let nodes = if running(j.state) {
                where_(j)
            } else {
                "-".into()
            };
            JobRow {
                id: j.id.to_string(),
                user: j.user.clone(),
                queue: j.queue.clone(),
                gpus: gpus_asked(j),
                state,
                running: running(j.state),
                nodes,
                time,
                est_start: est_start(j, now),
                reason: if running(j.state) {
                    String::new()
                } else {
                    j.reason.clone()
                },
            }
        })
        .collect()
}

/// Where a running job is: `node:0,1` on one node, the gang's nodes otherwise.
fn where_(j: &JobView) -> String {
    if j.parts.len() > 1 {
        return nodes_of(j);
    }
    match &j.node {
        Some(n) if !j.gpu_indices.is_empty() => {
            let ix: Vec<String> = j.gpu_indices.iter().map(u32::to_string).collect();
            format!("{n}:{}", ix.join(","))
        }
        _ => nodes_of(j),
    }
}

/// `default 4 GPUs, 1 run, 3 pend` for each queue.
pub fn queue_line(snap: &Snapshot) -> String {
    snap.queues
        .iter()
        .map(|q| {
            let quota = if q.quota > 0 {
                format!("/{}", q.quota)
            } else {
                String::new()
            };
            format!(
                "{} {}{quota} GPUs, {} run, {} pend",
                q.name, q.used_gpus, q.running, q.pending
            )
        })
        .collect::<Vec<_>>()
        .join(" | ")
}
