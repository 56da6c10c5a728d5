//! The `jobs` table (created by schema 2, widened by later schemas: gangs, energy,
//! workflows, followers, containment, services, placement) and a
//! [`StoredJob`] in and out of it: one column per fact, JSON only for lists and maps.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::dialect::{
    get_bool, get_int, get_opt_int, marks, pow2_chunks, Dialect, Marks, TextCache,
};

use super::values::{bind_all, job_row};
use crate::stored_job::StoredJob;
use crate::StoreError;

/// The table as schema 2 creates it (frozen: schema 3 adds [`GANG_COLUMNS`] to it).
pub const CREATE_V2: &[&str] = &[
    "CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        user TEXT NOT NULL,
        queue TEXT NOT NULL,
        command TEXT NOT NULL,
        cwd TEXT NOT NULL,
        gpus INTEGER NOT NULL,
        gpu_model TEXT,
        slice TEXT,
        cpu_milli INTEGER NOT NULL,
        mem_mib INTEGER NOT NULL,
        resources TEXT NOT NULL,
        priority INTEGER NOT NULL,
        walltime_s INTEGER,
        max_retries INTEGER NOT NULL,
        after_ids TEXT NOT NULL,
        env TEXT NOT NULL,
        client_token TEXT UNIQUE,
        grace_s INTEGER NOT NULL,
        submit_ms INTEGER NOT NULL,
        state TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        node TEXT,
        gpu_indices TEXT NOT NULL,
        slice_at TEXT,
        start_ms INTEGER,
        end_ms INTEGER,
        exit_code INTEGER,
        signal INTEGER,
        end_reason TEXT,
        note TEXT,
        cancel_requested INTEGER NOT NULL,
        preempt_requested INTEGER NOT NULL,
        preemptions INTEGER NOT NULL,
        agent_stops INTEGER NOT NULL,
        attempt_nodes TEXT NOT NULL,
        last_checkpoint_ms INTEGER
    )",
    // Only state is indexed: the server loads every job at start and looks nothing up
    // in SQL, and each index costs every write (rewriting 10,000 jobs in one transaction
    // took 530-600 ms with user, queue, node and submit time indexed too, 190-300 ms
    // without, on a busy 2-core machine). The columns are there for the query that
    // needs one: add its index then, in a migration.
    "CREATE INDEX jobs_state ON jobs(state)",
];

/// Schema 3: the gang fields (issue 12). Jobs from before it ran on one node: one node,
/// all their GPUs on it, no parts recorded (the server fills part 0 from `node`).
pub const ADD_GANG_COLUMNS: &[&str] = &[
    "ALTER TABLE jobs ADD COLUMN nodes INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE jobs ADD COLUMN gpus_per_node INTEGER NOT NULL DEFAULT 0",
    "UPDATE jobs SET gpus_per_node = gpus",
    "ALTER TABLE jobs ADD COLUMN split INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE jobs ADD COLUMN tasks_per_node INTEGER",
    "ALTER TABLE jobs ADD COLUMN mixed_models INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE jobs ADD COLUMN parts TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE jobs ADD COLUMN master_port INTEGER",
    "ALTER TABLE jobs ADD COLUMN first_failure TEXT",
];

/// Schema 4: the energy a job's GPUs drew (issue 13). `NULL`: never measured.
pub const ADD_ENERGY_COLUMNS: &[&str] = &["ALTER TABLE jobs ADD COLUMN energy_j INTEGER"];

/// The columns schema 4 added, in the order of [`ADD_ENERGY_COLUMNS`].
const ENERGY_COLUMNS: &[&str] = &["energy_j"];

/// Schema 6 (issue 14): dependency kinds, holds, and arrays. An array is one row (its
/// range in `array_spec`); its tasks get rows of their own only as they start, naming
/// their array and index.
pub const ADD_WORKFLOW_COLUMNS: &[&str] = &[
    "ALTER TABLE jobs ADD COLUMN after_any TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE jobs ADD COLUMN after_notok TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE jobs ADD COLUMN array_spec TEXT",
    "ALTER TABLE jobs ADD COLUMN array_id INTEGER",
    "ALTER TABLE jobs ADD COLUMN array_index INTEGER",
    "ALTER TABLE jobs ADD COLUMN array_progress TEXT",
    "CREATE INDEX jobs_array ON jobs(array_id, array_index) WHERE array_id IS NOT NULL",
];

