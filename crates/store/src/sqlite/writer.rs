//! The SQLite round writer: a thread with its own rusqlite connection to the store's
//! file, which runs a whole round's transaction (`sql/round.rs`), from `BEGIN IMMEDIATE`
//! to the fsync'd `COMMIT`, on one hand-off.
//!
//! Why: sqlx's SQLite driver runs its connection on a thread of its own and makes every
//! statement a round trip to it (a channel and a wake-up each way); a round of a few
//! statements spent more of the server's CPU in those hand-offs (the kernel's context
//! switches) than in SQLite (docs/benchmarks-log.md (w)). The values bound are those of
//! sqlx's way (`sql/values.rs`), and so are the statements' texts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use futures_util::FutureExt;
use gpusched_wire::history::{AuditEntry, JobEvent, JobEventKind};

use crate::array_task::CompactTask;
use crate::sql::dialect::{pow2_chunks, pow2_sizes, Dialect};
use crate::sql::round::{
    audit_values, job_chunk, JobRows, RoundTarget, RoundWrites, AUDIT_INSERT, META_UPSERT,
    NODE_UPSERT, RESERVATION_DELETE, RESERVATION_UPSERT, SERVICE_DELETE, SERVICE_UPSERT,
    TOKEN_UPSERT,
};
use crate::sql::values::{job_row, Val};
use crate::sql::{array_tasks, history, jobs, lease, take_fault, Store};
use crate::stored_job::StoredJob;
use crate::StoreError;

/// Writes `w` on the store's round writer (opened by the first round written), after
/// the job rows of `rows` (if given): their first chunk begins the transaction, each
/// further chunk is drawn as the one before is written, and `w`'s own writes and the
/// commit end it (`Store::write_round_streamed`). Nothing is written if any part fails.
pub(crate) async fn write_round(
    store: &mut Store,
    w: RoundWrites,
    rows: Option<JobRows<'_>>,
) -> Result<(), StoreError> {
    let fault = take_fault(&store.path);
    let fence = store.fence;
    if store.writer.is_none() {
        store.writer = Some(Writer::open(&store.path)?);
    }
    let writer = store.writer.as_ref().expect("opened above");
    let mut r = Ok(());
    if let Some(JobRows { first, more }) = rows {
        r = writer.part(Part::Begin { fence }, first).await;
        while r.is_ok() {
            let chunk = job_chunk(more);
            if chunk.is_empty() {
                break;
            }
            r = writer.part(Part::More, chunk).await;
        }
    }
    if r.is_ok() {
        r = writer.write(w, fence, fault).await;
    }
    if r.is_err() {
        // A fresh connection for the next round (as sqlx's after a failure).
        store.writer = None;
    }
    r
}

/// A round to write, and where its outcome goes.
enum Request {
    /// A whole round, or the rest of one begun by [`Request::Rows`]: its writes, then the
    /// commit.
    Round {
        writes: Box<RoundWrites>,
        fence: Option<u64>,
        fault: bool,
        done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
    },
    /// Job rows of a round too large to hold at once; the first part begins its
    /// transaction, which stays open for the next request.
    Rows {
        part: Part,
        rows: Vec<StoredJob>,
        done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
    },
}

/// Which part of a streamed round's job rows.
enum Part {
    Begin { fence: Option<u64> },
    More,
}

/// The SQLite round writer: a thread with its own connection to the store's file. It
/// ends (and closes its connection) when the store drops it.
pub(crate) struct Writer {
    requests: std::sync::mpsc::Sender<Request>,
}

