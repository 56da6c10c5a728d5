//! The two SQL dialects the store speaks through sqlx's `Any` driver, and the few helpers
//! that keep one SQL text for both: `$N` placeholders (SQLite accepts them as well as
//! PostgreSQL does), integers as `i64` (neither database has unsigned ones, and `Any`
//! carries no `u32`/`u64`), booleans as 0/1 integers (SQLite has no boolean type and
//! `Any` will not read an integer as one).
//!
//! Where the dialects really differ (JSON functions, two-argument `MAX`, identity
//! columns, triggers, the catalog), the query's own module keeps both fragments side by
//! side, chosen by the [`Dialect`] read once when the store opens.

use sqlx::any::AnyRow;
use sqlx::Row;

use crate::StoreError;

/// Which database the connection talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The larger of two values: SQLite's scalar `MAX(a, b)` is PostgreSQL's `GREATEST`.
    pub fn greatest(self) -> &'static str {
        match self {
            Dialect::Sqlite => "MAX",
            Dialect::Postgres => "GREATEST",
        }
    }
}

/// Numbers the placeholders of a statement built piece by piece: `$1`, `$2`, ...
#[derive(Default)]
pub struct Marks(usize);

impl Marks {
    pub fn next(&mut self) -> String {
        self.0 += 1;
        format!("${}", self.0)
    }

    /// `n` placeholders, comma-separated.
    pub fn list(&mut self, n: usize) -> String {
        (0..n).map(|_| self.next()).collect::<Vec<_>>().join(", ")
    }
}

/// `$1, ..., $n`.
pub fn marks(n: usize) -> String {
    Marks::default().list(n)
}

/// An integer column read as `T` (a `u32`, `u64`, `u16`...); a value out of `T`'s range is
/// a corrupt row, named.
pub fn get_int<T: TryFrom<i64>>(
    r: &AnyRow,
    col: &str,
    what: &dyn Fn() -> String,
) -> Result<T, StoreError> {
    let v: i64 = r.try_get(col)?;
    T::try_from(v).map_err(|_| StoreError::Row {
        what: what(),
        why: format!("column {col} = {v} is out of range"),
    })
}

/// A nullable integer column read as `Option<T>`.
pub fn get_opt_int<T: TryFrom<i64>>(
    r: &AnyRow,
    col: &str,
    what: &dyn Fn() -> String,
) -> Result<Option<T>, StoreError> {
    let v: Option<i64> = r.try_get(col)?;
    v.map(|v| {
        T::try_from(v).map_err(|_| StoreError::Row {
            what: what(),
            why: format!("column {col} = {v} is out of range"),
        })
    })
    .transpose()
}

/// A 0/1 column as a boolean.
pub fn get_bool(r: &AnyRow, col: &str) -> Result<bool, StoreError> {
    Ok(r.try_get::<i64, _>(col)? != 0)
}
