//! SQLite in WAL mode with `synchronous=FULL`: a commit returns only once the log is on
//! disk (fsync), which is what "committed before it is acted on" needs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};
use sqlx::{Connection, Row, SqliteConnection};

use crate::record::{JobRecord, NodeRecord, TokenRecord};
use crate::StoreError;

const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS jobs (
        id INTEGER PRIMARY KEY,
        state TEXT NOT NULL,
        user TEXT NOT NULL,
        node TEXT,
        client_token TEXT UNIQUE,
        data TEXT NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state)",
    "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tokens (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, data TEXT NOT NULL)",
];

/// One connection, owned by the server's state task (SQLite allows one writer anyway).
pub struct SqliteStore {
    conn: SqliteConnection,
    /// The database file, to find the commit faults asked for it.
    path: PathBuf,
}

/// A write transaction; dropped without [`StoreTx::commit`] it rolls back.
pub struct StoreTx<'c> {
    tx: sqlx::Transaction<'c, sqlx::Sqlite>,
    path: &'c Path,
}

/// Commits still to fail, per database file (see [`fail_commits`]).
static COMMIT_FAULTS: Mutex<BTreeMap<PathBuf, u32>> = Mutex::new(BTreeMap::new());

/// Makes the next `n` commits to the database in `dir` fail (rolled back, with
/// [`StoreError::InjectedFault`]), as a full disk would, so tests can check what the
/// server does when a commit fails without filling a disk. Survives reopening the store.
pub fn fail_commits(dir: &Path, n: u32) {
    let mut faults = COMMIT_FAULTS.lock().unwrap_or_else(|p| p.into_inner());
    faults.insert(dir.join(DB_FILE), n);
}

/// Takes one injected fault for `path`, if any is left.
fn take_fault(path: &Path) -> bool {
    let mut faults = COMMIT_FAULTS.lock().unwrap_or_else(|p| p.into_inner());
    match faults.get_mut(path) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

const DB_FILE: &str = "gpusched.db";

impl SqliteStore {
    /// Opens (creating if needed) `dir/gpusched.db`.
    pub async fn open(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
            path: dir.display().to_string(),
            source,
        })?;
        let path = dir.join(DB_FILE);
        let shown = path.display().to_string();
        let opts = SqliteConnectOptions::from_str(&format!("sqlite://{shown}"))
            .map_err(|source| StoreError::Open {
                path: shown.clone(),
                source,
            })?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(std::time::Duration::from_secs(5));
        let mut conn = SqliteConnection::connect_with(&opts)
            .await
            .map_err(|source| StoreError::Open {
                path: shown.clone(),
                source,
            })?;
        for stmt in SCHEMA {
            sqlx::query(stmt).execute(&mut conn).await?;
        }
        let found: Option<String> =
            sqlx::query_scalar("SELECT value FROM meta WHERE key = 'schema_version'")
                .fetch_optional(&mut conn)
                .await?;
        match found.and_then(|v| v.parse::<i64>().ok()) {
            Some(v) if v > SCHEMA_VERSION => {
                return Err(StoreError::NewerSchema {
                    found: v,
                    known: SCHEMA_VERSION,
                })
            }
            Some(_) => {}
            None => {
                sqlx::query("INSERT INTO meta (key, value) VALUES ('schema_version', ?)")
                    .bind(SCHEMA_VERSION.to_string())
                    .execute(&mut conn)
                    .await?;
            }
        }
        Ok(SqliteStore { conn, path })
    }

    /// Closes the connection; a transaction left open by a failed commit is rolled back.
    pub async fn close(self) -> Result<(), StoreError> {
        self.conn.close().await?;
        Ok(())
    }

    /// Every job, by id.
    pub async fn load_jobs(&mut self) -> Result<Vec<JobRecord>, StoreError> {
        self.load_all("SELECT CAST(id AS TEXT), data FROM jobs ORDER BY id", "job")
            .await
    }

    pub async fn load_nodes(&mut self) -> Result<Vec<NodeRecord>, StoreError> {
        self.load_all("SELECT name, data FROM nodes ORDER BY name", "node")
            .await
    }

    pub async fn load_tokens(&mut self) -> Result<Vec<TokenRecord>, StoreError> {
        self.load_all(
            "SELECT CAST(id AS TEXT), data FROM tokens ORDER BY id",
            "token",
        )
        .await
    }

    /// Every row of `sql` (key, JSON data) decoded; a row that does not decode is named.
    async fn load_all<T: serde::de::DeserializeOwned>(
        &mut self,
        sql: &str,
        what: &str,
    ) -> Result<Vec<T>, StoreError> {
        let rows = sqlx::query(sql).fetch_all(&mut self.conn).await?;
        rows.iter()
            .map(|r| {
                let key: &str = r.get(0);
                let data: &str = r.get(1);
                serde_json::from_str(data).map_err(|source| StoreError::Corrupt {
                    what: format!("{what} {key}"),
                    source,
                })
            })
            .collect()
    }

    pub async fn begin(&mut self) -> Result<StoreTx<'_>, StoreError> {
        Ok(StoreTx {
            tx: self.conn.begin().await?,
            path: &self.path,
        })
    }
}

