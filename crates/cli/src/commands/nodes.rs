//! `gpusched nodes` (`sinfo` / `hq worker list`): nodes, their GPUs and who holds them.

use clap::Args as ClapArgs;
use gpusched_wire::{GpuHealth, NodeState};

use super::fmt::{table, terminal_safe, time};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// One line per GPU instead of per node, then each node's address, switch and rack
    /// and how its GPUs are linked (as `nvidia-smi topo -m`).
    #[arg(long)]
    pub gpus: bool,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    let list = client.nodes().await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if list.nodes.is_empty() {
        println!("no nodes yet: start `gpusched agent --server URL` on a GPU host (or use `gpusched up`)");
        return Ok(());
    }
    let state = |s: NodeState| match s {
        NodeState::Online => "online",
        NodeState::Unreachable => "unreachable",
        NodeState::Offline => "offline",
    };
    if args.gpus {
        let mut rows = Vec::new();
        for n in &list.nodes {
            for g in &n.gpus {
                let mode = match (&g.info.mig, n.mps) {
                    (Some(m), _) if m.dynamic => "mig (dynamic)",
                    (Some(_), _) => "mig",
                    (None, true) => "mps",
                    (None, false) => "-",
                };
                let mut row = vec![
                    n.name.clone(),
                    g.info.index.to_string(),
                    g.info.model.clone(),
                    format!("{} MiB", g.info.mem_mib),
                    mode.to_string(),
                    g.info.source.name().to_string(),
                    g.info.uuid.clone().unwrap_or_else(|| "-".into()),
                    held_by(g),
                ];
                row.extend(readings(n, g.info.index));
                row.push(gpu_health(n, g.info.index));
                rows.push(row);
                // One line per share or MIG instance, under its GPU.
                for s in &g.slices {
                    let what = match (&s.profile, s.start) {
                        (Some(p), Some(start)) => format!("{p}@{start}"),
                        _ => format!(
                            "{} share, {} MiB",
                            gpusched_wire::milli_text(s.milli),
                            s.mem_mib
                        ),
                    };
                    let mut blank = vec![String::new(); 5];
                    rows.push(vec![
                        String::new(),
                        format!("  {}", s.kind),
                        what,
                        format!("{} MiB", s.mem_mib),
                        String::new(),
                        String::new(),
                        s.uuid.clone().unwrap_or_else(|| "-".into()),
                        match (s.job, &s.user) {
                            (Some(j), Some(u)) => format!("job {j} ({u})"),
                            (Some(j), None) => format!("job {j}"),
                            // Another user's job, hidden by --private-jobs.
                            (None, Some(u)) => u.clone(),
                            (None, None) => "idle".into(),
                        },
                    ]);
                    if let Some(r) = rows.last_mut() {
                        r.append(&mut blank);
                    }
                }
            }
        }
        print!(
            "{}",
            table(
                &[
                    "NODE", "GPU", "MODEL", "MEMORY", "SHARING", "SOURCE", "UUID", "HELD BY",
                    "UTIL", "TEMP", "POWER", "MEM USED", "HEALTH"
                ],
                &rows
            )
        );
        print!("{}", topology(&list.nodes));
        return Ok(());
    }
    // Features and partitions (sinfo -o %f, %P) only where a node has some.
    let with_features = list.nodes.iter().any(|n| !n.features.is_empty());
    let with_partitions = list.nodes.iter().any(|n| !n.partitions.is_empty());
    let dash = |l: &[String]| {
        if l.is_empty() {
            "-".to_string()
        } else {
            l.join(",")
        }
    };
    let rows: Vec<Vec<String>> = list
        .nodes
        .iter()
        .map(|n| {
            let used = n
                .gpus
                .iter()
                .filter(|g| held(g) || g.slices.iter().any(|s| s.job.is_some() || s.user.is_some()))
                .count();
            let sliced = n
                .gpus
                .iter()
                .filter(|g| g.info.mig.is_some() || !g.slices.is_empty())
                .count();
            let mut models: Vec<&str> = n.gpus.iter().map(|g| g.info.model.as_str()).collect();
            models.dedup();
            let mut sources: Vec<&str> = n.gpus.iter().map(|g| g.info.source.name()).collect();
            sources.dedup();
            vec![
                n.name.clone(),
                node_state(n, state(n.state)),
                if sliced > 0 {
                    format!("{used}/{} ({sliced} sliced)", n.gpus.len())
                } else {
                    format!("{used}/{}", n.gpus.len())
                },
                if models.is_empty() {
                    "-".into()
                } else {
                    models.join(",")
                },
                if sources.is_empty() {
                    "-".into()
                } else {
                    sources.join(",")
                },
                room(n),
                enforced(n),
                format!("{:.1}s ago", n.last_seen_ms_ago as f64 / 1000.0),
            ]
            .into_iter()
            .chain(with_features.then(|| dash(&n.features)))
            .chain(with_partitions.then(|| dash(&n.partitions)))
            .collect()
        })
        .collect();
    let mut head = vec![
        "NODE",
        "STATE",
        "GPUS USED",
        "MODEL",
        "SOURCE",
        "FREE CPUS/MEM/RESOURCES",
        "ENFORCES",
        "LAST SEEN",
    ];
    head.extend(with_features.then_some("FEATURES"));
    head.extend(with_partitions.then_some("PARTITIONS"));
    print!("{}", table(&head, &rows));
    print!("{}", out_of_service(&list.nodes));
    print!("{}", containment_notes(&list.nodes));
    Ok(())
}