/// Schema 9: followers (a pending job queued behind another on its node) and the
/// attempts the server took back from them.
pub const ADD_FOLLOW_COLUMNS: &[&str] = &[
    "ALTER TABLE jobs ADD COLUMN behind INTEGER",
    "ALTER TABLE jobs ADD COLUMN recalls INTEGER NOT NULL DEFAULT 0",
];

/// The columns schema 9 added, in the order of [`ADD_FOLLOW_COLUMNS`].
const FOLLOW_COLUMNS: &[&str] = &["behind", "recalls"];

/// Schema 11 (issue 32): containment. What a job asked its nodes to hold it to beyond
/// `cpu_milli` and `mem_mib` (its container image, its process cap), and what its
/// current (or last) attempt used as its cgroups measured it: `used_cpu_ms` NULL means
/// nothing was measured (no cgroup, an agent before protocol 4), and then the other
/// `used_` columns are NULL too. Rows from before it ran host processes, measured.
pub const ADD_CONTAIN_COLUMNS: &[&str] = &[
    "ALTER TABLE jobs ADD COLUMN image TEXT",
    "ALTER TABLE jobs ADD COLUMN pids_max INTEGER",
    "ALTER TABLE jobs ADD COLUMN used_cpu_ms INTEGER",
    "ALTER TABLE jobs ADD COLUMN used_mem_peak_bytes INTEGER",
    "ALTER TABLE jobs ADD COLUMN used_cpu_pressure_ms INTEGER",
    "ALTER TABLE jobs ADD COLUMN used_mem_pressure_ms INTEGER",
];

/// The columns schema 11 added, in the order of [`ADD_CONTAIN_COLUMNS`].
pub(crate) const CONTAIN_COLUMNS: &[&str] = &[
    "image",
    "pids_max",
    "used_cpu_ms",
    "used_mem_peak_bytes",
    "used_cpu_pressure_ms",
    "used_mem_pressure_ms",
];

/// Schema 12 (issue 34): inference services. A replica's job row says which service
/// and version it serves, its port, whether it is ready and since when it drains (a
/// [`crate::StoredReplica`]); NULL for every other job, and for every row from before
/// it. JSON, not columns of their own: nothing looks them up in SQL (the server loads
/// the live jobs and finds a service's replicas in memory), so one nullable column
/// costs the other jobs' writes nothing but a NULL. The `services` table itself is
/// `services.rs`'s.
pub const ADD_SERVICE_COLUMNS: &[&str] = &["ALTER TABLE jobs ADD COLUMN service TEXT"];

/// The columns schema 12 added, in the order of [`ADD_SERVICE_COLUMNS`].
pub(crate) const SERVICE_COLUMNS: &[&str] = &["service"];

/// Schema 13 (issue 35): where a job may run and interactive allocations. `placement`
/// is a job's rules (a [`crate::StoredPlacement`]: partitions, constraint, node list,
/// exclusions, reservation) as JSON, NULL for a job with none and for every row from
/// before it: the server loads the live jobs and applies the rules in memory (the
/// core's eligibility), nothing looks them up in SQL. `interactive` is a boolean (0/1,
/// as the others), 0 for every older row. The `reservations` table itself is
/// `reservations.rs`'s. SQLite's statements; PostgreSQL's say BIGINT
/// ([`ADD_PLACEMENT_COLUMNS_PG`]).
pub const ADD_PLACEMENT_COLUMNS: &[&str] = &[
    "ALTER TABLE jobs ADD COLUMN placement TEXT",
    "ALTER TABLE jobs ADD COLUMN interactive INTEGER NOT NULL DEFAULT 0",
];

