//! The leader lease: one row (`leader_lease`, schema 8) naming the server that leads,
//! the URL clients reach it at, its epoch and when its lease ends.
//!
//! - Acquire takes the row only when it is free or its `expires_ms` has passed, and
//!   bumps the epoch: every leadership has an epoch of its own, higher than any before.
//! - Renew and release touch the row only `WHERE epoch = mine`: a deposed leader's
//!   renewal changes nothing and says so.
//! - The fence (`StoreTx`'s first statement, see [`FENCE`]) makes every write
//!   transaction of a leader conditional on its epoch still being the current one.
//!
//! Expiry is judged by the DATABASE's clock, inside the SQL ([`NOW_MS`]), so the servers'
//! clocks need not agree: only the database's clock and each server's own monotonic
//! clock (for stepping down in time) matter. The SQL is portable between SQLite and
//! PostgreSQL (`$N` parameters, `ON CONFLICT`, `RETURNING`) but for the clock, which is
//! one fragment per backend ([`now_ms_sql`]).

use sqlx::{AnyConnection, Row};

use super::dialect::Dialect;
use crate::StoreError;

/// The database's clock in Unix milliseconds, in SQLite.
pub const SQLITE_NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

/// The same in PostgreSQL (`clock_timestamp()`, not `now()`, which is the transaction's
/// start and would stand still inside a long transaction).
pub const POSTGRES_NOW_MS: &str = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/// The database clock fragment of a backend.
pub const fn now_ms_sql(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => SQLITE_NOW_MS,
        Dialect::Postgres => POSTGRES_NOW_MS,
    }
}

/// Schema 8's table, the same in both backends.
pub const CREATE_V8: [&str; 1] = [
    "CREATE TABLE leader_lease (id INTEGER PRIMARY KEY CHECK (id = 1), epoch BIGINT NOT NULL, \
     holder TEXT NOT NULL, url TEXT NOT NULL, expires_ms BIGINT NOT NULL)",
];

/// A write transaction's first statement: it touches the lease row only while the
/// epoch is the writer's own, and takes the row's lock (SQLite: the database's write
/// lock) so a takeover is ordered before or after the whole transaction, never inside.
pub const FENCE: &str = "UPDATE leader_lease SET epoch = epoch WHERE id = 1 AND epoch = $1";

/// Who leads, as the row says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseView {
    pub epoch: u64,
    pub holder: String,
    pub url: String,
    /// When the lease ends, by the database's clock.
    pub expires_ms: i64,
    /// The database's clock when it was read.
    pub now_ms: i64,
}

impl LeaseView {
    /// Whether the lease still holds (by the database's clock).
    pub fn live(&self) -> bool {
        self.expires_ms > self.now_ms
    }
}

fn acquire_sql(d: Dialect) -> String {
    let now = now_ms_sql(d);
    // `holder = $1` may take its own row back before it expires: the caller has proven
    // that the process that held it under this identity is gone (see the server).
    format!(
        "INSERT INTO leader_lease (id, epoch, holder, url, expires_ms) \
         VALUES (1, 1, $1, $2, {now} + $3) \
         ON CONFLICT (id) DO UPDATE SET epoch = leader_lease.epoch + 1, \
           holder = excluded.holder, url = excluded.url, expires_ms = excluded.expires_ms \
         WHERE leader_lease.expires_ms <= {now} OR (leader_lease.holder = excluded.holder AND $4 = 1) \
         RETURNING epoch"
    )
}

/// Takes the lease for `lease_ms` if it is free, expired, or (with `reclaim_own`) held
/// under `holder` already; the new epoch, or None when another server holds it.
pub async fn acquire(
    conn: &mut AnyConnection,
    d: Dialect,
    holder: &str,
    url: &str,
    lease_ms: u64,
    reclaim_own: bool,
) -> Result<Option<u64>, StoreError> {
    // Every row fetched: a statement left unfinished after its first row would keep
    // SQLite's write transaction (and lock) open until the connection's next statement.
    let epochs: Vec<i64> = sqlx::query_scalar(&acquire_sql(d))
        .bind(holder)
        .bind(url)
        .bind(lease_ms as i64)
        .bind(i64::from(reclaim_own))
        .fetch_all(&mut *conn)
        .await?;
    Ok(epochs.first().map(|&e| e as u64))
}