impl Writer {
    fn open(path: &Path) -> Result<Writer, StoreError> {
        let conn = connect(path)?;
        let (requests, rx) = std::sync::mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                let mut prepared = Prepared::new(&conn);
                // Whether a streamed round's transaction is open.
                let mut open = false;
                for r in rx {
                    match r {
                        Request::Round {
                            writes,
                            fence,
                            fault,
                            done,
                        } => {
                            let begun = std::mem::take(&mut open);
                            let outcome = apply(&mut prepared, &writes, fence, fault, begun);
                            let _ = done.send(outcome);
                        }
                        Request::Rows { part, rows, done } => {
                            let outcome = rows_part(&mut prepared, part, &rows, open);
                            open = outcome.is_ok();
                            drop(rows);
                            let _ = done.send(outcome);
                        }
                    }
                }
            })
            .map_err(|source| StoreError::File {
                path: path.display().to_string(),
                source,
            })?;
        Ok(Writer { requests })
    }

    async fn write(
        &self,
        writes: RoundWrites,
        fence: Option<u64>,
        fault: bool,
    ) -> Result<(), StoreError> {
        let (done, outcome) = tokio::sync::oneshot::channel();
        let request = Request::Round {
            writes: Box::new(writes),
            fence,
            fault,
            done,
        };
        if self.requests.send(request).is_err() {
            return Err(StoreError::WriterGone);
        }
        outcome.await.unwrap_or(Err(StoreError::WriterGone))
    }

    async fn part(&self, part: Part, rows: Vec<StoredJob>) -> Result<(), StoreError> {
        let (done, outcome) = tokio::sync::oneshot::channel();
        if self
            .requests
            .send(Request::Rows { part, rows, done })
            .is_err()
        {
            return Err(StoreError::WriterGone);
        }
        outcome.await.unwrap_or(Err(StoreError::WriterGone))
    }
}

/// The writer's connection, set as the store's own (`Store::connect`): wait 5 s for a
/// lock, write ahead, fsync the log at every commit, keep 1 MiB of pages. And its
/// temporary files in memory: a multi-row upsert keeps a statement journal (the pages it
/// changed, to undo it alone if a row fails), and SQLite spills one over 64 KiB to a new
/// file under /var/tmp, created and unlinked per statement: about one commit in three
/// of an array run did (docs/benchmarks-log.md (za)). Only this connection's statements are
/// bounded (64 rows); the store's own connection, which reads and may sort much, keeps
/// the default.
fn connect(path: &Path) -> Result<rusqlite::Connection, StoreError> {
    let shown = || PathBuf::from(path).display().to_string();
    let conn = rusqlite::Connection::open(path).map_err(|source| StoreError::OpenWriter {
        path: shown(),
        source,
    })?;
    // The store's settings, and statement journals in memory (this connection's own:
    // see above).
    let pragmas = super::SQLITE_PRAGMAS.join("; ") + "; PRAGMA temp_store = MEMORY;";
    conn.execute_batch(&pragmas)
        .map_err(|source| StoreError::OpenWriter {
            path: shown(),
            source,
        })?;
    Ok(conn)
}

/// What the writer runs, each prepared once and kept (`Prepared`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stmt {
    Fence,
    Epoch,
    /// The jobs' multi-row upsert of so many rows (a power of two).
    Upsert(usize),
    /// The compact array tasks' multi-row upsert of so many rows (a power of two).
    TaskUpsert(usize),
    TaskEvents,
    TaskDelete,
    Node,
    Token,
    Service,
    ServiceGone,
    Reservation,
    ReservationGone,
    Step,
    LastSeq(usize),
    Events(usize),
    Prune,
    Audit,
    Meta,
}

impl Stmt {
    fn sql(self) -> std::borrow::Cow<'static, str> {
        let d = Dialect::Sqlite;
        match self {
            Stmt::Fence => lease::FENCE.into(),
            Stmt::Epoch => "SELECT epoch FROM leader_lease WHERE id = 1".into(),
            Stmt::Upsert(rows) => jobs::upsert_rows(d, rows),
            Stmt::TaskUpsert(rows) => array_tasks::upsert_rows(d, rows),
            Stmt::TaskEvents => array_tasks::EVENTS_OF.into(),
            Stmt::TaskDelete => array_tasks::DELETE.into(),
            Stmt::Node => NODE_UPSERT.into(),
            Stmt::Token => TOKEN_UPSERT.into(),
            Stmt::Service => SERVICE_UPSERT.into(),
            Stmt::ServiceGone => SERVICE_DELETE.into(),
            Stmt::Reservation => RESERVATION_UPSERT.into(),
            Stmt::ReservationGone => RESERVATION_DELETE.into(),
            Stmt::Step => crate::sql::steps::STEP_UPSERT.into(),
            Stmt::LastSeq(jobs) => history::last_seq_sql(d, jobs),
            Stmt::Events(rows) => history::insert_sql(d, rows),
            Stmt::Prune => history::PRUNE_SQL.into(),
            Stmt::Audit => AUDIT_INSERT.into(),
            Stmt::Meta => META_UPSERT.into(),
        }
    }
}

