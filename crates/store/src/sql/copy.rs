//! A whole store copied: `gpusched admin migrate-store` (from one store into another,
//! empty one, either backend to either) and `gpusched admin backup` (a consistent
//! online snapshot written as a new SQLite file, restorable with migrate-store).
//!
//! Both read the source in one transaction (a snapshot: REPEATABLE READ on PostgreSQL,
//! a read transaction of SQLite's WAL), so a server may go on writing meanwhile, and
//! write the target in one transaction, so a failed copy leaves nothing half written.
//! Rows travel as stored (jobs through [`StoredJob`], a replica's `service` and a job's
//! `placement` and `interactive` with them; the other tables, `services` and
//! `reservations` included, as their columns);
//! ids are kept, and the target's counters continue after them.

use std::path::{Path, PathBuf};

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Connection, Row};

use super::dialect::{marks, Dialect};
use super::{array_tasks, ended, jobs, reservations, services, Store};
use crate::array_task::CompactTask;
use crate::stored_job::StoredJob;
use crate::{StoreError, StoreUrl};

/// The `meta` keys each store keeps of its own (its schema), never copied.
const OWN_META: [&str; 2] = ["schema_version", "written_by"];

/// One row of `job_events`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRow {
    pub job: i64,
    pub seq: i64,
    pub at_ms: i64,
    pub kind: String,
    pub attempt: i64,
    pub nodes: String,
    pub detail: String,
}

/// One row of `audit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRow {
    pub id: i64,
    pub at_ms: i64,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub detail: String,
}

/// Every row of a store, as of one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub jobs: Vec<StoredJob>,
    /// Array tasks kept as compact records (schema 17), each with its events.
    pub tasks: Vec<CompactTask>,
    /// (name, data)
    pub nodes: Vec<(String, String)>,
    /// (id, hash, data)
    pub tokens: Vec<(i64, String, String)>,
    /// (name, data), by name (schema 12).
    pub services: Vec<(String, String)>,
    /// (name, data), by name (schema 13).
    pub reservations: Vec<(String, String)>,
    /// (job, step, data), by job and step (schema 14).
    pub steps: Vec<(i64, i64, String)>,
    pub events: Vec<EventRow>,
    pub audit: Vec<AuditRow>,
    /// (key, value), the store's own schema keys left out; `max_job_id` is the highest
    /// id ever issued (so the target never issues one again).
    pub meta: Vec<(String, String)>,
}

/// How many rows a copy wrote, per table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopyCounts {
    pub jobs: usize,
    pub tasks: usize,
    pub nodes: usize,
    pub tokens: usize,
    pub services: usize,
    pub reservations: usize,
    pub steps: usize,
    pub events: usize,
    pub audit: usize,
    pub meta: usize,
}

impl std::fmt::Display for CopyCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} jobs, {} compact array tasks, {} nodes, {} tokens, {} services, {} reservations, {} steps, \
             {} job events, {} audit entries, {} meta values",
            self.jobs,
            self.tasks,
            self.nodes,
            self.tokens,
            self.services,
            self.reservations,
            self.steps,
            self.events,
            self.audit,
            self.meta
        )
    }
}

impl Snapshot {
    pub fn counts(&self) -> CopyCounts {
        CopyCounts {
            jobs: self.jobs.len(),
            tasks: self.tasks.len(),
            nodes: self.nodes.len(),
            tokens: self.tokens.len(),
            services: self.services.len(),
            reservations: self.reservations.len(),
            steps: self.steps.len(),
            events: self.events.len(),
            audit: self.audit.len(),
            meta: self.meta.len(),
        }
    }
}

fn text(r: &AnyRow, i: usize) -> Result<String, sqlx::Error> {
    r.try_get(i)
}

fn int(r: &AnyRow, i: usize) -> Result<i64, sqlx::Error> {
    r.try_get(i)
}

