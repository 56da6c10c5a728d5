//! What both backends share: the store on either one, through sqlx's `Any` driver: one
//! connection, one set of queries, a [`Dialect`] read at open for the few fragments that
//! differ. What only one backend has is in `sqlite/` and `postgres/`.
//!
//! Both commit durably before the server acts: SQLite in WAL mode with
//! `synchronous=FULL` (a commit returns once the log is on disk), PostgreSQL with its
//! default `synchronous_commit=on` (once the server flushed its WAL).
//!
//! - `copy.rs`: a whole store copied (`admin migrate-store`, `admin backup`).
//! - `dialect.rs`: the dialects and the helpers that keep one SQL text for both.
//! - `values.rs`: a row's values as plain data, bound the same by both ways of writing.
//! - `migrate.rs`: applies the schema versions when the store opens (the lists:
//!   `sqlite/migrate.rs`, `postgres/migrate.rs`).
//! - `jobs.rs`: the `jobs` table and a [`StoredJob`] in and out of it.
//! - `history.rs`: schema 5's `job_events` (job timelines) and `audit` tables.
//! - `ended.rs`: ended jobs, read on request.
//! - `lease.rs`: the leader lease and the fence.
//! - `round.rs`: a round's writes ([`RoundWrites`], `Store::write_round`).
//! - `services.rs`: schema 12's `services` table (inference services).
//! - `reservations.rs`: schema 13's `reservations` table (advance reservations).
//! - `test_dbs.rs`: the tests' one body on each backend.
//!
//! Waits are bounded on PostgreSQL once [`Store::set_timeout`] is given one (the server
//! gives its lease): a statement or a reconnection that has not answered by then fails
//! with [`StoreError::TimedOut`] and the connection is given up, because a TCP connection
//! to a database behind a network partition answers nothing and reports nothing for many
//! minutes. The session is told the same bound (`idle_in_transaction_session_timeout`,
//! `lock_timeout`), so what a lost session holds (the lease row's lock, taken by a
//! transaction's fence) is released by the database itself. SQLite's waits are bounded by
//! its busy timeout; a local file does not partition.

/// Runs `$body`, a future on the connection `$c` (reopened first if the last use lost
/// it), within the store's bound, and notes a lost connection.
macro_rules! on_conn {
    ($self:ident, $c:ident => $body:expr) => {{
        let bound = $self.bound;
        let r = $crate::sql::bounded(bound, async {
            let $c = $self.conn().await?;
            $body.await.map_err($crate::StoreError::from)
        })
        .await;
        $self.seen(r)
    }};
}

pub(crate) mod array_tasks;
#[cfg(test)]
mod array_tasks_tests;
mod copy;
pub(crate) mod dialect;
pub(crate) mod ended;
pub(crate) mod history;
pub(crate) mod jobs;
pub(crate) mod lease;
pub(crate) mod migrate;
pub(crate) mod reservations;
pub(crate) mod round;
pub(crate) mod services;
pub(crate) mod steps;
pub(crate) mod values;

#[cfg(test)]
pub(crate) mod test_dbs;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::{AnyConnection, Connection, Row};

use crate::record::{NodeRecord, ReservationRecord, ServiceRecord, TokenRecord};
use crate::sqlite::{sqlite_url, DB_FILE, SQLITE_PRAGMAS};
use crate::stored_job::StoredJob;
use crate::{StoreError, StoreUrl};

pub use copy::{backup, migrate_store, AuditRow, CopyCounts, EventRow, Snapshot};
pub use dialect::Dialect;

pub use crate::sqlite::migrate::LATEST as SCHEMA_VERSION;
pub use ended::{EndedQuery, TaskRows, UsageSum};
pub use history::{AUDIT_PAGE, AUDIT_PAGE_MAX};
pub use lease::{now_ms_sql, LeaseView, POSTGRES_NOW_MS, SQLITE_NOW_MS};
pub use migrate::RELEASE;
pub use round::RoundWrites;

/// One connection, owned by the server's state task (SQLite allows one writer anyway;
/// on PostgreSQL one server writes at a time).
pub struct Store {
    pub(crate) conn: AnyConnection,
    pub(crate) dialect: Dialect,
    /// The database file (PostgreSQL: the URL), to reconnect and to find the commit
    /// faults asked for it.
    pub(crate) path: PathBuf,
    /// The leader's epoch every write transaction is fenced by (`lease.rs`).
    pub(crate) fence: Option<u64>,
    /// The last use lost the connection: the next one opens it again.
    pub(crate) broken: bool,
    /// PostgreSQL: how long a statement or a reconnection may take ([`Store::set_timeout`]).
    pub(crate) bound: Option<Duration>,
    /// With a bound: a reconnection failed, and none is tried again before this moment
    /// (uses until then fail at once, so a round of many reads does not wait the bound
    /// once for each).
    pub(crate) retry_at: Option<Instant>,
    /// SQLite: the round writer (`sqlite/writer.rs`), opened by the first round written.
    pub(crate) writer: Option<crate::sqlite::writer::Writer>,
}

/// `f` within `bound` (None: unbounded); [`StoreError::TimedOut`] when it runs out.
pub(crate) async fn bounded<T>(
    bound: Option<Duration>,
    f: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    match bound {
        None => f.await,
        Some(b) => tokio::time::timeout(b, f)
            .await
            .unwrap_or(Err(StoreError::TimedOut {
                after_ms: b.as_millis() as u64,
            })),
    }
}

/// A write transaction; dropped without [`StoreTx::commit`] it rolls back.
pub struct StoreTx<'c> {
    tx: sqlx::Transaction<'c, sqlx::Any>,
    dialect: Dialect,
    path: &'c Path,
    bound: Option<Duration>,
    /// The store's flag: a statement that timed out gives the connection up.
    broken: &'c mut bool,
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
pub(crate) fn take_fault(path: &Path) -> bool {
    let mut faults = COMMIT_FAULTS.lock().unwrap_or_else(|p| p.into_inner());
    match faults.get_mut(path) {
        Some(n) if *n > 0 => {
            *n -= 1;
            true
        }
        _ => false,
    }
}

/// The `meta` keys the store writes itself.
const RESERVED_META: [&str; 3] = ["schema_version", "written_by", "max_job_id"];

