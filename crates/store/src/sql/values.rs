//! A row's values as plain data, in its table's column order, so both ways of writing it
//! (sqlx's statements, and the SQLite round writer's own connection in
//! `sqlite/writer.rs`) bind the very same values from one place.

use std::borrow::Cow;

use sqlx::any::AnyArguments;

use crate::stored_job::StoredJob;
use crate::StoreError;

/// One value to bind. NULLs carry their column's type: PostgreSQL refuses a NULL bound
/// as an integer into a text column.
#[derive(Clone, Debug, PartialEq)]
pub enum Val<'a> {
    Int(i64),
    Text(Cow<'a, str>),
    NullInt,
    NullText,
}

impl<'a> Val<'a> {
    fn text(s: &'a str) -> Self {
        Val::Text(Cow::Borrowed(s))
    }

    pub(crate) fn opt_text(s: Option<&'a str>) -> Self {
        s.map_or(Val::NullText, Val::text)
    }

    fn opt_int(v: Option<i64>) -> Self {
        v.map_or(Val::NullInt, Val::Int)
    }
}

/// A statement being bound.
pub type Query<'q> = sqlx::query::Query<'q, sqlx::Any, AnyArguments<'q>>;

/// Binds `vals` in order.
pub fn bind_all<'q>(mut q: Query<'q>, vals: &'q [Val<'q>]) -> Query<'q> {
    for v in vals {
        q = match v {
            Val::Int(i) => q.bind(*i),
            Val::Text(t) => q.bind(t.as_ref()),
            Val::NullInt => q.bind(None::<i64>),
            Val::NullText => q.bind(None::<&str>),
        };
    }
    q
}

impl rusqlite::ToSql for Val<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value, ValueRef};
        Ok(match self {
            Val::Int(i) => ToSqlOutput::Owned(Value::Integer(*i)),
            Val::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Val::NullInt | Val::NullText => ToSqlOutput::Owned(Value::Null),
        })
    }
}

/// Database integers are signed; every count and time the server keeps fits.
pub fn int(id: u64, what: &str, v: u64) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Row {
        what: format!("job {id}"),
        why: format!("{what} = {v} does not fit a database integer"),
    })
}

pub(crate) fn opt_int(id: u64, what: &str, v: Option<u64>) -> Result<Val<'static>, StoreError> {
    Ok(Val::opt_int(v.map(|v| int(id, what, v)).transpose()?))
}

pub(crate) fn json<T: serde::Serialize>(id: u64, v: &T) -> Result<Val<'static>, StoreError> {
    serde_json::to_string(v)
        .map(|s| Val::Text(Cow::Owned(s)))
        .map_err(|source| StoreError::Corrupt {
            what: format!("job {id}"),
            source,
        })
}

fn opt_json<T: serde::Serialize>(id: u64, v: Option<&T>) -> Result<Val<'static>, StoreError> {
    match v {
        Some(v) => json(id, v),
        None => Ok(Val::NullText),
    }
}