/// A node's state, with its drain and how many GPUs are unhealthy.
fn node_state(n: &gpusched_wire::NodeView, state: &str) -> String {
    let mut s = state.to_string();
    if n.drain.is_some() {
        s.push_str(", drained");
    }
    let sick = unhealthy(n).count();
    if sick > 0 {
        s.push_str(&format!(
            ", {} unhealthy",
            gpusched_wire::count(sick as u64, "GPU")
        ));
    }
    s
}

/// The unhealthy GPUs of a node: index, why, since when.
fn unhealthy(n: &gpusched_wire::NodeView) -> impl Iterator<Item = (u32, &str, u64)> {
    n.gpu_health.iter().filter_map(|(&i, h)| match h {
        GpuHealth::Unhealthy { reason, since_ms } => Some((i, reason.as_str(), *since_ms)),
        GpuHealth::Healthy => None,
    })
}

/// Below the node table: why each drained node and unhealthy GPU is out of placement.
fn out_of_service(nodes: &[gpusched_wire::NodeView]) -> String {
    let mut out = String::new();
    for n in nodes {
        if let Some(d) = &n.drain {
            let how = if d.now { ", running jobs requeued" } else { "" };
            out.push_str(&format!(
                "{} drained by {} at {}{how}: {}\n",
                terminal_safe(&n.name),
                terminal_safe(&d.by),
                time(d.since_ms),
                terminal_safe(&d.reason)
            ));
        }
        for (i, reason, since) in unhealthy(n) {
            out.push_str(&format!(
                "{} GPU {i} unhealthy since {}: {}\n",
                terminal_safe(&n.name),
                time(since),
                terminal_safe(reason)
            ));
        }
    }
    if !out.is_empty() {
        out.insert(0, '\n');
        out.push_str("(`gpusched resume NODE` puts a node and its GPUs back, admins only)\n");
    }
    out
}

/// One GPU's health as `nodes --gpus` shows it.
fn gpu_health(n: &gpusched_wire::NodeView, index: u32) -> String {
    match n.gpu_health.get(&index) {
        Some(GpuHealth::Unhealthy { reason, .. }) => format!("unhealthy: {reason}"),
        _ if n.drain.is_some() => "ok (node drained)".into(),
        _ => "ok".into(),
    }
}

