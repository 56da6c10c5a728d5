//! `gpusched alloc [submit's options] [-- COMMAND...]`: an interactive allocation, as
//! Slurm's `salloc` (docs/interactive-alloc.md).
//!
//! Submits an interactive job (`JobSubmit::interactive`: its agents hold the GPUs with
//! no process of its own), waits for it to run with its wait reason on stderr (Ctrl-C
//! cancels it and exits 130), then runs `$SHELL` (or COMMAND) here, on the submit
//! host, with the allocation in its environment:
//!
//! - `GPUSCHED_JOB_ID`: the allocation's id (what `gpusched run --jobid` takes);
//! - `GPUSCHED_NODELIST`: its nodes, comma-separated, in rank order;
//! - `GPUSCHED_GPUS`: each node's GPU indices, `node:0,1`, space-separated per node;
//! - `GPUSCHED_NUM_NODES`, `GPUSCHED_NUM_GPUS`.
//!
//! No `SLURM_*` variables: libraries that find them (PyTorch Lightning, mpi4py's
//! launchers) would believe they run under Slurm's `srun` and read ranks that are not
//! there.
//!
//! While the command runs, alloc watches the allocation: an idle warning is printed as
//! the server records it, and an allocation the server ends (walltime, idle policy, an
//! admin's cancel) is said to be revoked; the command keeps running, as under `salloc`.
//! When the command exits, the allocation is cancelled and alloc exits with its code.
//! Ctrl-C goes to the command (the terminal's foreground group), not to alloc.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use gpusched_wire::history::JobEventKind;
use gpusched_wire::{JobState, JobView};
use tokio::signal::unix::{signal, SignalKind};

use crate::client::Client;

#[derive(ClapArgs, Debug)]
// Submit's `Args` names the group of its own flags; this one needs none.
#[group(skip)]
pub struct Args {
    /// Print only errors, the allocation's revocation and idle warnings on stderr.
    #[arg(long, short = 'Q')]
    pub quiet: bool,
    /// Every option of `submit` (GPUs, nodes, walltime, queue, ...); the command after
    /// `--` runs here, on this host, not on the nodes (default: $SHELL).
    #[command(flatten)]
    pub submit: super::submit::Args,
}

/// How often the allocation is looked at while waiting, and while the command runs.
const WAIT_POLL: Duration = Duration::from_millis(500);
const WATCH_POLL: Duration = Duration::from_secs(2);

