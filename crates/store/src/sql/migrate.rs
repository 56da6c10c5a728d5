//! The store's schema versions, applied in order when the store opens: the code both
//! backends run; each keeps its own list (`sqlite/migrate.rs`, `postgres/migrate.rs`).
//!
//! Each [`Migration`] runs in one transaction: its steps, then a row in `schema_history`
//! and the new `schema_version` in `meta` (the key every release since schema 1 reads, so
//! an older gpusched refuses a newer database instead of misreading it). A database whose
//! version is above [`latest`]'s is refused before anything is written.
//!
//! Why a list of our own rather than sqlx's migrator: the step from schema 1 to 2 is a data
//! transformation (each job's JSON row decoded with the frozen schema-1 types and written
//! back as columns), which SQL files cannot express; sqlx's migrator also keeps its own
//! table, which schema-1 databases do not have, so it would take them for empty ones.
//! Steps here are SQL or Rust alike.
//!
//! SQLite's list is the history. PostgreSQL keeps its own list (`postgres/migrate.rs`),
//! starting from its own version 1 (SQLite's schema 7 as it stands), run by the same code and
//! recorded in the same `meta` and `schema_history` tables: the model and the queries are
//! common, the DDL and the history of each backend are not.

use std::future::Future;
use std::pin::Pin;

use sqlx::{AnyConnection, Connection};

use super::dialect::Dialect;
use crate::StoreError;
use crate::{postgres, sqlite};

/// A step written in Rust (a data transformation), run inside the migration's transaction.
pub type RustStep = for<'c> fn(
    &'c mut AnyConnection,
)
    -> Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'c>>;

pub enum Step {
    Sql(&'static str),
    Rust(RustStep),
}

pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub steps: Vec<Step>,
}

/// The newest schema this binary knows for `d`.
pub fn latest(d: Dialect) -> i64 {
    match d {
        Dialect::Sqlite => sqlite::migrate::LATEST,
        Dialect::Postgres => postgres::migrate::LATEST,
    }
}

/// Every schema version of `d`, oldest first.
fn list(d: Dialect) -> Vec<Migration> {
    match d {
        Dialect::Sqlite => sqlite::migrate::migrations(),
        Dialect::Postgres => postgres::migrate::migrations(),
    }
}

/// Schema 11's name (PostgreSQL's schema 4 is the same change).
pub(crate) const CONTAIN_NAME: &str =
    "containment: a job's image and process cap, and what its attempt used (CPU, peak memory, pressure)";

/// Schema 12's name (PostgreSQL's schema 5 is the same change).
pub(crate) const SERVICES_NAME: &str =
    "inference services: the services table, and the service a replica's job serves";

/// Schema 12's steps, the same text on both backends (PostgreSQL's schema 5): a job's
/// `service` column (`jobs.rs`) and the `services` table (`services.rs`), both TEXT.
pub(crate) fn services_steps() -> Vec<Step> {
    super::jobs::ADD_SERVICE_COLUMNS
        .iter()
        .chain(super::services::CREATE_V12)
        .map(|s| Step::Sql(s))
        .collect()
}

/// Schema 13's name (PostgreSQL's schema 6 is the same change).
pub(crate) const PLACEMENT_NAME: &str =
    "partitions, reservations and interactive allocations: the reservations table, and a job's placement rules and interactive flag";

/// Schema 13's steps for `d` (PostgreSQL's schema 6): a job's `placement` (TEXT) and
/// `interactive` (a 0/1 integer of the backend's kind) columns (`jobs.rs`) and the
/// `reservations` table (`reservations.rs`, the same text on both).
pub(crate) fn placement_steps(d: Dialect) -> Vec<Step> {
    let columns = match d {
        Dialect::Sqlite => super::jobs::ADD_PLACEMENT_COLUMNS,
        Dialect::Postgres => super::jobs::ADD_PLACEMENT_COLUMNS_PG,
    };
    columns
        .iter()
        .chain(super::reservations::CREATE_V13)
        .map(|s| Step::Sql(s))
        .collect()
}

/// Job steps (issue 35): SQLite's schema 14, PostgreSQL's 7, the same statements.
pub(crate) const STEPS_NAME: &str = "job steps: the steps table";

