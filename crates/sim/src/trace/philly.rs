//! The Philly job table as pre-processed by the Pollux authors:
//! `timestamp,duration,num_gpus,gpu_time,cluster`. Submit times are dates
//! (`YYYY-mm-dd HH:MM:SS`); gpusched measures them in seconds from the earliest one.
//! There is no user column, so the virtual cluster (`cluster`) is both the job's queue
//! and its tenant.

use chrono::NaiveDateTime;
use gpusched_core::{JobId, JobSpec, QueueId, UserId};

use super::{CsvRows, Names, TraceError, TraceJob, Work, Workload};

pub fn parse(file: &str, text: &str) -> Result<Workload, TraceError> {
    let rows = CsvRows::new(file, text)?;
    let mut stamps = Vec::new();
    let mut jobs = Vec::new();
    let mut vcs = Names::default();
    rows.for_each(|row| {
        let raw = row.text("timestamp")?;
        let when = NaiveDateTime::parse_from_str(raw, "%Y-%m-%d %H:%M:%S").map_err(|e| {
            row.error(
                "timestamp",
                format!("`{raw}` is not a date like 2017-10-09 07:01:55 ({e})"),
            )
        })?;
        let duration = row.non_negative("duration")?;
        if duration == 0.0 {
            return Err(row.error("duration", "a job must run for more than 0 seconds"));
        }
        let gpus = row.gpus("num_gpus")?;
        let vc = vcs.intern(row.text("cluster")?);
        stamps.push(when.and_utc().timestamp());
        jobs.push(TraceJob {
            spec: JobSpec {
                id: JobId(jobs.len() as u64),
                gpus,
                gpu_model: None,
                user: UserId(vc),
                queue: QueueId(vc),
                account: Default::default(),
                priority: 0,
                submit: 0.0,
                estimate: Some(duration),
                cpu_milli: 0,
                mem_mib: 0,
                generic: Default::default(),
                gang: None,
                nodes: Vec::new(),
                prefer: Vec::new(),
                deadline: None,
            },
            work: Work {
                units: duration,
                unit_time: 1.0,
            },
            model: None,
            line: row.line,
            known: Default::default(),
        });
        Ok(())
    })?;
    let origin = stamps.iter().copied().min().unwrap_or(0);
    for (job, stamp) in jobs.iter_mut().zip(stamps) {
        job.spec.submit = (stamp - origin) as f64;
    }
    // 1970-01-01 was a Thursday: day 3 of a week that starts on Monday.
    let week_offset = (origin + 3 * 86_400).rem_euclid(7 * 86_400) as f64;
    Ok(Workload {
        jobs,
        users: vcs.names.clone(),
        queues: vcs.names,
        source: String::new(),
        week_offset: Some(week_offset),
    })
}
