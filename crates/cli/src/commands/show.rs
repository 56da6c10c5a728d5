//! `gpusched show ID`: everything about one job (`scontrol show job`); a job on several
//! nodes lists every part (rank, node, address, GPUs, state, exit).

use clap::Args as ClapArgs;
use gpusched_wire::history::JobEvents;
use gpusched_wire::{JobView, PartState};

use super::fmt::{command_line, elapsed, table, terminal_safe, time};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// A job id, an array's id (its spec and counts), or one task of an array (12.7).
    #[arg(value_parser = crate::client::job_ref, value_name = "ID")]
    pub id: gpusched_wire::JobRef,
    /// Then the job's timeline: submitted, placements, start, checkpoints, preemptions,
    /// requeues, cancel, end, with reasons (its owner or an admin).
    #[arg(long)]
    pub events: bool,
    /// JSON: the job (with --events, `{"job": ..., "events": ...}`).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    let j = match args.id.task {
        Some(index) => client.task(args.id.id, index).await?,
        None => client.get(args.id.id).await?,
    };
    // A task not started yet has no id and no timeline of its own.
    let events = if args.events && j.id != 0 {
        Some(client.events(j.id).await?)
    } else {
        None
    };
    if args.json {
        let out = match &events {
            Some(e) => serde_json::to_string_pretty(&serde_json::json!({"job": j, "events": e}))?,
            None => serde_json::to_string_pretty(&j)?,
        };
        println!("{out}");
        return Ok(());
    }
    print!("{}", lines(&j));
    if let Some(t) = parts_table(&j) {
        println!("{:>12}:", "parts");
        for line in t.lines() {
            println!("{:>14}{line}", "");
        }
    }
    if let Some(t) = steps_table(&j) {
        println!("{:>12}:", "steps");
        for line in t.lines() {
            println!("{:>14}{line}", "");
        }
    }
    if let Some(e) = &events {
        println!("{:>12}:", "events");
        for line in timeline(e).lines() {
            println!("{:>14}{line}", "");
        }
    }
    Ok(())
}

/// The `label: value` lines of a job (and of an array), every value through
/// [`terminal_safe`]: the name, the command and the node are users' and agents' text.
fn lines(j: &JobView) -> String {
    describe(j)
        .into_iter()
        .chain(super::array_text::show_lines(j))
        .map(|(k, v)| format!("{k:>12}: {}\n", terminal_safe(&v)))
        .collect()
}

/// A job's timeline as a table, oldest first, with what was dropped said first.
fn timeline(e: &JobEvents) -> String {
    let mut out = String::new();
    if e.dropped > 0 {
        out.push_str(&format!(
            "({} older events dropped: the server keeps the first and the newest)\n",
            e.dropped
        ));
    }
    if e.events.is_empty() {
        out.push_str("none recorded\n");
        return out;
    }
    let rows: Vec<Vec<String>> = e
        .events
        .iter()
        .map(|ev| {
            vec![
                time(ev.at_ms),
                ev.kind.name().to_string(),
                if ev.attempt == 0 {
                    "-".into()
                } else {
                    ev.attempt.to_string()
                },
                if ev.nodes.is_empty() {
                    "-".into()
                } else {
                    ev.nodes.join(",")
                },
                ev.detail.clone(),
            ]
        })
        .collect();
    out.push_str(&table(
        &["TIME", "EVENT", "ATTEMPT", "NODES", "DETAIL"],
        &rows,
    ));
    out
}

/// A job's steps (`gpusched run`), one row each; `None` for a job without any. Every
/// user-written cell through [`terminal_safe`].
fn steps_table(j: &JobView) -> Option<String> {
    let steps = j.steps.as_deref().filter(|s| !s.is_empty())?;
    let rows: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            let took = s.ended_ms.unwrap_or_else(super::fmt::now_ms);
            vec![
                format!("{}.{}", j.id, s.step),
                s.state.as_str().to_string(),
                s.exit_code.map_or("-".into(), |c| c.to_string()),
                s.nodes.join(","),
                s.tasks_per_node.to_string(),
                time(s.started_ms),
                super::fmt::elapsed(took.saturating_sub(s.started_ms)),
                terminal_safe(&gpusched_wire::command_line(&s.command)).into_owned()
                    + &s.reason
                        .as_ref()
                        .map_or(String::new(), |r| format!(" ({})", terminal_safe(r))),
            ]
        })
        .collect();
    Some(table(
        &[
            "STEP",
            "STATE",
            "EXIT",
            "NODES",
            "TASKS/NODE",
            "STARTED",
            "TOOK",
            "COMMAND",
        ],
        &rows,
    ))
}

