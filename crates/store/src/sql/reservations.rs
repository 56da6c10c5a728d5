//! Schema 13's `reservations` table (issue 35): one row per advance reservation, its
//! [`ReservationRecord`] as JSON under the reservation's name, as `services` keeps
//! theirs (nothing in it is looked up in SQL: the server loads every reservation at
//! start and keeps them in memory). A job that runs in one names it in its
//! `placement` (`jobs.rs`). Rows are written by a round (`RoundWrites::reservation`,
//! `RoundWrites::reservation_gone`, with the statements in `round.rs`).

use sqlx::any::AnyRow;
use sqlx::Row;

use crate::record::ReservationRecord;
use crate::StoreError;

/// The table, the same text on both backends (TEXT only): SQLite's schema 13,
/// PostgreSQL's 6, with [`super::jobs::ADD_PLACEMENT_COLUMNS`].
pub const CREATE_V13: &[&str] =
    &["CREATE TABLE reservations (name TEXT PRIMARY KEY, data TEXT NOT NULL)"];

/// Every row, in no particular order: [`decode`] sorts (see there).
pub(crate) const SELECT_ALL: &str = "SELECT name, data FROM reservations";

/// A row's (name, data).
pub(crate) fn key_data(r: &AnyRow) -> Result<(String, String), sqlx::Error> {
    Ok((r.try_get(0)?, r.try_get(1)?))
}

/// Every reservation's record, by name (byte order, whatever the database's collation,
/// as `services::decode`). A row that does not decode, or whose record names another
/// reservation, fails the load and is named.
pub(crate) fn decode(
    mut rows: Vec<(String, String)>,
) -> Result<Vec<ReservationRecord>, StoreError> {
    rows.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    rows.into_iter()
        .map(|(name, data)| {
            let rec: ReservationRecord =
                serde_json::from_str(&data).map_err(|source| StoreError::Corrupt {
                    what: format!("reservation {name}"),
                    source,
                })?;
            if rec.spec.name != name {
                return Err(StoreError::Row {
                    what: format!("reservation {name}"),
                    why: format!("its record names reservation {}", rec.spec.name),
                });
            }
            Ok(rec)
        })
        .collect()
}
