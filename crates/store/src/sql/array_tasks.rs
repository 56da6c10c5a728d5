//! Schema 17's `array_tasks`: array tasks kept as a compact record (`array_task.rs`)
//! instead of a job row and a row per event. A row here and a row of `jobs` never stand
//! for the same task: the transaction that first writes a task's job row deletes its
//! compact one (`RoundWrites::promote`), and a task with a job row never gets a compact
//! one. The reads of `ended.rs` and `history.rs` read both and return the same jobs
//! and timelines either way.
//!
//! Why narrow: a job row binds 64 values and updates five indexes; a trivial task wrote
//! about 1.5 of them and four events, which was most of the server's CPU per array task
//! (docs/benchmarks.md). Its events since it was first written are appended to its own
//! row (`events`: one JSON object per line), not inserted as rows.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use gpusched_wire::history::JobEvent;

use super::dialect::{get_int, get_opt_int, Dialect, TextCache};
use super::values::{int, json, opt_int, Val};
use crate::array_task::{CompactTask, TaskLife};
use crate::stored_job::{StoredJob, StoredUsage};
use crate::StoreError;

/// SQLite's schema 17 (`INTEGER PRIMARY KEY`: the rowid itself, no second tree).
pub const CREATE_SQLITE: &[&str] = &[
    "CREATE TABLE array_tasks (
        id INTEGER PRIMARY KEY,
        array_id INTEGER NOT NULL,
        array_index INTEGER NOT NULL,
        queue TEXT NOT NULL,
        state TEXT NOT NULL,
        node TEXT,
        start_ms INTEGER,
        end_ms INTEGER,
        energy_j INTEGER,
        used_cpu_ms INTEGER,
        used_mem_peak_bytes INTEGER,
        life TEXT NOT NULL,
        events TEXT NOT NULL
    )",
    "CREATE INDEX array_tasks_array ON array_tasks(array_id, array_index)",
];

/// PostgreSQL's schema 10: the same table.
pub const CREATE_POSTGRES: &[&str] = &[
    "CREATE TABLE array_tasks (
        id BIGINT PRIMARY KEY,
        array_id BIGINT NOT NULL,
        array_index BIGINT NOT NULL,
        queue TEXT NOT NULL,
        state TEXT NOT NULL,
        node TEXT,
        start_ms BIGINT,
        end_ms BIGINT,
        energy_j BIGINT,
        used_cpu_ms BIGINT,
        used_mem_peak_bytes BIGINT,
        life TEXT NOT NULL,
        events TEXT NOT NULL
    )",
    "CREATE INDEX array_tasks_array ON array_tasks(array_id, array_index)",
];

/// The columns, in [`values`]' order.
pub const COLUMNS: [&str; 13] = [
    "id",
    "array_id",
    "array_index",
    "queue",
    "state",
    "node",
    "start_ms",
    "end_ms",
    "energy_j",
    "used_cpu_ms",
    "used_mem_peak_bytes",
    "life",
    "events",
];

/// Rows per upsert statement (13 values each).
pub(crate) const ROWS_PER_STATEMENT: usize = 64;

/// The multi-row upsert of `rows` tasks: a row already there takes the new values and
/// appends the new events to its own.
pub(crate) fn upsert_rows(d: Dialect, rows: usize) -> std::borrow::Cow<'static, str> {
    static TEXTS: TextCache<7> = TextCache::new();
    TEXTS.get(d, rows, || {
        let n = COLUMNS.len();
        let values: Vec<String> = (0..rows)
            .map(|r| {
                let marks: Vec<String> = (1..=n).map(|c| format!("${}", r * n + c)).collect();
                format!("({})", marks.join(", "))
            })
            .collect();
        let set: Vec<String> = COLUMNS[3..n - 1]
            .iter()
            .map(|c| format!("{c} = excluded.{c}"))
            .collect();
        format!(
            "INSERT INTO array_tasks ({}) VALUES {} ON CONFLICT(id) DO UPDATE SET {}, \
             events = array_tasks.events || excluded.events",
            COLUMNS.join(", "),
            values.join(", "),
            set.join(", ")
        )
    })
}

/// Deletes a task's compact row (it is getting a job row).
pub(crate) const DELETE: &str = "DELETE FROM array_tasks WHERE id = $1";
/// A task's compact events, to move them into `job_events`.
pub(crate) const EVENTS_OF: &str = "SELECT events FROM array_tasks WHERE id = $1";