pub async fn run(mut args: Args) -> anyhow::Result<()> {
    if args.submit.wait || args.submit.json {
        bail!("--wait and --json are submit's; alloc always waits for its allocation");
    }
    let command = match std::mem::take(&mut args.submit.command) {
        c if !c.is_empty() => c,
        _ => vec![std::env::var("SHELL")
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "/bin/sh".into())],
    };
    // The command is the allocation's label: it runs here, never on the nodes.
    args.submit.command = command.clone();
    let mut jobs = super::submit::build(&args.submit)?;
    for j in &mut jobs {
        j.interactive = true;
    }
    let client = args.submit.conn.client()?;
    let say = |s: String| {
        if !args.quiet {
            eprintln!("gpusched alloc: {s}");
        }
    };
    // Caught from before the submission: a Ctrl-C while waiting cancels what was asked.
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot catch SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).context("cannot catch SIGTERM")?;
    let mut hangup = signal(SignalKind::hangup()).context("cannot catch SIGHUP")?;
    let id = match client.submit(jobs).await?.ids.as_slice() {
        [id] => *id,
        ids => bail!("the server accepted {} jobs for one allocation", ids.len()),
    };
    say(format!("pending job allocation {id}"));
    let waited = tokio::select! {
        v = wait_running(&client, id, &say) => Ok(v),
        _ = interrupt.recv() => Err(Interrupted(130)),
        _ = terminate.recv() => Err(Interrupted(143)),
        _ = hangup.recv() => Err(Interrupted(129)),
    };
    let view = match waited {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            // Could not tell whether it runs: it must not stay behind holding GPUs.
            let _ = client.cancel_many(&[id]).await;
            return Err(e);
        }
        Err(Interrupted(code)) => {
            let _ = client.cancel_many(&[id]).await;
            eprintln!("gpusched alloc: job allocation {id} cancelled");
            std::process::exit(code);
        }
    };
    if view.state.is_terminal() {
        eprintln!(
            "gpusched alloc: job allocation {id} {} before it started: {}",
            view.state.name(),
            super::fmt::terminal_safe(&view.reason)
        );
        std::process::exit(1);
    }
    let env = allocation_env(&view);
    say(format!(
        "granted job allocation {id}: {}",
        env.iter()
            .find(|(k, _)| k == "GPUSCHED_GPUS")
            .map_or("", |(_, v)| v.as_str())
    ));
    let spawned = tokio::process::Command::new(&command[0])
        .args(&command[1..])
        .envs(env)
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            let _ = client.cancel_many(&[id]).await;
            bail!(
                "cannot start {:?} here: {e}; job allocation {id} cancelled",
                command[0]
            );
        }
    };
    let mut watch = Watch::default();
    let status = loop {
        tokio::select! {
            s = child.wait() => break s,
            _ = tokio::time::sleep(WATCH_POLL) => watch.look(&client, id).await,
            // The terminal's Ctrl-C is the command's; alloc stays for it.
            _ = interrupt.recv() => {}
            // alloc itself is asked to go: the allocation goes, the command is left to
            // its own signals (a hangup reaches it from the terminal too).
            _ = terminate.recv() => watch.give_up(&client, id).await,
            _ = hangup.recv() => watch.give_up(&client, id).await,
        }
    };
    if !watch.ended {
        say(format!("relinquishing job allocation {id}"));
        client.cancel_many(&[id]).await.with_context(|| {
            format!("could not cancel job allocation {id}; `gpusched cancel {id}`")
        })?;
    } else {
        // Revoked: ended (the cancel answers `already_ended`), or sent back to the queue
        // by a preemption, where it must not wait to hold GPUs for nobody.
        let _ = client.cancel_many(&[id]).await;
    }
    let code = match status {
        Ok(s) => s.code().unwrap_or_else(|| {
            128 + std::os::unix::process::ExitStatusExt::signal(&s).unwrap_or(0)
        }),
        Err(e) => {
            eprintln!("gpusched alloc: lost track of {:?}: {e}", command[0]);
            1
        }
    };
    std::process::exit(code);
}

/// alloc was told to stop while it waited; the exit code to leave with.
struct Interrupted(i32);

/// Waits until every part of the allocation runs (or it ended), saying why it waits
/// whenever that changes.
async fn wait_running(client: &Client, id: u64, say: &impl Fn(String)) -> anyhow::Result<JobView> {
    let mut said = String::new();
    loop {
        let v = client.get(id).await?;
        let all_parts = v
            .parts
            .iter()
            .all(|p| p.state == gpusched_wire::PartState::Running);
        if v.state.is_terminal() || (v.state == JobState::Running && all_parts) {
            return Ok(v);
        }
        let mut why = format!("job {id} {}", v.state.name());
        if !v.reason.is_empty() {
            why.push_str(": ");
            why.push_str(&super::fmt::terminal_safe(&v.reason));
        }
        if let Some(at) = v.est_start_ms {
            why.push_str(&format!(" (estimated start {})", super::fmt::time(at)));
        }
        if why != said {
            say(why.clone());
            said = why;
        }
        tokio::time::sleep(WAIT_POLL).await;
    }
}