/// One GPU's latest readings from its agent's samples: utilisation, temperature,
/// power, memory used (`-` where the agent sent none).
fn readings(n: &gpusched_wire::NodeView, index: u32) -> Vec<String> {
    let s = n
        .telemetry
        .as_ref()
        .and_then(|t| t.gpus.iter().find(|s| s.index == index));
    let Some(s) = s else {
        return vec!["-".into(); 4];
    };
    if s.lost {
        return vec!["lost".into(), "-".into(), "-".into(), "-".into()];
    }
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    vec![
        or_dash(s.util_pct.map(|u| format!("{u}%"))),
        or_dash(s.temp_c.map(|t| format!("{t} C"))),
        or_dash(
            s.power_mw
                .map(|p| format!("{:.0} W", f64::from(p) / 1000.0)),
        ),
        or_dash(s.mem_used_mib.map(|m| format!("{m} MiB"))),
    ]
}

/// What a node's agent enforces on jobs, short: `v1: memory cpu cpuset pids devices
/// kill`, `+image` where it runs images, `accounting only` where it enforces nothing
/// (why: [`containment_notes`]), `-` from a server that does not say.
fn enforced(n: &gpusched_wire::NodeView) -> String {
    let Some(c) = &n.containment else {
        return "-".into();
    };
    let mut out = if c.enforced.is_empty() {
        "accounting only".to_string()
    } else {
        format!("{}: {}", c.cgroup.as_str(), c.enforced.join(" "))
    };
    if c.image_runtime.is_some() {
        out.push_str(" +image");
    }
    out
}

/// Why nodes enforce less than they could (the agents' notes), each note once with the
/// nodes it holds for, after the node table.
fn containment_notes(nodes: &[gpusched_wire::NodeView]) -> String {
    let mut by_note: Vec<(&str, Vec<&str>)> = Vec::new();
    for n in nodes {
        for note in n.containment.iter().flat_map(|c| &c.notes) {
            match by_note.iter_mut().find(|(k, _)| *k == note.as_str()) {
                Some((_, names)) => names.push(&n.name),
                None => by_note.push((note, vec![&n.name])),
            }
        }
    }
    let mut out = String::new();
    for (note, names) in by_note {
        out.push_str(&terminal_safe(&format!("{}: {note}", names.join(", "))));
        out.push('\n');
    }
    out
}

/// What one node's agent enforces and runs, in full (`nodes --gpus`).
fn containment_line(n: &gpusched_wire::NodeView) -> Option<String> {
    let c = n.containment.as_ref()?;
    let mut line = format!("  enforces: {}", enforced(n));
    if let Some(rt) = &c.image_runtime {
        line.push_str(&format!("; images run with {rt}"));
    }
    for note in &c.notes {
        line.push_str(&format!("; {note}"));
    }
    Some(line)
}