fn corrupt(id: u64) -> impl Fn(serde_json::Error) -> StoreError {
    move |source| StoreError::Corrupt {
        what: format!("array task {id}"),
        source,
    }
}

/// A task's values, in [`COLUMNS`]' order (its events as JSON lines).
pub(crate) fn values(t: &CompactTask) -> Result<Vec<Val<'_>>, StoreError> {
    let id = t.id;
    let mut events = String::new();
    for e in &t.events {
        events.push_str(&serde_json::to_string(e).map_err(corrupt(id))?);
        events.push('\n');
    }
    Ok(vec![
        Val::Int(int(id, "id", id)?),
        Val::Int(int(id, "array_id", t.array_id)?),
        Val::Int(i64::from(t.index)),
        Val::Text(t.queue.as_str().into()),
        Val::Text(t.state.name().into()),
        Val::opt_text(t.node.as_deref()),
        opt_int(id, "start_ms", t.start_ms)?,
        opt_int(id, "end_ms", t.end_ms)?,
        opt_int(id, "energy_j", t.energy_j)?,
        opt_int(id, "used_cpu_ms", t.usage.as_ref().map(|u| u.cpu_ms))?,
        opt_int(
            id,
            "used_mem_peak_bytes",
            t.usage.as_ref().and_then(|u| u.mem_peak_bytes),
        )?,
        json(id, &t.life)?,
        Val::Text(events.into()),
    ])
}

/// The columns a read selects (all but the events), prefixed by `t.`.
fn select_columns() -> String {
    COLUMNS[..COLUMNS.len() - 1]
        .iter()
        .map(|c| format!("t.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `SELECT` of the compact tasks `filter` (on `t`, the table) picks.
pub(crate) fn select(filter: &str) -> String {
    format!(
        "SELECT {} FROM array_tasks t WHERE {filter}",
        select_columns()
    )
}

/// One row of [`select`] (its events are read only for a timeline).
pub(crate) fn decode(r: &AnyRow) -> Result<CompactTask, StoreError> {
    let id: u64 = get_int(r, "id", &|| "an array task".to_string())?;
    let what = || format!("array task {id}");
    let state: String = r.try_get("state")?;
    let state = gpusched_wire::JobState::parse(&state).ok_or_else(|| StoreError::Row {
        what: what(),
        why: format!("unknown state `{state}`"),
    })?;
    let life: String = r.try_get("life")?;
    let life: TaskLife = serde_json::from_str(&life).map_err(corrupt(id))?;
    let cpu_ms = get_opt_int::<u64>(r, "used_cpu_ms", &what)?;
    let mem_peak_bytes = get_opt_int::<u64>(r, "used_mem_peak_bytes", &what)?;
    Ok(CompactTask {
        id,
        array_id: get_int(r, "array_id", &what)?,
        index: get_int(r, "array_index", &what)?,
        queue: r.try_get("queue")?,
        state,
        node: r.try_get("node")?,
        start_ms: get_opt_int(r, "start_ms", &what)?,
        end_ms: get_opt_int(r, "end_ms", &what)?,
        energy_j: get_opt_int(r, "energy_j", &what)?,
        usage: cpu_ms.map(|cpu_ms| StoredUsage {
            cpu_ms,
            mem_peak_bytes,
            cpu_pressure_ms: None,
            mem_pressure_ms: None,
        }),
        life,
        events: Vec::new(),
    })
}

/// A task's compact events as stored (JSON lines), oldest first.
pub(crate) fn parse_events(id: u64, text: &str) -> Result<Vec<JobEvent>, StoreError> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).map_err(corrupt(id)))
        .collect()
}

/// The compact tasks `filter` picks (binding `binds`), each rebuilt from its array's
/// row: arrays are read once each, from `arrays` when given (the live arrays at load)
/// or else from the database.
pub(crate) async fn rebuilt(
    conn: &mut AnyConnection,
    sql: &str,
    binds: &[i64],
    arrays: Option<&std::collections::HashMap<u64, &StoredJob>>,
) -> Result<Vec<StoredJob>, StoreError> {
    let mut q = sqlx::query(sql);
    for b in binds {
        q = q.bind(*b);
    }
    let rows = q.fetch_all(&mut *conn).await?;
    let tasks: Vec<CompactTask> = rows.iter().map(decode).collect::<Result<_, _>>()?;
    rebuild_all(conn, tasks, arrays).await
}