impl StoreTx<'_> {
    /// Inserts or replaces a job's row.
    pub async fn put_job(&mut self, job: &JobRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(job).map_err(|source| StoreError::Corrupt {
            what: format!("job {}", job.view.id),
            source,
        })?;
        sqlx::query(
            "INSERT INTO jobs (id, state, user, node, client_token, data) VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT(id) DO UPDATE SET state = excluded.state, node = excluded.node,
             data = excluded.data",
        )
        .bind(job.view.id as i64)
        .bind(job.view.state.name())
        .bind(&job.view.user)
        .bind(job.view.node.as_deref())
        .bind(job.client_token.as_deref())
        .bind(data)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }

    pub async fn put_node(&mut self, node: &NodeRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(node).map_err(|source| StoreError::Corrupt {
            what: format!("node {}", node.register.node),
            source,
        })?;
        sqlx::query(
            "INSERT INTO nodes (name, data) VALUES (?, ?)
             ON CONFLICT(name) DO UPDATE SET data = excluded.data",
        )
        .bind(&node.register.node)
        .bind(data)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }

    pub async fn put_token(&mut self, token: &TokenRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(token).map_err(|source| StoreError::Corrupt {
            what: format!("token {}", token.id),
            source,
        })?;
        sqlx::query(
            "INSERT INTO tokens (id, hash, data) VALUES (?, ?, ?)
             ON CONFLICT(id) DO UPDATE SET data = excluded.data",
        )
        .bind(token.id as i64)
        .bind(&token.hash)
        .bind(data)
        .execute(&mut *self.tx)
        .await?;
        Ok(())
    }

    /// Makes every write of this transaction durable (fsync of the WAL).
    pub async fn commit(self) -> Result<(), StoreError> {
        if take_fault(self.path) {
            // Dropping the transaction rolls it back, as SQLite does after SQLITE_FULL.
            return Err(StoreError::InjectedFault);
        }
        self.tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusched_wire::{JobState, JobView};

    fn job(id: u64, token: Option<&str>) -> JobRecord {
        JobRecord {
            view: JobView {
                id,
                name: "t".into(),
                user: "alice".into(),
                state: JobState::Pending,
                reason: "waiting".into(),
                command: vec!["/bin/true".into()],
                cwd: "/".into(),
                gpus: 1,
                gpu_model: None,
                slice: None,
                slice_at: None,
                queue: "default".into(),
                cpu_milli: 0,
                mem_mib: 0,
                resources: Default::default(),
                priority: 0,
                walltime_s: None,
                node: None,
                gpu_indices: vec![],
                attempt: 1,
                max_retries: 3,
                exit_code: None,
                signal: None,
                submit_ms: 1,
                start_ms: None,
                end_ms: None,
                cancel_requested: false,
                after: vec![],
                est_start_ms: None,
                preemptions: 0,
                preempt_requested: false,
                last_checkpoint_ms: None,
                env_keys: vec![],
            },
            env: Default::default(),
            client_token: token.map(String::from),
            grace_s: 10,
            attempt_nodes: Default::default(),
            agent_stops: 0,
        }
    }

    #[tokio::test]
    async fn committed_jobs_survive_a_reopen_and_rolled_back_ones_do_not() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut s = SqliteStore::open(dir.path()).await.unwrap();
            let mut tx = s.begin().await.unwrap();
            tx.put_job(&job(1, Some("k1"))).await.unwrap();
            tx.put_job(&job(2, None)).await.unwrap();
            tx.commit().await.unwrap();
            let mut tx = s.begin().await.unwrap();
            tx.put_job(&job(3, None)).await.unwrap();
            drop(tx); // rolled back
            let mut tx = s.begin().await.unwrap();
            let mut j = job(2, None);
            j.view.state = JobState::Running;
            tx.put_job(&j).await.unwrap();
            tx.commit().await.unwrap();
        }
        let mut s = SqliteStore::open(dir.path()).await.unwrap();
        let jobs = s.load_jobs().await.unwrap();
        assert_eq!(jobs.iter().map(|j| j.view.id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(jobs[1].view.state, JobState::Running);
        assert_eq!(jobs[0].client_token.as_deref(), Some("k1"));
    }

    #[tokio::test]
    async fn a_duplicate_client_token_is_refused_by_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SqliteStore::open(dir.path()).await.unwrap();
        let mut tx = s.begin().await.unwrap();
        tx.put_job(&job(1, Some("k"))).await.unwrap();
        assert!(tx.put_job(&job(2, Some("k"))).await.is_err());
    }

    #[tokio::test]
    async fn a_newer_schema_is_refused_with_advice() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut s = SqliteStore::open(dir.path()).await.unwrap();
            sqlx::query("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
                .execute(&mut s.conn)
                .await
                .unwrap();
        }
        let err = SqliteStore::open(dir.path()).await.err().unwrap();
        assert!(err.to_string().contains("upgrade gpusched"), "{err}");
    }
}
