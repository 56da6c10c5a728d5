//! `gpusched hold ID`, `release ID`, `update ID [--priority N] [--walltime 2h] [--queue
//! Q]` (Slurm's `scontrol hold/release/update`): changes to a pending job.

use anyhow::bail;
use clap::Args as ClapArgs;
use gpusched_wire::{JobUpdate, JobView};

use super::fmt::parse_duration;

#[derive(ClapArgs, Debug)]
pub struct HoldArgs {
    /// The pending job.
    pub id: u64,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

#[derive(ClapArgs, Debug)]
pub struct UpdateArgs {
    /// The pending job.
    pub id: u64,
    /// The new priority (within the queue's max_priority, unless you are an admin).
    #[arg(long, allow_hyphen_values = true)]
    pub priority: Option<i32>,
    /// The new walltime: 90 (seconds), 30m, 2h, 1d12h.
    #[arg(long)]
    pub walltime: Option<String>,
    /// Move the job to this queue (with the access and size checks of a submit).
    #[arg(long, short = 'q', visible_alias = "partition")]
    pub queue: Option<String>,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn hold(args: HoldArgs) -> anyhow::Result<()> {
    let v = args.conn.client()?.hold(args.id).await?;
    println!(
        "job {} held: {}",
        v.id,
        super::fmt::terminal_safe(&v.reason)
    );
    Ok(())
}

pub async fn release(args: HoldArgs) -> anyhow::Result<()> {
    let v = args.conn.client()?.release(args.id).await?;
    println!(
        "job {} released: {}",
        v.id,
        super::fmt::terminal_safe(&v.reason)
    );
    Ok(())
}

pub async fn update(args: UpdateArgs) -> anyhow::Result<()> {
    let walltime_s = match &args.walltime {
        Some(w) => Some(parse_duration(w).map_err(|e| anyhow::anyhow!("--walltime: {e}"))?),
        None => None,
    };
    if args.priority.is_none() && walltime_s.is_none() && args.queue.is_none() {
        bail!("nothing to update: give --priority, --walltime or --queue");
    }
    let up = JobUpdate {
        priority: args.priority,
        walltime_s,
        queue: args.queue.clone(),
    };
    let v = args.conn.client()?.update(args.id, &up).await?;
    println!("job {}: {}", v.id, super::fmt::terminal_safe(&summary(&v)));
    Ok(())
}

/// What `update` can change, as the job now has it.
fn summary(v: &JobView) -> String {
    let walltime = v
        .walltime_s
        .map_or("none".to_string(), |w| super::fmt::elapsed(w * 1000));
    format!(
        "queue {}, priority {}, walltime {walltime}",
        v.queue, v.priority
    )
}
