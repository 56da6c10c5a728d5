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

/// `items` in chunks whose lengths are powers of two, each at most `max` (a power of
/// two), largest first: a multi-row statement then comes in at most log2(`max`) + 1
/// sizes, so the driver's cache of prepared statements (100 per connection) keeps every
/// one prepared instead of preparing a new text for every count of rows.
pub fn pow2_chunks<T>(mut items: &[T], max: usize) -> impl Iterator<Item = &[T]> {
    pow2_sizes(items.len(), max).map(move |n| {
        let (chunk, rest) = items.split_at(n);
        items = rest;
        chunk
    })
}

/// The chunk sizes of [`pow2_chunks`] for `len` items.
pub fn pow2_sizes(mut len: usize, max: usize) -> impl Iterator<Item = usize> {
    debug_assert!(max.is_power_of_two());
    std::iter::from_fn(move || {
        if len == 0 {
            return None;
        }
        let n = max.min(1 << len.ilog2());
        len -= n;
        Some(n)
    })
}

/// A statement text per (dialect, power-of-two row count up to 2^(N-1)), built once
/// (a 64-row upsert's text is ~40 KB; writing it anew for every round cost about a tenth
/// of the server's instructions per job).
pub struct TextCache<const N: usize>([[std::sync::OnceLock<String>; N]; 2]);

impl<const N: usize> TextCache<N> {
    pub const fn new() -> Self {
        TextCache([
            [const { std::sync::OnceLock::new() }; N],
            [const { std::sync::OnceLock::new() }; N],
        ])
    }

    /// The text for `rows` rows (a power of two from [`pow2_chunks`]; other counts are
    /// built each time).
    pub fn get(
        &'static self,
        d: Dialect,
        rows: usize,
        build: impl FnOnce() -> String,
    ) -> std::borrow::Cow<'static, str> {
        let slot = &self.0[usize::from(d == Dialect::Postgres)];
        let cell = rows
            .is_power_of_two()
            .then(|| slot.get(rows.ilog2() as usize))
            .flatten();
        match cell {
            Some(cell) => cell.get_or_init(build).as_str().into(),
            None => build().into(),
        }
    }
}

#[cfg(test)]
mod chunk_tests {
    use super::pow2_chunks;

    #[test]
    fn chunks_are_powers_of_two_largest_first_and_cover_everything() {
        let items: Vec<u32> = (0..203).collect();
        let sizes: Vec<usize> = pow2_chunks(&items, 64).map(<[u32]>::len).collect();
        assert_eq!(sizes, [64, 64, 64, 8, 2, 1]);
        let back: Vec<u32> = pow2_chunks(&items, 64).flatten().copied().collect();
        assert_eq!(back, items);
        assert_eq!(
            pow2_chunks(&items[..7], 64)
                .map(<[u32]>::len)
                .collect::<Vec<_>>(),
            [4, 2, 1]
        );
        assert_eq!(pow2_chunks::<u32>(&[], 64).count(), 0);
    }
}