/// The parts of a job on several nodes, one row per `NODE_RANK`; `None` for a job of one
/// node (its `node` and `gpu indices` lines say it all).
fn parts_table(j: &JobView) -> Option<String> {
    if j.parts.len() < 2 && j.nodes < 2 {
        return None;
    }
    if j.parts.is_empty() {
        return Some("none yet (every part starts together once all nodes are free)\n".into());
    }
    let rows: Vec<Vec<String>> = j
        .parts
        .iter()
        .map(|p| {
            vec![
                p.rank.to_string(),
                p.node.clone(),
                p.addr.clone().unwrap_or_else(|| "-".into()),
                indices(&p.gpu_indices),
                part_state(p.state).into(),
                match (p.exit_code, p.signal) {
                    (_, Some(sig)) => format!("signal {sig}"),
                    (Some(code), None) => code.to_string(),
                    (None, None) => "-".into(),
                },
            ]
        })
        .collect();
    Some(table(
        &["RANK", "NODE", "ADDR", "GPUS", "STATE", "EXIT"],
        &rows,
    ))
}

fn part_state(s: PartState) -> &'static str {
    match s {
        PartState::Starting => "starting",
        PartState::Running => "running",
        PartState::Done => "done",
        PartState::Failed => "failed",
        PartState::Stopped => "stopped",
    }
}

fn indices(ix: &[u32]) -> String {
    if ix.is_empty() {
        "-".to_string()
    } else {
        ix.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
    }
}

/// How the job is laid out over nodes: `1`, `2 x 4 GPUs`, `16 GPUs, split by the
/// scheduler (not placed yet)`, with the processes per node when the agent starts them.
fn layout(j: &JobView) -> String {
    let mut s = if j.split && j.gpus_per_node == 0 {
        format!("{} GPUs, split over nodes when placed", j.gpus)
    } else if j.nodes > 1 {
        format!(
            "{} x {}{}",
            j.nodes,
            gpusched_wire::count(j.gpus_per_node, "GPU"),
            if j.split {
                " (split by the scheduler)"
            } else {
                ""
            }
        )
    } else {
        "1".to_string()
    };
    if let Some(k) = j.tasks_per_node {
        s.push_str(&format!(", {k} tasks per node"));
    }
    if j.mixed_models {
        s.push_str(", mixed GPU models allowed");
    }
    s
}

/// `MASTER_ADDR:MASTER_PORT` of the current (or last) attempt, once the first part's
/// agent reserved the port.
fn master(j: &JobView) -> String {
    let addr = j.parts.first().and_then(|p| p.addr.clone());
    match (addr, j.master_port) {
        (Some(a), Some(p)) => format!("{a}:{p}"),
        (Some(a), None) if j.nodes > 1 && !j.state.is_terminal() => {
            format!("{a} (port not reserved yet)")
        }
        _ => "-".into(),
    }
}

/// The job's fields as `show` prints them, label and value, in order.
/// A job's measured energy: kWh for people, Joules as the API keeps it.
fn energy(joules: Option<u64>) -> String {
    match joules {
        None => "- (no GPU energy sample covered it)".into(),
        Some(j) => format!("{:.3} kWh ({j} J)", j as f64 / 3_600_000.0),
    }
}

/// What the job's current (or last) attempt used, as its nodes' cgroups measured it:
/// `CPU 1h02m (0.9 cores avg), peak memory 3.1 GiB of 4.0 GiB asked`.
fn used(j: &JobView) -> String {
    match j.usage.as_deref() {
        Some(u) => {
            let ran = j.start_ms.zip(j.end_ms).map(|(s, e)| e.saturating_sub(s));
            let parts = j.parts.len().max(1) as u32;
            gpusched_wire::contain::usage_text(u, ran, j.mem_mib, parts)
        }
        None if j.state.is_terminal() && j.start_ms.is_some() => {
            "- (not measured: its node has no cgroup for jobs, or its agent is older)".into()
        }
        None if j.start_ms.is_some() => "- (measured when it ends)".into(),
        None => "-".into(),
    }
}

/// A replica's service: `resnet version 3, port 40001, ready`.
fn replica_of(s: &gpusched_wire::ReplicaOf) -> String {
    format!(
        "{} version {}, {}, {}",
        s.service,
        s.version,
        s.port
            .map_or_else(|| "no port yet".to_string(), |p| format!("port {p}")),
        if s.ready { "ready" } else { "not ready" }
    )
}

