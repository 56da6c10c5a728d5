//! The gpusched server's durable state: jobs and nodes in SQLite, through sqlx's runtime
//! query API (no compile-time database). The server keeps its working state in memory
//! and writes every change here, in one transaction per scheduler round, *before* it
//! answers a client or tells an agent anything; a crash therefore loses only work nobody
//! was told about.
//!
//! Rows keep the few columns that are looked up (id, state, user, node, client token)
//! next to the whole record as JSON, so adding a field to a job needs no migration.

mod record;
mod sqlite;

pub use record::{JobRecord, NodeRecord, TokenRecord};
pub use sqlite::{fail_commits, SqliteStore, StoreTx};

/// Why the store failed. A failed commit fails its whole round: the server answers its
/// requests 503, forgets the round's changes and reloads its state from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the data directory {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("database {path}: {source}")]
    Open { path: String, source: sqlx::Error },
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    #[error("corrupt record in the database ({what}): {source}")]
    Corrupt {
        what: String,
        source: serde_json::Error,
    },
    #[error("the commit was made to fail on purpose (fault injection)")]
    InjectedFault,
    #[error("the database was written by a newer gpusched (schema {found}, this one knows {known}); upgrade gpusched")]
    NewerSchema { found: i64, known: i64 },
}