/// The allocation's environment for the command: its id, nodes and GPUs.
pub fn allocation_env(v: &JobView) -> Vec<(String, String)> {
    let nodes: Vec<(String, Vec<u32>)> = if v.parts.is_empty() {
        v.node
            .iter()
            .map(|n| (n.clone(), gpus_of(&v.gpu_indices, v)))
            .collect()
    } else {
        v.parts
            .iter()
            .map(|p| (p.node.clone(), gpus_of(&p.gpu_indices, v)))
            .collect()
    };
    let list = |g: &[u32]| g.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    vec![
        ("GPUSCHED_JOB_ID".into(), v.id.to_string()),
        (
            "GPUSCHED_NODELIST".into(),
            nodes
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(","),
        ),
        (
            "GPUSCHED_GPUS".into(),
            nodes
                .iter()
                .map(|(n, g)| format!("{n}:{}", list(g)))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        ("GPUSCHED_NUM_NODES".into(), nodes.len().to_string()),
        (
            "GPUSCHED_NUM_GPUS".into(),
            nodes
                .iter()
                .map(|(_, g)| g.len())
                .sum::<usize>()
                .to_string(),
        ),
    ]
}

/// A part's GPUs: its indices, or for a share or MIG instance the one GPU it is on.
fn gpus_of(indices: &[u32], v: &JobView) -> Vec<u32> {
    match (&v.slice_at, indices.is_empty()) {
        (Some(at), true) => vec![at.gpu],
        _ => indices.to_vec(),
    }
}

/// What alloc has told of the allocation while its command runs.
#[derive(Default)]
struct Watch {
    /// The idle warnings printed, by their time.
    warned: BTreeSet<u64>,
    /// The allocation has ended or left its GPUs (said once).
    ended: bool,
    /// The server could not be reached at the last look (said once per outage).
    unreachable: bool,
}

impl Watch {
    /// One look at the allocation: new idle warnings, and its end, printed.
    async fn look(&mut self, client: &Client, id: u64) {
        if self.ended {
            return;
        }
        let (v, events) = match (client.get(id).await, client.events(id).await) {
            (Ok(v), Ok(e)) => (v, e),
            (Err(e), _) | (_, Err(e)) => {
                if !self.unreachable {
                    eprintln!("gpusched alloc: cannot check job allocation {id}: {e:#}");
                    self.unreachable = true;
                }
                return;
            }
        };
        self.unreachable = false;
        for e in events.events {
            if e.kind == JobEventKind::IdleWarning && self.warned.insert(e.at_ms) {
                eprintln!(
                    "gpusched alloc: job allocation {id}: {}",
                    super::fmt::terminal_safe(&e.detail)
                );
            }
        }
        if v.state.is_terminal() || v.state == JobState::Pending {
            self.ended = true;
            eprintln!(
                "gpusched alloc: job allocation {id} has been revoked ({}: {}); its GPUs are \
                 no longer yours, though this shell goes on",
                v.state.name(),
                super::fmt::terminal_safe(&v.reason)
            );
        }
    }

    /// alloc is stopping: the allocation is cancelled now.
    async fn give_up(&mut self, client: &Client, id: u64) {
        if !self.ended {
            let _ = client.cancel_many(&[id]).await;
            eprintln!("gpusched alloc: job allocation {id} cancelled");
            self.ended = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::allocation_env;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: super::Args,
    }

    #[test]
    fn submits_options_and_the_command_parse() {
        let a = Cli::try_parse_from([
            "alloc", "-Q", "--gpus", "2", "-t", "1h", "--", "sh", "-c", "x",
        ])
        .unwrap()
        .args;
        assert!(a.quiet);
        assert_eq!(a.submit.gpus.map(|g| (g.min, g.max)), Some((2, None)));
        assert_eq!(a.submit.command, ["sh", "-c", "x"]);
    }

    #[test]
    fn the_environment_names_the_nodes_in_rank_order_and_their_gpus() {
        let v: gpusched_wire::JobView = serde_json::from_value(serde_json::json!({
            "id": 12, "name": "bash", "user": "u", "state": "running", "reason": "",
            "command": ["bash"], "cwd": "/", "gpus": 4, "priority": 0,
            "gpu_indices": [0, 1], "attempt": 1, "max_retries": 0, "submit_ms": 0,
            "cancel_requested": false, "node": "b", "interactive": true,
            "parts": [
                {"rank": 0, "node": "b", "gpu_indices": [0, 1], "state": "running"},
                {"rank": 1, "node": "a", "gpu_indices": [2, 3], "state": "running"}
            ]
        }))
        .unwrap();
        let env = allocation_env(&v);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).unwrap().1.clone();
        assert_eq!(get("GPUSCHED_JOB_ID"), "12");
        assert_eq!(get("GPUSCHED_NODELIST"), "b,a");
        assert_eq!(get("GPUSCHED_GPUS"), "b:0,1 a:2,3");
        assert_eq!(get("GPUSCHED_NUM_NODES"), "2");
        assert_eq!(get("GPUSCHED_NUM_GPUS"), "4");
    }
}
