//! Schema 1 (gpusched up to the 2026-11-30 release): each job row held the API type as JSON
//! (`{"view": JobView, "env", "client_token", "grace_s", "attempt_nodes", "agent_stops"}`).
//! The types below are a frozen copy of that JSON's shape as that release wrote it, with
//! its defaults, so the upgrade reads old rows the same way however the API moves on.
//! Never change them; a later schema gets a module of its own.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::stored_job::{StoredJob, StoredMig, StoredSlice, StoredSliceAt};

/// The tables of schema 1, exactly as that release created them.
pub const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS jobs (
        id INTEGER PRIMARY KEY,
        state TEXT NOT NULL,
        user TEXT NOT NULL,
        node TEXT,
        client_token TEXT UNIQUE,
        data TEXT NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state)",
    "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tokens (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, data TEXT NOT NULL)",
];

#[derive(Deserialize)]
pub struct V1Job {
    view: V1View,
    env: BTreeMap<String, String>,
    client_token: Option<String>,
    grace_s: u64,
    #[serde(default)]
    attempt_nodes: BTreeMap<u32, String>,
    #[serde(default)]
    agent_stops: u32,
}

fn default_queue() -> String {
    "default".to_string()
}

/// `JobView` as schema 1 stored it. Unknown fields are ignored, as that release did.
#[derive(Deserialize)]
struct V1View {
    id: u64,
    name: String,
    user: String,
    state: String,
    reason: String,
    command: Vec<String>,
    cwd: String,
    gpus: u32,
    gpu_model: Option<String>,
    #[serde(default)]
    slice: Option<V1Slice>,
    #[serde(default)]
    slice_at: Option<V1SliceAt>,
    #[serde(default = "default_queue")]
    queue: String,
    #[serde(default)]
    cpu_milli: u64,
    #[serde(default)]
    mem_mib: u64,
    priority: i32,
    walltime_s: Option<u64>,
    node: Option<String>,
    gpu_indices: Vec<u32>,
    attempt: u32,
    max_retries: u32,
    exit_code: Option<i32>,
    signal: Option<i32>,
    submit_ms: u64,
    start_ms: Option<u64>,
    end_ms: Option<u64>,
    cancel_requested: bool,
    #[serde(default)]
    after: Vec<u64>,
    #[serde(default)]
    preemptions: u32,
    #[serde(default)]
    preempt_requested: bool,
    #[serde(default)]
    last_checkpoint_ms: Option<u64>,
    // Also stored by schema 1 and dropped by the upgrade, because the server works them
    // out: `est_start_ms` (a pending job's estimate) and `env_keys` (the keys of `env`).
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum V1Slice {
    Share { milli: u32 },
    Memory { mib: u64 },
    Mig { profile: String },
}

#[derive(Deserialize)]
struct V1SliceAt {
    gpu: u32,
    milli: u32,
    mem_mib: u64,
    #[serde(default)]
    mig: Option<V1MigAt>,
}

#[derive(Deserialize)]
struct V1MigAt {
    profile: String,
    start: u8,
    size: u8,
    create: bool,
    #[serde(default)]
    destroy: Vec<u8>,
    #[serde(default)]
    uuid: Option<String>,
}

impl V1Job {
    /// The schema-2 row for a schema-1 job: every fact kept, a terminal job's reason
    /// becomes its end reason, a live job's reason its note (schema 1 never stored the
    /// reason a pending job waits: the server added that to each view).
    pub fn upgrade(self) -> Result<StoredJob, String> {
        let v = self.view;
        let state = gpusched_wire::JobState::parse(&v.state)
            .ok_or_else(|| format!("unknown state `{}`", v.state))?;
        let (end_reason, note) = if state.is_terminal() {
            (Some(v.reason), None)
        } else {
            (None, Some(v.reason).filter(|s| !s.is_empty()))
        };
        Ok(StoredJob {
            id: v.id,
            name: v.name,
            user: v.user,
            queue: v.queue,
            command: v.command,
            cwd: v.cwd,
            gpus: v.gpus,
            gpu_model: v.gpu_model,
            slice: v.slice.map(|s| match s {
                V1Slice::Share { milli } => StoredSlice::Share { milli },
                V1Slice::Memory { mib } => StoredSlice::Memory { mib },
                V1Slice::Mig { profile } => StoredSlice::Mig { profile },
            }),
            cpu_milli: v.cpu_milli,
            mem_mib: v.mem_mib,
            // Schema 1's releases had no generic resources.
            resources: BTreeMap::new(),
            priority: v.priority,
            walltime_s: v.walltime_s,
            max_retries: v.max_retries,
            after: v.after,
            env: self.env,
            client_token: self.client_token,
            grace_s: self.grace_s,
            submit_ms: v.submit_ms,
            state,
            attempt: v.attempt,
            node: v.node,
            gpu_indices: v.gpu_indices,
            slice_at: v.slice_at.map(|s| {
                Box::new(StoredSliceAt {
                    gpu: s.gpu,
                    milli: s.milli,
                    mem_mib: s.mem_mib,
                    mig: s.mig.map(|m| StoredMig {
                        profile: m.profile,
                        start: m.start,
                        size: m.size,
                        create: m.create,
                        destroy: m.destroy,
                        uuid: m.uuid,
                    }),
                })
            }),
            start_ms: v.start_ms,
            end_ms: v.end_ms,
            exit_code: v.exit_code,
            signal: v.signal,
            end_reason,
            note,
            cancel_requested: v.cancel_requested,
            preempt_requested: v.preempt_requested,
            preemptions: v.preemptions,
            agent_stops: self.agent_stops,
            attempt_nodes: self.attempt_nodes,
            last_checkpoint_ms: v.last_checkpoint_ms,
            // Schema 1 knew one node per job.
            nodes: 1,
            gpus_per_node: v.gpus,
            split: false,
            tasks_per_node: None,
            mixed_models: false,
            parts: Vec::new(),
            master_port: None,
            energy_j: None,
            first_failure: None,
            after_any: vec![],
            after_notok: vec![],
            held: false,
            array: None,
            array_task: None,
            array_progress: None,
            behind: None,
            recalls: 0,
            // Schema 1 ran host processes and measured nothing.
            image: None,
            pids_max: None,
            usage: None,
            service: None,
            // Schema 1 had no placement rules and no interactive jobs.
            placement: None,
            interactive: false,
            // Nor idle time or steps counted.
            idle_gpu_s: None,
            steps_run: 0,
            step_gpu_s: 0,
            account: None,
        })
    }
}