/// The writer's prepared statements, by what they are: rusqlite's own cache finds one
/// by its text, and hashing and comparing a 64-row upsert's 40 KB on every call cost a
/// tenth of the writer's instructions.
struct Prepared<'c> {
    conn: &'c rusqlite::Connection,
    by: HashMap<Stmt, rusqlite::Statement<'c>>,
    /// Each job's last event sequence as this writer committed it, so a round asks the
    /// database only for jobs it has not written events of: the query cost about a
    /// twentieth of the server's instructions in an array run (docs/benchmarks-log.md (za)).
    /// This thread is the only one that adds job events to the file while it leads (a
    /// purge deletes only ended jobs, whose timelines are done), so what it committed is
    /// what the file holds. Forgotten whole after a failed round, when the fence changes
    /// (another server may have led meanwhile), and when it grows past
    /// [`SEQS_KEPT`]; a job leaves it with its `ended` event.
    seqs: HashMap<i64, i64>,
    fence: Option<u64>,
}

/// The most jobs whose last sequence the writer keeps (a few MB at most).
const SEQS_KEPT: usize = 100_000;

impl<'c> Prepared<'c> {
    fn new(conn: &'c rusqlite::Connection) -> Self {
        Prepared {
            conn,
            by: HashMap::new(),
            seqs: HashMap::new(),
            fence: None,
        }
    }

    fn get(&mut self, s: Stmt) -> Result<&mut rusqlite::Statement<'c>, StoreError> {
        let conn = self.conn;
        Ok(match self.by.entry(s) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => v.insert(conn.prepare(&s.sql())?),
        })
    }

    fn run(&mut self, s: Stmt, vals: &[Val<'_>]) -> Result<usize, StoreError> {
        Ok(self.get(s)?.execute(rusqlite::params_from_iter(vals))?)
    }
}

/// Begins a round's transaction: `BEGIN IMMEDIATE`, then the fence.
fn begin(p: &mut Prepared<'_>, fence: Option<u64>) -> Result<(), StoreError> {
    if p.fence != fence || p.seqs.len() > SEQS_KEPT {
        p.seqs.clear();
        p.fence = fence;
    }
    p.conn.execute_batch("BEGIN IMMEDIATE")?;
    if let Some(epoch) = fence {
        if p.run(Stmt::Fence, &[Val::Int(epoch as i64)])? != 1 {
            let current: Option<i64> = p.get(Stmt::Epoch)?.query_row([], |r| r.get(0)).ok();
            return Err(StoreError::Fenced {
                mine: epoch,
                current: current.map(|c| c as u64),
            });
        }
    }
    Ok(())
}

/// Rolls back what is open after a failure, and forgets the sequences it may have
/// counted on.
fn abandon(p: &mut Prepared<'_>) {
    p.seqs.clear();
    if !p.conn.is_autocommit() {
        let _ = p.conn.execute_batch("ROLLBACK");
    }
}

/// One part of a streamed round's job rows (`Part::Begin` begins its transaction;
/// `open`: whether one is open now). Rolled back whole on any error.
fn rows_part(
    p: &mut Prepared<'_>,
    part: Part,
    rows: &[StoredJob],
    open: bool,
) -> Result<(), StoreError> {
    let r = match part {
        Part::Begin { fence } => {
            if open {
                abandon(p);
            }
            begin(p, fence)
        }
        Part::More if open => Ok(()),
        Part::More => Err(StoreError::WriterGone),
    };
    let r = r.and_then(|()| {
        let mut target = Target {
            p: &mut *p,
            next: HashMap::new(),
        };
        target
            .jobs(rows)
            .now_or_never()
            .expect("the round writer's statements never wait")
    });
    if r.is_err() {
        abandon(p);
    }
    r
}