pub(crate) fn steps_steps() -> Vec<Step> {
    super::steps::CREATE_V14
        .iter()
        .map(|s| Step::Sql(s))
        .collect()
}

/// Schema 15's name (PostgreSQL's schema 8 is the same change).
pub(crate) const ALLOC_USE_NAME: &str =
    "what an allocation's GPUs did: a job's idle GPU-seconds, its steps and their GPU-seconds";

/// Schema 15's steps for `d` (PostgreSQL's schema 8): three integer columns of the
/// backend's kind (`jobs.rs`'s [`super::jobs::ADD_ALLOC_COLUMNS`]).
pub(crate) fn alloc_use_steps(d: Dialect) -> Vec<Step> {
    let columns = match d {
        Dialect::Sqlite => super::jobs::ADD_ALLOC_COLUMNS,
        Dialect::Postgres => super::jobs::ADD_ALLOC_COLUMNS_PG,
    };
    columns.iter().map(|s| Step::Sql(s)).collect()
}

/// Accounts (issue 36): SQLite's schema 16, PostgreSQL's 9, the same statement: a
/// job's `account` column (`jobs.rs`). The decayed usage of the fair tree is one value
/// in `meta` (the server's `state/accounts.rs`), as the run-time predictor is.
pub(crate) const ACCOUNTS_NAME: &str = "accounts: the account a job is charged to";

pub(crate) fn accounts_steps() -> Vec<Step> {
    super::jobs::ADD_ACCOUNT_COLUMNS
        .iter()
        .map(|s| Step::Sql(s))
        .collect()
}

/// Schema 17's name (PostgreSQL's schema 10 is the same change).
pub(crate) const ARRAY_TASKS_NAME: &str =
    "array tasks as compact records: the array_tasks table, and the task rows that fit it moved there";

/// Schema 17's steps for `d` (PostgreSQL's schema 10): the table (`array_tasks.rs`),
/// then the task rows a compact record stands for exactly moved into it.
pub(crate) fn array_tasks_steps(d: Dialect) -> Vec<Step> {
    let create = match d {
        Dialect::Sqlite => super::array_tasks::CREATE_SQLITE,
        Dialect::Postgres => super::array_tasks::CREATE_POSTGRES,
    };
    let mut steps: Vec<Step> = create.iter().map(|s| Step::Sql(s)).collect();
    steps.push(match d {
        Dialect::Sqlite => {
            Step::Rust(|c| Box::pin(super::array_tasks::move_task_rows(c, Dialect::Sqlite)))
        }
        Dialect::Postgres => {
            Step::Rust(|c| Box::pin(super::array_tasks::move_task_rows(c, Dialect::Postgres)))
        }
    });
    steps
}

/// Schema 10 changes no table: an array's `array_progress` may now list materialised tasks
/// that have no row of their own (`ArrayProgress::unwritten`). The version is raised so
/// that a gpusched of schema 9, which would read past that list and lose those tasks,
/// refuses the store instead. Shared by both dialects (PostgreSQL's schema 3).
pub(crate) const UNWRITTEN_TASKS: Migration = Migration {
    version: 10,
    name: "array tasks kept in their array's row until their first change",
    steps: Vec::new(),
};

/// The schema version of the database, 0 when it is new (no `meta` table yet).
pub async fn current(conn: &mut AnyConnection, d: Dialect) -> Result<i64, StoreError> {
    let catalog = match d {
        Dialect::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
        Dialect::Postgres => {
            "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
             WHERE table_schema = current_schema() AND table_name = 'meta'"
        }
    };
    let has_meta: Option<String> = sqlx::query_scalar(catalog)
        .fetch_optional(&mut *conn)
        .await?;
    if has_meta.is_none() {
        return Ok(0);
    }
    let found: Option<String> =
        sqlx::query_scalar("SELECT value FROM meta WHERE key = 'schema_version'")
            .fetch_optional(&mut *conn)
            .await?;
    match found {
        None => Ok(0),
        Some(v) => v.parse().map_err(|_| StoreError::Row {
            what: "meta".into(),
            why: format!("schema_version `{v}` is not a number"),
        }),
    }
}