impl Store {
    /// Opens the store `--store` names (a SQLite file is created if missing; a PostgreSQL
    /// database must exist), upgrading its schema.
    pub async fn open(url: &StoreUrl) -> Result<Self, StoreError> {
        match url {
            StoreUrl::Sqlite(file) => Self::open_file(file).await,
            StoreUrl::Postgres(u) => Self::open_postgres(u).await,
        }
    }

    /// The store as messages name it (a PostgreSQL password never shown).
    pub(crate) fn shown(&self) -> String {
        match self.dialect {
            Dialect::Sqlite => self.path.display().to_string(),
            Dialect::Postgres => StoreUrl::Postgres(self.path.display().to_string()).to_string(),
        }
    }

    /// A connection to the database at `path` (SQLite: the file; PostgreSQL: the URL),
    /// without the schema check; with `bound`, its session told it (see
    /// [`Store::set_timeout`]).
    pub(crate) async fn connect(
        dialect: Dialect,
        path: PathBuf,
        bound: Option<Duration>,
    ) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let mut store = Store {
            // Replaced below; `Store` needs one to name itself in errors first.
            conn: match dialect {
                Dialect::Sqlite => AnyConnection::connect(&sqlite_url(&path)).await,
                Dialect::Postgres => AnyConnection::connect(&path.display().to_string()).await,
            }
            .map_err(|source| StoreError::Open {
                path: match dialect {
                    Dialect::Sqlite => path.display().to_string(),
                    Dialect::Postgres => StoreUrl::Postgres(path.display().to_string()).to_string(),
                },
                source,
            })?,
            dialect,
            path,
            broken: false,
            fence: None,
            bound: None,
            retry_at: None,
            writer: None,
        };
        if dialect == Dialect::Sqlite {
            // What the SQLite driver's own options set (the `Any` URL cannot say them):
            // wait 5 s for a lock, write ahead, and fsync the log at every commit. And a
            // page cache of 1 MiB, not SQLite's 2 MB default, on each connection: the
            // kernel caches the same file, so a page that falls out costs a pread, and
            // with a million jobs in history the caches filled to their limit and were
            // 3.6 MiB of the server's 21.6 MiB of own memory (docs/benchmarks-log.md (y)),
            // for no measurable CPU per job.
            for pragma in SQLITE_PRAGMAS {
                if let Err(source) = sqlx::query(pragma).execute(&mut store.conn).await {
                    return Err(StoreError::Open {
                        path: store.shown(),
                        source,
                    });
                }
            }
        }
        if let Some(b) = bound {
            store.bound_session(b).await?;
        }
        Ok(store)
    }

    /// Bounds every later wait on the database by `bound` (None: unbounded, as tools
    /// run): a statement, a commit or a reconnection that has not answered by then fails
    /// with [`StoreError::TimedOut`], the connection is given up and the next use opens a
    /// new one. The session is told the same bound: PostgreSQL ends a transaction left
    /// idle that long (`idle_in_transaction_session_timeout`, which releases the locks
    /// of a server cut off in the middle of one) and a statement that waits that long for
    /// a lock (`lock_timeout`). Only on PostgreSQL; a SQLite store keeps its busy
    /// timeout and ignores this.
    pub async fn set_timeout(&mut self, bound: Option<Duration>) -> Result<(), StoreError> {
        if self.dialect != Dialect::Postgres {
            return Ok(());
        }
        self.bound = bound;
        match bound {
            Some(b) => {
                let r = bounded(Some(b), self.bound_session(b)).await;
                self.seen(r)
            }
            None => Ok(()),
        }
    }

    /// Gives the connection up (a statement on it was abandoned, e.g. by a caller's own
    /// timeout): the next use opens a new one.
    pub fn forget_connection(&mut self) {
        self.broken = true;
    }

    /// The connection, opened again first if the last use found it lost (a restarted
    /// PostgreSQL): reads then work again by themselves, while a failed commit still
    /// fails its round (the server reloads its state).
    async fn conn(&mut self) -> Result<&mut AnyConnection, StoreError> {
        if self.broken {
            if let Some(at) = self.retry_at {
                let now = Instant::now();
                if now < at {
                    return Err(StoreError::Reconnecting {
                        in_ms: (at - now).as_millis() as u64,
                    });
                }
            }
            let fresh = match bounded(
                self.bound,
                Store::connect(self.dialect, self.path.clone(), self.bound),
            )
            .await
            {
                Ok(fresh) => fresh,
                Err(e) => {
                    if let Some(b) = self.bound {
                        self.retry_at = Some(Instant::now() + b.min(Duration::from_secs(1)));
                    }
                    return Err(e);
                }
            };
            let old = std::mem::replace(&mut self.conn, fresh.conn);
            drop(old);
            self.broken = false;
            self.retry_at = None;
            tracing::info!(store = %self.shown(), "reconnected to the store");
        }
        Ok(&mut self.conn)
    }

    /// Notes a lost connection in `r`, to reconnect at the next use.
    fn seen<T>(&mut self, r: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(e) = &r {
            if e.is_disconnect() {
                self.broken = true;
            }
        }
        r
    }

    /// Which database this store is on.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Closes the connection (within the bound); a transaction left open by a failed
    /// commit is rolled back.
    pub async fn close(self) -> Result<(), StoreError> {
        if self.broken {
            return Ok(());
        }
        bounded(self.bound, async {
            self.conn.close().await?;
            Ok(())
        })
        .await
    }

    /// Every job's row, by id.
    pub async fn load_jobs(&mut self) -> Result<Vec<StoredJob>, StoreError> {
        on_conn!(self, c => jobs::load(c))
    }

    /// The jobs that are not over, by id: the server's working set (ended jobs stay
    /// here and are read on request, `ended.rs`).
    pub async fn load_live_jobs(&mut self) -> Result<Vec<StoredJob>, StoreError> {
        on_conn!(self, c => ended::load_live(c))
    }

    /// The ids of the live array tasks kept as compact records, by id (they are among
    /// [`Store::load_live_jobs`], rebuilt).
    pub async fn live_compact_tasks(&mut self) -> Result<Vec<u64>, StoreError> {
        on_conn!(self, c => ended::live_compact(c))
    }

    /// The highest job id ever stored (0: none).
    pub async fn max_job_id(&mut self) -> Result<u64, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => ended::max_id(c, d))
    }

    /// One job, whatever its state.
    pub async fn job(&mut self, id: u64) -> Result<Option<StoredJob>, StoreError> {
        on_conn!(self, c => ended::get(c, id))
    }

    /// Task `index` of array `array_id` as stored, once it started.
    pub async fn task(
        &mut self,
        array_id: u64,
        index: u32,
    ) -> Result<Option<StoredJob>, StoreError> {
        on_conn!(self, c => ended::task(c, array_id, index))
    }

    /// The id of the job accepted with this client token (`user/token`, as stored).
    pub async fn job_by_token(&mut self, token: &str) -> Result<Option<u64>, StoreError> {
        on_conn!(self, c => ended::id_by_token(c, token))
    }

    /// A page of ended jobs, newest first.
    pub async fn ended_jobs(&mut self, q: &EndedQuery) -> Result<Vec<StoredJob>, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => ended::page(c, d, q))
    }

    /// The ended jobs' usage in the window from `since_ms`, per user or queue.
    pub async fn ended_usage(
        &mut self,
        since_ms: u64,
        by_queue: bool,
        user: Option<&str>,
    ) -> Result<Vec<UsageSum>, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => ended::usage(c, d, since_ms, by_queue, user))
    }

    /// The ended jobs' usage from `since_ms` per account (`root`: charged to none).
    pub async fn ended_usage_by_account(
        &mut self,
        since_ms: u64,
        user: Option<&str>,
    ) -> Result<Vec<UsageSum>, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => ended::usage_by_account(c, d, since_ms, user))
    }

    /// Every ended job's usage over all time, per (user, queue): the user, and the sum
    /// keyed by the queue.
    pub async fn ended_usage_by_user_and_queue(
        &mut self,
    ) -> Result<Vec<(String, UsageSum)>, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => ended::usage_by_user_and_queue(c, d))
    }

    /// Ended jobs per (queue, state).
    pub async fn ended_counts(
        &mut self,
    ) -> Result<Vec<(String, gpusched_wire::JobState, u64)>, StoreError> {
        on_conn!(self, c => ended::counts(c))
    }

    /// The schema version of the open database (each backend numbers its own).
    pub async fn schema_version(&mut self) -> Result<i64, StoreError> {
        let d = self.dialect;
        on_conn!(self, c => migrate::current(c, d))
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

    /// Every inference service's record, by name; a row that does not decode is named
    /// ([`StoreError::Corrupt`]).
    pub async fn load_services(&mut self) -> Result<Vec<ServiceRecord>, StoreError> {
        let rows = on_conn!(self, c => sqlx::query(services::SELECT_ALL).fetch_all(c))?;
        let rows = rows
            .iter()
            .map(services::key_data)
            .collect::<Result<Vec<_>, _>>()?;
        services::decode(rows)
    }

    /// Every advance reservation's record, by name (byte order on both backends); a row
    /// that does not decode is named ([`StoreError::Corrupt`]), and so is one whose
    /// record names another reservation ([`StoreError::Row`]).
    pub async fn load_reservations(&mut self) -> Result<Vec<ReservationRecord>, StoreError> {
        let rows = on_conn!(self, c => sqlx::query(reservations::SELECT_ALL).fetch_all(c))?;
        let rows = rows
            .iter()
            .map(reservations::key_data)
            .collect::<Result<Vec<_>, _>>()?;
        reservations::decode(rows)
    }

    /// The steps of every job that has not ended (a starting server's), by job and step.
    pub async fn load_live_steps(&mut self) -> Result<Vec<crate::StoredStep>, StoreError> {
        let rows = on_conn!(self, c => sqlx::query(steps::SELECT_LIVE).fetch_all(c))?;
        let rows = rows.iter().map(steps::row).collect::<Result<Vec<_>, _>>()?;
        steps::decode(rows)
    }

    /// Job `id`'s steps in order (an ended job's, for `show`).
    pub async fn job_steps(&mut self, id: u64) -> Result<Vec<crate::StoredStep>, StoreError> {
        let rows = on_conn!(self, c => sqlx::query(steps::SELECT_OF_JOB)
            .bind(id as i64)
            .fetch_all(c))?;
        let rows = rows.iter().map(steps::row).collect::<Result<Vec<_>, _>>()?;
        steps::decode(rows)
    }

    /// Every row of `sql` (key, JSON data) decoded; a row that does not decode is named.
    async fn load_all<T: serde::de::DeserializeOwned>(
        &mut self,
        sql: &str,
        what: &str,
    ) -> Result<Vec<T>, StoreError> {
        let rows = on_conn!(self, c => sqlx::query(sql).fetch_all(c))?;
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

    /// Job `job`'s timeline as stored, oldest first (no events: an empty one).
    pub async fn job_events(
        &mut self,
        job: u64,
    ) -> Result<gpusched_wire::history::JobEvents, StoreError> {
        on_conn!(self, c => history::timeline(c, job))
    }

    /// One page of the audit log, newest first.
    pub async fn audit(
        &mut self,
        q: &gpusched_wire::history::AuditQuery,
    ) -> Result<gpusched_wire::history::AuditList, StoreError> {
        on_conn!(self, c => history::audit_page(c, q))
    }

    /// A value the server keeps in `meta` under `key` (see [`StoreTx::put_meta`]).
    pub async fn meta(&mut self, key: &str) -> Result<Option<String>, StoreError> {
        on_conn!(self, c => sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
            .bind(key)
            .fetch_optional(c))
    }

    /// A write transaction; with a fence set, it begins by proving the epoch is still
    /// the current one ([`StoreError::Fenced`] if not).
    pub async fn begin(&mut self) -> Result<StoreTx<'_>, StoreError> {
        let bound = self.bound;
        bounded(bound, async { self.conn().await.map(|_| ()) }).await?;
        // Not `seen`: the transaction borrows the connection, so the fields go apart.
        let Store {
            conn,
            dialect,
            path,
            fence,
            broken,
            ..
        } = self;
        let mut tx = match bounded(bound, async { Ok(conn.begin().await?) }).await {
            Ok(tx) => tx,
            Err(e) => {
                if e.is_disconnect() {
                    *broken = true;
                }
                return Err(e);
            }
        };
        if let Some(epoch) = *fence {
            if let Err(e) = bounded(bound, lease::fence(&mut tx, *dialect, epoch)).await {
                if e.is_disconnect() {
                    *broken = true;
                }
                return Err(e);
            }
        }
        Ok(StoreTx {
            tx,
            dialect: *dialect,
            path,
            bound,
            broken,
        })
    }
}