/// [`ADD_PLACEMENT_COLUMNS`] in PostgreSQL's types (its schema 6).
pub const ADD_PLACEMENT_COLUMNS_PG: &[&str] = &[
    "ALTER TABLE jobs ADD COLUMN placement TEXT",
    "ALTER TABLE jobs ADD COLUMN interactive BIGINT NOT NULL DEFAULT 0",
];

/// The columns schema 13 added, in the order of [`ADD_PLACEMENT_COLUMNS`].
pub(crate) const PLACEMENT_COLUMNS: &[&str] = &["placement", "interactive"];

/// Schema 15 (issue 35): what an allocation's GPUs did, kept with its row so `usage`
/// counts ended jobs from the store's aggregate as it counts GPU-hours: `idle_gpu_s`
/// (NULL for a job that is not an interactive allocation, and for older rows), the
/// steps that ran in the job and their GPU-seconds (0 for older rows: none had steps
/// that ended, or they were not counted). SQLite's statements; PostgreSQL's say BIGINT
/// ([`ADD_ALLOC_COLUMNS_PG`]).
pub const ADD_ALLOC_COLUMNS: &[&str] = &[
    "ALTER TABLE jobs ADD COLUMN idle_gpu_s INTEGER",
    "ALTER TABLE jobs ADD COLUMN steps_run INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE jobs ADD COLUMN step_gpu_s INTEGER NOT NULL DEFAULT 0",
];

/// [`ADD_ALLOC_COLUMNS`] in PostgreSQL's types (its schema 8).
pub const ADD_ALLOC_COLUMNS_PG: &[&str] = &[
    "ALTER TABLE jobs ADD COLUMN idle_gpu_s BIGINT",
    "ALTER TABLE jobs ADD COLUMN steps_run BIGINT NOT NULL DEFAULT 0",
    "ALTER TABLE jobs ADD COLUMN step_gpu_s BIGINT NOT NULL DEFAULT 0",
];

/// The columns schema 15 added, in the order of [`ADD_ALLOC_COLUMNS`].
pub(crate) const ALLOC_COLUMNS: &[&str] = &["idle_gpu_s", "steps_run", "step_gpu_s"];
/// Schema 16 (issue 36): the account a job is charged to (docs/accounts.md), NULL for
/// the root and for every row from before it. A column of its own: `usage --by account`
/// groups by it in SQL. TEXT, the same statement on both backends (PostgreSQL's 9).
pub const ADD_ACCOUNT_COLUMNS: &[&str] = &["ALTER TABLE jobs ADD COLUMN account TEXT"];

/// The columns schema 16 added, in the order of [`ADD_ACCOUNT_COLUMNS`].
pub(crate) const ACCOUNT_COLUMNS: &[&str] = &["account"];

/// The columns schema 6 added, in the order of [`ADD_WORKFLOW_COLUMNS`].
const WORKFLOW_COLUMNS: &[&str] = &[
    "after_any",
    "after_notok",
    "held",
    "array_spec",
    "array_id",
    "array_index",
    "array_progress",
];

/// The columns schema 3 added, in the order of [`ADD_GANG_COLUMNS`].
const GANG_COLUMNS: &[&str] = &[
    "nodes",
    "gpus_per_node",
    "split",
    "tasks_per_node",
    "mixed_models",
    "parts",
    "master_port",
    "first_failure",
];

/// The columns of schema 2.
const COLUMNS: &[&str] = &[
    "id",
    "name",
    // Quoted: a reserved word in PostgreSQL (SQLite takes the quotes as well).
    "\"user\"",
    "queue",
    "command",
    "cwd",
    "gpus",
    "gpu_model",
    "slice",
    "cpu_milli",
    "mem_mib",
    "resources",
    "priority",
    "walltime_s",
    "max_retries",
    "after_ids",
    "env",
    "client_token",
    "grace_s",
    "submit_ms",
    "state",
    "attempt",
    "node",
    "gpu_indices",
    "slice_at",
    "start_ms",
    "end_ms",
    "exit_code",
    "signal",
    "end_reason",
    "note",
    "cancel_requested",
    "preempt_requested",
    "preemptions",
    "agent_stops",
    "attempt_nodes",
    "last_checkpoint_ms",
];