/// Runs one round's transaction (the rest of one already `begun` by [`rows_part`]);
/// rolled back whole on any error.
fn apply(
    p: &mut Prepared<'_>,
    w: &RoundWrites,
    fence: Option<u64>,
    fault: bool,
    begun: bool,
) -> Result<(), StoreError> {
    let conn = p.conn;
    let begin = if begun { Ok(()) } else { begin(p, fence) };
    let r = begin.and_then(|()| statements(p, w)).and_then(|seqs| {
        if fault {
            // As a full disk at the commit: nothing written.
            Err(StoreError::InjectedFault)
        } else {
            conn.execute_batch("COMMIT")?;
            Ok(seqs)
        }
    });
    match r {
        Ok(seqs) => {
            for (job, seq) in seqs {
                p.seqs.insert(job, seq);
            }
            for (job, e) in &w.events {
                if e.kind == JobEventKind::Ended {
                    p.seqs.remove(&(*job as i64));
                }
            }
            // A compact task's later events are in its own row: its sequence is done
            // with once it is written so, unless it gets a job row again.
            for t in &w.tasks {
                p.seqs.remove(&(t.id as i64));
            }
            Ok(())
        }
        Err(e) => {
            abandon(p);
            Err(e)
        }
    }
}

/// The round's statements; the last event sequence of each job it wrote events of.
fn statements(p: &mut Prepared<'_>, w: &RoundWrites) -> Result<HashMap<i64, i64>, StoreError> {
    let mut target = Target {
        p,
        next: HashMap::new(),
    };
    w.write_to(&mut target)
        .now_or_never()
        .expect("the round writer's statements never wait")?;
    Ok(target.next)
}

/// The round writer as a [`RoundTarget`]: each kind through its prepared statement, at
/// once (its methods never wait, so the round's order runs to its end on one poll).
struct Target<'p, 'c> {
    p: &'p mut Prepared<'c>,
    /// The last event sequence of each job the round wrote events of.
    next: HashMap<i64, i64>,
}

impl RoundTarget for Target<'_, '_> {
    async fn jobs(&mut self, rows: &[StoredJob]) -> Result<(), StoreError> {
        for chunk in pow2_chunks(rows, jobs::ROWS_PER_STATEMENT) {
            let mut vals = Vec::with_capacity(chunk.len() * jobs::COLUMN_COUNT);
            for j in chunk {
                vals.extend(job_row(j)?);
            }
            self.p.run(Stmt::Upsert(chunk.len()), &vals)?;
        }
        Ok(())
    }

    async fn tasks(&mut self, tasks: &[CompactTask]) -> Result<(), StoreError> {
        for chunk in pow2_chunks(tasks, array_tasks::ROWS_PER_STATEMENT) {
            let mut vals = Vec::with_capacity(chunk.len() * array_tasks::COLUMNS.len());
            for t in chunk {
                vals.extend(array_tasks::values(t)?);
            }
            self.p.run(Stmt::TaskUpsert(chunk.len()), &vals)?;
        }
        Ok(())
    }

    async fn promote(&mut self, id: u64) -> Result<Vec<JobEvent>, StoreError> {
        let key = crate::sql::values::int(id, "id", id)?;
        let text: Option<String> = {
            use rusqlite::OptionalExtension;
            self.p
                .get(Stmt::TaskEvents)?
                .query_row([key], |r| r.get(0))
                .optional()?
        };
        self.p.run(Stmt::TaskDelete, &[Val::Int(key)])?;
        // Its sequence is asked for again: the moved events number on from it.
        self.p.seqs.remove(&key);
        text.map_or(Ok(Vec::new()), |t| array_tasks::parse_events(id, &t))
    }

    async fn node(&mut self, name: &str, data: &str) -> Result<(), StoreError> {
        self.p.run(
            Stmt::Node,
            &[Val::Text(name.into()), Val::Text(data.into())],
        )?;
        Ok(())
    }

    async fn token(&mut self, id: i64, hash: &str, data: &str) -> Result<(), StoreError> {
        let vals = [Val::Int(id), Val::Text(hash.into()), Val::Text(data.into())];
        self.p.run(Stmt::Token, &vals)?;
        Ok(())
    }

    async fn service(&mut self, name: &str, data: &str) -> Result<(), StoreError> {
        self.p.run(
            Stmt::Service,
            &[Val::Text(name.into()), Val::Text(data.into())],
        )?;
        Ok(())
    }

    async fn service_gone(&mut self, name: &str) -> Result<(), StoreError> {
        self.p.run(Stmt::ServiceGone, &[Val::Text(name.into())])?;
        Ok(())
    }

    async fn reservation(&mut self, name: &str, data: &str) -> Result<(), StoreError> {
        self.p.run(
            Stmt::Reservation,
            &[Val::Text(name.into()), Val::Text(data.into())],
        )?;
        Ok(())
    }