/// Each node's address and location, what it enforces, and its GPU link matrix where the
/// agent reported one, after the GPU table.
fn topology(nodes: &[gpusched_wire::NodeView]) -> String {
    let mut out = String::new();
    for n in nodes {
        out.push('\n');
        out.push_str(&terminal_safe(&super::topo::where_line(n)));
        out.push('\n');
        if let Some(line) = containment_line(n) {
            out.push_str(&terminal_safe(&line));
            out.push('\n');
        }
        match super::topo::matrix(n) {
            Some(m) => {
                for line in m.lines() {
                    out.push_str("  ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
            None if n.gpus.len() > 1 => {
                out.push_str("  GPU links not reported (declared GPUs, or NVML did not say)\n")
            }
            None => {}
        }
    }
    let legend = super::topo::legend(nodes);
    if !legend.is_empty() {
        out.push_str(&format!("\nLegend: X = self; {legend}\n"));
    }
    out
}

/// Who holds a GPU: a job whole, jobs on its slices, or nobody.
fn held_by(g: &gpusched_wire::GpuView) -> String {
    match (g.job, &g.user) {
        (Some(j), Some(u)) => return format!("job {j} ({u})"),
        (Some(j), None) => return format!("job {j}"),
        // Another user's job, hidden by the server's --private-jobs.
        (None, Some(u)) => return u.clone(),
        (None, None) => {}
    }
    let holders: Vec<String> = g
        .slices
        .iter()
        .filter_map(|s| match (s.job, &s.user) {
            (Some(j), _) => Some(j.to_string()),
            (None, Some(u)) => Some(u.clone()),
            (None, None) => None,
        })
        .collect();
    match (
        holders.is_empty(),
        g.info.mig.is_some() || !g.slices.is_empty(),
    ) {
        (false, _) => format!("jobs {} (sliced)", holders.join(",")),
        (true, true) => "sliced, idle".into(),
        (true, false) => "free".into(),
    }
}

/// Whether a job holds the GPU whole (shown by id, or anonymously).
fn held(g: &gpusched_wire::GpuView) -> bool {
    g.job.is_some() || g.user.is_some()
}

/// What an online node has left for jobs that ask for CPUs, memory or generic
/// resources, of what it offers: `3/4 cpu, 2048/8192 MiB, fpga 0/1`.
fn room(n: &gpusched_wire::NodeView) -> String {
    if n.state != gpusched_wire::NodeState::Online {
        return "-".into();
    }
    let cpus = |milli: u64| gpusched_wire::milli_text(milli.min(u64::from(u32::MAX)) as u32);
    let mut parts = vec![
        format!("{}/{} cpu", cpus(n.free_cpu_milli), n.cpus),
        format!("{}/{} MiB", n.free_mem_mib, n.mem_mib),
    ];
    for (name, total) in &n.resources {
        let free = n.free_resources.get(name).copied().unwrap_or(0);
        parts.push(format!("{name} {free}/{total}"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, containment: serde_json::Value) -> gpusched_wire::NodeView {
        let mut v = serde_json::json!({
            "name": name, "state": "online", "gpus": [], "cpus": 8, "mem_mib": 1024,
            "last_seen_ms_ago": 0, "agent_version": "test",
        });
        if !containment.is_null() {
            v["containment"] = containment;
        }
        serde_json::from_value(v).unwrap()
    }

    /// The short column, the notes under the table (each once, with its nodes), and the
    /// full line of `nodes --gpus`.
    #[test]
    fn nodes_say_what_their_agents_enforce_and_why_not_more() {
        let v1 = node(
            "n1",
            serde_json::json!({
                "cgroup": "v1",
                "enforced": ["memory", "cpu", "cpuset", "pids", "devices", "kill"],
                "notes": [],
                "image_runtime": "podman 4.3.1"
            }),
        );
        let none = |name| {
            node(
                name,
                serde_json::json!({
                    "cgroup": "none", "enforced": [],
                    "notes": ["no cgroup the agent may write (not root, no delegation)"]
                }),
            )
        };
        let (n2, n3) = (none("n2"), none("n3"));
        let old = node("n4", serde_json::Value::Null);
        assert_eq!(
            enforced(&v1),
            "v1: memory cpu cpuset pids devices kill +image"
        );
        assert_eq!(enforced(&n2), "accounting only");
        assert_eq!(enforced(&old), "-");
        assert_eq!(
            containment_notes(&[v1.clone(), n2.clone(), n3, old]),
            "n2, n3: no cgroup the agent may write (not root, no delegation)\n"
        );
        assert_eq!(
            containment_line(&v1).unwrap(),
            "  enforces: v1: memory cpu cpuset pids devices kill +image; images run with \
             podman 4.3.1"
        );
        assert_eq!(
            containment_line(&n2).unwrap(),
            "  enforces: accounting only; no cgroup the agent may write (not root, no \
             delegation)"
        );
    }
}