/// Which columns a write fills: the upgrade from schema 1 writes schema 2's table.
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum Layout {
    V2,
    Latest,
}

/// How many columns a job's row has ([`all_columns`]).
pub const COLUMN_COUNT: usize = COLUMNS.len()
    + GANG_COLUMNS.len()
    + ENERGY_COLUMNS.len()
    + WORKFLOW_COLUMNS.len()
    + FOLLOW_COLUMNS.len()
    + CONTAIN_COLUMNS.len()
    + SERVICE_COLUMNS.len()
    + PLACEMENT_COLUMNS.len()
    + ALLOC_COLUMNS.len()
    + ACCOUNT_COLUMNS.len();

pub(crate) fn all_columns() -> Vec<&'static str> {
    COLUMNS
        .iter()
        .chain(GANG_COLUMNS)
        .chain(ENERGY_COLUMNS)
        .chain(WORKFLOW_COLUMNS)
        .chain(FOLLOW_COLUMNS)
        .chain(CONTAIN_COLUMNS)
        .chain(SERVICE_COLUMNS)
        .chain(PLACEMENT_COLUMNS)
        .chain(ALLOC_COLUMNS)
        .chain(ACCOUNT_COLUMNS)
        .copied()
        .collect()
}

/// `INSERT ... ON CONFLICT(id) DO UPDATE` of every column: a job's row is replaced in
/// place, while a client token another job holds still fails (UNIQUE), as it must.
fn upsert_sql(layout: Layout) -> &'static str {
    static V2: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    static LATEST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let build = |columns: &[&str]| {
        let cols = columns.join(", ");
        let marks = marks(columns.len());
        let sets = columns[1..]
            .iter()
            .map(|c| format!("{c} = excluded.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!("INSERT INTO jobs ({cols}) VALUES ({marks}) ON CONFLICT(id) DO UPDATE SET {sets}")
    };
    match layout {
        Layout::V2 => V2.get_or_init(|| build(COLUMNS)),
        Layout::Latest => LATEST.get_or_init(|| build(&all_columns())),
    }
}

/// Columns no change after a job's first write touches (what it was submitted as, and
/// the keys it is looked up by): the multi-row upsert leaves them out of its update, so
/// rewriting a row updates none of their indexes (user, client token, array index) and
/// moves no text that cannot have changed.
const FIXED_AFTER_SUBMIT: &[&str] = &[
    "name",
    "\"user\"",
    "command",
    "cwd",
    "env",
    "client_token",
    "submit_ms",
    "array_spec",
    "array_id",
    "array_index",
];

/// The upsert of [`upsert_sql`] for `rows` rows of every column at once, updating every
/// column but [`FIXED_AFTER_SUBMIT`] of a row that exists. On SQLite the placeholders
/// are anonymous `?`s (each value is bound once, in order): SQLite looks a numbered or
/// named one up among those before it, which made the 64-row statement's ~3,900 of them
/// cost 5 times its writing (5,000 jobs: 1.8 s against 0.35 s, debug).
pub(crate) fn upsert_rows(d: Dialect, rows: usize) -> std::borrow::Cow<'static, str> {
    static TEXTS: TextCache<7> = TextCache::new();
    TEXTS.get(d, rows, || upsert_rows_sql(d, rows))
}

