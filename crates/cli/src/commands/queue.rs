//! `gpusched queue`: the `squeue` / `hq job list` of gpusched.

use clap::Args as ClapArgs;
use gpusched_wire::{JobListQuery, JobState, JobView};

use super::fmt::{elapsed, now_ms, table};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Include ended jobs (default: pending, starting and running only).
    #[arg(long, short = 'a')]
    pub all: bool,
    /// Only these states, comma-separated (pending,running,...).
    #[arg(long, short = 's')]
    pub state: Option<String>,
    /// Only this user's jobs.
    #[arg(long, short = 'u')]
    pub user: Option<String>,
    /// At most this many jobs.
    #[arg(long, default_value_t = 1000)]
    pub limit: usize,
    /// Show each pending job's estimated start (`squeue --start`): when it should start
    /// if running jobs end at their walltimes.
    #[arg(long)]
    pub start: bool,
    /// JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    let state = match (&args.state, args.all) {
        (Some(s), _) => Some(s.clone()),
        (None, true) => None,
        (None, false) => Some("active".to_string()),
    };
    let q = JobListQuery {
        state,
        user: args.user.clone(),
        node: None,
        after: None,
        limit: Some(args.limit),
    };
    let list = client.list(&q).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if list.jobs.is_empty() {
        println!(
            "no jobs{}",
            if args.all {
                ""
            } else {
                " queued or running (--all shows ended ones)"
            }
        );
        return Ok(());
    }
    let now = now_ms();
    let mut header = vec![
        "ID", "NAME", "USER", "QUEUE", "STATE", "GPUS", "NODE", "TIME",
    ];
    if args.start {
        header.push("EST. START");
    }
    header.push("REASON");
    let rows: Vec<Vec<String>> = list
        .jobs
        .iter()
        .map(|j| {
            let mut r = row(j, now);
            if args.start {
                let est = match (j.state, j.est_start_ms) {
                    (JobState::Pending, Some(t)) => super::fmt::time(t),
                    (JobState::Pending, None) => "unknown".into(),
                    _ => "-".into(),
                };
                r.insert(8, est);
            }
            r
        })
        .collect();
    print!("{}", table(&header, &rows));
    Ok(())
}

fn row(j: &JobView, now: u64) -> Vec<String> {
    // TIME: run time for started jobs (so far, or in total), wait so far for pending.
    let time = match (j.start_ms, j.end_ms) {
        (Some(s), Some(e)) => elapsed(e.saturating_sub(s)),
        (Some(s), None) => elapsed(now.saturating_sub(s)),
        (None, _) if j.state == JobState::Pending => elapsed(now.saturating_sub(j.submit_ms)),
        _ => "-".into(),
    };
    let state = if j.cancel_requested && !j.state.is_terminal() {
        "cancelling".to_string()
    } else if j.preempt_requested && !j.state.is_terminal() {
        "preempting".to_string()
    } else {
        j.state.name().to_string()
    };
    vec![
        j.id.to_string(),
        j.name.clone(),
        j.user.clone(),
        j.queue.clone(),
        state,
        super::fmt::gpus_asked(j),
        j.node.clone().unwrap_or_else(|| "-".into()),
        time,
        j.reason.clone(),
    ]
}
