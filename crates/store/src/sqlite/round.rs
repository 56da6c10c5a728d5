//! A round's writes in one transaction: what the server's state task commits after each
//! round (job rows, nodes, tokens, job events, audit entries, `meta` values), fenced by
//! the leader's epoch like every write transaction.
//!
//! On PostgreSQL it goes through sqlx's connection statement by statement (each one a
//! round trip to the database anyway). On SQLite it goes to the store's round writer:
//! one thread of its own with its own connection to the file, which runs the whole
//! transaction, from `BEGIN IMMEDIATE` to the fsync'd `COMMIT`, on one hand-off.
//! Why: sqlx's SQLite driver runs its connection on a thread of its own and makes every
//! statement a round trip to it (a channel and a wake-up each way); a round of a few
//! statements spent more of the server's CPU in those hand-offs (the kernel's context
//! switches) than in SQLite (docs/benchmarks.md (w)). The values bound are the same
//! either way (`values.rs`), and so are the statements' texts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gpusched_wire::history::{AuditEntry, JobEvent, JobEventKind};

use super::dialect::{pow2_chunks, pow2_sizes, Dialect};
use super::values::{job_row, Val};
use super::{history, jobs, lease, take_fault, Store, RESERVED_META};
use crate::record::{JobRecord, NodeRecord, TokenRecord};
use crate::stored_job::StoredJob;
use crate::StoreError;

/// The statements both ways share (besides the multi-row ones of `jobs` and `history`).
pub(super) const NODE_UPSERT: &str = "INSERT INTO nodes (name, data) VALUES ($1, $2)
     ON CONFLICT(name) DO UPDATE SET data = excluded.data";
pub(super) const TOKEN_UPSERT: &str = "INSERT INTO tokens (id, hash, data) VALUES ($1, $2, $3)
     ON CONFLICT(id) DO UPDATE SET data = excluded.data";
pub(super) const META_UPSERT: &str = "INSERT INTO meta (key, value) VALUES ($1, $2)
     ON CONFLICT(key) DO UPDATE SET value = excluded.value";
pub(super) const AUDIT_INSERT: &str =
    "INSERT INTO audit (at_ms, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5)";

/// Everything one round writes, as plain data (the writer's thread owns it).
#[derive(Default)]
pub struct RoundWrites {
    jobs: Vec<StoredJob>,
    /// (name, the record as JSON).
    nodes: Vec<(String, String)>,
    /// (id, hash, the record as JSON).
    tokens: Vec<(i64, String, String)>,
    events: Vec<(u64, JobEvent)>,
    /// Events kept per job (the first and the newest).
    keep: u32,
    audit: Vec<AuditEntry>,
    meta: Vec<(String, String)>,
}

impl RoundWrites {
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
            && self.nodes.is_empty()
            && self.tokens.is_empty()
            && self.events.is_empty()
            && self.audit.is_empty()
            && self.meta.is_empty()
    }

    /// Inserts or replaces the job's row.
    pub fn job(&mut self, job: &JobRecord) {
        self.jobs.push(StoredJob::from_record(job));
    }

    pub fn node(&mut self, node: &NodeRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(node).map_err(|source| StoreError::Corrupt {
            what: format!("node {}", node.register.node),
            source,
        })?;
        self.nodes.push((node.register.node.clone(), data));
        Ok(())
    }

    pub fn token(&mut self, token: &TokenRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(token).map_err(|source| StoreError::Corrupt {
            what: format!("token {}", token.id),
            source,
        })?;
        self.tokens
            .push((token.id as i64, token.hash.clone(), data));
        Ok(())
    }

    /// The round's job events (by job, each job's in order), at most `keep` kept per job.
    pub fn events(&mut self, events: Vec<(u64, JobEvent)>, keep: u32) {
        self.events = events;
        self.keep = keep;
    }

    pub fn audit(&mut self, entry: AuditEntry) {
        self.audit.push(entry);
    }

    /// A value the server keeps in `meta` (the store's own keys are refused, as
    /// `StoreTx::put_meta` refuses them).
    pub fn meta(&mut self, key: &str, value: String) -> Result<(), StoreError> {
        if RESERVED_META.contains(&key) {
            return Err(StoreError::Row {
                what: format!("meta {key}"),
                why: "the store's own key; choose another".into(),
            });
        }
        self.meta.push((key.to_string(), value));
        Ok(())
    }
}

