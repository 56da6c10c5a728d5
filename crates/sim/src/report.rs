//! Reports: an aligned table for people, one JSON document for programs, a per-job CSV.

use std::io::Write;

use serde::Serialize;

use crate::engine::SimRun;
use crate::metrics::Summary;
use crate::power::{self, Energy, PowerSpec};
use crate::tenants::TenantReport;
use crate::trace::Workload;

/// The JSON document `--json` prints and `--out` writes.
#[derive(Serialize)]
pub struct Report<'a> {
    pub trace: &'a str,
    pub cluster: String,
    pub total_gpus: u32,
    pub policies: &'a [Summary],
    /// Per-tenant results, one per policy, when asked for (`--per-tenant`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenants: Option<&'a [TenantReport]>,
}

/// Seconds, human-sized.
pub(crate) fn secs(s: f64) -> String {
    if s >= 86_400.0 {
        format!("{:.2}d", s / 86_400.0)
    } else if s >= 3_600.0 {
        format!("{:.2}h", s / 3_600.0)
    } else if s >= 60.0 {
        format!("{:.1}m", s / 60.0)
    } else {
        format!("{s:.1}s")
    }
}

/// What the policies were told of run times, and how good predictions were: printed
/// under the table, since sjf, srtf and backfill with perfect estimates flatter them.
pub fn estimates(summaries: &[Summary]) -> String {
    let Some(first) = summaries.first() else {
        return String::new();
    };
    let mut out = format!("run-time estimates: {}\n", first.estimates);
    // Each policy's run has a predictor of its own, which learns from the jobs as they end
    // in that run: its accuracy is the run's, so each line names its policy (one line, the
    // first policy's, was once quoted as another's).
    for (s, p) in summaries
        .iter()
        .filter_map(|s| s.prediction.as_ref().map(|p| (s, p)))
    {
        out.push_str(&format!(
            "predictor ({}): {} jobs predicted ({} admitted before any job had ended), median error {:.0}%, p90 {:.0}%, {:.0}% underestimated, {} keys\n",
            s.policy,
            p.predicted,
            p.unpredicted,
            p.median_rel_error * 100.0,
            p.p90_rel_error * 100.0,
            p.underestimated * 100.0,
            p.keys
        ));
    }
    out
}

/// The side-by-side table, policies as rows.
pub fn table(summaries: &[Summary]) -> String {
    let header = [
        "policy",
        "placement",
        "jobs",
        "avg JCT",
        "p50 JCT",
        "p95 JCT",
        "p99 JCT",
        "avg wait",
        "makespan",
        "util",
        "fairness",
        "preempt",
    ];
    let energy = summaries.iter().any(|s| s.energy.is_some());
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            let mut row = vec![
                s.policy.clone(),
                s.placement.clone(),
                s.jobs.to_string(),
                secs(s.avg_jct),
                secs(s.p50_jct),
                secs(s.p95_jct),
                secs(s.p99_jct),
                secs(s.avg_queue_delay),
                secs(s.makespan),
                format!("{:.1}%", s.utilization * 100.0),
                format!("{:.3}", s.jain_fairness),
                s.preemptions.to_string(),
            ];
            if energy {
                let kwh = |f: fn(&Energy) -> f64| {
                    s.energy
                        .as_ref()
                        .map_or(String::new(), |e| format!("{:.2}", f(e)))
                };
                row.push(kwh(|e| e.total_kwh));
                row.push(kwh(|e| e.idle_kwh));
            }
            row
        })
        .collect();
    let mut header: Vec<String> = header.iter().map(|s| s.to_string()).collect();
    if energy {
        header.extend(["kWh".to_string(), "idle kWh".to_string()]);
    }
    aligned(&header, rows, 2)
}

/// Columns padded to their widest cell: the first `left` flush left, the rest right.
pub(crate) fn aligned(header: &[String], rows: Vec<Vec<String>>, left: usize) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<String>, out: &mut String| {
        let cells: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < left {
                    format!("{c:<w$}", w = width[i])
                } else {
                    format!("{c:>w$}", w = width[i])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    };
    line(header.to_vec(), &mut out);
    for r in rows {
        line(r, &mut out);
    }
    out
}

/// One row per job, in completion order.
pub fn write_jobs_csv(out: &mut dyn Write, run: &SimRun, w: &Workload) -> std::io::Result<()> {
    write_jobs_csv_with(out, run, w, None)
}

/// [`write_jobs_csv`], with an `energy_kwh` column (the job's GPUs at busy watts while
/// it held them) when a power model is given.
pub fn write_jobs_csv_with(
    out: &mut dyn Write,
    run: &SimRun,
    w: &Workload,
    power: Option<&PowerSpec>,
) -> std::io::Result<()> {
    write!(
        out,
        "job_id,user,queue,gpus,submit,start,end,jct,queue_delay,duration,starts,preemptions"
    )?;
    writeln!(out, "{}", if power.is_some() { ",energy_kwh" } else { "" })?;
    for j in &run.jobs {
        write!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            j.id,
            w.users.get(j.user.index()).map_or("", String::as_str),
            w.queues.get(j.queue.index()).map_or("", String::as_str),
            j.gpus,
            j.submit,
            j.start,
            j.end,
            j.jct(),
            j.start - j.submit,
            j.duration,
            j.starts,
            j.preemptions
        )?;
        match power {
            // Held = not waiting: the job's counters stop at its end.
            Some(p) => writeln!(out, ",{}", power::job_kwh(j.gpus, j.jct() - j.waited, p))?,
            None => writeln!(out)?,
        }
    }
    Ok(())
}
