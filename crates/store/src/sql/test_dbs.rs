//! The store's tests run one body on each backend: SQLite in a temporary directory, and
//! PostgreSQL (a database of its own on a shared throwaway cluster, see
//! [`crate::testing`]) where it is installed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{Dialect, Store};
use crate::testing::{self, TempPostgres};
use crate::StoreUrl;

/// One empty database of one backend.
pub struct TestDb {
    pub dialect: Dialect,
    pub url: StoreUrl,
    _dir: tempfile::TempDir,
    _pg: Option<Arc<TempPostgres>>,
}

impl TestDb {
    /// Opens (again) the store of this database.
    pub async fn open(&self) -> Store {
        match Store::open(&self.url).await {
            Ok(s) => s,
            Err(e) => panic!("opening {}: {e}", self.url),
        }
    }
}

/// An empty database of each backend there is, for the test `test`.
pub async fn test_dbs(test: &str) -> Vec<TestDb> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = tempfile::tempdir().unwrap();
    let mut dbs = vec![TestDb {
        dialect: Dialect::Sqlite,
        url: StoreUrl::Sqlite(crate::sqlite::default_file(dir.path())),
        _dir: dir,
        _pg: None,
    }];
    if let Some(pg) = testing::shared(test) {
        let name = format!("t{}", N.fetch_add(1, Ordering::Relaxed));
        let url = pg.new_database(&name).await.unwrap();
        dbs.push(TestDb {
            dialect: Dialect::Postgres,
            url: StoreUrl::Postgres(url),
            _dir: tempfile::tempdir().unwrap(),
            _pg: Some(pg),
        });
    }
    dbs
}