fn upsert_rows_sql(d: Dialect, rows: usize) -> String {
    let columns = all_columns();
    let mut m = Marks::default();
    let values: Vec<String> = (0..rows)
        .map(|_| match d {
            Dialect::Sqlite => format!("({})", vec!["?"; columns.len()].join(", ")),
            Dialect::Postgres => format!("({})", m.list(columns.len())),
        })
        .collect();
    let sets = columns[1..]
        .iter()
        .filter(|c| !FIXED_AFTER_SUBMIT.contains(c))
        .map(|c| format!("{c} = excluded.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "INSERT INTO jobs ({}) VALUES {} ON CONFLICT(id) DO UPDATE SET {sets}",
        columns.join(", "),
        values.join(", ")
    )
}

fn select_sql() -> String {
    format!("SELECT {} FROM jobs ORDER BY id", all_columns().join(", "))
}

/// Rows per multi-row upsert. SQLite binds at most 32,766 values per statement,
/// PostgreSQL 65,535, and a row binds [`COLUMN_COUNT`] (64 at schema 13); a round rarely
/// writes more than this many jobs.
pub(crate) const ROWS_PER_STATEMENT: usize = 64;

/// Writes (inserts or replaces) one job's row.
pub async fn put(conn: &mut AnyConnection, j: &StoredJob) -> Result<(), StoreError> {
    put_as(conn, j, Layout::Latest).await
}

/// Writes many jobs' rows with one statement per [`ROWS_PER_STATEMENT`] rows (in
/// chunks of powers of two: see `pow2_chunks`). Why: the
/// driver runs the connection on its own thread, so every statement is a round trip
/// between threads (a channel and a wake-up each way), which cost more than SQLite's
/// own work per job (docs/benchmarks-log.md (s), the perf profile).
pub async fn put_many(
    conn: &mut AnyConnection,
    d: Dialect,
    jobs: &[StoredJob],
) -> Result<(), StoreError> {
    for chunk in pow2_chunks(jobs, ROWS_PER_STATEMENT) {
        let sql = upsert_rows(d, chunk.len());
        let mut vals = Vec::with_capacity(chunk.len() * COLUMN_COUNT);
        for j in chunk {
            vals.extend(job_row(j)?);
        }
        bind_all(sqlx::query(&sql), &vals)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Writes one job's row into the table as `layout` has it (schema 2's for the upgrade
/// from schema 1, which runs before schema 3 adds its columns).
pub async fn put_as(
    conn: &mut AnyConnection,
    j: &StoredJob,
    layout: Layout,
) -> Result<(), StoreError> {
    let vals = job_row(j)?;
    let vals = match layout {
        Layout::V2 => &vals[..COLUMNS.len()],
        Layout::Latest => &vals[..],
    };
    bind_all(sqlx::query(upsert_sql(layout)), vals)
        .execute(conn)
        .await?;
    Ok(())
}

/// Every job, by id; a row that does not decode is named.
pub async fn load(conn: &mut AnyConnection) -> Result<Vec<StoredJob>, StoreError> {
    let rows = sqlx::query(&select_sql()).fetch_all(conn).await?;
    rows.iter().map(decode).collect()
}

/// A JSON column's value; a column that does not decode is named.
fn json_col<T: serde::de::DeserializeOwned>(
    r: &AnyRow,
    id: u64,
    col: &str,
) -> Result<T, StoreError> {
    let text: String = r.try_get(col)?;
    serde_json::from_str(&text).map_err(|e| StoreError::Row {
        what: format!("job {id}"),
        why: format!("column {col}: {e}"),
    })
}

/// A nullable JSON column's value.
fn opt_json_col<T: serde::de::DeserializeOwned>(
    r: &AnyRow,
    id: u64,
    col: &str,
) -> Result<Option<T>, StoreError> {
    let text: Option<String> = r.try_get(col)?;
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| StoreError::Row {
            what: format!("job {id}"),
            why: format!("column {col}: {e}"),
        })
    })
    .transpose()
}

