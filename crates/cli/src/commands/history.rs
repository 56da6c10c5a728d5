//! `gpusched history --format gpusched`: the cluster's ended jobs as a trace that
//! `gpusched simulate --trace` replays (crates/sim/src/trace/native.rs's CSV), so an
//! operator can try policies on their own cluster's history before switching one on.
//! By default a user exports their own jobs and an admin everyone's; another user's
//! (`--user`) come without their commands, as the job list shows them.

use std::io::Write;

use anyhow::bail;
use clap::Args as ClapArgs;
use gpusched_wire::export::{HistoryJob, HistoryQuery};

use super::fmt::{command_line, now_ms, terminal_safe};

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// What to write: `gpusched` (the simulator's CSV trace) or `jsonl` (one job per
    /// line, as the server sends it).
    #[arg(long, default_value = "gpusched")]
    pub format: String,
    /// Only jobs submitted from then: a date (2026-11-01) or an age (30d, 12h).
    /// Default: all the history the server holds.
    #[arg(long)]
    pub since: Option<String>,
    /// Only this user's jobs (default: your own; an admin's, everyone's). Another
    /// user's come without their commands: only their owner and admins see those.
    #[arg(long)]
    pub user: Option<String>,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

/// The columns written, in the simulator's names (`duration` is end minus start of the
/// job's last run; `estimate` is left out, so a replay's policies get what
/// `--estimates` says).
const HEADER: &str = "id,submit,gpus,duration,user,queue,priority,gpu_model,name,command,walltime";

pub async fn run(args: Args) -> anyhow::Result<()> {
    if args.format != "gpusched" && args.format != "jsonl" {
        bail!(
            "unknown --format `{}`; use gpusched (a CSV trace for `gpusched simulate \
             --trace`) or jsonl",
            args.format
        );
    }
    let since = args
        .since
        .as_deref()
        .map(|s| super::usage::since_ms(s, now_ms()))
        .transpose()?;
    let client = args.conn.client()?;
    let mut jobs: Vec<HistoryJob> = Vec::new();
    let mut before = None;
    loop {
        let q = HistoryQuery {
            before,
            since_ms: since,
            user: args.user.clone(),
            limit: Some(5000),
        };
        let page = client.history_jobs(&q).await?;
        jobs.extend(page.jobs);
        match page.next_before {
            Some(b) => before = Some(b),
            None => break,
        }
    }
    jobs.sort_by_key(|j| (j.submit_ms, j.id));
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.format == "jsonl" {
        for j in &jobs {
            writeln!(out, "{}", serde_json::to_string(j)?)?;
        }
        out.flush()?;
        return Ok(());
    }
    writeln!(out, "{HEADER}")?;
    let mut skipped = 0;
    for j in &jobs {
        match trace_row(j) {
            Some(line) => writeln!(out, "{line}")?,
            None => skipped += 1,
        }
    }
    out.flush()?;
    eprintln!(
        "exported {} ended jobs{}",
        jobs.len() - skipped,
        if skipped > 0 {
            format!("; left out {skipped} without whole GPUs (the simulator places whole GPUs)")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// One CSV line of the trace; `None` for a job on no whole GPU. `submit` is Unix
/// seconds, so the predictor's time-of-day and weekday features are the real ones (UTC).
fn trace_row(j: &HistoryJob) -> Option<String> {
    if j.gpus == 0 {
        return None;
    }
    // The simulator needs a run above 0 s; the store keeps milliseconds.
    let duration = (j.end_ms.saturating_sub(j.start_ms)).max(1) as f64 / 1000.0;
    let fields = [
        j.id.to_string(),
        format!("{:.3}", j.submit_ms as f64 / 1000.0),
        j.gpus.to_string(),
        format!("{duration:.3}"),
        j.user.clone(),
        j.queue.clone(),
        j.priority.to_string(),
        j.gpu_model.clone().unwrap_or_default(),
        j.name.clone(),
        command_line(&j.command),
        j.walltime_s.map(|w| w.to_string()).unwrap_or_default(),
    ];
    Some(
        fields
            .iter()
            .map(|f| csv_field(f))
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// A CSV field, quoted (RFC 4180) when it holds a separator, a quote or edge spaces (the
/// reader trims unquoted fields). Control characters are escaped first: the trace is
/// often read on a terminal, and a name stays one distinct name for the predictor.
fn csv_field(s: &str) -> String {
    let s = terminal_safe(s);
    if s.contains([',', '"']) || s.trim() != s {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> HistoryJob {
        HistoryJob {
            id: 7,
            user: "ann".into(),
            queue: "default".into(),
            name: "train, v2".into(),
            command: vec![
                "python".into(),
                "train.py".into(),
                "--msg=it's \"ok\"".into(),
            ],
            gpus: 2,
            gpu_model: Some("A100".into()),
            priority: 3,
            walltime_s: Some(3600),
            state: "succeeded".into(),
            submit_ms: 1_700_000_000_123,
            start_ms: 1_700_000_010_000,
            end_ms: 1_700_000_070_500,
            preemptions: 0,
            usage: None,
        }
    }

    #[test]
    fn a_row_holds_the_features_quoted_where_needed() {
        let line = trace_row(&job()).unwrap();
        assert_eq!(
            line,
            "7,1700000000.123,2,60.500,ann,default,3,A100,\"train, v2\",\
             \"python train.py '--msg=it'\\''s \"\"ok\"\"'\",3600"
        );
    }

    #[test]
    fn control_characters_in_a_row_are_escaped() {
        let mut j = job();
        j.name = "evil\x1b]0;pwned\x07".into();
        j.command = vec!["sh".into(), "-c".into(), "a\nb".into()];
        let line = trace_row(&j).unwrap();
        assert!(!line.contains(['\x1b', '\x07', '\n']), "{line:?}");
        assert!(
            line.contains(r",evil\x1b]0;pwned\x07,sh -c 'a\nb',"),
            "{line}"
        );
    }

    #[test]
    fn jobs_without_whole_gpus_are_left_out_and_instant_ones_last_a_millisecond() {
        let mut j = job();
        j.gpus = 0;
        assert_eq!(trace_row(&j), None);
        let mut j = job();
        j.end_ms = j.start_ms;
        assert!(trace_row(&j)
            .unwrap()
            .starts_with("7,1700000000.123,2,0.001,"));
    }
}