/// `tasks` rebuilt, each from its array's row (see [`rebuilt`]).
pub(crate) async fn rebuild_all(
    conn: &mut AnyConnection,
    tasks: Vec<CompactTask>,
    arrays: Option<&std::collections::HashMap<u64, &StoredJob>>,
) -> Result<Vec<StoredJob>, StoreError> {
    let mut read: std::collections::HashMap<u64, StoredJob> = Default::default();
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        let given = arrays.and_then(|a| a.get(&t.array_id).copied());
        let array = match given {
            Some(a) => a,
            None => {
                if let std::collections::hash_map::Entry::Vacant(e) = read.entry(t.array_id) {
                    let a = super::ended::get_row(&mut *conn, t.array_id)
                        .await?
                        .ok_or_else(|| no_array(&t))?;
                    e.insert(a);
                }
                &read[&t.array_id]
            }
        };
        out.push(crate::array_task::rebuild(array, &t));
    }
    Ok(out)
}

fn no_array(t: &CompactTask) -> StoreError {
    StoreError::Row {
        what: format!("array task {}", t.id),
        why: format!(
            "its array {} has no row; restore the database from a backup",
            t.array_id
        ),
    }
}

/// The compact events of task `id` (empty when it has no compact row).
pub(crate) async fn events(conn: &mut AnyConnection, id: u64) -> Result<Vec<JobEvent>, StoreError> {
    let text: Option<String> = sqlx::query_scalar(EVENTS_OF)
        .bind(int(id, "id", id)?)
        .fetch_optional(conn)
        .await?;
    text.map_or(Ok(Vec::new()), |t| parse_events(id, &t))
}

/// Schema 17's data step: each task row of `jobs` that a compact record stands for
/// exactly (`compact_if_exact` against its array's row) and whose timeline is whole
/// (none of its events dropped) moves into `array_tasks`, its timeline into the record's
/// `events` (deleting its job row deletes its `job_events` rows: schema 5's trigger).
/// Every other task keeps its job row. One array at a time, in the migration's
/// transaction, so a store of many arrays is never all in memory at once.
pub(crate) async fn move_task_rows(conn: &mut AnyConnection, d: Dialect) -> Result<(), StoreError> {
    let arrays: Vec<i64> = sqlx::query_scalar(
        "SELECT DISTINCT array_id FROM jobs WHERE array_id IS NOT NULL ORDER BY array_id",
    )
    .fetch_all(&mut *conn)
    .await?;
    let all = super::jobs::all_columns().join(", ");
    let of_array = format!("SELECT {all} FROM jobs WHERE array_id = $1 ORDER BY id");
    for array_id in arrays {
        let id = array_id.max(0) as u64;
        let Some(array) = super::ended::get_row(&mut *conn, id).await? else {
            continue;
        };
        let rows = sqlx::query(&of_array)
            .bind(array_id)
            .fetch_all(&mut *conn)
            .await?;
        for row in &rows {
            let task = super::jobs::decode(row)?;
            let task_id = task.id;
            let Some(mut compact) = crate::array_task::compact_if_exact(&array, task) else {
                continue;
            };
            let timeline = super::history::timeline(&mut *conn, task_id).await?;
            if timeline.dropped > 0 {
                continue;
            }
            compact.events = timeline.events;
            let vals = values(&compact)?;
            super::values::bind_all(sqlx::query(&upsert_rows(d, 1)), &vals)
                .execute(&mut *conn)
                .await?;
            sqlx::query("DELETE FROM jobs WHERE id = $1")
                .bind(int(task_id, "id", task_id)?)
                .execute(&mut *conn)
                .await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upsert_names_every_column_once_and_appends_events() {
        let sql = upsert_rows(Dialect::Sqlite, 2);
        assert!(sql.contains("$26)"), "{sql}");
        assert!(!sql.contains("$27"), "{sql}");
        assert!(sql.ends_with("events = array_tasks.events || excluded.events"));
        assert!(sql.contains("life = excluded.life"));
        assert!(!sql.contains("id = excluded.id"));
    }
}