pub(crate) fn decode(r: &AnyRow) -> Result<StoredJob, StoreError> {
    let id: u64 = get_int(r, "id", &|| "a job".to_string())?;
    let what = || format!("job {id}");
    let int = |col: &str| get_int::<u32>(r, col, &what);
    let big = |col: &str| get_int::<u64>(r, col, &what);
    let opt_big = |col: &str| get_opt_int::<u64>(r, col, &what);
    let state: String = r.try_get("state")?;
    let state = gpusched_wire::JobState::parse(&state).ok_or_else(|| StoreError::Row {
        what: what(),
        why: format!("unknown state `{state}`"),
    })?;
    Ok(StoredJob {
        id,
        name: r.try_get("name")?,
        user: r.try_get("user")?,
        queue: r.try_get("queue")?,
        command: json_col(r, id, "command")?,
        cwd: r.try_get("cwd")?,
        gpus: int("gpus")?,
        gpu_model: r.try_get("gpu_model")?,
        slice: opt_json_col(r, id, "slice")?,
        cpu_milli: big("cpu_milli")?,
        mem_mib: big("mem_mib")?,
        resources: json_col(r, id, "resources")?,
        priority: get_int(r, "priority", &what)?,
        walltime_s: opt_big("walltime_s")?,
        max_retries: int("max_retries")?,
        after: json_col(r, id, "after_ids")?,
        env: json_col(r, id, "env")?,
        client_token: r.try_get("client_token")?,
        grace_s: big("grace_s")?,
        submit_ms: big("submit_ms")?,
        state,
        attempt: int("attempt")?,
        node: r.try_get("node")?,
        gpu_indices: json_col(r, id, "gpu_indices")?,
        slice_at: opt_json_col(r, id, "slice_at")?,
        start_ms: opt_big("start_ms")?,
        end_ms: opt_big("end_ms")?,
        exit_code: get_opt_int(r, "exit_code", &what)?,
        signal: get_opt_int(r, "signal", &what)?,
        end_reason: r.try_get("end_reason")?,
        note: r.try_get("note")?,
        cancel_requested: get_bool(r, "cancel_requested")?,
        preempt_requested: get_bool(r, "preempt_requested")?,
        preemptions: int("preemptions")?,
        agent_stops: int("agent_stops")?,
        attempt_nodes: json_col(r, id, "attempt_nodes")?,
        last_checkpoint_ms: opt_big("last_checkpoint_ms")?,
        nodes: int("nodes")?,
        gpus_per_node: int("gpus_per_node")?,
        split: get_bool(r, "split")?,
        tasks_per_node: get_opt_int(r, "tasks_per_node", &what)?,
        mixed_models: get_bool(r, "mixed_models")?,
        parts: json_col(r, id, "parts")?,
        master_port: get_opt_int(r, "master_port", &what)?,
        first_failure: opt_json_col(r, id, "first_failure")?,
        energy_j: r
            .try_get::<Option<i64>, _>("energy_j")?
            .map(|j| j.max(0) as u64),
        after_any: json_col(r, id, "after_any")?,
        after_notok: json_col(r, id, "after_notok")?,
        held: get_bool(r, "held")?,
        array: opt_json_col(r, id, "array_spec")?,
        array_task: match (
            r.try_get::<Option<i64>, _>("array_id")?,
            get_opt_int::<u32>(r, "array_index", &what)?,
        ) {
            (Some(a), Some(index)) => Some(crate::StoredArrayTask {
                array_id: a.max(0) as u64,
                index,
            }),
            _ => None,
        },
        array_progress: opt_json_col(r, id, "array_progress")?,
        behind: r
            .try_get::<Option<i64>, _>("behind")?
            .map(|b| b.max(0) as u64),
        recalls: int("recalls")?,
        image: r.try_get("image")?,
        pids_max: opt_big("pids_max")?,
        usage: match opt_big("used_cpu_ms")? {
            None => None,
            Some(cpu_ms) => Some(crate::StoredUsage {
                cpu_ms,
                mem_peak_bytes: opt_big("used_mem_peak_bytes")?,
                cpu_pressure_ms: opt_big("used_cpu_pressure_ms")?,
                mem_pressure_ms: opt_big("used_mem_pressure_ms")?,
            }),
        },
        service: opt_json_col(r, id, "service")?,
        placement: opt_json_col(r, id, "placement")?,
        interactive: get_bool(r, "interactive")?,
        idle_gpu_s: opt_big("idle_gpu_s")?,
        steps_run: opt_big("steps_run")?.unwrap_or(0),
        step_gpu_s: opt_big("step_gpu_s")?.unwrap_or(0),
        account: r.try_get("account")?,
    })
}