/// The release that last migrated the database, if it said.
async fn written_by(conn: &mut AnyConnection) -> Option<String> {
    sqlx::query_scalar("SELECT value FROM meta WHERE key = 'written_by'")
        .fetch_optional(&mut *conn)
        .await
        .ok()
        .flatten()
}

/// The advisory lock several servers opening one PostgreSQL database at once take, so
/// that one migrates and the others then find it done.
const PG_MIGRATION_LOCK: i64 = 0x6770_7573_6368_6564; // "gpusched"

/// Brings the database to the newest schema of its dialect, or refuses one from a newer
/// gpusched untouched. Returns the versions applied.
pub async fn run(conn: &mut AnyConnection, d: Dialect, path: &str) -> Result<Vec<i64>, StoreError> {
    if d == Dialect::Postgres {
        // Up to date (every open but the first of a release): nothing to lock. A
        // server cut off by the network while holding the lock would hold up every
        // other server's open (a takeover loads the state through one) until its
        // session ended.
        if current(conn, d).await? == latest(d) {
            return Ok(Vec::new());
        }
        sqlx::query("SELECT pg_advisory_lock($1)")
            .bind(PG_MIGRATION_LOCK)
            .execute(&mut *conn)
            .await?;
        let done = run_locked(conn, d, path).await;
        let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(PG_MIGRATION_LOCK)
            .execute(&mut *conn)
            .await;
        let applied = done?;
        unlocked?;
        return Ok(applied);
    }
    run_locked(conn, d, path).await
}

async fn run_locked(
    conn: &mut AnyConnection,
    d: Dialect,
    path: &str,
) -> Result<Vec<i64>, StoreError> {
    let found = current(conn, d).await?;
    let known = latest(d);
    if found > known {
        return Err(StoreError::NewerSchema {
            path: path.to_string(),
            found,
            known,
            written_by: written_by(conn).await,
        });
    }
    let mut applied = Vec::new();
    for m in list(d).into_iter().filter(|m| m.version > found) {
        apply(conn, d, &m).await?;
        if found > 0 {
            tracing::info!(
                db = path,
                schema = m.version,
                "upgraded the store: {}",
                m.name
            );
        }
        applied.push(m.version);
    }
    Ok(applied)
}

/// Brings a new database of `d` to schema `version` only, as an older release left it
/// (for the tests of an upgrade from it).
#[cfg(test)]
pub(crate) async fn run_to(conn: &mut AnyConnection, d: Dialect, version: i64) {
    for m in list(d).into_iter().filter(|m| m.version <= version) {
        apply(conn, d, &m).await.unwrap();
    }
}

async fn apply(conn: &mut AnyConnection, d: Dialect, m: &Migration) -> Result<(), StoreError> {
    let mut tx = conn.begin().await?;
    for step in &m.steps {
        match step {
            Step::Sql(sql) => {
                sqlx::query(sql).execute(&mut *tx).await?;
            }
            Step::Rust(f) => f(&mut tx).await?,
        }
    }
    // SQLite's INTEGER is 64 bits; PostgreSQL's is 32, too small for milliseconds.
    let history = match d {
        Dialect::Sqlite => {
            "CREATE TABLE IF NOT EXISTS schema_history (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied_ms INTEGER NOT NULL,
            by_release TEXT NOT NULL
        )"
        }
        Dialect::Postgres => {
            "CREATE TABLE IF NOT EXISTS schema_history (
            version BIGINT PRIMARY KEY,
            name TEXT NOT NULL,
            applied_ms BIGINT NOT NULL,
            by_release TEXT NOT NULL
        )"
        }
    };
    for sql in [
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        history,
    ] {
        sqlx::query(sql).execute(&mut *tx).await?;
    }
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    sqlx::query(
        "INSERT INTO schema_history (version, name, applied_ms, by_release) VALUES ($1, $2, $3, $4)",
    )
    .bind(m.version)
    .bind(m.name)
    .bind(now_ms)
    .bind(RELEASE)
    .execute(&mut *tx)
    .await?;
    for (key, value) in [
        ("schema_version", m.version.to_string()),
        ("written_by", RELEASE.to_string()),
    ] {
        sqlx::query(
            "INSERT INTO meta (key, value) VALUES ($1, $2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// This release, as the history and a refusal name it.
pub const RELEASE: &str = env!("CARGO_PKG_VERSION");
