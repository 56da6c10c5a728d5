//! What only PostgreSQL has: opening a database by its URL, the session's own bound on
//! waits (see `Store::set_timeout`), its schema versions (`migrate.rs`), and a round's
//! writes statement by statement (`round.rs`). The store itself and the queries both
//! backends share are in `sql/`.

pub(crate) mod migrate;
pub(crate) mod round;

use std::path::PathBuf;
use std::time::Duration;

use crate::sql::{self, Dialect, Store};
use crate::StoreError;

impl Store {
    /// Opens the PostgreSQL database at `url` (`postgres://USER:PASSWORD@HOST/DB`).
    pub(crate) async fn open_postgres(url: &str) -> Result<Self, StoreError> {
        let mut store = Store::connect(Dialect::Postgres, PathBuf::from(url), None).await?;
        let shown = store.shown();
        sql::migrate::run(&mut store.conn, Dialect::Postgres, &shown).await?;
        Ok(store)
    }

    /// The session's side of the bound (PostgreSQL).
    pub(crate) async fn bound_session(&mut self, b: Duration) -> Result<(), StoreError> {
        let ms = b.as_millis().max(1);
        for sql in [
            format!("SET idle_in_transaction_session_timeout = {ms}"),
            format!("SET lock_timeout = {ms}"),
        ] {
            sqlx::query(&sql).execute(&mut self.conn).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::migrate;
    use crate::sql::test_dbs::test_dbs;
    use crate::sql::tests::job;
    use crate::StoreUrl;

    /// PostgreSQL restarted under the store: the use that finds the connection lost
    /// fails, the next ones reconnect by themselves, and nothing committed is lost.
    #[tokio::test]
    async fn a_store_reconnects_after_postgres_restarts() {
        let Some(pg) = crate::testing::TempPostgres::start_or_skip("store reconnects") else {
            return;
        };
        let mut s = Store::open(&StoreUrl::Postgres(pg.url())).await.unwrap();
        let mut tx = s.begin().await.unwrap();
        tx.put_job(&job(1, Some("k1"))).await.unwrap();
        tx.commit().await.unwrap();
        pg.restart().unwrap();
        let first = s.job(1).await;
        if let Err(e) = &first {
            assert!(e.is_disconnect(), "{e}");
        }
        let again = s.job(1).await.unwrap().unwrap();
        assert_eq!(again.client_token.as_deref(), Some("k1"));
        let mut tx = s.begin().await.unwrap();
        tx.put_job(&job(2, None)).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(s.max_job_id().await.unwrap(), 2);
    }

    /// The database cut off by the network (a frozen proxy forwards nothing and closes
    /// nothing, as a partition): a bounded store's statement fails within its bound
    /// instead of waiting for TCP to give up (many minutes), later uses fail as fast or
    /// try to reconnect within the bound, and once the network is back the store works
    /// again by itself, with everything committed before.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cut_off_database_fails_statements_within_the_bound_and_the_store_recovers() {
        use crate::testing::{TcpProxy, TempPostgres};
        use std::time::{Duration, Instant};
        let Some(pg) = TempPostgres::start_or_skip("a_cut_off_database_fails_statements") else {
            return;
        };
        let proxy = TcpProxy::start(pg.addr()).unwrap();
        let url = StoreUrl::Postgres(pg.url_via(proxy.port(), "bounded"));
        let mut s = Store::open(&url).await.unwrap();
        let bound = Duration::from_millis(500);
        s.set_timeout(Some(bound)).await.unwrap();
        let mut tx = s.begin().await.unwrap();
        tx.put_job(&job(1, Some("k1"))).await.unwrap();
        tx.commit().await.unwrap();
        proxy.freeze();
        let t = Instant::now();
        let e = s.job(1).await.unwrap_err();
        let took = t.elapsed();
        assert!(matches!(e, StoreError::TimedOut { .. }), "{e}");
        assert!(e.is_disconnect(), "{e}");
        assert!(
            took >= bound && took < Duration::from_secs(5),
            "failed after {took:?} (bound {bound:?})"
        );
        // Every later use, a write transaction included, fails within the bound too.
        for _ in 0..3 {
            let t = Instant::now();
            let e = s.begin().await.err().expect("no transaction while cut off");
            assert!(e.is_disconnect(), "{e}");
            assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        }
        proxy.thaw();
        let start = Instant::now();
        let again = loop {
            match s.job(1).await {
                Ok(j) => break j,
                Err(e) => {
                    assert!(e.is_disconnect(), "{e}");
                    assert!(start.elapsed() < Duration::from_secs(20), "not back: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        };
        assert_eq!(again.unwrap().client_token.as_deref(), Some("k1"));
        let mut tx = s.begin().await.unwrap();
        tx.put_job(&job(2, None)).await.unwrap();
        tx.commit().await.unwrap();
        assert_eq!(s.max_job_id().await.unwrap(), 2);
    }

    /// A leader cut off in the middle of a write transaction, after its fence took the
    /// lease row's lock: the database ends the idle session after the bound (the
    /// session was told it), so the lock does not outlive the leader's lease and another
    /// server takes the expired lease over. Without the session's bound the takeover
    /// would wait for the network to come back. The old leader's next transaction, once
    /// it reaches the database again, fails its fence.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_transaction_cut_off_after_its_fence_does_not_hold_the_lease_row() {
        use crate::testing::{TcpProxy, TempPostgres};
        use std::time::{Duration, Instant};
        let Some(pg) = TempPostgres::start_or_skip("a_transaction_cut_off_after_its_fence") else {
            return;
        };
        let proxy = TcpProxy::start(pg.addr()).unwrap();
        let mut a = Store::open(&StoreUrl::Postgres(pg.url_via(proxy.port(), "a")))
            .await
            .unwrap();
        a.set_timeout(Some(Duration::from_millis(800)))
            .await
            .unwrap();
        // The other server's store is not bounded: only the database can end its wait.
        let mut b = Store::open(&StoreUrl::Postgres(pg.url_as("b")))
            .await
            .unwrap();
        let e1 = a.acquire_lease("a", "http://a", 300, false).await.unwrap();
        assert_eq!(e1, Some(1));
        a.set_fence(e1);
        let mut tx = a.begin().await.unwrap();
        proxy.freeze();
        tokio::time::sleep(Duration::from_millis(400)).await;
        let t = Instant::now();
        let taken = tokio::time::timeout(
            Duration::from_secs(20),
            b.acquire_lease("b", "http://b", 60_000, false),
        )
        .await
        .expect("the takeover waited on the cut-off leader's lock for 20 s")
        .unwrap();
        assert_eq!(taken, Some(2));
        eprintln!(
            "took over {:?} after the cut-off (session bound 800 ms)",
            t.elapsed()
        );
        assert!(tx.put_meta("k", "stale").await.is_err());
        drop(tx);
        proxy.thaw();
        let start = Instant::now();
        loop {
            match a.begin().await {
                Err(StoreError::Fenced { mine, current }) => {
                    assert_eq!((mine, current), (1, Some(2)));
                    break;
                }
                Err(e) if e.is_disconnect() => {
                    assert!(start.elapsed() < Duration::from_secs(20), "not back: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("another error: {e}"),
                Ok(_) => panic!("a deposed leader began a write transaction"),
            }
        }
        assert_eq!(b.meta("k").await.unwrap(), None);
    }

    /// Servers starting at once on one new PostgreSQL database: one creates the schema
    /// (under an advisory lock), the others find it done.
    #[tokio::test]
    async fn stores_opened_at_once_on_a_new_database_migrate_it_once() {
        for db in &test_dbs("stores_opened_at_once_migrate_once").await {
            if db.dialect != Dialect::Postgres {
                continue;
            }
            let (a, b, c) = tokio::join!(db.open(), db.open(), db.open());
            let mut s = a;
            let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM schema_history")
                .fetch_one(&mut s.conn)
                .await
                .unwrap();
            assert_eq!(n, migrate::latest(Dialect::Postgres));
            for s in [s, b, c] {
                s.close().await.unwrap();
            }
        }
    }
}
