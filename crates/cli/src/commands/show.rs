//! `gpusched show ID`: everything about one job (`scontrol show job`).

use clap::Args as ClapArgs;
use gpusched_wire::JobView;

use super::fmt::{elapsed, time};

#[derive(ClapArgs, Debug)]
pub struct Args {
    pub id: u64,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    let j = client.get(args.id).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(());
    }
    for (k, v) in describe(&j) {
        println!("{k:>12}: {v}");
    }
    Ok(())
}

/// The job's fields as `show` prints them, label and value, in order.
fn describe(j: &JobView) -> Vec<(&'static str, String)> {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let gpus = if j.gpu_indices.is_empty() {
        "-".to_string()
    } else {
        j.gpu_indices
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let lines = [
        ("id", j.id.to_string()),
        ("name", j.name.clone()),
        ("user", j.user.clone()),
        ("queue", j.queue.clone()),
        (
            "state",
            format!(
                "{}{}",
                j.state.name(),
                if j.cancel_requested && !j.state.is_terminal() {
                    " (cancelling)"
                } else {
                    ""
                }
            ),
        ),
        ("reason", j.reason.clone()),
        ("command", j.command.join(" ")),
        ("cwd", j.cwd.clone()),
        ("gpus", super::fmt::gpus_asked(j)),
        (
            "gpu model",
            j.gpu_model
                .as_ref()
                .map(|m| format!("{m}*"))
                .unwrap_or_else(|| "any".into()),
        ),
        ("node", opt(j.node.clone())),
        ("gpu indices", gpus),
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
        (
            "after",
            if j.after.is_empty() {
                "-".into()
            } else {
                j.after
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            },
        ),
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
    ];
    lines.into()
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
    fn show_prints_cpus_memory_model_and_env_names() {
        let j = view(serde_json::json!({
            "cpu_milli": 1500, "mem_mib": 4096, "gpu_model": "A100",
            "env_keys": ["HF_HOME", "WANDB_MODE"], "resources": {"fpga": 1, "nvme": 2}
        }));
        assert_eq!(field(&j, "resources"), "fpga=1, nvme=2");
        assert_eq!(field(&j, "cpus"), "1.5");
        assert_eq!(field(&j, "memory"), "4096 MiB");
        assert_eq!(field(&j, "gpu model"), "A100*");
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
}
