//! The Muri / Tiresias trace format (Philly-derived): one row per job with
//! `job_id,num_gpu,submit_time,iterations,model_name,...,iteration_time,...,priority`.
//!
//! Its semantics follow the Muri simulator (`run_sim.py`, `jobs.py`):
//! - `submit_time` is in milliseconds; gpusched works in seconds.
//! - A job's work is `iterations` steps of `iteration_time` milliseconds, each inflated by
//!   the 1.5% per-iteration overhead the Muri authors measured for a job running alone
//!   (their `itertime_overhead_list[0] = 1.015`). The `duration` column is not used for
//!   timing, exactly as in the peer.
//! - `model_name` keys the restart-overhead profile (see `crate::overhead`).

use gpusched_core::{Cluster, JobId, JobSpec, QueueId, UserId};

use super::{CsvRows, Known, Names, TraceError, TraceJob, Work, Workload};

/// The per-iteration slowdown of a job running alone, measured by the Muri authors.
pub const ITERATION_OVERHEAD: f64 = 1.015;

pub fn parse(file: &str, text: &str) -> Result<Workload, TraceError> {
    let rows = CsvRows::new(file, text)?;
    let mut jobs = Vec::new();
    let mut users = Names::default();
    let user = UserId(users.intern("default"));
    let has_priority = rows.has("priority");
    rows.for_each(|row| {
        let id = row.text("job_id")?;
        let id: u64 = id
            .parse()
            .map_err(|_| row.error("job_id", format!("`{id}` is not a whole number")))?;
        let gpus = row.gpus("num_gpu")?;
        let submit_ms = row.non_negative("submit_time")?;
        let iterations = row.non_negative("iterations")?;
        let iteration_ms = row.non_negative("iteration_time")?;
        if iterations == 0.0 || iteration_ms == 0.0 {
            return Err(row.error(
                if iterations == 0.0 {
                    "iterations"
                } else {
                    "iteration_time"
                },
                "a job must do some work: iterations and iteration_time must be above 0",
            ));
        }
        let priority = if has_priority {
            row.non_negative("priority")? as i32
        } else {
            0
        };
        // Same operation order as the peer: (ms * 1.015) / 1000.
        let unit_time = iteration_ms * ITERATION_OVERHEAD / 1000.0;
        let work = Work {
            units: iterations,
            unit_time,
        };
        // Each factor may be finite and above 0 while their product is not (1e300 x
        // 1e300, or 1e-300 x 1e-300): the simulator needs a real run time.
        let run = work.duration();
        if !(run.is_finite() && run > 0.0) {
            return Err(row.error(
                "iterations",
                format!(
                    "iterations x iteration_time is {run} s; a job must run for a finite time above 0"
                ),
            ));
        }
        jobs.push(TraceJob {
            spec: JobSpec {
                id: JobId(id),
                gpus,
                gpu_model: None,
                user,
                queue: QueueId(0),
                account: Default::default(),
                priority,
                submit: submit_ms / 1000.0,
                estimate: Some(work.duration()),
                cpu_milli: 0,
                mem_mib: 0,
                generic: Default::default(),
                gang: None,
                nodes: Vec::new(),
                prefer: Vec::new(),
                deadline: None,
            },
            work,
            model: row.opt("model_name").map(str::to_string),
            line: row.line,
            known: Known {
                name: row.opt("model_name").map(str::to_string),
                detail: row.opt("batch_size").map(str::to_string),
                walltime: None,
                estimate_given: false,
            },
        });
        Ok(())
    })?;
    Ok(Workload {
        jobs,
        users: users.names,
        queues: vec!["default".into()],
        source: String::new(),
        week_offset: None,
    })
}

/// A Muri cluster spec: a header and one row
/// `num_switch,num_node_p_switch,num_gpu_p_node[,num_cpu_p_node,mem_p_node]`, every GPU
/// of `model`. Errors name the file, the line and the field.
pub fn parse_cluster_spec(file: &str, text: &str, model: &str) -> Result<Cluster, TraceError> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .unwrap_or("")
        .split(',')
        .map(|h| h.trim().trim_start_matches('\u{feff}'))
        .collect();
    let row: Vec<&str> = lines
        .next()
        .ok_or_else(|| TraceError::Line {
            file: file.to_string(),
            line: 2,
            problem: "the spec needs a row of values under its header".into(),
        })?
        .split(',')
        .map(str::trim)
        .collect();
    let get = |name: &str| -> Result<u32, TraceError> {
        let i = header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| TraceError::Line {
                file: file.to_string(),
                line: 1,
                problem: format!(
                    "missing column `{name}` (expected num_switch,num_node_p_switch,num_gpu_p_node)"
                ),
            })?;
        let raw = row.get(i).copied().unwrap_or("");
        raw.parse::<u32>()
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| TraceError::Field {
                file: file.to_string(),
                line: 2,
                field: name.to_string(),
                problem: format!("`{raw}` is not a whole number above 0"),
            })
    };
    let (s, n, g) = (
        get("num_switch")?,
        get("num_node_p_switch")?,
        get("num_gpu_p_node")?,
    );
    Cluster::sized(s, n, g, model, &format!("{s}x{n}x{g}")).map_err(|e| TraceError::Line {
        file: file.to_string(),
        line: 2,
        problem: e.to_string(),
    })
}