fn describe(j: &JobView) -> Vec<(&'static str, String)> {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let gpus = indices(&j.gpu_indices);
    let lines = [
        ("id", j.id.to_string()),
        ("name", j.name.clone()),
        ("user", j.user.clone()),
        ("queue", j.queue.clone()),
        ("account", opt(j.account.clone())),
        (
            "state",
            format!(
                "{}{}{}",
                j.state.name(),
                if j.cancel_requested && !j.state.is_terminal() {
                    " (cancelling)"
                } else {
                    ""
                },
                if j.interactive { ", interactive" } else { "" }
            ),
        ),
        ("reason", j.reason.clone()),
        // No job runs an empty command: an empty one is another user's, hidden by the
        // server (only the owner and admins see it: it may hold secrets).
        (
            "command",
            if j.command.is_empty() {
                "(hidden: only its owner and admins see it)".to_string()
            } else {
                command_line(&j.command)
            },
        ),
        ("cwd", j.cwd.clone()),
        ("image", opt(j.image.clone())),
        ("gpus", super::fmt::gpus_asked(j)),
        (
            "gpu model",
            j.gpu_model
                .as_ref()
                .map(|m| format!("{m}*"))
                .unwrap_or_else(|| "any".into()),
        ),
        ("nodes", layout(j)),
        ("node", opt(j.node.clone())),
        ("gpu indices", gpus),
        ("master", master(j)),
        (
            "cpus",
            match j.cpu_milli {
                0 => "-".into(),
                m => gpusched_wire::milli_text(m.min(u64::from(u32::MAX)) as u32),
            },
        ),
        (
            "memory",
            match j.mem_mib {
                0 => "-".into(),
                m => format!("{m} MiB"),
            },
        ),
        (
            "resources",
            if j.resources.is_empty() {
                "-".into()
            } else {
                gpusched_wire::resource::describe(&j.resources)
            },
        ),
        (
            "env",
            if j.env_keys.is_empty() {
                "-".into()
            } else {
                format!("{} (names only)", j.env_keys.join(", "))
            },
        ),
        (
            "slice",
            match &j.slice_at {
                Some(at) => match &at.mig {
                    Some(m) => format!(
                        "MIG {} at slice {} of GPU {}{}{}",
                        m.profile,
                        m.start,
                        at.gpu,
                        m.uuid
                            .as_ref()
                            .map(|u| format!(" ({u})"))
                            .unwrap_or_default(),
                        if m.create {
                            ", created for this job"
                        } else {
                            ""
                        }
                    ),
                    None => format!(
                        "{} of GPU {} ({} MiB)",
                        gpusched_wire::milli_text(at.milli),
                        at.gpu,
                        at.mem_mib
                    ),
                },
                None => "-".into(),
            },
        ),
        (
            "attempt",
            format!(
                "{} (max retries {}, preempted {})",
                j.attempt,
                j.max_retries,
                gpusched_wire::count(j.preemptions, "time")
            ),
        ),
        ("checkpoint", opt(j.last_checkpoint_ms.map(time))),
        ("priority", j.priority.to_string()),
        ("after", super::after::dependencies(j)),
        ("held", if j.held { "yes".into() } else { "no".into() }),
        ("walltime", opt(j.walltime_s.map(|w| elapsed(w * 1000)))),
        ("submitted", time(j.submit_ms)),
        (
            "est. start",
            match (j.state, j.est_start_ms) {
                (gpusched_wire::JobState::Pending, Some(t)) => time(t),
                (gpusched_wire::JobState::Pending, None) => {
                    "unknown (a job it waits for has no walltime)".into()
                }
                _ => "-".into(),
            },
        ),
        ("started", opt(j.start_ms.map(time))),
        ("ended", opt(j.end_ms.map(time))),
        ("exit code", opt(j.exit_code.map(|c| c.to_string()))),
        ("signal", opt(j.signal.map(|s| s.to_string()))),
        ("energy", energy(j.energy_j)),
        ("used", used(j)),
    ];
    let mut lines = Vec::from(lines);
    // Where it may run (partitions, constraint, node lists, reservation), after its
    // GPU model, only for a job with such rules.
    if let Some(r) = j.rules.as_ref().filter(|r| !r.is_empty()) {
        let at = lines
            .iter()
            .position(|(k, _)| *k == "gpu model")
            .map_or(lines.len(), |i| i + 1);
        lines.insert(at, ("runs on", r.describe()));
    }
    // How fast it runs on each model of the cluster, fastest first, and why.
    if let Some(s) = j.speed.as_deref() {
        let at = lines
            .iter()
            .position(|(k, _)| *k == "runs on" || *k == "gpu model")
            .map_or(lines.len(), |i| i + 1);
        lines.insert(at, ("speed", speed_words(s)));
    }
    if let Some(s) = &j.service {
        lines.insert(2, ("service", replica_of(s)));
    }
    // Its deadline and how it stands, after the walltime.
    if let Some(d) = j.deadline.as_deref() {
        let at = lines
            .iter()
            .position(|(k, _)| *k == "walltime")
            .map_or(lines.len(), |i| i + 1);
        let line = super::fmt::deadline_line(d, super::fmt::now_ms());
        lines.insert(
            at,
            ("deadline", line.trim_start_matches("deadline ").to_string()),
        );
    }
    if let Some(n) = j.pids_max {
        let at = lines
            .iter()
            .position(|(k, _)| *k == "memory")
            .map_or(0, |i| i + 1);
        lines.insert(at, ("processes", format!("at most {n}")));
    }
    // An allocation's GPU time held idle so far, and what its steps used (`usage`
    // sums both).
    let at = lines
        .iter()
        .position(|(k, _)| *k == "energy")
        .map_or(lines.len(), |i| i + 1);
    if let Some(u) = j.step_use.as_deref() {
        lines.insert(
            at,
            (
                "steps used",
                format!(
                    "{:.2} GPU-hours in {}",
                    u.gpu_s as f64 / 3600.0,
                    gpusched_wire::count(u.steps, "step")
                ),
            ),
        );
    }
    if let Some(s) = j.idle_gpu_s {
        lines.insert(
            at,
            ("idle", format!("{:.2} GPU-hours", f64::from(s) / 3600.0)),
        );
    }
    lines
}

