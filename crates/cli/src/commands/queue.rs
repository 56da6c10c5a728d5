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
    /// At most this many jobs per page (newest first).
    #[arg(long, default_value_t = 1000)]
    pub limit: usize,
    /// Only jobs older than this id: the next page, from the previous page's hint (or
    /// `next_before` in --json).
    #[arg(long, value_name = "ID")]
    pub before: Option<u64>,
    /// Show each pending job's estimated start (`squeue --start`): when it should start
    /// if running jobs end at their walltimes.
    #[arg(long)]
    pub start: bool,
    /// Also list the started tasks of arrays (an array is one line otherwise, with its
    /// counts); `--tasks ID` lists only array ID's started tasks (with --all, the ended
    /// ones too, those cancelled before they started included).
    #[arg(long, value_name = "ARRAY", num_args = 0..=1)]
    pub tasks: Option<Option<u64>>,
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
        before: args.before,
        limit: Some(args.limit),
        tasks: args.tasks.map(|_| true),
    };
    let list = match args.tasks {
        Some(Some(array)) => client.tasks(array, &q).await?,
        _ => client.list(&q).await?,
    };
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
    // Only when a listed job has a deadline: how it stands and its slack.
    let deadlines = list.jobs.iter().any(|j| j.deadline.is_some());
    if deadlines {
        header.push("DEADLINE");
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
            if deadlines {
                let at = r.len() - 1;
                r.insert(at, deadline_cell(j.deadline.as_deref()));
            }
            r
        })
        .collect();
    print!("{}", table(&header, &rows));
    if let Some(next) = list.next_before {
        println!(
            "(newest {} shown; older ones match too: `{}` shows the next page)",
            gpusched_wire::count(list.jobs.len() as u64, "job"),
            next_page(&args, next)
        );
    }
    Ok(())
}

/// The command line that lists the page after this one.
fn next_page(args: &Args, before: u64) -> String {
    let mut cmd = "gpusched queue".to_string();
    if args.all {
        cmd.push_str(" --all");
    }
    if let Some(s) = &args.state {
        cmd.push_str(&format!(" -s {s}"));
    }
    if let Some(u) = &args.user {
        cmd.push_str(&format!(" -u {u}"));
    }
    if args.limit != 1000 {
        cmd.push_str(&format!(" --limit {}", args.limit));
    }
    if args.start {
        cmd.push_str(" --start");
    }
    match args.tasks {
        Some(Some(a)) => cmd.push_str(&format!(" --tasks {a}")),
        Some(None) => cmd.push_str(" --tasks"),
        None => {}
    }
    cmd.push_str(&format!(" --before {before}"));
    cmd
}

/// `on track (2h to spare)`, `at risk (30m late)`, `met`, `-` (none).
fn deadline_cell(d: Option<&gpusched_wire::JobDeadline>) -> String {
    let Some(d) = d else {
        return "-".into();
    };
    match d.slack_s {
        Some(s)
            if matches!(
                d.status,
                gpusched_wire::DeadlineStatus::OnTrack | gpusched_wire::DeadlineStatus::AtRisk
            ) =>
        {
            let span = super::reservation_time::approx(s.unsigned_abs() * 1000);
            let how = if s >= 0 { "to spare" } else { "late" };
            format!("{} ({span} {how})", d.status.name())
        }
        _ => d.status.name().to_string(),
    }
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
    } else if j.held && j.state == JobState::Pending {
        "held".to_string()
    } else {
        j.state.name().to_string()
    };
    // An interactive allocation (`gpusched alloc`) says so beside its state.
    let state = if j.interactive && !j.state.is_terminal() {
        format!("{state}/alloc")
    } else {
        state
    };
    vec![
        j.id.to_string(),
        super::array_text::name(j),
        j.user.clone(),
        j.queue.clone(),
        state,
        super::fmt::gpus_asked(j),
        super::fmt::nodes_of(j),
        time,
        // An array's line says how its tasks stand.
        match &j.array_counts {
            Some(c) => super::array_text::counts(c),
            None => j.reason.clone(),
        },
    ]
}