/// Reads every table in the transaction the caller opened on `conn`.
async fn read_all(conn: &mut AnyConnection, d: Dialect) -> Result<Snapshot, StoreError> {
    let stored = jobs::load(&mut *conn).await?;
    let max_id = ended::max_id(&mut *conn, d).await?;
    let all = |sql: &'static str| sqlx::query(sql);
    let mut tasks = Vec::new();
    for r in all(
        "SELECT id, array_id, array_index, queue, state, node, start_ms, end_ms,
                  energy_j, used_cpu_ms, used_mem_peak_bytes, life, events
                  FROM array_tasks t ORDER BY id",
    )
    .fetch_all(&mut *conn)
    .await?
    {
        let mut t = array_tasks::decode(&r)?;
        t.events = array_tasks::parse_events(t.id, &text(&r, 12)?)?;
        tasks.push(t);
    }
    let nodes = all("SELECT name, data FROM nodes ORDER BY name")
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| Ok((text(r, 0)?, text(r, 1)?)))
        .collect::<Result<_, sqlx::Error>>()?;
    let tokens = all("SELECT id, hash, data FROM tokens ORDER BY id")
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| Ok((int(r, 0)?, text(r, 1)?, text(r, 2)?)))
        .collect::<Result<_, sqlx::Error>>()?;
    let mut services = all(services::SELECT_ALL)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(services::key_data)
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    // By name in byte order on either backend (see `services::decode`).
    services.sort_unstable();
    let mut reservations = all(reservations::SELECT_ALL)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(reservations::key_data)
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    // By name in byte order on either backend (see `reservations::decode`).
    reservations.sort_unstable();
    let steps = all(super::steps::SELECT_ALL)
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(super::steps::row)
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    let events = all(
        "SELECT job, seq, at_ms, kind, attempt, nodes, detail FROM job_events
         ORDER BY job, seq",
    )
    .fetch_all(&mut *conn)
    .await?
    .iter()
    .map(|r| {
        Ok(EventRow {
            job: int(r, 0)?,
            seq: int(r, 1)?,
            at_ms: int(r, 2)?,
            kind: text(r, 3)?,
            attempt: int(r, 4)?,
            nodes: text(r, 5)?,
            detail: text(r, 6)?,
        })
    })
    .collect::<Result<_, sqlx::Error>>()?;
    let audit = all("SELECT id, at_ms, actor, action, target, detail FROM audit ORDER BY id")
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| {
            Ok(AuditRow {
                id: int(r, 0)?,
                at_ms: int(r, 1)?,
                actor: text(r, 2)?,
                action: text(r, 3)?,
                target: text(r, 4)?,
                detail: text(r, 5)?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()?;
    let mut meta: Vec<(String, String)> = all("SELECT key, value FROM meta ORDER BY key")
        .fetch_all(&mut *conn)
        .await?
        .iter()
        .map(|r| Ok((text(r, 0)?, text(r, 1)?)))
        .collect::<Result<Vec<_>, sqlx::Error>>()?
        .into_iter()
        .filter(|(k, _)| !OWN_META.contains(&k.as_str()) && k != "max_job_id")
        .collect();
    if max_id > 0 {
        meta.push(("max_job_id".into(), max_id.to_string()));
        meta.sort();
    }
    Ok(Snapshot {
        jobs: stored,
        tasks,
        nodes,
        tokens,
        services,
        reservations,
        steps,
        events,
        audit,
        meta,
    })
}

/// Rows per multi-row insert of the small tables (7 values a row at most).
const ROWS: usize = 500;

impl Store {
    /// Every row, read in one transaction: a consistent snapshot while a server writes.
    pub async fn snapshot(&mut self) -> Result<Snapshot, StoreError> {
        let d = self.dialect;
        let mut tx = self.conn.begin().await?;
        if d == Dialect::Postgres {
            // Every statement of the transaction sees the same committed state.
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .execute(&mut *tx)
                .await?;
        }
        let snap = read_all(&mut tx, d).await?;
        tx.rollback().await?;
        Ok(snap)
    }

    /// What the store holds besides its schema (empty: nothing), as words.
    pub async fn contents(&mut self) -> Result<Vec<String>, StoreError> {
        let mut held = Vec::new();
        for (table, what) in [
            ("jobs", "jobs"),
            ("array_tasks", "compact array tasks"),
            ("nodes", "nodes"),
            ("tokens", "tokens"),
            ("services", "services"),
            ("reservations", "reservations"),
            ("steps", "job steps"),
            ("job_events", "job events"),
            ("audit", "audit entries"),
        ] {
            let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
                .fetch_one(&mut self.conn)
                .await?;
            if n > 0 {
                held.push(format!("{n} {what}"));
            }
        }
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM meta WHERE key NOT IN ('schema_version', 'written_by')",
        )
        .fetch_one(&mut self.conn)
        .await?;
        if n > 0 {
            held.push(format!("{n} meta values"));
        }
        Ok(held)
    }

    /// Writes `snap` into this store, which must be empty, in one transaction.
    pub async fn restore(&mut self, snap: &Snapshot) -> Result<CopyCounts, StoreError> {
        let d = self.dialect;
        let mut tx = self.conn.begin().await?;
        jobs::put_many(&mut tx, d, &snap.jobs).await?;
        for chunk in super::dialect::pow2_chunks(&snap.tasks, array_tasks::ROWS_PER_STATEMENT) {
            let mut vals = Vec::with_capacity(chunk.len() * array_tasks::COLUMNS.len());
            for t in chunk {
                vals.extend(array_tasks::values(t)?);
            }
            super::values::bind_all(
                sqlx::query(&array_tasks::upsert_rows(d, chunk.len())),
                &vals,
            )
            .execute(&mut *tx)
            .await?;
        }
        for chunk in snap.nodes.chunks(ROWS) {
            let sql = insert_sql("nodes (name, data)", 2, chunk.len());
            let mut q = sqlx::query(&sql);
            for (name, data) in chunk {
                q = q.bind(name).bind(data);
            }
            q.execute(&mut *tx).await?;
        }
        for chunk in snap.tokens.chunks(ROWS) {
            let sql = insert_sql("tokens (id, hash, data)", 3, chunk.len());
            let mut q = sqlx::query(&sql);
            for (id, hash, data) in chunk {
                q = q.bind(*id).bind(hash).bind(data);
            }
            q.execute(&mut *tx).await?;
        }
        for (table, rows) in [
            ("services (name, data)", &snap.services),
            ("reservations (name, data)", &snap.reservations),
        ] {
            for chunk in rows.chunks(ROWS) {
                let sql = insert_sql(table, 2, chunk.len());
                let mut q = sqlx::query(&sql);
                for (name, data) in chunk {
                    q = q.bind(name).bind(data);
                }
                q.execute(&mut *tx).await?;
            }
        }
        for chunk in snap.steps.chunks(ROWS) {
            let sql = insert_sql("steps (job_id, step, data)", 3, chunk.len());
            let mut q = sqlx::query(&sql);
            for (job, step, data) in chunk {
                q = q.bind(*job).bind(*step).bind(data);
            }
            q.execute(&mut *tx).await?;
        }
        for chunk in snap.events.chunks(ROWS) {
            let sql = insert_sql(
                "job_events (job, seq, at_ms, kind, attempt, nodes, detail)",
                7,
                chunk.len(),
            );
            let mut q = sqlx::query(&sql);
            for e in chunk {
                q = q
                    .bind(e.job)
                    .bind(e.seq)
                    .bind(e.at_ms)
                    .bind(&e.kind)
                    .bind(e.attempt)
                    .bind(&e.nodes)
                    .bind(&e.detail);
            }
            q.execute(&mut *tx).await?;
        }
        for chunk in snap.audit.chunks(ROWS) {
            let sql = insert_sql(
                "audit (id, at_ms, actor, action, target, detail)",
                6,
                chunk.len(),
            );
            let mut q = sqlx::query(&sql);
            for a in chunk {
                q = q
                    .bind(a.id)
                    .bind(a.at_ms)
                    .bind(&a.actor)
                    .bind(&a.action)
                    .bind(&a.target)
                    .bind(&a.detail);
            }
            q.execute(&mut *tx).await?;
        }
        if d == Dialect::Postgres {
            // Ids given explicitly do not move the identity's sequence: the next entry
            // must come after the copied ones (SQLite's AUTOINCREMENT follows by itself).
            sqlx::query(
                "SELECT setval(pg_get_serial_sequence('audit', 'id'),
                               COALESCE((SELECT MAX(id) FROM audit), 0) + 1, false)",
            )
            .execute(&mut *tx)
            .await?;
        }
        for (key, value) in &snap.meta {
            sqlx::query(
                "INSERT INTO meta (key, value) VALUES ($1, $2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            )
            .bind(key)
            .bind(value)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(snap.counts())
    }
}

/// `INSERT INTO {table_cols} VALUES (...), ...` for `rows` rows of `cols` values.
fn insert_sql(table_cols: &str, cols: usize, rows: usize) -> String {
    let all = marks(cols * rows);
    let marks: Vec<&str> = all.split(", ").collect();
    let values: Vec<String> = marks
        .chunks(cols)
        .map(|row| format!("({})", row.join(", ")))
        .collect();
    format!("INSERT INTO {table_cols} VALUES {}", values.join(", "))
}

/// Opens the target of a copy and checks that it is empty.
async fn open_empty(to: &StoreUrl) -> Result<Store, StoreError> {
    let mut target = Store::open(to).await?;
    let held = target.contents().await?;
    if !held.is_empty() {
        return Err(StoreError::NotEmpty {
            store: to.to_string(),
            holds: held.join(", "),
        });
    }
    Ok(target)
}

/// Copies every row of the store `from` into the store `to`, which must be empty (a new
/// SQLite file, or a PostgreSQL database just created). The source is read in one
/// snapshot; run it with the server stopped to carry its latest state over.
pub async fn migrate_store(from: &StoreUrl, to: &StoreUrl) -> Result<CopyCounts, StoreError> {
    if from == to {
        return Err(StoreError::SameStore(to.to_string()));
    }
    let mut source = Store::open(from).await?;
    let mut target = open_empty(to).await?;
    let snap = source.snapshot().await?;
    source.close().await?;
    let counts = target.restore(&snap).await?;
    target.close().await?;
    Ok(counts)
}

/// Writes a consistent snapshot of the store `from` (a server may be running on it) to
/// the new SQLite file `to`; returns what it holds. The file appears only once whole.
pub async fn backup(from: &StoreUrl, to: &Path) -> Result<CopyCounts, StoreError> {
    if to.exists() {
        return Err(StoreError::Exists(to.display().to_string()));
    }
    let mut partial = to.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    for suffix in ["", "-wal", "-shm"] {
        let mut p = partial.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
    let mut source = Store::open(from).await?;
    let snap = source.snapshot().await?;
    source.close().await?;
    let mut target = open_empty(&StoreUrl::Sqlite(partial.clone())).await?;
    let counts = target.restore(&snap).await?;
    target.close().await?;
    std::fs::rename(&partial, to).map_err(|source| StoreError::File {
        path: to.display().to_string(),
        source,
    })?;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::test_dbs::test_dbs;
    use gpusched_wire::history::{AuditAction, AuditEntry, JobEvent, JobEventKind};

    /// A store with a row in every table: jobs of every shape, events, audit, meta, a
    /// purged job whose id stays issued.
    async fn filled(s: &mut Store) {
        let full = crate::stored_job::tests::full_stored();
        let mut jobs = Vec::new();
        for id in 1..=130u64 {
            let mut j = full.clone();
            j.id = id;
            j.client_token = Some(format!("alice/t{id}"));
            if id % 3 == 0 {
                j.state = gpusched_wire::JobState::Succeeded;
                j.end_ms = Some(1_000 + id);
                j.end_reason = j.note.take();
            }
            jobs.push(j);
        }
        let mut tx = s.begin().await.unwrap();
        tx.put_jobs(&jobs).await.unwrap();
        let ev = |at_ms, detail: &str| JobEvent {
            at_ms,
            kind: JobEventKind::Checkpoint,
            attempt: 2,
            nodes: vec!["n1".into()],
            detail: detail.into(),
        };
        let events: Vec<(u64, JobEvent)> = (1..=130u64)
            .flat_map(|id| (0..5).map(move |k| (id, (id * 10 + k, format!("e{k} 'q' \"d\"")))))
            .map(|(id, (at, d))| (id, ev(at, &d)))
            .collect();
        tx.add_events(&events, 4).await.unwrap();
        for i in 0..3 {
            tx.add_audit(&AuditEntry {
                id: 0,
                at_ms: 100 + i,
                actor: "root".into(),
                action: AuditAction::Drain,
                target: format!("n{i}"),
                detail: "maintenance".into(),
            })
            .await
            .unwrap();
        }
        tx.put_meta("predictor", "{\"v\": 1}").await.unwrap();
        tx.commit().await.unwrap();
        // Services (the jobs above are replicas of one: `full_stored`).
        let mut w = super::super::RoundWrites::default();
        for name in ["whisper", "resnet", "llama-3"] {
            w.service(&crate::record::tests::service(name)).unwrap();
        }
        // Reservations (the jobs above run in one: `full_stored`'s placement).
        for name in ["workshop", "maint.2026-12", "deadline"] {
            w.reservation(&crate::record::tests::reservation(name))
                .unwrap();
        }
        s.write_round(w).await.unwrap();
        for (sql, a, b) in [
            (
                "INSERT INTO nodes (name, data) VALUES ($1, $2)",
                "n1",
                "{\"n\":1}",
            ),
            (
                "INSERT INTO nodes (name, data) VALUES ($1, $2)",
                "n2",
                "{\"n\":2}",
            ),
        ] {
            sqlx::query(sql)
                .bind(a)
                .bind(b)
                .execute(&mut s.conn)
                .await
                .unwrap();
        }
        sqlx::query("INSERT INTO tokens (id, hash, data) VALUES (7, 'ab12', '{\"t\":7}')")
            .execute(&mut s.conn)
            .await
            .unwrap();
        // The newest job purged: its id (130) must stay issued in the copy.
        let mut tx = s.begin().await.unwrap();
        tx.purge_ended(1_000 + 130).await.unwrap();
        sqlx::query("DELETE FROM jobs WHERE id = 130")
            .execute(&mut *tx.tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    #[tokio::test]
    async fn a_store_copied_to_each_backend_and_back_keeps_every_row() {
        let sources = test_dbs("copy source").await;
        let source = &sources[0];
        let mut s = source.open().await;
        filled(&mut s).await;
        let want = s.snapshot().await.unwrap();
        s.close().await.unwrap();
        assert_eq!(want.jobs.len(), 86, "130 less 43 purged and 1 deleted");
        assert_eq!(want.events.len(), 86 * 4, "4 kept of 5 per job");
        assert!(want.meta.contains(&("max_job_id".into(), "130".into())));
        let names: Vec<&str> = want.services.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["llama-3", "resnet", "whisper"]);
        assert!(want.jobs.iter().all(|j| j.service.is_some()));
        let names: Vec<&str> = want.reservations.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["deadline", "maint.2026-12", "workshop"]);
        assert!(want
            .jobs
            .iter()
            .all(|j| j.placement.is_some() && j.interactive));
        for db in &test_dbs("a_store_copied_to_each_backend_and_back_keeps_every_row").await {
            let counts = migrate_store(&source.url, &db.url).await.unwrap();
            assert_eq!(counts, want.counts());
            let mut t = db.open().await;
            assert_eq!(t.snapshot().await.unwrap(), want, "{:?}", db.dialect);
            let services = t.load_services().await.unwrap();
            assert_eq!(
                services,
                ["llama-3", "resnet", "whisper"].map(crate::record::tests::service)
            );
            assert_eq!(
                t.load_reservations().await.unwrap(),
                ["deadline", "maint.2026-12", "workshop"].map(crate::record::tests::reservation)
            );
            assert_eq!(t.max_job_id().await.unwrap(), 130);
            // The audit log's ids continue after the copied ones.
            let mut tx = t.begin().await.unwrap();
            tx.add_audit(&AuditEntry {
                id: 0,
                at_ms: 200,
                actor: "root".into(),
                action: AuditAction::Resume,
                target: "n1".into(),
                detail: String::new(),
            })
            .await
            .unwrap();
            tx.commit().await.unwrap();
            let page = t.audit(&Default::default()).await.unwrap();
            assert_eq!(page.entries[0].id, 4);
            t.close().await.unwrap();
            // A store that holds anything is never a target.
            let err = migrate_store(&source.url, &db.url).await.unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains("not empty") && text.contains("86 jobs"),
                "{text}"
            );
            // And back to a new SQLite file: the same rows (less the new audit entry).
            let back_dir = tempfile::tempdir().unwrap();
            let back = StoreUrl::Sqlite(back_dir.path().join("back.db"));
            migrate_store(&db.url, &back).await.unwrap();
            let mut b = Store::open(&back).await.unwrap();
            let mut got = b.snapshot().await.unwrap();
            assert_eq!(got.audit.pop().map(|a| a.action), Some("resume".into()));
            assert_eq!(got, want);
        }
        let err = migrate_store(&source.url, &source.url).await.unwrap_err();
        assert!(err.to_string().contains("same store"), "{err}");
    }

    #[tokio::test]
    async fn a_backup_is_a_new_sqlite_file_with_every_row_and_never_overwrites() {
        for db in &test_dbs("a_backup_is_a_new_sqlite_file_with_every_row").await {
            let mut s = db.open().await;
            filled(&mut s).await;
            let want = s.snapshot().await.unwrap();
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("backup.db");
            // Taken while the store is open and written to (the snapshot is one read).
            let counts = backup(&db.url, &file).await.unwrap();
            let mut tx = s.begin().await.unwrap();
            tx.put_meta("later", "x").await.unwrap();
            tx.commit().await.unwrap();
            assert_eq!(counts, want.counts());
            let mut b = Store::open_file(&file).await.unwrap();
            assert_eq!(b.snapshot().await.unwrap(), want, "{:?}", db.dialect);
            let err = backup(&db.url, &file).await.unwrap_err();
            assert!(err.to_string().contains("exists already"), "{err}");
        }
    }
}