/// `H100 2.8x (declared), A100 2.0x (default), V100 1.0x (default)`, or the
/// declaration alone where the cluster has one model.
fn speed_words(s: &gpusched_wire::JobSpeed) -> String {
    if s.on.is_empty() {
        return format!("declared {}", s.declared.as_deref().unwrap_or("-"));
    }
    let each: Vec<String> =
        s.on.iter()
            .map(|m| format!("{} {:.2}x ({})", m.model, m.factor, m.source))
            .collect();
    format!("{} (times a V100)", each.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(extra: serde_json::Value) -> JobView {
        let mut v = serde_json::json!({
            "id": 7, "name": "train", "user": "alice", "state": "pending", "reason": "",
            "command": ["python", "train.py"], "cwd": "/work", "gpus": 2,
            "priority": 0, "gpu_indices": [], "attempt": 1, "max_retries": 3,
            "submit_ms": 0, "cancel_requested": false
        });
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        serde_json::from_value(v).unwrap()
    }

    fn field(j: &JobView, key: &str) -> String {
        describe(j)
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("no `{key}` line"))
    }

    #[test]
    fn a_replica_shows_its_service() {
        let j = view(serde_json::json!({
            "service": {"service": "resnet", "version": 3, "port": 40001, "ready": true}
        }));
        assert_eq!(field(&j, "service"), "resnet version 3, port 40001, ready");
        let lines = describe(&j);
        assert_eq!(lines[2].0, "service", "right after the name");
        let j = view(serde_json::json!({
            "service": {"service": "resnet", "version": 1, "ready": false}
        }));
        assert_eq!(
            field(&j, "service"),
            "resnet version 1, no port yet, not ready"
        );
        assert!(!describe(&view(serde_json::json!({})))
            .iter()
            .any(|(k, _)| *k == "service"));
    }

    #[test]
    fn show_prints_cpus_memory_model_and_env_names() {
        let j = view(serde_json::json!({
            "cpu_milli": 1500, "mem_mib": 4096, "gpu_model": "A100",
            "env_keys": ["HF_HOME", "WANDB_MODE"], "resources": {"fpga": 1, "nvme": 2}
        }));
        assert_eq!(field(&j, "resources"), "fpga=1, nvme=2");
        assert_eq!(field(&j, "cpus"), "1.5");
        assert_eq!(field(&j, "memory"), "4096 MiB");
        assert_eq!(field(&j, "gpu model"), "A100*");
        assert_eq!(field(&j, "energy"), "- (no GPU energy sample covered it)");
        let measured = view(serde_json::json!({"energy_j": 5_400_000}));
        assert_eq!(field(&measured, "energy"), "1.500 kWh (5400000 J)");
        assert_eq!(field(&j, "env"), "HF_HOME, WANDB_MODE (names only)");
        assert_eq!(field(&j, "gpus"), "2");

        let bare = view(serde_json::json!({}));
        assert_eq!(field(&bare, "cpus"), "-");
        assert_eq!(field(&bare, "memory"), "-");
        assert_eq!(field(&bare, "resources"), "-");
        assert_eq!(field(&bare, "gpu model"), "any");
        assert_eq!(field(&bare, "env"), "-");
        assert_eq!(
            field(&bare, "attempt"),
            "1 (max retries 3, preempted 0 times)"
        );
        let once = view(serde_json::json!({"preemptions": 1}));
        assert!(field(&once, "attempt").ends_with("preempted 1 time)"));
    }

    /// What an attempt used: measured, not measured (not zeros), or not yet.
    #[test]
    fn show_says_what_the_job_used_and_its_image() {
        let j = view(serde_json::json!({
            "state": "succeeded", "mem_mib": 4096, "start_ms": 0, "end_ms": 4_136_666,
            "image": "localhost/pytorch:24.01", "pids_max": 512,
            "usage": {"cpu_ms": 3_723_000, "mem_peak_bytes": 3_328_599_654u64}
        }));
        assert_eq!(
            field(&j, "used"),
            "CPU 1h02m (0.9 cores avg), peak memory 3.1 GiB of 4.0 GiB asked"
        );
        assert_eq!(field(&j, "image"), "localhost/pytorch:24.01");
        assert_eq!(field(&j, "processes"), "at most 512");
        let unmeasured = view(serde_json::json!({"state": "failed", "start_ms": 0, "end_ms": 5}));
        assert!(field(&unmeasured, "used").starts_with("- (not measured"));
        let running = view(serde_json::json!({"state": "running", "start_ms": 0}));
        assert_eq!(field(&running, "used"), "- (measured when it ends)");
        let pending = view(serde_json::json!({}));
        assert_eq!(field(&pending, "used"), "-");
        assert_eq!(field(&pending, "image"), "-");
        assert!(describe(&pending).iter().all(|(k, _)| *k != "processes"));
    }

    #[test]
    fn another_users_hidden_command_says_so() {
        let j = view(serde_json::json!({"command": []}));
        assert_eq!(
            field(&j, "command"),
            "(hidden: only its owner and admins see it)"
        );
    }

    #[test]
    fn show_quotes_the_command_and_escapes_what_a_terminal_would_obey() {
        let j = view(serde_json::json!({
            "name": "evil\u{1b}]0;pwned\u{7}",
            "command": ["sh", "-c", "echo 'hi'\nsleep 1"],
        }));
        assert_eq!(field(&j, "command"), "sh -c 'echo '\\''hi'\\''\nsleep 1'");
        let out = lines(&j);
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
        assert!(
            out.contains("        name: evil\\x1b]0;pwned\\x07\n"),
            "{out}"
        );
        assert!(
            out.contains(r"     command: sh -c 'echo '\''hi'\''\nsleep 1'"),
            "{out}"
        );
    }

    #[test]
    fn a_gang_lists_every_part_and_its_master() {
        let j = view(serde_json::json!({
            "state": "failed", "gpus": 4, "nodes": 2, "gpus_per_node": 2,
            "tasks_per_node": 2, "master_port": 29500, "node": "n1", "gpu_indices": [0, 1],
            "parts": [
                {"rank": 0, "node": "n1", "gpu_indices": [0, 1], "addr": "10.0.0.1",
                 "state": "failed", "exit_code": 1},
                {"rank": 1, "node": "n2", "gpu_indices": [2, 3], "addr": "10.0.0.2",
                 "state": "stopped", "signal": 15}
            ]
        }));
        assert_eq!(field(&j, "nodes"), "2 x 2 GPUs, 2 tasks per node");
        assert_eq!(field(&j, "master"), "10.0.0.1:29500");
        assert_eq!(field(&j, "gpus"), "2x2");
        let t = parts_table(&j).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        // The rank that failed, and the one gpusched stopped because of it.
        assert_eq!(lines[0], "RANK  NODE  ADDR      GPUS  STATE    EXIT");
        assert_eq!(lines[1], "0     n1    10.0.0.1  0,1   failed   1");
        assert_eq!(lines[2], "1     n2    10.0.0.2  2,3   stopped  signal 15");

        // Waiting: no parts yet, and it says why; a split not yet placed says so.
        let waiting = view(serde_json::json!({"gpus": 16, "split": true, "nodes": 0}));
        assert_eq!(
            field(&waiting, "nodes"),
            "16 GPUs, split over nodes when placed"
        );
        assert_eq!(field(&waiting, "gpus"), "16/split");
        assert_eq!(field(&waiting, "master"), "-");
        let pending = view(serde_json::json!({"gpus": 4, "nodes": 2, "gpus_per_node": 2}));
        assert!(parts_table(&pending).unwrap().starts_with("none yet"));
        // A job of one node has no parts table.
        assert!(parts_table(&view(serde_json::json!({}))).is_none());
    }
}
