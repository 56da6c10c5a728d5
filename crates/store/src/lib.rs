//! The gpusched server's durable state: jobs and nodes in SQLite (the embedded default) or
//! PostgreSQL, through sqlx's runtime query API and its `Any` driver (no compile-time
//! database; one set of queries for both). The server keeps its working state in memory
//! and writes every change here, in one transaction per scheduler round, *before* it
//! answers a client or tells an agent anything; a crash therefore loses only work nobody
//! was told about.
//!
//! The store keeps its own job model, [`StoredJob`], one column per fact, never the API
//! type; its schema is versioned and upgraded at open (`sql/migrate.rs`, with
//! each backend's list in `sqlite/migrate.rs` and `postgres/migrate.rs`), and a
//! database from a newer gpusched is refused untouched.
//!
//! Laid out by backend: `sql/` holds the store and what both backends share (the queries,
//! the migration runner, a round's writes), `sqlite/` what only SQLite has (the file, its
//! round writer, its schema history) and `postgres/` what only PostgreSQL has (opening by
//! URL, the session's bound, its schema list, a round statement by statement).

mod array_task;
mod postgres;
mod record;
mod sql;
mod sqlite;
mod stored_job;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod url;

pub use array_task::{
    compact_if_exact, compact_of, rebuild, task_template, CompactTask, TaskLife, ARRAY_ID_VAR,
    ARRAY_INDEX_VAR,
};
pub use record::{
    ArrayProgress, NodeRecord, ReservationRecord, ServiceRecord, StoredPlacement, StoredReplica,
    StoredStep, TokenRecord, UnwrittenTask,
};
pub use sql::{
    backup, fail_commits, migrate_store, now_ms_sql, AuditRow, CopyCounts, Dialect, EndedQuery,
    EventRow, LeaseView, RoundWrites, Snapshot, Store, StoreTx, TaskRows, UsageSum, AUDIT_PAGE,
    AUDIT_PAGE_MAX, POSTGRES_NOW_MS, RELEASE, SCHEMA_VERSION, SQLITE_NOW_MS,
};
pub use sqlite::default_file;
pub use stored_job::{
    StoredArray, StoredArrayTask, StoredFailure, StoredJob, StoredMig, StoredOutcome, StoredPart,
    StoredPartState, StoredSlice, StoredSliceAt, StoredUsage,
};
pub use url::{BadStoreUrl, StoreUrl};

/// The most job rows a round holds at once when they are made as it is written
/// ([`Store::write_round_streamed`]): a 10,000-job batch's rows (about 0.9 KB each) never
/// all exist together, and 256 rows are four of the writer's 64-row statements.
pub const JOB_ROWS_AT_ONCE: usize = 256;

/// Why the store failed. A failed commit fails its whole round: the server answers its
/// requests 503, forgets the round's changes and reloads its state from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot create the database file {path} or make it private (mode 0600): {source}; \
         check who owns the data directory"
    )]
    DbFile {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "cannot open the store {path}: {source}; check the --store URL (a SQLite file's \
         directory must be writable; PostgreSQL: user, password, host, port, database, \
         sslmode) and that the database is reachable"
    )]
    Open { path: String, source: sqlx::Error },
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("corrupt record in the database ({what}): {source}")]
    Corrupt {
        what: String,
        source: serde_json::Error,
    },
    #[error("unreadable row in the database ({what}): {why}")]
    Row { what: String, why: String },
    /// Another server leads now: this one's epoch is no longer the current one, so it
    /// must not write (it steps down).
    #[error(
        "this server no longer leads (its epoch {mine} was superseded{}); it steps down",
        current.map_or(String::new(), |c| format!(" by epoch {c}"))
    )]
    Fenced { mine: u64, current: Option<u64> },
    #[error(
        "the target store {store} is not empty (it holds {holds}): a copy goes only into an \
         empty store, so that nothing is mixed or overwritten; give a new SQLite file \
         (sqlite:PATH that does not exist yet) or an empty PostgreSQL database (createdb NAME)"
    )]
    NotEmpty { store: String, holds: String },
    #[error("--from and --to name the same store {0}: give another store to copy into")]
    SameStore(String),
    #[error("{0} exists already: give a new file for the backup (one is never overwritten)")]
    Exists(String),
    #[error("cannot write {path}: {source}")]
    File {
        path: String,
        source: std::io::Error,
    },
    /// The database did not answer within the store's bound ([`Store::set_timeout`]):
    /// the connection is given up and the next use opens a new one.
    #[error(
        "the database did not answer within {after_ms} ms (down, or cut off by the \
         network); the connection was given up and is reopened at the next use"
    )]
    TimedOut { after_ms: u64 },
    /// The connection was lost and reopening it failed a moment ago; the next try is
    /// due in `in_ms`.
    #[error(
        "the connection to the database is lost and could not be reopened; the next try is \
         in {in_ms} ms"
    )]
    Reconnecting { in_ms: u64 },
    #[error("the commit was made to fail on purpose (fault injection)")]
    InjectedFault,
    /// The SQLite round writer's own statements (`sqlite/writer.rs`).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(
        "cannot open the store {path} for writing: {source}; check that the file and its \
         directory are writable"
    )]
    OpenWriter {
        path: String,
        source: rusqlite::Error,
    },
    #[error("the store's writer thread stopped; the store is reopened")]
    WriterGone,
    #[error("{}", newer_schema(path, *found, *known, written_by.as_deref()))]
    NewerSchema {
        path: String,
        found: i64,
        known: i64,
        written_by: Option<String>,
    },
}

impl StoreError {
    /// The connection to the database was lost (a restarted or unreachable PostgreSQL):
    /// the store opens a new one at its next use.
    pub fn is_disconnect(&self) -> bool {
        match self {
            StoreError::Sql(e) => match e {
                sqlx::Error::Io(_)
                | sqlx::Error::Protocol(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::WorkerCrashed => true,
                // SQLSTATE class 08: connection exception; 57: operator intervention
                // (the server shutting down, "terminating connection"); 25P03: the
                // session ended for idling in a transaction (see `Store::set_timeout`).
                sqlx::Error::Database(d) => d
                    .code()
                    .is_some_and(|c| c.starts_with("08") || c.starts_with("57") || c == "25P03"),
                _ => false,
            },
            StoreError::TimedOut { .. } | StoreError::Reconnecting { .. } => true,
            _ => false,
        }
    }
}

/// What to do with a database from a newer gpusched (nothing was changed in it).
fn newer_schema(path: &str, found: i64, known: i64, by: Option<&str>) -> String {
    let written = match by {
        Some(v) => format!(" (written by gpusched {v})"),
        None => String::new(),
    };
    format!(
        "the database {path} has schema {found}{written}, newer than the schemas this \
         gpusched ({RELEASE}) knows (up to {known}): run a gpusched that knows schema \
         {found}, such as the one that wrote it, on this data directory. The database was \
         not changed; to go back to this gpusched, restore a copy of the database taken \
         before it was upgraded"
    )
}