impl Store {
    /// Writes a round in one fenced transaction and makes it durable; nothing of it is
    /// written when it fails (a duplicate client token, a full disk, another server's
    /// epoch: [`StoreError::Fenced`]). Commit faults asked for by `fail_commits` apply.
    pub async fn write_round(&mut self, w: RoundWrites) -> Result<(), StoreError> {
        if w.is_empty() {
            return Ok(());
        }
        match self.dialect {
            Dialect::Sqlite => {
                let fault = take_fault(&self.path);
                let fence = self.fence;
                if self.writer.is_none() {
                    self.writer = Some(Writer::open(&self.path)?);
                }
                let writer = self.writer.as_ref().expect("opened above");
                let r = writer.write(w, fence, fault).await;
                if r.is_err() {
                    // A fresh connection for the next round (as sqlx's after a failure).
                    self.writer = None;
                }
                r
            }
            Dialect::Postgres => {
                let mut tx = self.begin().await?;
                tx.put_stored_jobs(&w.jobs).await?;
                for (name, data) in &w.nodes {
                    tx.execute_vals(
                        NODE_UPSERT,
                        &[Val::Text(name.into()), Val::Text(data.into())],
                    )
                    .await?;
                }
                for (id, hash, data) in &w.tokens {
                    let vals = [
                        Val::Int(*id),
                        Val::Text(hash.into()),
                        Val::Text(data.into()),
                    ];
                    tx.execute_vals(TOKEN_UPSERT, &vals).await?;
                }
                tx.add_events(&w.events, w.keep).await?;
                for entry in &w.audit {
                    tx.add_audit(entry).await?;
                }
                for (key, value) in &w.meta {
                    tx.put_meta(key, value).await?;
                }
                tx.commit().await
            }
        }
    }
}

/// The audit entry's values, in [`AUDIT_INSERT`]'s order.
pub(super) fn audit_values(e: &AuditEntry) -> Result<[Val<'_>; 5], StoreError> {
    let at = i64::try_from(e.at_ms).map_err(|_| StoreError::Row {
        what: "audit entry".into(),
        why: format!("at_ms = {} does not fit a database integer", e.at_ms),
    })?;
    Ok([
        Val::Int(at),
        Val::Text(e.actor.as_str().into()),
        Val::Text(e.action.name().into()),
        Val::Text(e.target.as_str().into()),
        Val::Text(e.detail.as_str().into()),
    ])
}

/// A round to write, and where its outcome goes.
struct Request {
    writes: RoundWrites,
    fence: Option<u64>,
    fault: bool,
    done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
}