/// Runs `$f`, a future on the transaction, within the store's bound; a lost connection
/// (or one given up) is reopened at the store's next use.
macro_rules! in_tx {
    ($self:ident, $f:expr) => {{
        let r = bounded($self.bound, $f).await;
        if let Err(e) = &r {
            if e.is_disconnect() {
                *$self.broken = true;
            }
        }
        r
    }};
}

impl StoreTx<'_> {
    /// Inserts or replaces a job's row.
    pub async fn put_job(&mut self, job: &StoredJob) -> Result<(), StoreError> {
        in_tx!(self, jobs::put(&mut self.tx, job))
    }

    /// Inserts or replaces the rows of several jobs, with as few statements as SQLite
    /// allows (each statement is a round trip to the connection's thread).
    pub async fn put_jobs(&mut self, rows: &[StoredJob]) -> Result<(), StoreError> {
        in_tx!(self, jobs::put_many(&mut self.tx, self.dialect, rows))
    }

    /// One statement with these values.
    /// Compact task `id`'s events as its record holds them (none without one).
    pub(crate) async fn compact_events(
        &mut self,
        id: u64,
    ) -> Result<Vec<gpusched_wire::history::JobEvent>, StoreError> {
        in_tx!(self, async { array_tasks::events(&mut self.tx, id).await })
    }

    pub(crate) async fn execute_vals(
        &mut self,
        sql: &str,
        vals: &[values::Val<'_>],
    ) -> Result<(), StoreError> {
        in_tx!(self, async {
            values::bind_all(sqlx::query(sql), vals)
                .execute(&mut *self.tx)
                .await?;
            Ok(())
        })
    }

    pub async fn put_node(&mut self, node: &NodeRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(node).map_err(|source| StoreError::Corrupt {
            what: format!("node {}", node.register.node),
            source,
        })?;
        let vals = [
            values::Val::Text(node.register.node.as_str().into()),
            values::Val::Text(data.into()),
        ];
        self.execute_vals(round::NODE_UPSERT, &vals).await
    }

    pub async fn put_token(&mut self, token: &TokenRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(token).map_err(|source| StoreError::Corrupt {
            what: format!("token {}", token.id),
            source,
        })?;
        let vals = [
            values::Val::Int(token.id as i64),
            values::Val::Text(token.hash.as_str().into()),
            values::Val::Text(data.into()),
        ];
        self.execute_vals(round::TOKEN_UPSERT, &vals).await
    }

    /// Appends events to job `job`'s timeline, keeping at most `keep` of them (the first
    /// and the newest).
    pub async fn add_job_events(
        &mut self,
        job: u64,
        events: &[gpusched_wire::history::JobEvent],
        keep: u32,
    ) -> Result<(), StoreError> {
        let pairs: Vec<_> = events.iter().map(|e| (job, e.clone())).collect();
        in_tx!(
            self,
            history::append(&mut self.tx, self.dialect, &pairs, keep)
        )
    }

    /// Appends a round's events of many jobs (each job's in order) in two statements,
    /// keeping at most `keep` per job.
    pub async fn add_events(
        &mut self,
        events: &[(u64, gpusched_wire::history::JobEvent)],
        keep: u32,
    ) -> Result<(), StoreError> {
        in_tx!(
            self,
            history::append(&mut self.tx, self.dialect, events, keep)
        )
    }

    /// Records an admin action (the store numbers it).
    pub async fn add_audit(
        &mut self,
        entry: &gpusched_wire::history::AuditEntry,
    ) -> Result<(), StoreError> {
        let vals = round::audit_values(entry)?;
        self.execute_vals(round::AUDIT_INSERT, &vals).await
    }

    /// Keeps `value` under `key` in `meta`, for state the server derives and must not
    /// lose with a restart or a purge (e.g. the run-time predictor's). Keys the store
    /// uses itself (`schema_version`, `written_by`, `max_job_id`) are refused.
    pub async fn put_meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        if RESERVED_META.contains(&key) {
            return Err(StoreError::Row {
                what: format!("meta {key}"),
                why: "the store's own key; choose another".into(),
            });
        }
        let vals = [
            values::Val::Text(key.into()),
            values::Val::Text(value.into()),
        ];
        self.execute_vals(round::META_UPSERT, &vals).await
    }

    /// Deletes the jobs that ended before `before_ms` (never a live one); how many.
    pub async fn purge_ended(&mut self, before_ms: u64) -> Result<u64, StoreError> {
        in_tx!(self, ended::purge(&mut self.tx, self.dialect, before_ms))
    }

    /// Makes every write of this transaction durable (the WAL flushed: SQLite's fsync,
    /// PostgreSQL's synchronous commit).
    pub async fn commit(self) -> Result<(), StoreError> {
        let StoreTx {
            tx,
            path,
            bound,
            broken,
            ..
        } = self;
        if take_fault(path) {
            // Dropping the transaction rolls it back, as the database does after a full disk.
            return Err(StoreError::InjectedFault);
        }
        let r = bounded(bound, async { Ok(tx.commit().await?) }).await;
        if let Err(e) = &r {
            if e.is_disconnect() {
                *broken = true;
            }
        }
        r
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::test_dbs::test_dbs;
    use super::*;
    use gpusched_wire::JobState;

    /// A plain pending job's row.
    pub(crate) fn job(id: u64, token: Option<&str>) -> StoredJob {
        StoredJob {
            id,
            name: "t".into(),
            user: "alice".into(),
            queue: "default".into(),
            command: vec!["/bin/true".into()],
            cwd: "/".into(),
            gpus: 1,
            gpu_model: None,
            slice: None,
            cpu_milli: 0,
            mem_mib: 0,
            resources: Default::default(),
            priority: 0,
            walltime_s: None,
            max_retries: 3,
            after: vec![],
            env: Default::default(),
            client_token: token.map(String::from),
            grace_s: 10,
            submit_ms: 1,
            state: JobState::Pending,
            attempt: 1,
            node: None,
            gpu_indices: vec![],
            slice_at: None,
            start_ms: None,
            end_ms: None,
            exit_code: None,
            signal: None,
            end_reason: None,
            note: Some("waiting".into()),
            cancel_requested: false,
            preempt_requested: false,
            preemptions: 0,
            agent_stops: 0,
            attempt_nodes: Default::default(),
            last_checkpoint_ms: None,
            nodes: 1,
            gpus_per_node: 1,
            split: false,
            tasks_per_node: None,
            mixed_models: false,
            parts: Vec::new(),
            master_port: None,
            first_failure: None,
            energy_j: None,
            after_any: vec![],
            after_notok: vec![],
            held: false,
            array: None,
            array_task: None,
            array_progress: None,
            behind: None,
            recalls: 0,
            image: None,
            pids_max: None,
            usage: None,
            service: None,
            placement: None,
            interactive: false,
            idle_gpu_s: None,
            steps_run: 0,
            step_gpu_s: 0,
            account: None,
        }
    }

    #[tokio::test]
    async fn committed_jobs_survive_a_reopen_and_rolled_back_ones_do_not() {
        for db in &test_dbs("committed_jobs_survive_a_reopen_and_rolled_back_ones_do_not").await {
            {
                let mut s = db.open().await;
                let mut tx = s.begin().await.unwrap();
                tx.put_job(&job(1, Some("k1"))).await.unwrap();
                tx.put_job(&job(2, None)).await.unwrap();
                tx.commit().await.unwrap();
                let mut tx = s.begin().await.unwrap();
                tx.put_job(&job(3, None)).await.unwrap();
                drop(tx); // rolled back
                let mut tx = s.begin().await.unwrap();
                let mut j = job(2, None);
                j.state = JobState::Running;
                tx.put_job(&j).await.unwrap();
                tx.commit().await.unwrap();
            }
            let mut s = db.open().await;
            let jobs = s.load_jobs().await.unwrap();
            assert_eq!(jobs.iter().map(|j| j.id).collect::<Vec<_>>(), [1, 2]);
            assert_eq!(jobs[1].state, JobState::Running);
            assert_eq!(jobs[0].client_token.as_deref(), Some("k1"));
        }
    }

    #[tokio::test]
    async fn meta_values_survive_a_reopen_and_the_stores_own_keys_are_refused() {
        for db in
            &test_dbs("meta_values_survive_a_reopen_and_the_stores_own_keys_are_refused").await
        {
            {
                let mut s = db.open().await;
                assert_eq!(s.meta("predictor").await.unwrap(), None);
                let mut tx = s.begin().await.unwrap();
                tx.put_meta("predictor", "v1").await.unwrap();
                tx.put_meta("predictor", "v2").await.unwrap();
                assert!(tx.put_meta("schema_version", "99").await.is_err());
                tx.commit().await.unwrap();
            }
            let mut s = db.open().await;
            assert_eq!(s.meta("predictor").await.unwrap().as_deref(), Some("v2"));
            assert_eq!(
                s.schema_version().await.unwrap(),
                migrate::latest(db.dialect)
            );
        }
    }

    #[tokio::test]
    async fn every_stored_field_survives_the_database() {
        for db in &test_dbs("every_stored_field_survives_the_database").await {
            let full = crate::stored_job::tests::full_stored();
            let mut ended = full.clone();
            ended.id = 43;
            ended.client_token = Some("tok-2".into());
            ended.state = JobState::TimedOut;
            ended.end_reason = Some("stopped after passing its walltime of 2 h".into());
            ended.note = None;
            // Never measured: NULL, not 0.
            ended.energy_j = None;
            // Measured with no peak or pressure (cgroup v1): CPU 0 is a measure, kept.
            ended.usage = Some(crate::StoredUsage {
                cpu_ms: 0,
                ..Default::default()
            });
            ended.image = None;
            // One rule only (the others left out of the JSON), and not interactive.
            ended.placement = Some(Box::new(crate::StoredPlacement {
                exclude: vec!["n9".into()],
                ..Default::default()
            }));
            ended.interactive = false;
            {
                let mut s = db.open().await;
                let mut tx = s.begin().await.unwrap();
                tx.put_job(&full).await.unwrap();
                tx.put_job(&ended).await.unwrap();
                tx.commit().await.unwrap();
                s.close().await.unwrap();
            }
            let mut s = db.open().await;
            assert_eq!(s.load_jobs().await.unwrap(), [full, ended]);
        }
    }

    /// A store of `db`'s backend at schema `before` (as that release left it) holding
    /// `old` as that release wrote it: its first `columns` columns (those of that
    /// schema), the others left to the upgrades.
    async fn a_store_at(db: &test_dbs::TestDb, before: i64, columns: usize, old: &StoredJob) {
        let path = match &db.url {
            StoreUrl::Sqlite(f) => f.clone(),
            StoreUrl::Postgres(u) => PathBuf::from(u),
        };
        let mut s = Store::connect(db.dialect, path, None).await.unwrap();
        migrate::run_to(&mut s.conn, db.dialect, before).await;
        let vals = values::job_row(old).unwrap();
        let sql = format!(
            "INSERT INTO jobs ({}) VALUES ({})",
            jobs::all_columns()[..columns].join(", "),
            dialect::marks(columns)
        );
        values::bind_all(sqlx::query(&sql), &vals[..columns])
            .execute(&mut s.conn)
            .await
            .unwrap();
        assert_eq!(s.schema_version().await.unwrap(), before);
        s.close().await.unwrap();
    }

    /// A store of the schema before containment (SQLite's 10, PostgreSQL's 3) with a job
    /// in it upgrades in place: the job reads back as it was written, with no image, no
    /// process cap and nothing measured (not zeros).
    #[tokio::test]
    async fn a_store_from_before_containment_upgrades_and_its_jobs_measured_nothing() {
        for db in &test_dbs("a_store_from_before_containment_upgrades").await {
            let mut old = crate::stored_job::tests::full_stored();
            old.image = None;
            old.pids_max = None;
            old.usage = None;
            old.service = None;
            old.placement = None;
            old.interactive = false;
            let old = before_alloc_use(old);
            let before = match db.dialect {
                Dialect::Sqlite => 10,
                Dialect::Postgres => 3,
            };
            // Every column but those of schema 11 and later.
            let n = jobs::COLUMN_COUNT
                - jobs::CONTAIN_COLUMNS.len()
                - jobs::SERVICE_COLUMNS.len()
                - jobs::PLACEMENT_COLUMNS.len()
                - jobs::ALLOC_COLUMNS.len()
                - jobs::ACCOUNT_COLUMNS.len();
            a_store_at(db, before, n, &old).await;
            let mut s = db.open().await;
            assert_eq!(
                s.schema_version().await.unwrap(),
                migrate::latest(db.dialect)
            );
            assert_eq!(s.load_jobs().await.unwrap(), [old]);
        }
    }

    /// A store of the schema before services (SQLite's 11, PostgreSQL's 4) with a job in
    /// it upgrades in place: the job reads back as it was written, a replica of no
    /// service, and there are no services; both are written and read at once.
    #[tokio::test]
    async fn a_store_from_before_services_upgrades_with_no_replicas_and_no_services() {
        for db in &test_dbs("a_store_from_before_services_upgrades").await {
            let mut old = crate::stored_job::tests::full_stored();
            old.service = None;
            old.placement = None;
            old.interactive = false;
            let old = before_alloc_use(old);
            let before = match db.dialect {
                Dialect::Sqlite => 11,
                Dialect::Postgres => 4,
            };
            // Every column but those of schema 12 and later.
            a_store_at(
                db,
                before,
                jobs::COLUMN_COUNT
                    - jobs::SERVICE_COLUMNS.len()
                    - jobs::PLACEMENT_COLUMNS.len()
                    - jobs::ALLOC_COLUMNS.len()
                    - jobs::ACCOUNT_COLUMNS.len(),
                &old,
            )
            .await;
            let mut s = db.open().await;
            assert_eq!(
                s.schema_version().await.unwrap(),
                migrate::latest(db.dialect)
            );
            assert_eq!(s.load_jobs().await.unwrap(), std::slice::from_ref(&old));
            assert_eq!(s.load_services().await.unwrap(), []);
            let replica = crate::stored_job::tests::full_stored();
            let mut w = RoundWrites::default();
            w.job(replica.clone());
            w.service(&crate::record::tests::service("resnet")).unwrap();
            s.write_round(w).await.unwrap();
            assert_eq!(s.load_jobs().await.unwrap(), [replica]);
            assert_eq!(
                s.load_services().await.unwrap(),
                [crate::record::tests::service("resnet")]
            );
        }
    }

    /// `j` as a release before schema 15 wrote it: no idle time or steps counted, and
    /// (schema 16) no account.
    fn before_alloc_use(j: StoredJob) -> StoredJob {
        StoredJob {
            idle_gpu_s: None,
            steps_run: 0,
            step_gpu_s: 0,
            account: None,
            ..j
        }
    }

    /// A store of the schema before what allocations' GPUs did (SQLite's 14,
    /// PostgreSQL's 7) with a job in it upgrades in place: the job reads back with no
    /// idle time (NULL) and no steps; one with them is written and read at once, and the
    /// usage aggregate sums them.
    #[tokio::test]
    async fn a_store_from_before_alloc_use_upgrades_counting_nothing_for_old_jobs() {
        for db in &test_dbs("a_store_from_before_alloc_use_upgrades").await {
            let old = before_alloc_use(crate::stored_job::tests::full_stored());
            // Accounts (SQLite's 16, PostgreSQL's 9) and compact array tasks came after.
            let before = migrate::latest(db.dialect) - 3;
            a_store_at(
                db,
                before,
                jobs::COLUMN_COUNT - jobs::ALLOC_COLUMNS.len() - jobs::ACCOUNT_COLUMNS.len(),
                &old,
            )
            .await;
            let mut s = db.open().await;
            assert_eq!(
                s.schema_version().await.unwrap(),
                migrate::latest(db.dialect)
            );
            assert_eq!(s.load_jobs().await.unwrap(), std::slice::from_ref(&old));
            let mut ended = crate::stored_job::tests::full_stored();
            ended.id = 43;
            ended.client_token = None;
            ended.state = JobState::Succeeded;
            ended.end_ms = ended.start_ms.map(|s| s + 3_600_000);
            // An allocation, not an array (whose own row is charged nothing).
            ended.array = None;
            ended.array_progress = None;
            let mut w = RoundWrites::default();
            w.job(ended.clone());
            s.write_round(w).await.unwrap();
            assert_eq!(s.load_jobs().await.unwrap(), [old, ended.clone()]);
            let sums = s.ended_usage(0, false, None).await.unwrap();
            assert_eq!(sums.len(), 1, "{sums:?}");
            assert_eq!(
                (sums[0].idle_gpu_s, sums[0].steps, sums[0].step_gpu_s),
                (1_800, 3, 5_400)
            );
        }
    }

    /// A store of the schema before placement rules (SQLite's 12, PostgreSQL's 5) with a
    /// job in it upgrades in place: the job reads back as it was written, with no rule
    /// (NULL, not an empty one) and not interactive, and there are no reservations; a
    /// job with rules, an interactive one and a reservation are written and read at once.
    #[tokio::test]
    async fn a_store_from_before_placement_upgrades_with_no_rules_and_no_reservations() {
        for db in &test_dbs("a_store_from_before_placement_upgrades").await {
            let mut old = crate::stored_job::tests::full_stored();
            old.placement = None;
            old.interactive = false;
            let old = before_alloc_use(old);
            let before = match db.dialect {
                Dialect::Sqlite => 12,
                Dialect::Postgres => 5,
            };
            // Job steps (SQLite's 14, PostgreSQL's 7), schema 15's columns and accounts
            // came after.
            assert_eq!(before, migrate::latest(db.dialect) - 5);
            a_store_at(
                db,
                before,
                jobs::COLUMN_COUNT
                    - jobs::PLACEMENT_COLUMNS.len()
                    - jobs::ALLOC_COLUMNS.len()
                    - jobs::ACCOUNT_COLUMNS.len(),
                &old,
            )
            .await;
            let mut s = db.open().await;
            assert_eq!(
                s.schema_version().await.unwrap(),
                migrate::latest(db.dialect)
            );
            assert_eq!(s.load_jobs().await.unwrap(), std::slice::from_ref(&old));
            assert_eq!(s.load_reservations().await.unwrap(), []);
            // What the upgrade put in the new columns, as the database holds it.
            let (placement, interactive): (Option<String>, i64) =
                sqlx::query_as("SELECT placement, interactive FROM jobs WHERE id = $1")
                    .bind(old.id as i64)
                    .fetch_one(&mut s.conn)
                    .await
                    .unwrap();
            assert_eq!((placement, interactive), (None, 0));
            let ruled = crate::stored_job::tests::full_stored();
            assert!(ruled.placement.is_some() && ruled.interactive);
            let mut w = RoundWrites::default();
            w.job(ruled.clone());
            w.reservation(&crate::record::tests::reservation("workshop"))
                .unwrap();
            s.write_round(w).await.unwrap();
            assert_eq!(s.load_jobs().await.unwrap(), [ruled]);
            assert_eq!(
                s.load_reservations().await.unwrap(),
                [crate::record::tests::reservation("workshop")]
            );
        }
    }

    fn step(job: u64, step: u32, state: &str) -> crate::StoredStep {
        crate::StoredStep {
            job,
            step,
            command: vec!["nvidia-smi".into(), "-L".into()],
            nodes: vec!["n1".into(), "n2".into()],
            tasks_per_node: 2,
            pty: step == 1,
            state: state.into(),
            exit_code: (state != "running").then_some(3),
            reason: (state == "failed").then(|| "n2: task 3 failed".into()),
            started_ms: 1_000,
            ended_ms: (state != "running").then_some(2_000),
        }
    }

    /// A store of the schema before accounts (SQLite's 15, PostgreSQL's 8) with a job in
    /// it upgrades in place: the job reads back charged to no account (NULL); a job
    /// charged to one, and the fair tree's decayed usage (a `meta` value written with a
    /// round), are written and read back at once, also after a reopen.
    #[tokio::test]
    async fn a_store_from_before_accounts_upgrades_and_keeps_accounts_and_usage() {
        for db in &test_dbs("a_store_from_before_accounts_upgrades").await {
            let mut old = crate::stored_job::tests::full_stored();
            old.account = None;
            // Compact array tasks (SQLite's 17, PostgreSQL's 10) came after.
            let before = migrate::latest(db.dialect) - 2;
            assert_eq!(
                before,
                match db.dialect {
                    Dialect::Sqlite => 15,
                    Dialect::Postgres => 8,
                }
            );
            a_store_at(
                db,
                before,
                jobs::COLUMN_COUNT - jobs::ACCOUNT_COLUMNS.len(),
                &old,
            )
            .await;
            let mut s = db.open().await;
            assert_eq!(
                s.schema_version().await.unwrap(),
                migrate::latest(db.dialect)
            );
            assert_eq!(s.load_jobs().await.unwrap(), [old.clone()]);
            let charged = crate::stored_job::tests::full_stored();
            assert_eq!(charged.account.as_deref(), Some("physics"));
            let usage = r#"{"at_s":1000.5,"usage":[{"account":"physics","user":"ann","gpu_seconds":7200.0}]}"#;
            let mut w = RoundWrites::default();
            w.job(charged.clone());
            w.meta("fair_usage", usage.to_string()).unwrap();
            s.write_round(w).await.unwrap();
            s.close().await.unwrap();
            let mut s = db.open().await;
            assert_eq!(s.load_jobs().await.unwrap(), [charged]);
            assert_eq!(s.meta("fair_usage").await.unwrap().as_deref(), Some(usage));
        }
    }

    /// A store of the schema before job steps (SQLite's 13, PostgreSQL's 6) upgrades
    /// with none; steps are written by rounds (replaced in place), the live jobs' ones
    /// load at start, an ended job's on request, a row naming another step is refused
    /// and named, and a purge deletes the steps of the jobs it deletes.
    #[tokio::test]
    async fn job_steps_are_stored_with_their_job_and_purged_with_it() {
        for db in &test_dbs("job_steps_are_stored_with_their_job").await {
            let mut live = before_alloc_use(crate::stored_job::tests::full_stored());
            // Before job steps (SQLite's 14, PostgreSQL's 7); schema 15's columns and
            // accounts and compact array tasks came after.
            let before = migrate::latest(db.dialect) - 4;
            a_store_at(
                db,
                before,
                jobs::COLUMN_COUNT - jobs::ALLOC_COLUMNS.len() - jobs::ACCOUNT_COLUMNS.len(),
                &live,
            )
            .await;
            let mut s = db.open().await;
            assert_eq!(
                s.schema_version().await.unwrap(),
                migrate::latest(db.dialect)
            );
            assert_eq!(s.load_live_steps().await.unwrap(), []);
            live.state = JobState::Running;
            live.end_ms = None;
            let mut ended = job(90, None);
            ended.state = JobState::Succeeded;
            ended.end_ms = Some(5_000);
            let mut w = RoundWrites::default();
            w.job(live.clone());
            w.job(ended.clone());
            for st in [step(live.id, 0, "completed"), step(live.id, 1, "running")] {
                w.step(&st).unwrap();
            }
            w.step(&step(90, 0, "failed")).unwrap();
            s.write_round(w).await.unwrap();
            // A step written again is replaced.
            let mut w = RoundWrites::default();
            w.step(&step(live.id, 1, "completed")).unwrap();
            s.write_round(w).await.unwrap();
            assert_eq!(
                s.load_live_steps().await.unwrap(),
                [step(live.id, 0, "completed"), step(live.id, 1, "completed")]
            );
            assert_eq!(s.job_steps(90).await.unwrap(), [step(90, 0, "failed")]);
            assert_eq!(s.job_steps(12345).await.unwrap(), []);
            // The purge of the ended job takes its steps; the live job's stay.
            let mut tx = s.begin().await.unwrap();
            tx.purge_ended(10_000).await.unwrap();
            tx.commit().await.unwrap();
            assert_eq!(s.job_steps(90).await.unwrap(), []);
            assert_eq!(s.load_live_steps().await.unwrap().len(), 2);
            // A row whose record is of another step is named.
            let bad = serde_json::to_string(&step(7, 9, "running")).unwrap();
            sqlx::query("UPDATE steps SET data = $1 WHERE step = 0")
                .bind(bad)
                .execute(&mut s.conn)
                .await
                .unwrap();
            let e = s.load_live_steps().await.unwrap_err().to_string();
            assert!(e.contains("7.9"), "{e}");
        }
    }

    /// Many rows in one call: across the statement's row limit, replacing rows in
    /// place, every field kept, and a duplicate client token still refused.
    #[tokio::test]
    async fn many_rows_are_written_in_few_statements_as_one_by_one() {
        for db in &test_dbs("many_rows_are_written_in_few_statements_as_one_by_one").await {
            let mut s = db.open().await;
            let mut many: Vec<StoredJob> = (1..=150).map(|i| job(i, None)).collect();
            many[7] = crate::stored_job::tests::full_stored();
            many[7].id = 8;
            let mut tx = s.begin().await.unwrap();
            tx.put_jobs(&many).await.unwrap();
            tx.commit().await.unwrap();
            for j in many.iter_mut().step_by(3) {
                j.state = JobState::Running;
            }
            let mut tx = s.begin().await.unwrap();
            tx.put_jobs(&many).await.unwrap();
            tx.put_jobs(&[]).await.unwrap();
            tx.commit().await.unwrap();
            assert_eq!(s.load_jobs().await.unwrap(), many);
            let (a, b) = (job(200, Some("k")), job(201, Some("k")));
            let mut tx = s.begin().await.unwrap();
            assert!(tx.put_jobs(&[a, b]).await.is_err());
        }
    }

    /// A row rewritten by the multi-row upsert takes every changed field but those fixed
    /// at submission (`jobs::FIXED_AFTER_SUBMIT`), which keep what was first written.
    #[tokio::test]
    async fn a_rewritten_row_takes_every_field_but_the_ones_fixed_at_submission() {
        for db in &test_dbs("a_rewritten_row_takes_every_field_but_those_fixed").await {
            let mut s = db.open().await;
            let first = crate::stored_job::tests::full_stored();
            let mut tx = s.begin().await.unwrap();
            tx.put_jobs(std::slice::from_ref(&first)).await.unwrap();
            tx.commit().await.unwrap();
            // Everything different: a plain pending job under the same id.
            let later = job(first.id, Some("other-token"));
            let mut tx = s.begin().await.unwrap();
            tx.put_jobs(std::slice::from_ref(&later)).await.unwrap();
            tx.commit().await.unwrap();
            let mut want = later.clone();
            want.name = first.name.clone();
            want.user = first.user.clone();
            want.command = first.command.clone();
            want.cwd = first.cwd.clone();
            want.submit_ms = first.submit_ms;
            want.array = first.array;
            want.array_task = first.array_task;
            want.env = first.env.clone();
            want.client_token = first.client_token.clone();
            assert_eq!(s.load_jobs().await.unwrap(), [want]);
        }
    }

    #[tokio::test]
    async fn a_duplicate_client_token_is_refused_by_the_database() {
        for db in &test_dbs("a_duplicate_client_token_is_refused_by_the_database").await {
            let mut s = db.open().await;
            let mut tx = s.begin().await.unwrap();
            tx.put_job(&job(1, Some("k"))).await.unwrap();
            assert!(tx.put_job(&job(2, Some("k"))).await.is_err());
        }
    }

    #[tokio::test]
    async fn a_newer_schema_is_refused_with_advice_and_left_untouched() {
        for db in &test_dbs("a_newer_schema_is_refused_with_advice_and_left_untouched").await {
            let known = migrate::latest(db.dialect);
            {
                let mut s = db.open().await;
                let mut tx = s.begin().await.unwrap();
                tx.put_job(&job(1, None)).await.unwrap();
                tx.commit().await.unwrap();
                for sql in [
                    "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
                    "UPDATE meta SET value = '9.1.0' WHERE key = 'written_by'",
                ] {
                    sqlx::query(sql).execute(&mut s.conn).await.unwrap();
                }
                s.close().await.unwrap();
            }
            let file = match &db.url {
                StoreUrl::Sqlite(f) => Some(f.clone()),
                StoreUrl::Postgres(_) => None,
            };
            let before = file.as_ref().map(|f| std::fs::read(f).unwrap());
            let err = Store::open(&db.url).await.err().unwrap();
            let text = err.to_string();
            for part in [
                "has schema 99 (written by gpusched 9.1.0)",
                &format!("(up to {known})"),
                "run a gpusched that knows schema 99",
                "not changed",
            ] {
                assert!(text.contains(part), "{part:?} missing from: {text}");
            }
            match (file, before) {
                (Some(f), Some(before)) => {
                    assert_eq!(
                        std::fs::read(f).unwrap(),
                        before,
                        "the database was written"
                    )
                }
                _ => {
                    // PostgreSQL: the rows as they were, read around the store.
                    let StoreUrl::Postgres(url) = &db.url else {
                        unreachable!()
                    };
                    let mut c = AnyConnection::connect(url).await.unwrap();
                    let v: String =
                        sqlx::query_scalar("SELECT value FROM meta WHERE key = 'schema_version'")
                            .fetch_one(&mut c)
                            .await
                            .unwrap();
                    let history: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM schema_history")
                        .fetch_one(&mut c)
                        .await
                        .unwrap();
                    assert_eq!((v.as_str(), history), ("99", known));
                }
            }
        }
    }

    #[tokio::test]
    async fn a_fresh_database_starts_at_the_newest_schema_and_reopens_without_migrating() {
        for db in
            &test_dbs("a_fresh_database_starts_at_the_newest_schema_and_reopens_without_migrating")
                .await
        {
            let mut s = db.open().await;
            let latest = migrate::latest(db.dialect);
            assert_eq!(s.schema_version().await.unwrap(), latest);
            let history: Vec<i64> =
                sqlx::query_scalar("SELECT version FROM schema_history ORDER BY version")
                    .fetch_all(&mut s.conn)
                    .await
                    .unwrap();
            let versions: Vec<i64> = match db.dialect {
                Dialect::Sqlite => crate::sqlite::migrate::migrations(),
                Dialect::Postgres => crate::postgres::migrate::migrations(),
            }
            .iter()
            .map(|m| m.version)
            .collect();
            assert_eq!(history, versions);
            assert_eq!(versions.last(), Some(&latest));
            assert_eq!(
                migrate::run(&mut s.conn, db.dialect, "x").await.unwrap(),
                Vec::<i64>::new()
            );
        }
    }
}