/// A job's row: every column of `jobs::all_columns`, in that order (schema 2's columns
/// first, then those later schemas added).
pub fn job_row(j: &StoredJob) -> Result<Vec<Val<'_>>, StoreError> {
    let id = j.id;
    Ok(vec![
        // Schema 2.
        Val::Int(int(id, "id", id)?),
        Val::text(&j.name),
        Val::text(&j.user),
        Val::text(&j.queue),
        json(id, &j.command)?,
        Val::text(&j.cwd),
        Val::Int(i64::from(j.gpus)),
        Val::opt_text(j.gpu_model.as_deref()),
        opt_json(id, j.slice.as_ref())?,
        Val::Int(int(id, "cpu_milli", j.cpu_milli)?),
        Val::Int(int(id, "mem_mib", j.mem_mib)?),
        json(id, &j.resources)?,
        Val::Int(i64::from(j.priority)),
        opt_int(id, "walltime_s", j.walltime_s)?,
        Val::Int(i64::from(j.max_retries)),
        json(id, &j.after)?,
        json(id, &j.env)?,
        Val::opt_text(j.client_token.as_deref()),
        Val::Int(int(id, "grace_s", j.grace_s)?),
        Val::Int(int(id, "submit_ms", j.submit_ms)?),
        Val::text(j.state.name()),
        Val::Int(i64::from(j.attempt)),
        Val::opt_text(j.node.as_deref()),
        json(id, &j.gpu_indices)?,
        opt_json(id, j.slice_at.as_ref())?,
        opt_int(id, "start_ms", j.start_ms)?,
        opt_int(id, "end_ms", j.end_ms)?,
        Val::opt_int(j.exit_code.map(i64::from)),
        Val::opt_int(j.signal.map(i64::from)),
        Val::opt_text(j.end_reason.as_deref()),
        Val::opt_text(j.note.as_deref()),
        Val::Int(i64::from(j.cancel_requested)),
        Val::Int(i64::from(j.preempt_requested)),
        Val::Int(i64::from(j.preemptions)),
        Val::Int(i64::from(j.agent_stops)),
        json(id, &j.attempt_nodes)?,
        opt_int(id, "last_checkpoint_ms", j.last_checkpoint_ms)?,
        // Schema 3: gangs.
        Val::Int(i64::from(j.nodes)),
        Val::Int(i64::from(j.gpus_per_node)),
        Val::Int(i64::from(j.split)),
        Val::opt_int(j.tasks_per_node.map(i64::from)),
        Val::Int(i64::from(j.mixed_models)),
        json(id, &j.parts)?,
        Val::opt_int(j.master_port.map(i64::from)),
        opt_json(id, j.first_failure.as_ref())?,
        // Schema 4: energy.
        opt_int(id, "energy_j", j.energy_j)?,
        // Schema 6: dependency kinds, holds, arrays.
        json(id, &j.after_any)?,
        json(id, &j.after_notok)?,
        Val::Int(i64::from(j.held)),
        opt_json(id, j.array.as_ref())?,
        opt_int(id, "array_id", j.array_task.map(|t| t.array_id))?,
        Val::opt_int(j.array_task.map(|t| i64::from(t.index))),
        opt_json(id, j.array_progress.as_ref())?,
        // Schema 9: followers.
        opt_int(id, "behind", j.behind)?,
        Val::Int(i64::from(j.recalls)),
        // Schema 11: containment.
        Val::opt_text(j.image.as_deref()),
        opt_int(id, "pids_max", j.pids_max)?,
        opt_int(id, "used_cpu_ms", j.usage.as_ref().map(|u| u.cpu_ms))?,
        opt_int(
            id,
            "used_mem_peak_bytes",
            j.usage.as_ref().and_then(|u| u.mem_peak_bytes),
        )?,
        opt_int(
            id,
            "used_cpu_pressure_ms",
            j.usage.as_ref().and_then(|u| u.cpu_pressure_ms),
        )?,
        opt_int(
            id,
            "used_mem_pressure_ms",
            j.usage.as_ref().and_then(|u| u.mem_pressure_ms),
        )?,
        // Schema 12: services (JSON: never looked up in SQL).
        opt_json(id, j.service.as_ref())?,
        // Schema 13: placement rules (JSON: never looked up in SQL), interactive.
        opt_json(id, j.placement.as_ref())?,
        Val::Int(i64::from(j.interactive)),
        // Schema 15: what an allocation's GPUs did.
        opt_int(id, "idle_gpu_s", j.idle_gpu_s)?,
        Val::Int(int(id, "steps_run", j.steps_run)?),
        Val::Int(int(id, "step_gpu_s", j.step_gpu_s)?),
        // Schema 16: the account (looked up in SQL by `usage --by account`).
        Val::opt_text(j.account.as_deref()),
    ])
}
