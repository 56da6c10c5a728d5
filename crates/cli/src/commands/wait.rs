//! `gpusched wait ID...`: block until the jobs end; exit 0 only if all succeeded.

use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use gpusched_wire::JobState;

use super::fmt::parse_duration;
use crate::client::Client;

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<u64>,
    /// Give up after this long (exit 1): 90, 15m, HH:MM:SS.
    #[arg(long)]
    pub timeout: Option<String>,
    /// Print the final jobs as JSON lines.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    let timeout = match &args.timeout {
        Some(t) => Some(Duration::from_secs(
            parse_duration(t).map_err(anyhow::Error::msg)?,
        )),
        None => None,
    };
    if !wait_all(&client, &args.ids, timeout, args.json).await? {
        std::process::exit(1);
    }
    Ok(())
}

/// Waits for every job; prints one line each as it ends. True if all succeeded.
pub async fn wait_all(
    client: &Client,
    ids: &[u64],
    timeout: Option<Duration>,
    json: bool,
) -> anyhow::Result<bool> {
    let start = Instant::now();
    let mut all_ok = true;
    for &id in ids {
        let view = loop {
            let left = timeout.map(|t| t.saturating_sub(start.elapsed()));
            let step = left.map(|l| l.as_secs().clamp(1, 60)).unwrap_or(60);
            let v = client.wait(id, step).await?;
            if v.state.is_terminal() {
                break v;
            }
            if left.is_some_and(|l| l.is_zero()) {
                eprintln!("job {id}: still {} after the timeout", v.state.name());
                return Ok(false);
            }
        };
        if json {
            println!("{}", serde_json::to_string(&view)?);
        } else {
            println!(
                "job {id}: {} ({})",
                view.state.name(),
                super::fmt::terminal_safe(&view.reason)
            );
        }
        all_ok &= view.state == JobState::Succeeded;
    }
    Ok(all_ok)
}