    async fn reservation_gone(&mut self, name: &str) -> Result<(), StoreError> {
        self.p
            .run(Stmt::ReservationGone, &[Val::Text(name.into())])?;
        Ok(())
    }

    async fn step(&mut self, job: i64, step: i64, data: &str) -> Result<(), StoreError> {
        self.p.run(
            Stmt::Step,
            &[Val::Int(job), Val::Int(step), Val::Text(data.into())],
        )?;
        Ok(())
    }

    async fn events(&mut self, events: &[(u64, JobEvent)], keep: u32) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let p = &mut *self.p;
        let next = &mut self.next;
        let mut ids = history::event_jobs(events)?;
        next.reserve(ids.len());
        ids.retain(|id| match p.seqs.get(id) {
            Some(&seq) => {
                next.insert(*id, seq);
                false
            }
            None => true,
        });
        // A job whose timeline starts in this round (with `submitted`, its first event
        // ever) has no sequence to ask for.
        let mut seen = std::collections::HashSet::with_capacity(ids.len());
        for (job, e) in events {
            let job = *job as i64;
            if seen.insert(job) && e.kind == JobEventKind::Submitted {
                next.entry(job).or_insert(0);
            }
        }
        ids.retain(|id| !next.contains_key(id));
        for chunk in pow2_chunks(&ids, history::ROWS_PER_STATEMENT) {
            let st = p.get(Stmt::LastSeq(chunk.len()))?;
            let rows = st.query_map(rusqlite::params_from_iter(chunk), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })?;
            for row in rows {
                let (job, seq) = row?;
                next.insert(job, seq);
            }
        }
        // One statement's values at a time: a 10,000-job batch's events never all at once.
        let mut at = 0;
        for rows in pow2_sizes(events.len(), history::ROWS_PER_STATEMENT) {
            let vals = history::event_values(&events[at..at + rows], next)?;
            p.run(Stmt::Events(rows), &vals)?;
            at += rows;
        }
        for (job, upto) in history::prunes(next, keep) {
            p.run(Stmt::Prune, &[Val::Int(job), Val::Int(upto)])?;
        }
        Ok(())
    }

    async fn audit(&mut self, entry: &AuditEntry) -> Result<(), StoreError> {
        self.p.run(Stmt::Audit, &audit_values(entry)?)?;
        Ok(())
    }

    async fn meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.p.run(
            Stmt::Meta,
            &[Val::Text(key.into()), Val::Text(value.into())],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both connections to a SQLite store are durable (WAL, fsync at every commit) and
    /// keep 1 MiB of pages each (the writer's and the store's own, which reads).
    #[tokio::test]
    async fn sqlite_connections_are_durable_and_keep_a_small_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open_dir(dir.path()).await.unwrap();
        let cache: i64 = sqlx::query_scalar("PRAGMA cache_size")
            .fetch_one(&mut store.conn)
            .await
            .unwrap();
        let sync: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&mut store.conn)
            .await
            .unwrap();
        assert_eq!(
            (cache, sync),
            (-1024, 2),
            "cache_size, synchronous (2: FULL)"
        );
        let writer = connect(&dir.path().join(super::super::DB_FILE)).unwrap();
        let (cache, sync, mode): (i64, i64, String) = writer
            .query_row(
                "SELECT * FROM pragma_cache_size, pragma_synchronous, pragma_journal_mode",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((cache, sync, mode.as_str()), (-1024, 2, "wal"));
        // Its statement journals stay in memory (2: MEMORY), not in files under /var/tmp.
        let temp: i64 = writer
            .query_row("PRAGMA temp_store", [], |r| r.get(0))
            .unwrap();
        assert_eq!(temp, 2, "temp_store");
    }

    /// The bundled SQLite is built without memory statistics (`.cargo/config.toml`): a
    /// global mutex and a `malloc_usable_size` per allocation, for figures nothing reads.
    #[test]
    fn sqlite_is_built_without_memory_statistics() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let mut st = conn.prepare("PRAGMA compile_options").unwrap();
        let options: Vec<String> = st
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "LIBSQLITE3_FLAGS from .cargo/config.toml did not reach the build: {options:?}"
        );
    }
}
