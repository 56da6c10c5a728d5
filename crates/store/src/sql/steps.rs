//! The `steps` table (SQLite's schema 14, PostgreSQL's 7; issue 35): one row per job
//! step (`gpusched run`), its [`StoredStep`] as JSON under (job, step). Written by a
//! round (`RoundWrites::step`); the steps of live jobs are loaded at start, an ended
//! job's on request (`show`); deleted with their job by a purge (`ended.rs`).

use sqlx::any::AnyRow;
use sqlx::Row;

use crate::record::StoredStep;
use crate::StoreError;

/// The table, the same text on both backends.
pub const CREATE_V14: &[&str] = &["CREATE TABLE steps (job_id BIGINT NOT NULL, \
     step BIGINT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (job_id, step))"];

pub(crate) const STEP_UPSERT: &str = "INSERT INTO steps (job_id, step, data) VALUES ($1, $2, $3)
     ON CONFLICT(job_id, step) DO UPDATE SET data = excluded.data";

/// The steps of jobs that have not ended (what a starting server needs).
pub(crate) const SELECT_LIVE: &str = "SELECT s.job_id, s.step, s.data FROM steps s \
     JOIN jobs j ON j.id = s.job_id \
     WHERE j.state NOT IN ('succeeded', 'failed', 'cancelled', 'timed_out') \
     ORDER BY s.job_id, s.step";

/// One job's steps in order.
pub(crate) const SELECT_OF_JOB: &str =
    "SELECT job_id, step, data FROM steps WHERE job_id = $1 ORDER BY step";

/// Every row, for a whole-store copy.
pub(crate) const SELECT_ALL: &str = "SELECT job_id, step, data FROM steps ORDER BY job_id, step";

/// A row's (job, step, data).
pub(crate) fn row(r: &AnyRow) -> Result<(i64, i64, String), sqlx::Error> {
    Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))
}

/// The rows' steps; a row that does not decode, or names another (job, step), fails the
/// load and is named.
pub(crate) fn decode(rows: Vec<(i64, i64, String)>) -> Result<Vec<StoredStep>, StoreError> {
    rows.into_iter()
        .map(|(job, step, data)| {
            let what = format!("step {job}.{step}");
            let s: StoredStep =
                serde_json::from_str(&data).map_err(|source| StoreError::Corrupt {
                    what: what.clone(),
                    source,
                })?;
            if s.job as i64 != job || i64::from(s.step) != step {
                return Err(StoreError::Row {
                    what,
                    why: format!("its record is of step {}.{}", s.job, s.step),
                });
            }
            Ok(s)
        })
        .collect()
}