/// Extends the lease of `epoch` by `lease_ms` from now; false: the epoch is no longer
/// the current one (another server took over).
pub async fn renew(
    conn: &mut AnyConnection,
    d: Dialect,
    epoch: u64,
    lease_ms: u64,
) -> Result<bool, StoreError> {
    let now = now_ms_sql(d);
    let sql =
        format!("UPDATE leader_lease SET expires_ms = {now} + $1 WHERE id = 1 AND epoch = $2");
    let done = sqlx::query(&sql)
        .bind(lease_ms as i64)
        .bind(epoch as i64)
        .execute(&mut *conn)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Gives the lease of `epoch` up now (a clean shutdown), so a follower takes over at
/// once instead of after the lease.
pub async fn release(conn: &mut AnyConnection, d: Dialect, epoch: u64) -> Result<bool, StoreError> {
    let now = now_ms_sql(d);
    let sql = format!("UPDATE leader_lease SET expires_ms = {now} - 1 WHERE id = 1 AND epoch = $1");
    let done = sqlx::query(&sql)
        .bind(epoch as i64)
        .execute(&mut *conn)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// The lease row, if any server ever led.
pub async fn read(conn: &mut AnyConnection, d: Dialect) -> Result<Option<LeaseView>, StoreError> {
    let now = now_ms_sql(d);
    let sql = format!(
        "SELECT epoch, holder, url, expires_ms, {now} AS now_ms FROM leader_lease WHERE id = 1"
    );
    let rows = sqlx::query(&sql).fetch_all(&mut *conn).await?;
    Ok(rows.first().map(|r| LeaseView {
        epoch: r.get::<i64, _>(0) as u64,
        holder: r.get(1),
        url: r.get(2),
        expires_ms: r.get(3),
        now_ms: r.get(4),
    }))
}

/// The fence: Ok while `epoch` is current, [`StoreError::Fenced`] once another server
/// took over (the caller's transaction must then be dropped).
pub async fn fence(conn: &mut AnyConnection, d: Dialect, epoch: u64) -> Result<(), StoreError> {
    let done = sqlx::query(FENCE)
        .bind(epoch as i64)
        .execute(&mut *conn)
        .await?;
    if done.rows_affected() == 1 {
        return Ok(());
    }
    let current = read(conn, d).await?.map(|l| l.epoch);
    Err(StoreError::Fenced {
        mine: epoch,
        current,
    })
}

impl super::Store {
    /// Fences every later write transaction by `epoch` (None: unfenced, a lone tool).
    pub fn set_fence(&mut self, epoch: Option<u64>) {
        self.fence = epoch;
    }

    /// The epoch write transactions are fenced by, if any.
    pub fn fence(&self) -> Option<u64> {
        self.fence
    }

    /// See [`acquire`].
    pub async fn acquire_lease(
        &mut self,
        holder: &str,
        url: &str,
        lease_ms: u64,
        reclaim_own: bool,
    ) -> Result<Option<u64>, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => acquire(c, d, holder, url, lease_ms, reclaim_own))
    }

    /// See [`renew`].
    pub async fn renew_lease(&mut self, epoch: u64, lease_ms: u64) -> Result<bool, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => renew(c, d, epoch, lease_ms))
    }

    /// See [`release`].
    pub async fn release_lease(&mut self, epoch: u64) -> Result<bool, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => release(c, d, epoch))
    }

    /// Who leads (see [`read`]).
    pub async fn leader(&mut self) -> Result<Option<LeaseView>, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => read(c, d))
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    async fn two(dir: &std::path::Path) -> (Store, Store) {
        let file = dir.join("shared.db");
        let a = Store::open_file(&file).await.unwrap();
        let b = Store::open_file(&file).await.unwrap();
        (a, b)
    }

    #[tokio::test]
    async fn two_connections_contend_and_only_one_holds_the_lease() {
        let dir = tempfile::tempdir().unwrap();
        let (mut a, mut b) = two(dir.path()).await;
        assert_eq!(a.leader().await.unwrap(), None);
        let ea = a
            .acquire_lease("a", "http://a", 60_000, false)
            .await
            .unwrap();
        assert_eq!(ea, Some(1));
        // b cannot take a live lease, even claiming its own identity back.
        assert_eq!(
            b.acquire_lease("b", "http://b", 60_000, true)
                .await
                .unwrap(),
            None
        );
        let seen = b.leader().await.unwrap().unwrap();
        assert_eq!((seen.epoch, seen.url.as_str()), (1, "http://a"));
        assert!(seen.live());
        // Renewing: only the holder of the current epoch.
        assert!(a.renew_lease(1, 60_000).await.unwrap());
        assert!(!b.renew_lease(2, 60_000).await.unwrap());
        // A clean release lets b in at once, with the next epoch.
        assert!(a.release_lease(1).await.unwrap());
        assert!(!b.leader().await.unwrap().unwrap().live());
        assert_eq!(
            b.acquire_lease("b", "http://b", 60_000, false)
                .await
                .unwrap(),
            Some(2)
        );
        // A stale release changes nothing.
        assert!(!a.release_lease(1).await.unwrap());
        assert!(b.leader().await.unwrap().unwrap().live());
    }

    #[tokio::test]
    async fn an_expired_lease_is_taken_over_with_the_next_epoch() {
        let dir = tempfile::tempdir().unwrap();
        let (mut a, mut b) = two(dir.path()).await;
        assert_eq!(
            a.acquire_lease("a", "http://a", 150, false).await.unwrap(),
            Some(1)
        );
        assert_eq!(
            b.acquire_lease("b", "http://b", 150, false).await.unwrap(),
            None
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(
            b.acquire_lease("b", "http://b", 60_000, false)
                .await
                .unwrap(),
            Some(2)
        );
        // The old holder's renewal is refused: its epoch is gone.
        assert!(!a.renew_lease(1, 60_000).await.unwrap());
        let l = a.leader().await.unwrap().unwrap();
        assert_eq!((l.epoch, l.holder.as_str()), (2, "b"));
        // Reclaiming its own identity's live lease (a restart proven to be one).
        assert_eq!(
            b.acquire_lease("b", "http://b2", 60_000, true)
                .await
                .unwrap(),
            Some(3)
        );
    }

    #[tokio::test]
    async fn a_stale_fence_aborts_the_transaction_and_a_current_one_commits() {
        let dir = tempfile::tempdir().unwrap();
        let (mut a, mut b) = two(dir.path()).await;
        let e1 = a
            .acquire_lease("a", "http://a", 100, false)
            .await
            .unwrap()
            .unwrap();
        a.set_fence(Some(e1));
        let mut tx = a.begin().await.unwrap();
        tx.put_meta("k", "from a, epoch 1").await.unwrap();
        tx.commit().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let e2 = b
            .acquire_lease("b", "http://b", 60_000, false)
            .await
            .unwrap()
            .unwrap();
        b.set_fence(Some(e2));
        // a wakes up deposed: its next transaction cannot begin.
        match a.begin().await {
            Err(crate::StoreError::Fenced { mine, current }) => {
                assert_eq!((mine, current), (1, Some(2)));
            }
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("a deposed leader began a write transaction"),
        }
        let mut tx = b.begin().await.unwrap();
        tx.put_meta("k", "from b, epoch 2").await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(
            a.meta("k").await.unwrap().as_deref(),
            Some("from b, epoch 2")
        );
        // Without a fence (a tool, the tests) nothing is checked.
        a.set_fence(None);
        assert!(a.begin().await.is_ok());
    }

    #[tokio::test]
    async fn a_fence_held_orders_a_takeover_after_the_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let (mut a, mut b) = two(dir.path()).await;
        let e1 = a
            .acquire_lease("a", "http://a", 100, false)
            .await
            .unwrap()
            .unwrap();
        a.set_fence(Some(e1));
        let mut tx = a.begin().await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        // The lease has expired, but a's transaction holds the write lock: b's takeover
        // waits for it (busy timeout) and lands after a's commit.
        let take = tokio::spawn(async move {
            let e = b.acquire_lease("b", "http://b", 60_000, false).await;
            (b, e)
        });
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        tx.put_meta("k", "a's last write").await.unwrap();
        tx.commit().await.unwrap();
        let (_b, e) = take.await.unwrap();
        assert_eq!(e.unwrap(), Some(2));
        assert!(matches!(
            a.begin().await,
            Err(crate::StoreError::Fenced { .. })
        ));
    }

    /// The fence's cost per write transaction (one UPDATE of one row, inside the
    /// transaction that is fsync'd anyway): `cargo test -p gpusched-store --release
    /// fence_cost -- --ignored --nocapture`; figures in docs/benchmarks-log.md (v).
    #[tokio::test]
    #[ignore]
    async fn fence_cost() {
        let dir = tempfile::tempdir().unwrap();
        let (mut a, _b) = two(dir.path()).await;
        let e = a
            .acquire_lease("a", "http://a", 600_000, false)
            .await
            .unwrap()
            .unwrap();
        // Alternated transaction by transaction, medians: the fsync of each commit
        // varies far more than the statement costs, and drifts with the machine's load.
        let rounds = 4000;
        let (mut plain, mut fenced) = (Vec::new(), Vec::new());
        for i in 0..rounds {
            let fence = i % 2 == 1;
            a.set_fence(fence.then_some(e));
            let t = std::time::Instant::now();
            let mut tx = a.begin().await.unwrap();
            tx.put_meta("k", &i.to_string()).await.unwrap();
            tx.commit().await.unwrap();
            let us = t.elapsed().as_secs_f64() * 1e6;
            if fence {
                fenced.push(us);
            } else {
                plain.push(us);
            }
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (p, f) = (median(&mut plain), median(&mut fenced));
        println!(
            "fence: {:+.1} us per write transaction (median {p:.1} us unfenced, {f:.1} us fenced, {} each)",
            f - p,
            rounds / 2
        );
    }
}
