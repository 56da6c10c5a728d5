//! `gpusched service logs NAME [--replica JOB] [-f]`: the output of a service's replicas
//! through the job log route (`/api/jobs/{id}/logs`), one replica after another in
//! turn, whole lines only, each prefixed with its job id when there may be several.
//! Following, the service is read again every few seconds, so the replicas of a
//! rollout or a scale-up are followed as they start; one that ended is read to its end
//! and then left alone.

use std::io::Write;
use std::time::{Duration, Instant};

use clap::Args as ClapArgs;
use gpusched_wire::{ReplicaPhase, ServiceView};

use crate::client::{Client, LogPart, Refused};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// The service.
    pub name: String,
    /// Only this replica (a job id `service show` lists).
    #[arg(long, value_name = "JOB")]
    pub replica: Option<u64>,
    /// Keep printing new output, and the output of replicas that start later, until
    /// the service is gone (Ctrl-C to stop).
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Show stderr instead of stdout.
    #[arg(long)]
    pub stderr: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

/// How often a follower asks each replica for more, and the service for its replicas.
const POLL: Duration = Duration::from_millis(500);
const RELIST: Duration = Duration::from_secs(3);

/// One replica being read: where its output is up to, and a line not ended yet.
struct Reader {
    job: u64,
    offset: u64,
    attempt: Option<u32>,
    partial: Vec<u8>,
    ended: bool,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    let view = client.service(&args.name).await?;
    let mut readers: Vec<Reader> = Vec::new();
    add_new(&mut readers, &view, &args)?;
    if readers.is_empty() && !args.follow {
        eprintln!(
            "service {} has no replica running yet, so no output ({}); -f waits for one",
            args.name, view.status
        );
        return Ok(());
    }
    // Prefixes whenever the lines could come from more than one replica.
    let prefix = args.replica.is_none() && (readers.len() > 1 || args.follow);
    let stream = if args.stderr { "stderr" } else { "stdout" };
    let mut out = std::io::stdout();
    if !args.follow {
        // Each replica's output to its current end, one replica after another.
        for r in &mut readers {
            while read_some(&client, r, stream, prefix, &mut out).await? {}
            flush_partial(r, prefix, &mut out)?;
        }
        return Ok(());
    }
    let mut listed = Instant::now();
    let mut service_gone = false;
    loop {
        let mut got_any = false;
        for r in readers.iter_mut() {
            got_any |= read_some(&client, r, stream, prefix, &mut out).await?;
        }
        // Ended readers stay (skipped), so a replica still listed is not read twice.
        let all_ended = !readers.is_empty() && readers.iter().all(|r| r.ended);
        if args.replica.is_some() && all_ended {
            break;
        }
        if !service_gone && listed.elapsed() >= RELIST {
            listed = Instant::now();
            match client.service(&args.name).await {
                Ok(v) => add_new(&mut readers, &v, &args)?,
                Err(e) if status(&e) == Some(404) => {
                    eprintln!(
                        "service {} is gone; printing what its replicas left",
                        args.name
                    );
                    service_gone = true;
                }
                Err(e) => return Err(e),
            }
        }
        if service_gone && (readers.is_empty() || all_ended) {
            break;
        }
        if !got_any {
            tokio::time::sleep(POLL).await;
        }
    }
    for r in &mut readers {
        flush_partial(r, prefix, &mut out)?;
    }
    Ok(())
}

/// Starts reading the replicas of `view` not read yet that have (or had) a node.
fn add_new(readers: &mut Vec<Reader>, view: &ServiceView, args: &Args) -> anyhow::Result<()> {
    if let Some(job) = args.replica {
        if !view.replicas_list.iter().any(|r| r.job == job) && readers.is_empty() {
            anyhow::bail!(
                "job {job} is not a replica of service {} now; `gpusched service show {}` \
                 lists them (an ended replica's output stays readable with `gpusched logs \
                 {job}`)",
                view.spec.name,
                view.spec.name
            );
        }
    }
    for r in &view.replicas_list {
        let wanted = args.replica.is_none_or(|j| j == r.job);
        let started = r.phase != ReplicaPhase::Waiting;
        if wanted && started && !readers.iter().any(|x| x.job == r.job) {
            readers.push(Reader {
                job: r.job,
                offset: 0,
                attempt: None,
                partial: Vec::new(),
                ended: false,
            });
        }
    }
    Ok(())
}

fn status(e: &anyhow::Error) -> Option<u16> {
    e.downcast_ref::<Refused>().map(|r| r.status)
}

/// One request's worth of a replica's output; true if it had any.
async fn read_some(
    client: &Client,
    r: &mut Reader,
    stream: &str,
    prefix: bool,
    out: &mut impl Write,
) -> anyhow::Result<bool> {
    if r.ended {
        return Ok(false);
    }
    let (chunk, state, attempt) = match client
        .logs(r.job, stream, r.offset, None, &LogPart::default())
        .await
    {
        Ok(got) => got,
        // Not started on its node yet, or its node unreachable for a while: ask again.
        Err(e) if matches!(status(&e), Some(404) | Some(503)) => return Ok(false),
        Err(e) => return Err(e),
    };
    // Requeued and started again: its new attempt's output, from the start.
    if r.attempt.is_some() && attempt != r.attempt {
        flush_partial(r, prefix, out)?;
        r.offset = 0;
        r.attempt = attempt;
        return Ok(true);
    }
    r.attempt = attempt;
    r.offset += chunk.len() as u64;
    r.partial.extend_from_slice(&chunk);
    write_lines(r, prefix, out)?;
    if chunk.is_empty() && !matches!(state.as_str(), "pending" | "starting" | "running") {
        flush_partial(r, prefix, out)?;
        r.ended = true;
    }
    Ok(!chunk.is_empty())
}

/// Writes every whole line buffered, keeping the unfinished one.
fn write_lines(r: &mut Reader, prefix: bool, out: &mut impl Write) -> std::io::Result<()> {
    let Some(last) = r.partial.iter().rposition(|&b| b == b'\n') else {
        return Ok(());
    };
    let rest = r.partial.split_off(last + 1);
    for line in r.partial.split_inclusive(|&b| b == b'\n') {
        if prefix {
            write!(out, "[{}] ", r.job)?;
        }
        out.write_all(line)?;
    }
    out.flush()?;
    r.partial = rest;
    Ok(())
}

/// The last line of an ended output, which has no newline of its own.
fn flush_partial(r: &mut Reader, prefix: bool, out: &mut impl Write) -> std::io::Result<()> {
    if !r.partial.is_empty() {
        r.partial.push(b'\n');
        write_lines(r, prefix, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader() -> Reader {
        Reader {
            job: 41,
            offset: 0,
            attempt: None,
            partial: Vec::new(),
            ended: false,
        }
    }

    #[test]
    fn only_whole_lines_are_written_each_with_its_prefix() {
        let mut r = reader();
        let mut out = Vec::new();
        r.partial.extend_from_slice(b"one\ntwo\nthr");
        write_lines(&mut r, true, &mut out).unwrap();
        assert_eq!(out, b"[41] one\n[41] two\n");
        r.partial.extend_from_slice(b"ee");
        write_lines(&mut r, true, &mut out).unwrap();
        assert_eq!(out, b"[41] one\n[41] two\n");
        flush_partial(&mut r, true, &mut out).unwrap();
        assert_eq!(out, b"[41] one\n[41] two\n[41] three\n");
        let mut plain = Vec::new();
        r.partial.extend_from_slice(b"a\n");
        write_lines(&mut r, false, &mut plain).unwrap();
        assert_eq!(plain, b"a\n");
    }
}
