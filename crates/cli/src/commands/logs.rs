//! `gpusched logs ID [-f] [--attempt N] [--node NAME] [--rank R]`: a job's stdout (or
//! stderr), fetched through the server from the agent of the node it ran on; for a job
//! on several nodes or with several processes per node, the part named.

use std::io::Write;
use std::time::Duration;

use clap::Args as ClapArgs;
use gpusched_wire::JobState;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// A job id, or one task of an array (12.7).
    #[arg(value_parser = crate::client::job_ref, value_name = "ID")]
    pub id: gpusched_wire::JobRef,
    /// Keep printing new output until the job ends; a job still waiting to start is
    /// waited for first.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Show stderr instead of stdout.
    #[arg(long)]
    pub stderr: bool,
    /// Show the output of attempt N (1 is the first run; `show` gives the current
    /// attempt): earlier attempts of a requeued job stay readable. Default: the
    /// current attempt.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub attempt: Option<u32>,
    /// For a job on several nodes: read the part that ran on this node (`show` lists
    /// them). Default: the first node (NODE_RANK 0).
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    /// For a job with several processes (`--tasks-per-node`): read the process with
    /// this global RANK (on node RANK / tasks-per-node). Default: the node's first.
    #[arg(long, value_name = "R")]
    pub rank: Option<u32>,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

/// How often a follower asks for new output, and for the start of a pending job.
const POLL: Duration = Duration::from_millis(250);

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    // A task (12.7) is read as the job it became when it started.
    let id = if args.follow {
        match client.resolve_started(args.id).await? {
            Some(id) => id,
            None => return Ok(()),
        }
    } else {
        client.resolve(args.id).await?
    };
    let stream = if args.stderr { "stderr" } else { "stdout" };
    if args.follow && args.attempt.is_none() && !wait_for_start(&client, id).await? {
        return Ok(());
    }
    let mut offset = 0u64;
    let mut seen_attempt = None;
    let mut out = std::io::stdout();
    let part = crate::client::LogPart {
        node: args.node.clone(),
        rank: args.rank,
    };
    loop {
        let (chunk, state, attempt) =
            match client.logs(id, stream, offset, args.attempt, &part).await {
                Ok(got) => got,
                Err(e) if args.follow && args.attempt.is_none() => {
                    match follow_on(&client, id, e).await? {
                        Next::Retry => {}
                        Next::NewAttempt => {
                            offset = 0;
                            seen_attempt = None;
                        }
                        Next::Stop => return Ok(()),
                    }
                    continue;
                }
                Err(e) => return Err(e),
            };
        // Requeued and started again between two reads: these bytes came from the
        // old offset of the new attempt; start that attempt over from its beginning.
        if args.follow && seen_attempt.is_some() && attempt != seen_attempt {
            eprintln!(
                "job {} started again (attempt {}); following it from its start",
                id,
                attempt.map_or("?".into(), |a| a.to_string())
            );
            seen_attempt = attempt;
            offset = 0;
            continue;
        }
        seen_attempt = attempt;
        offset += chunk.len() as u64;
        out.write_all(&chunk)?;
        out.flush()?;
        if !chunk.is_empty() {
            continue; // more may be waiting beyond this chunk
        }
        let ended = !matches!(state.as_str(), "pending" | "starting" | "running");
        // An earlier attempt is over: its output will not grow.
        if !args.follow || ended || args.attempt.is_some() {
            return Ok(());
        }
        tokio::time::sleep(POLL).await;
    }
}

enum Next {
    /// Ask again from the same offset.
    Retry,
    /// The job was requeued and started again: follow the new attempt from its start.
    NewAttempt,
    Stop,
}

/// A follower's request failed: while the job lives, its node being unreachable for a
/// while (503) or the job being requeued (404 until it starts again) is part of
/// following it; anything else (403, a job that ended, no such job) ends the follow.
async fn follow_on(
    client: &crate::client::Client,
    id: u64,
    e: anyhow::Error,
) -> anyhow::Result<Next> {
    let status = e.downcast_ref::<crate::client::Refused>().map(|r| r.status);
    if !matches!(status, Some(503) | Some(404)) {
        return Err(e);
    }
    let v = client.get(id).await?;
    if v.state.is_terminal() {
        return Err(e);
    }
    if v.node.is_none() {
        eprintln!(
            "job {id} is waiting again ({}); following attempt {} when it starts",
            v.reason, v.attempt
        );
        return Ok(if wait_for_start(client, id).await? {
            Next::NewAttempt
        } else {
            Next::Stop
        });
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(Next::Retry)
}

/// `logs -f` on a job that has not been sent to a node yet: says so once on stderr and
/// waits for it to start. False if it ended without ever running (nothing to follow).
async fn wait_for_start(client: &crate::client::Client, id: u64) -> anyhow::Result<bool> {
    let mut said = false;
    loop {
        let v = client.get(id).await?;
        if v.node.is_some() {
            return Ok(true);
        }
        if v.state.is_terminal() {
            eprintln!(
                "job {id} ended {} before it started ({}); it has no output",
                v.state.name(),
                v.reason
            );
            return Ok(false);
        }
        if !said && v.state == JobState::Pending {
            eprintln!(
                "job {id} is pending ({}); waiting for it to start",
                v.reason
            );
            said = true;
        }
        // A job may wait for hours: look once a second, not at the follower's rate.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
