//! `gpusched top`: a live terminal view of the cluster for operators on the head node
//! (nodes and their GPUs, running and pending jobs), or one frame as plain text with
//! `--once`. It reads the same API as `nodes`, `queue` and `queues`.
//!
//! `model.rs` turns the API's lists into rows, `render.rs` draws a frame (pure, tested
//! on fixtures), `live.rs` runs the terminal: keys, refreshes, restoring the terminal.

mod live;
pub mod model;
pub mod render;
#[cfg(test)]
mod tests;

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Context;
use clap::Args as ClapArgs;
use gpusched_wire::JobListQuery;

use crate::client::{Client, Target};
use model::Snapshot;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Print one frame as plain text (no colours or escape codes) and exit: for
    /// scripts and `watch`.
    #[arg(long)]
    pub once: bool,
    /// How often the live view asks the server: `2s`, `500ms`, `1m`.
    #[arg(long, default_value = "2s", value_parser = parse_interval)]
    pub interval: Duration,
    /// Width of the `--once` frame (default: the terminal's, else 120).
    #[arg(long, requires = "once", value_parser = clap::value_parser!(u16).range(1..))]
    pub width: Option<u16>,
    /// Height of the `--once` frame (default: tall enough for every GPU and job).
    #[arg(long, requires = "once", value_parser = clap::value_parser!(u16).range(1..))]
    pub height: Option<u16>,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

/// `2s`, `500ms`, `1m`, or plain seconds; at least 100 ms, so `top` cannot hammer the
/// server.
fn parse_interval(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let d = match t.strip_suffix("ms") {
        Some(ms) => ms
            .trim()
            .parse::<u64>()
            .map(Duration::from_millis)
            .map_err(|_| format!("{s:?} is not a duration: write e.g. 2s, 500ms or 1m"))?,
        None => gpusched_wire::parse_duration(t)
            .map(Duration::from_secs)
            .map_err(|e| format!("{e}; write e.g. 2s, 500ms or 1m"))?,
    };
    if d < Duration::from_millis(100) {
        return Err(format!("{s:?} is too short: the least is 100ms"));
    }
    Ok(d)
}

/// Frame width of `--once` when neither `--width` nor a terminal says.
const DEFAULT_WIDTH: u16 = 120;

pub async fn run(args: Args) -> anyhow::Result<()> {
    let target = Target::resolve(args.conn.server.clone(), args.conn.token.clone());
    let server = target.shown();
    let client = args.conn.client()?;
    let interval_ms = u64::try_from(args.interval.as_millis()).unwrap_or(u64::MAX);
    if args.once {
        let mut snap = Snapshot {
            server,
            interval_ms,
            ..Snapshot::default()
        };
        apply(&mut snap, fetch(&client, args.interval).await?);
        let width = args
            .width
            .or_else(|| {
                std::io::stdout()
                    .is_terminal()
                    .then(|| ratatui::crossterm::terminal::size().ok().map(|(w, _)| w))
                    .flatten()
            })
            .unwrap_or(DEFAULT_WIDTH);
        let height = args.height.unwrap_or_else(|| render::full_height(&snap));
        let frame = render::frame(&snap, &render::View::default(), width, height);
        print!("{}", render::text(&frame));
        return Ok(());
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "gpusched top needs a terminal (its standard input and output are not both a \
             TTY); for scripts, pipes and `watch`, use `gpusched top --once` \
             [--width W --height H]"
        );
    }
    live::run(client, server, args.interval).await
}

/// What one fetch brings: nodes, active jobs, queues.
pub struct Fetched {
    pub nodes: Vec<gpusched_wire::NodeView>,
    pub jobs: Vec<gpusched_wire::JobView>,
    pub queues: Vec<gpusched_wire::QueueView>,
    /// More active jobs than one page: `jobs` are the newest.
    pub more_jobs: bool,
}

/// The three lists at once; a server that does not answer within a bound is an error
/// like any other (the live view shows it and tries again).
pub async fn fetch(client: &Client, interval: Duration) -> anyhow::Result<Fetched> {
    let q = JobListQuery {
        state: Some("active".into()),
        ..JobListQuery::default()
    };
    let bound = interval.max(Duration::from_secs(10));
    let all = async { tokio::join!(client.nodes(), client.list(&q), client.queues()) };
    let (nodes, jobs, queues) = tokio::time::timeout(bound, all)
        .await
        .with_context(|| format!("the server did not answer within {} s", bound.as_secs()))?;
    let jobs = jobs?;
    Ok(Fetched {
        nodes: nodes?.nodes,
        more_jobs: jobs.next_before.is_some(),
        jobs: jobs.jobs,
        queues: queues?.queues,
    })
}

/// A successful fetch becomes the snapshot's lists, stamped with the time.
pub fn apply(snap: &mut Snapshot, f: Fetched) {
    let now = super::fmt::now_ms();
    snap.nodes = f.nodes;
    snap.jobs = f.jobs;
    snap.queues = f.queues;
    snap.more_jobs = f.more_jobs;
    snap.now_ms = now;
    snap.fetched_ms = Some(now);
    snap.error = None;
}
