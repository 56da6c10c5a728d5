//! Schema 12's `services` table (issue 34): one row per inference service, its
//! [`ServiceRecord`] as JSON under the service's name, as `nodes` and `tokens` keep
//! theirs (nothing in it is looked up in SQL: the server loads every service at start
//! and keeps them in memory). A service's replicas are jobs, each naming its service in
//! `jobs.service` (`jobs.rs`). Rows are written by a round (`RoundWrites::service`,
//! `RoundWrites::service_gone`, with the statements in `round.rs`).

use sqlx::any::AnyRow;
use sqlx::Row;

use crate::record::ServiceRecord;
use crate::StoreError;

/// The table, the same text on both backends (TEXT only): SQLite's schema 12,
/// PostgreSQL's 5, with [`super::jobs::ADD_SERVICE_COLUMNS`].
pub const CREATE_V12: &[&str] =
    &["CREATE TABLE services (name TEXT PRIMARY KEY, data TEXT NOT NULL)"];

/// Every row, in no particular order: [`decode`] sorts (see there).
pub(crate) const SELECT_ALL: &str = "SELECT name, data FROM services";

/// A row's (name, data).
pub(crate) fn key_data(r: &AnyRow) -> Result<(String, String), sqlx::Error> {
    Ok((r.try_get(0)?, r.try_get(1)?))
}

/// Every service's record, by name (byte order, whatever the database's collation: a
/// PostgreSQL database's default may order `a-b` after `ab`, SQLite's never does). A row
/// that does not decode, or whose record names another service, fails the load and is
/// named.
pub(crate) fn decode(mut rows: Vec<(String, String)>) -> Result<Vec<ServiceRecord>, StoreError> {
    rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    rows.into_iter()
        .map(|(name, data)| {
            let rec: ServiceRecord =
                serde_json::from_str(&data).map_err(|source| StoreError::Corrupt {
                    what: format!("service {name}"),
                    source,
                })?;
            if rec.spec.name != name {
                return Err(StoreError::Row {
                    what: format!("service {name}"),
                    why: format!("its record names service {}", rec.spec.name),
                });
            }
            Ok(rec)
        })
        .collect()
}
