//! gpusched's own trace format, as CSV or as JSON lines. Times are in seconds.
//!
//! | field | required | meaning |
//! |---|---|---|
//! | `submit` | yes | submit time, seconds from any origin |
//! | `gpus` | yes | whole GPUs, at least 1 |
//! | `duration` | yes | run time when running alone, seconds, above 0 |
//! | `id` | no | job number (default: row number from 0) |
//! | `estimate` | no | the user's run-time estimate for `sjf`/`backfill` (default: `duration`) |
//! | `user` | no | user name (default `default`) |
//! | `queue` | no | queue name (default `default`) |
//! | `priority` | no | integer, larger first under `priority` (default 0) |
//! | `gpu_model` | no | accepted GPU model prefix, e.g. `A100` |
//! | `name` | no | the job's name (a feature of `--estimates predicted`) |
//! | `command` | no | its command line (a feature of `--estimates predicted`) |
//! | `walltime` | no | the user's run-time limit, seconds (`--estimates walltime`; caps predictions) |
//!
//! JSON lines carry the same fields as keys, one job object per line; unknown keys are
//! refused so that a typo does not silently drop a constraint.

use gpusched_core::{JobId, JobSpec, QueueId, UserId};
use serde::Deserialize;

use super::{CsvRows, Known, Names, TraceError, TraceJob, Work, Workload};

struct Builder {
    users: Names,
    queues: Names,
    jobs: Vec<TraceJob>,
}

struct Fields<'a> {
    id: Option<u64>,
    submit: f64,
    gpus: u32,
    duration: f64,
    estimate: Option<f64>,
    user: Option<&'a str>,
    queue: Option<&'a str>,
    priority: i32,
    gpu_model: Option<&'a str>,
    name: Option<&'a str>,
    command: Option<&'a str>,
    walltime: Option<f64>,
}

impl Builder {
    fn new() -> Self {
        Builder {
            users: Names::default(),
            queues: Names::default(),
            jobs: Vec::new(),
        }
    }

    fn push(&mut self, f: Fields, line: u64) {
        let id = f.id.unwrap_or(self.jobs.len() as u64);
        self.jobs.push(TraceJob {
            spec: JobSpec {
                id: JobId(id),
                gpus: f.gpus,
                gpu_model: f.gpu_model.map(str::to_string),
                user: UserId(self.users.intern(f.user.unwrap_or("default"))),
                queue: QueueId(self.queues.intern(f.queue.unwrap_or("default"))),
                account: Default::default(),
                priority: f.priority,
                submit: f.submit,
                estimate: Some(f.estimate.unwrap_or(f.duration)),
                cpu_milli: 0,
                mem_mib: 0,
                generic: Default::default(),
                gang: None,
                nodes: Vec::new(),
                prefer: Vec::new(),
                deadline: None,
            },
            work: Work {
                units: f.duration,
                unit_time: 1.0,
            },
            model: None,
            line,
            known: Known {
                name: f.name.map(str::to_string),
                detail: f.command.map(str::to_string),
                walltime: f.walltime,
                estimate_given: f.estimate.is_some(),
            },
        });
    }

    fn finish(self) -> Workload {
        Workload {
            jobs: self.jobs,
            users: self.users.names,
            queues: self.queues.names,
            source: String::new(),
            week_offset: None,
        }
    }
}

pub fn parse_csv(file: &str, text: &str) -> Result<Workload, TraceError> {
    let rows = CsvRows::new(file, text)?;
    let mut b = Builder::new();
    rows.for_each(|row| {
        let id = match row.opt("id") {
            None => None,
            Some(raw) => Some(
                raw.parse()
                    .map_err(|_| row.error("id", format!("`{raw}` is not a whole number")))?,
            ),
        };
        let duration = row.non_negative("duration")?;
        if duration == 0.0 {
            return Err(row.error("duration", "a job must run for more than 0 seconds"));
        }
        let estimate = match row.opt("estimate") {
            None => None,
            Some(_) => Some(row.non_negative("estimate")?),
        };
        let walltime = match row.opt("walltime") {
            None => None,
            Some(_) => Some(row.non_negative("walltime")?),
        };
        let priority = match row.opt("priority") {
            None => 0,
            Some(raw) => raw
                .parse()
                .map_err(|_| row.error("priority", format!("`{raw}` is not a whole number")))?,
        };
        let fields = Fields {
            id,
            submit: row.non_negative("submit")?,
            gpus: row.gpus("gpus")?,
            duration,
            estimate,
            user: row.opt("user"),
            queue: row.opt("queue"),
            priority,
            gpu_model: row.opt("gpu_model"),
            name: row.opt("name"),
            command: row.opt("command"),
            walltime,
        };
        b.push(fields, row.line);
        Ok(())
    })?;
    Ok(b.finish())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonJob {
    id: Option<u64>,
    submit: f64,
    gpus: u32,
    duration: f64,
    estimate: Option<f64>,
    user: Option<String>,
    queue: Option<String>,
    #[serde(default)]
    priority: i32,
    gpu_model: Option<String>,
    name: Option<String>,
    command: Option<String>,
    walltime: Option<f64>,
}

pub fn parse_jsonl(file: &str, text: &str) -> Result<Workload, TraceError> {
    let mut b = Builder::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let err = |field: &str, problem: String| TraceError::Field {
            file: file.to_string(),
            line,
            field: field.to_string(),
            problem,
        };
        let j: JsonJob = serde_json::from_str(raw).map_err(|e| TraceError::Line {
            file: file.to_string(),
            line,
            problem: format!("not a job object: {e}"),
        })?;
        if !(j.submit.is_finite() && j.submit >= 0.0) {
            return Err(err(
                "submit",
                format!("{} must be a finite number of at least 0", j.submit),
            ));
        }
        if j.gpus == 0 {
            return Err(err("gpus", "a job needs at least 1 GPU; got 0".into()));
        }
        if !(j.duration.is_finite() && j.duration > 0.0) {
            return Err(err(
                "duration",
                format!("{} must be a finite number above 0", j.duration),
            ));
        }
        if let Some(e) = j.estimate.filter(|e| !(e.is_finite() && *e >= 0.0)) {
            return Err(err(
                "estimate",
                format!("{e} must be a finite number of at least 0"),
            ));
        }
        if let Some(w) = j.walltime.filter(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(err(
                "walltime",
                format!("{w} must be a finite number of at least 0"),
            ));
        }
        let fields = Fields {
            id: j.id,
            submit: j.submit,
            gpus: j.gpus,
            duration: j.duration,
            estimate: j.estimate,
            user: j.user.as_deref(),
            queue: j.queue.as_deref(),
            priority: j.priority,
            gpu_model: j.gpu_model.as_deref(),
            name: j.name.as_deref(),
            command: j.command.as_deref(),
            walltime: j.walltime,
        };
        b.push(fields, line);
    }
    Ok(b.finish())
}
