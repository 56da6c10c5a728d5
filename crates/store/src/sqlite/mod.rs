//! What only SQLite has: the database file (made private, found in a data directory),
//! the settings of every connection to it, the round writer (`writer.rs`: a round's
//! transaction on a rusqlite connection of its own), SQLite's schema versions
//! (`migrate.rs`) with schema 1 frozen (`v1.rs`), and the tests that upgrade databases
//! written by real releases (`fixture_tests.rs`: schema 1; `upgrade_tests.rs`: every
//! schema since 2). The store itself and the queries both
//! backends share are in `sql/`.

pub(crate) mod migrate;
mod v1;
pub(crate) mod writer;

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod upgrade_tests;
#[cfg(test)]
mod writer_bench;

use std::path::{Path, PathBuf};

use crate::sql::{migrate as sql_migrate, Dialect, Store};
use crate::StoreError;

/// The database file of a data directory's default store (`sqlite:DATA_DIR/gpusched.db`).
pub fn default_file(dir: &Path) -> PathBuf {
    dir.join(DB_FILE)
}

pub(crate) const DB_FILE: &str = "gpusched.db";

/// How every SQLite connection of the store is set (the store's own and the round
/// writer's, `writer.rs`): wait 5 s for a lock, write ahead, fsync the log at every commit,
/// a page cache of 1 MiB (why: where the store's connection opens, `Store::connect`).
pub(crate) const SQLITE_PRAGMAS: [&str; 4] = [
    "PRAGMA busy_timeout = 5000",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA cache_size = -1024",
];

/// The file as a `sqlite:` URL for the `Any` driver, which percent-decodes it.
pub(crate) fn sqlite_url(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::from("sqlite://");
    for c in abs.display().to_string().chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3F"),
            '#' => out.push_str("%23"),
            ' ' => out.push_str("%20"),
            c => out.push(c),
        }
    }
    out.push_str("?mode=rwc");
    out
}

impl Store {
    /// Opens (creating if needed) `dir/gpusched.db`, the default store of a data
    /// directory.
    pub async fn open_dir(dir: &Path) -> Result<Self, StoreError> {
        Self::open_file(&dir.join(DB_FILE)).await
    }

    /// Opens (creating it and its directory if needed) the database file `path`.
    pub async fn open_file(path: &Path) -> Result<Self, StoreError> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
                path: dir.display().to_string(),
                source,
            })?;
        }
        private_file(path).map_err(|source| StoreError::DbFile {
            path: path.display().to_string(),
            source,
        })?;
        let mut store = Store::connect(Dialect::Sqlite, path.to_path_buf(), None).await?;
        let shown = store.shown();
        sql_migrate::run(&mut store.conn, Dialect::Sqlite, &shown).await?;
        Ok(store)
    }
}

/// The database holds every job's command and environment (secrets among them) and the
/// token hashes: it is the server's alone (mode 0600, made so before SQLite creates it,
/// and set again on files of an earlier release). SQLite gives the `-wal` and `-shm`
/// files the database's mode; those already there are set too.
fn private_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        match std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod private_tests {
    use std::os::unix::fs::PermissionsExt;

    /// The database and its WAL are the server's alone, also when an earlier release
    /// left them readable by everyone.
    #[tokio::test]
    async fn the_database_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gpusched.db");
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        drop(super::Store::open_file(&path).await.unwrap());
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let store = super::Store::open_file(&path).await.unwrap();
        assert_eq!(mode(&path), 0o600);
        let wal = dir.path().join("gpusched.db-wal");
        if wal.exists() {
            assert_eq!(mode(&wal), 0o600);
        }
        drop(store);
    }
}
