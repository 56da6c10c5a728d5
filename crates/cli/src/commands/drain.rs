//! `gpusched drain NODE [--reason R] [--now]` and `gpusched resume NODE` (admins): take a
//! node out of placement for maintenance and put it back (Slurm's `scontrol update
//! nodename=N state=drain reason=R` / `state=resume`).

use clap::Args as ClapArgs;
use gpusched_wire::{DrainRequest, NodeView};

#[derive(ClapArgs, Debug)]
pub struct DrainArgs {
    /// The node, as `gpusched nodes` names it.
    pub node: String,
    /// Why, shown in `nodes` and in the reasons of jobs that wait for the node.
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// Requeue the node's running jobs now (checkpoint signal, then the grace; no retry
    /// used) instead of letting them finish.
    #[arg(long)]
    pub now: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

#[derive(ClapArgs, Debug)]
pub struct ResumeArgs {
    /// The node, as `gpusched nodes` names it.
    pub node: String,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn drain(args: DrainArgs) -> anyhow::Result<()> {
    let req = DrainRequest {
        reason: args.reason,
        now: args.now,
    };
    let v = args.conn.client()?.drain(&args.node, &req).await?;
    let held = jobs_held(&v);
    let reason = v.drain.as_ref().map_or("", |d| d.reason.as_str());
    let name = super::fmt::terminal_safe(&v.name);
    println!(
        "{name} drained ({}): nothing new starts there",
        super::fmt::terminal_safe(reason)
    );
    match (held, args.now) {
        (0, _) => println!("no job runs there; `gpusched resume {name}` ends the drain"),
        (n, false) => println!(
            "{} running there may finish; `gpusched resume {name}` ends the drain",
            gpusched_wire::count(n as u64, "job"),
        ),
        (n, true) => println!(
            "{} running there {} requeued (checkpoint signal, then the grace; no retry used)",
            gpusched_wire::count(n as u64, "job"),
            if n == 1 { "is" } else { "are" },
        ),
    }
    Ok(())
}

pub async fn resume(args: ResumeArgs) -> anyhow::Result<()> {
    let v = args.conn.client()?.resume(&args.node).await?;
    println!(
        "{} resumed: its GPUs are back in placement (the next samples judge their health again)",
        super::fmt::terminal_safe(&v.name)
    );
    Ok(())
}

/// Jobs holding anything on the node, whole or on a slice, as the answer shows them.
fn jobs_held(v: &NodeView) -> usize {
    let mut ids = std::collections::BTreeSet::new();
    for g in &v.gpus {
        ids.extend(g.job);
        ids.extend(g.slices.iter().filter_map(|s| s.job));
    }
    ids.len()
}
