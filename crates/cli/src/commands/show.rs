//! `gpusched show ID`: everything about one job (`scontrol show job`).

use clap::Args as ClapArgs;

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
        (
            "gpus",
            format!(
                "{}{}",
                super::fmt::gpus_asked(&j),
                j.gpu_model
                    .as_ref()
                    .map(|m| format!(" of model {m}*"))
                    .unwrap_or_default()
            ),
        ),
        ("node", opt(j.node.clone())),
        ("gpu indices", gpus),
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
                "{} (max retries {}, preempted {} times)",
                j.attempt, j.max_retries, j.preemptions
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
    for (k, v) in lines {
        println!("{k:>12}: {v}");
    }
    Ok(())
}