/// The SQLite round writer: a thread with its own connection to the store's file. It
/// ends (and closes its connection) when the store drops it.
pub(super) struct Writer {
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
                for r in rx {
                    let outcome = apply(&mut prepared, &r.writes, r.fence, r.fault);
                    let _ = r.done.send(outcome);
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
        let request = Request {
            writes,
            fence,
            fault,
            done,
        };
        if self.requests.send(request).is_err() {
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
/// of an array run did (docs/benchmarks.md (za)). Only this connection's statements are
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
    Node,
    Token,
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
            Stmt::Node => NODE_UPSERT.into(),
            Stmt::Token => TOKEN_UPSERT.into(),
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
    /// twentieth of the server's instructions in an array run (docs/benchmarks.md (za)).
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

/// Runs one round's transaction; rolled back whole on any error.
fn apply(
    p: &mut Prepared<'_>,
    w: &RoundWrites,
    fence: Option<u64>,
    fault: bool,
) -> Result<(), StoreError> {
    let conn = p.conn;
    if p.fence != fence || p.seqs.len() > SEQS_KEPT {
        p.seqs.clear();
        p.fence = fence;
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let r = statements(p, w, fence).and_then(|seqs| {
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
            Ok(())
        }
        Err(e) => {
            p.seqs.clear();
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            Err(e)
        }
    }
}

/// The round's statements; the last event sequence of each job it wrote events of.
fn statements(
    p: &mut Prepared<'_>,
    w: &RoundWrites,
    fence: Option<u64>,
) -> Result<HashMap<i64, i64>, StoreError> {
    if let Some(epoch) = fence {
        if p.run(Stmt::Fence, &[Val::Int(epoch as i64)])? != 1 {
            let current: Option<i64> = p.get(Stmt::Epoch)?.query_row([], |r| r.get(0)).ok();
            return Err(StoreError::Fenced {
                mine: epoch,
                current: current.map(|c| c as u64),
            });
        }
    }
    for chunk in pow2_chunks(&w.jobs, jobs::ROWS_PER_STATEMENT) {
        let mut vals = Vec::with_capacity(chunk.len() * jobs::COLUMN_COUNT);
        for j in chunk {
            vals.extend(job_row(j)?);
        }
        p.run(Stmt::Upsert(chunk.len()), &vals)?;
    }
    for (name, data) in &w.nodes {
        p.run(
            Stmt::Node,
            &[Val::Text(name.into()), Val::Text(data.into())],
        )?;
    }
    for (id, hash, data) in &w.tokens {
        let vals = [
            Val::Int(*id),
            Val::Text(hash.into()),
            Val::Text(data.into()),
        ];
        p.run(Stmt::Token, &vals)?;
    }
    let mut next: HashMap<i64, i64> = HashMap::new();
    if !w.events.is_empty() {
        let mut ids = history::event_jobs(&w.events)?;
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
        for (job, e) in &w.events {
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
        let vals = history::event_values(&w.events, &mut next)?;
        let mut at = 0;
        for rows in pow2_sizes(w.events.len(), history::ROWS_PER_STATEMENT) {
            p.run(Stmt::Events(rows), &vals[at * 7..(at + rows) * 7])?;
            at += rows;
        }
        for (job, upto) in history::prunes(&next, w.keep) {
            p.run(Stmt::Prune, &[Val::Int(job), Val::Int(upto)])?;
        }
    }
    for entry in &w.audit {
        p.run(Stmt::Audit, &audit_values(entry)?)?;
    }
    for (key, value) in &w.meta {
        p.run(
            Stmt::Meta,
            &[Val::Text(key.into()), Val::Text(value.into())],
        )?;
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use gpusched_wire::history::{AuditAction, JobEventKind};

    use super::super::test_dbs::test_dbs;
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

    fn job(id: u64, token: Option<&str>) -> JobRecord {
        let mut j = crate::stored_job::tests::full_record();
        j.view.id = id;
        j.client_token = token.map(str::to_string);
        j
    }

    fn node(name: &str) -> NodeRecord {
        NodeRecord::new(
            serde_json::from_value(serde_json::json!({
                "node": name, "agent_version": "test", "gpus": [], "cpus": 8,
                "mem_mib": 1024, "log_url": null, "running": [], "events": []
            }))
            .expect("a registration"),
        )
    }

    fn token(id: u64) -> TokenRecord {
        TokenRecord {
            id,
            user: "alice".into(),
            role: gpusched_wire::Role::User,
            hash: format!("hash-{id}"),
            created_ms: 5,
            revoked: false,
        }
    }

    fn event(at_ms: u64) -> JobEvent {
        JobEvent {
            at_ms,
            kind: JobEventKind::Started,
            attempt: 1,
            nodes: vec!["n1".into()],
            detail: format!("at {at_ms}"),
        }
    }

    /// Everything a round writes, more jobs and events than one statement takes.
    fn round(first_job: u64) -> (RoundWrites, Vec<JobRecord>) {
        let mut w = RoundWrites::default();
        let jobs: Vec<JobRecord> = (first_job..first_job + 70).map(|i| job(i, None)).collect();
        for j in &jobs {
            w.job(j);
        }
        w.node(&node("n1")).unwrap();
        w.token(&token(first_job)).unwrap();
        let events = jobs
            .iter()
            .flat_map(|j| [(j.view.id, event(1)), (j.view.id, event(2))])
            .collect();
        w.events(events, 256);
        w.audit(AuditEntry {
            id: 0,
            at_ms: 9,
            actor: "root".into(),
            action: AuditAction::Drain,
            target: "n1".into(),
            detail: String::new(),
        });
        w.meta("predictor", format!("learnt {first_job}")).unwrap();
        (w, jobs)
    }

    #[tokio::test]
    async fn a_round_is_written_whole_and_reads_back() {
        for db in &test_dbs("a_round_is_written_whole_and_reads_back").await {
            let mut s = db.open().await;
            let (w, jobs) = round(1);
            s.write_round(w).await.unwrap();
            // A second round goes on from the first one's sequences.
            let mut w = RoundWrites::default();
            w.events(vec![(1, event(3)), (70, event(3))], 256);
            s.write_round(w).await.unwrap();
            s.write_round(RoundWrites::default()).await.unwrap();
            let mut s = db.open().await;
            assert_eq!(s.load_jobs().await.unwrap(), jobs);
            assert_eq!(s.load_nodes().await.unwrap(), [node("n1")]);
            assert_eq!(s.load_tokens().await.unwrap(), [token(1)]);
            for id in [1u64, 70] {
                let t = s.job_events(id).await.unwrap();
                let at: Vec<u64> = t.events.iter().map(|e| e.at_ms).collect();
                assert_eq!(at, [1, 2, 3], "job {id}");
            }
            assert_eq!(s.job_events(2).await.unwrap().events.len(), 2);
            let audit = s.audit(&Default::default()).await.unwrap();
            assert_eq!(audit.entries.len(), 1);
            assert_eq!(audit.entries[0].target, "n1");
            assert_eq!(
                s.meta("predictor").await.unwrap().as_deref(),
                Some("learnt 1")
            );
        }
    }

    /// The writer numbers a job's events on from what it committed last, and asks the
    /// database again after a failed round and once another server may have written
    /// (its fence changed): each event gets the next sequence, none is refused as a
    /// duplicate.
    #[tokio::test]
    async fn event_sequences_go_on_across_rounds_failures_and_leaders() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Store::open_dir(dir.path()).await.unwrap();
        let mut b = Store::open_dir(dir.path()).await.unwrap();
        let one = |at| {
            let mut w = RoundWrites::default();
            w.events(vec![(1, event(at)), (2, event(at))], 256);
            w
        };
        let ea = a
            .acquire_lease("a", "http://a", 60_000, false)
            .await
            .unwrap();
        a.set_fence(ea);
        a.write_round(one(1)).await.unwrap();
        a.write_round(one(2)).await.unwrap();
        // A failed round: its sequences are not taken.
        super::super::fail_commits(dir.path(), 1);
        assert!(a.write_round(one(99)).await.is_err());
        a.write_round(one(3)).await.unwrap();
        // b leads and writes; then a leads again.
        assert!(a.release_lease(ea.unwrap()).await.unwrap());
        let eb = b
            .acquire_lease("b", "http://b", 60_000, false)
            .await
            .unwrap();
        b.set_fence(eb);
        b.write_round(one(4)).await.unwrap();
        assert!(b.release_lease(eb.unwrap()).await.unwrap());
        let ea = a
            .acquire_lease("a", "http://a", 60_000, false)
            .await
            .unwrap();
        a.set_fence(ea);
        a.write_round(one(5)).await.unwrap();
        // An ended job leaves the writer's memory; its sequences still go on.
        let mut w = RoundWrites::default();
        let mut end = event(6);
        end.kind = JobEventKind::Ended;
        w.events(vec![(1, end)], 256);
        a.write_round(w).await.unwrap();
        a.write_round(one(7)).await.unwrap();
        // A timeline that starts in a round (with `submitted`) is not asked for.
        let mut w = RoundWrites::default();
        let mut submitted = event(8);
        submitted.kind = JobEventKind::Submitted;
        w.events(vec![(3, submitted), (3, event(9))], 256);
        a.write_round(w).await.unwrap();
        a.write_round(one(10)).await.unwrap();
        let t = a.job_events(3).await.unwrap();
        let at: Vec<u64> = t.events.iter().map(|e| e.at_ms).collect();
        assert_eq!(at, [8, 9]);
        for id in [1u64, 2] {
            let t = a.job_events(id).await.unwrap();
            let at: Vec<u64> = t.events.iter().map(|e| e.at_ms).collect();
            let want: &[u64] = if id == 1 {
                &[1, 2, 3, 4, 5, 6, 7, 10]
            } else {
                &[1, 2, 3, 4, 5, 7, 10]
            };
            assert_eq!(at, want, "job {id}");
        }
    }

    /// A round that fails writes nothing (a duplicate client token, an injected fault,
    /// another server's epoch), and the store writes the next round as usual.
    #[tokio::test]
    async fn a_failed_round_writes_nothing_and_the_next_one_goes_through() {
        for db in &test_dbs("a_failed_round_writes_nothing_and_the_next_one_goes").await {
            let mut s = db.open().await;
            // Two jobs with one client token: the database refuses the round.
            let (mut w, _) = round(1);
            w.job(&job(500, Some("tok")));
            w.job(&job(501, Some("tok")));
            assert!(s.write_round(w).await.is_err());
            // A fault injected at the commit.
            if let crate::StoreUrl::Sqlite(file) = &db.url {
                super::super::fail_commits(file.parent().unwrap(), 1);
                let (w, _) = round(1);
                let e = s.write_round(w).await.unwrap_err();
                assert!(matches!(e, StoreError::InjectedFault), "{e}");
            }
            // Fenced by a stale epoch: this server no longer leads.
            let epoch = s
                .acquire_lease("me", "http://me", 60_000, false)
                .await
                .unwrap()
                .unwrap();
            s.set_fence(Some(epoch + 1));
            let (w, _) = round(1);
            let e = s.write_round(w).await.unwrap_err();
            assert!(
                matches!(e, StoreError::Fenced { mine, current: Some(c) } if mine == epoch + 1 && c == epoch),
                "{e}"
            );
            {
                let mut r = db.open().await;
                assert_eq!(r.load_jobs().await.unwrap(), []);
                assert_eq!(r.load_nodes().await.unwrap(), []);
                assert_eq!(r.job_events(1).await.unwrap().events.len(), 0);
                assert_eq!(r.meta("predictor").await.unwrap(), None);
            }
            s.set_fence(Some(epoch));
            let (w, jobs) = round(1);
            s.write_round(w).await.unwrap();
            assert_eq!(db.open().await.load_jobs().await.unwrap(), jobs);
            let mut w = RoundWrites::default();
            assert!(w.meta("schema_version", "9".into()).is_err());
        }
    }
}
