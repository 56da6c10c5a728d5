//! A round's writes in one transaction: what the server's state task commits after each
//! round (job rows, nodes, tokens, services, reservations, job events, audit entries,
//! `meta` values),
//! fenced by the leader's epoch like every write transaction.
//!
//! On PostgreSQL it goes through sqlx's connection statement by statement (each one a
//! round trip to the database anyway; `postgres/round.rs`). On SQLite it goes to the
//! store's round writer (`sqlite/writer.rs`): one thread of its own with its own
//! connection to the file, which runs the whole transaction, from `BEGIN IMMEDIATE` to
//! the fsync'd `COMMIT`, on one hand-off. The values bound are the same either way
//! (`values.rs`), and so are the statements' texts.
//!
//! The order of a round's writes is written once ([`RoundWrites::write_to`]); each
//! backend is a [`RoundTarget`] that says how one kind of row is written.

use gpusched_wire::history::{AuditEntry, JobEvent};

use super::dialect::Dialect;
use super::values::Val;
use super::{Store, RESERVED_META};
use crate::array_task::CompactTask;
use crate::record::{NodeRecord, ReservationRecord, ServiceRecord, TokenRecord};
use crate::stored_job::StoredJob;
use crate::StoreError;

/// The statements both ways share (besides the multi-row ones of `jobs` and `history`).
pub(crate) const NODE_UPSERT: &str = "INSERT INTO nodes (name, data) VALUES ($1, $2)
     ON CONFLICT(name) DO UPDATE SET data = excluded.data";
pub(crate) const TOKEN_UPSERT: &str = "INSERT INTO tokens (id, hash, data) VALUES ($1, $2, $3)
     ON CONFLICT(id) DO UPDATE SET data = excluded.data";
pub(crate) const SERVICE_UPSERT: &str = "INSERT INTO services (name, data) VALUES ($1, $2)
     ON CONFLICT(name) DO UPDATE SET data = excluded.data";
pub(crate) const SERVICE_DELETE: &str = "DELETE FROM services WHERE name = $1";
pub(crate) const RESERVATION_UPSERT: &str = "INSERT INTO reservations (name, data) VALUES ($1, $2)
     ON CONFLICT(name) DO UPDATE SET data = excluded.data";
pub(crate) const RESERVATION_DELETE: &str = "DELETE FROM reservations WHERE name = $1";
pub(crate) const META_UPSERT: &str = "INSERT INTO meta (key, value) VALUES ($1, $2)
     ON CONFLICT(key) DO UPDATE SET value = excluded.value";
pub(crate) const AUDIT_INSERT: &str =
    "INSERT INTO audit (at_ms, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5)";

/// Everything one round writes, as plain data (the writer's thread owns it).
#[derive(Default)]
pub struct RoundWrites {
    pub(crate) jobs: Vec<StoredJob>,
    /// (name, the record as JSON).
    pub(crate) nodes: Vec<(String, String)>,
    /// (id, hash, the record as JSON).
    pub(crate) tokens: Vec<(i64, String, String)>,
    /// The services' rows in the order they were given: (name, the record as JSON) to
    /// insert or replace, (name, None) to delete.
    pub(crate) services: Vec<(String, Option<String>)>,
    /// The reservations' rows in the order they were given, as `services`.
    pub(crate) reservations: Vec<(String, Option<String>)>,
    /// (job, step, the record as JSON).
    pub(crate) steps: Vec<(i64, i64, String)>,
    pub(crate) events: Vec<(u64, JobEvent)>,
    /// Array tasks written as compact records (`array_tasks.rs`), each with its events of
    /// the round.
    pub(crate) tasks: Vec<CompactTask>,
    /// Compact tasks that get a job row this round (among `jobs`): their compact rows go
    /// and their events move to `job_events`, before the round's own.
    pub(crate) promoted: Vec<u64>,
    /// Events kept per job (the first and the newest).
    pub(crate) keep: u32,
    pub(crate) audit: Vec<AuditEntry>,
    pub(crate) meta: Vec<(String, String)>,
}

impl RoundWrites {
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
            && self.nodes.is_empty()
            && self.tokens.is_empty()
            && self.services.is_empty()
            && self.reservations.is_empty()
            && self.steps.is_empty()
            && self.events.is_empty()
            && self.tasks.is_empty()
            && self.promoted.is_empty()
            && self.audit.is_empty()
            && self.meta.is_empty()
    }

    /// Inserts or replaces the job's row.
    pub fn job(&mut self, row: StoredJob) {
        self.jobs.push(row);
    }

    /// Inserts or updates an array task's compact record, appending `task.events` to
    /// its timeline. The caller made sure it stands for the task exactly
    /// (`compact_if_exact`) and that the task has no job row.
    pub fn task(&mut self, task: CompactTask) {
        self.tasks.push(task);
    }

    /// Compact task `id` gets its job row this round (given with [`RoundWrites::job`]):
    /// its compact record goes, and its events join `job_events` ahead of the round's.
    pub fn promote(&mut self, id: u64) {
        self.promoted.push(id);
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

    /// Inserts or replaces the service's row (keyed by `rec.spec.name`). A round's
    /// service writes are made in the order they were given, so a row written and then
    /// deleted in one round ends deleted, and one deleted and then written ends written.
    pub fn service(&mut self, rec: &ServiceRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(rec).map_err(|source| StoreError::Corrupt {
            what: format!("service {}", rec.spec.name),
            source,
        })?;
        self.services.push((rec.spec.name.clone(), Some(data)));
        Ok(())
    }

    /// Deletes the service's row (none: nothing to do). Its replicas' job rows are the
    /// server's to write; nothing here touches them.
    pub fn service_gone(&mut self, name: &str) {
        self.services.push((name.to_string(), None));
    }

    /// Inserts or replaces the reservation's row (keyed by `rec.spec.name`), in the
    /// order given among the round's reservation writes, as [`RoundWrites::service`].
    pub fn reservation(&mut self, rec: &ReservationRecord) -> Result<(), StoreError> {
        let data = serde_json::to_string(rec).map_err(|source| StoreError::Corrupt {
            what: format!("reservation {}", rec.spec.name),
            source,
        })?;
        self.reservations.push((rec.spec.name.clone(), Some(data)));
        Ok(())
    }

    /// Deletes the reservation's row (none: nothing to do). The jobs that name it in
    /// their placement are the server's to write; nothing here touches them.
    pub fn reservation_gone(&mut self, name: &str) {
        self.reservations.push((name.to_string(), None));
    }

    /// Inserts or replaces a job step's row.
    pub fn step(&mut self, rec: &crate::record::StoredStep) -> Result<(), StoreError> {
        let data = serde_json::to_string(rec).map_err(|source| StoreError::Corrupt {
            what: format!("step {}.{}", rec.job, rec.step),
            source,
        })?;
        self.steps.push((rec.job as i64, i64::from(rec.step), data));
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
            Dialect::Sqlite => crate::sqlite::writer::write_round(self, w, None).await,
            Dialect::Postgres => crate::postgres::round::write_round(self, w, None).await,
        }
    }

    /// [`Store::write_round`] of `w` with job rows made as they are written: `rows` is
    /// drawn [`crate::JOB_ROWS_AT_ONCE`] at a time and each chunk is written (and
    /// dropped) before the next is made, in the same transaction, before `w`'s own
    /// writes. A round of a few rows is one hand-off as before.
    pub async fn write_round_streamed(
        &mut self,
        mut w: RoundWrites,
        rows: &mut (dyn Iterator<Item = StoredJob> + Send),
    ) -> Result<(), StoreError> {
        let first = job_chunk(rows);
        if first.len() < crate::JOB_ROWS_AT_ONCE {
            w.jobs.splice(0..0, first);
            return self.write_round(w).await;
        }
        let rows = Some(JobRows { first, more: rows });
        match self.dialect {
            Dialect::Sqlite => crate::sqlite::writer::write_round(self, w, rows).await,
            Dialect::Postgres => crate::postgres::round::write_round(self, w, rows).await,
        }
    }
}

/// A round's job rows made as they are written ([`Store::write_round_streamed`]): the
/// first chunk, made, and the rest, drawn a chunk at a time ([`job_chunk`]) before the
/// round's own writes.
pub(crate) struct JobRows<'a> {
    pub(crate) first: Vec<StoredJob>,
    pub(crate) more: &'a mut (dyn Iterator<Item = StoredJob> + Send),
}

/// The next [`crate::JOB_ROWS_AT_ONCE`] rows of `rows` at most; empty when none is left.
pub(crate) fn job_chunk(rows: &mut (dyn Iterator<Item = StoredJob> + Send)) -> Vec<StoredJob> {
    rows.take(crate::JOB_ROWS_AT_ONCE).collect()
}

/// Where a round's writes go, one kind at a time: the order is
/// [`RoundWrites::write_to`]'s alone; each backend says how a kind is written, inside the
/// transaction it began (`postgres/round.rs`: sqlx's statements on the store's connection;
/// `sqlite/writer.rs`: the round writer's prepared statements, which never wait).
pub(crate) trait RoundTarget {
    /// The job rows (`jobs`' multi-row upsert).
    async fn jobs(&mut self, rows: &[StoredJob]) -> Result<(), StoreError>;
    /// Compact tasks' records (`array_tasks`' multi-row upsert).
    async fn tasks(&mut self, tasks: &[CompactTask]) -> Result<(), StoreError>;
    /// Compact task `id`'s record deleted; its events, to go to `job_events`.
    async fn promote(&mut self, id: u64) -> Result<Vec<JobEvent>, StoreError>;
    /// A node's row ([`NODE_UPSERT`]).
    async fn node(&mut self, name: &str, data: &str) -> Result<(), StoreError>;
    /// A token's row ([`TOKEN_UPSERT`]).
    async fn token(&mut self, id: i64, hash: &str, data: &str) -> Result<(), StoreError>;
    /// A service's row ([`SERVICE_UPSERT`]).
    async fn service(&mut self, name: &str, data: &str) -> Result<(), StoreError>;
    /// A service's row deleted ([`SERVICE_DELETE`]).
    async fn service_gone(&mut self, name: &str) -> Result<(), StoreError>;
    /// A reservation's row ([`RESERVATION_UPSERT`]).
    async fn reservation(&mut self, name: &str, data: &str) -> Result<(), StoreError>;
    /// A reservation's row deleted ([`RESERVATION_DELETE`]).
    async fn reservation_gone(&mut self, name: &str) -> Result<(), StoreError>;
    /// A job step's row ([`super::steps::STEP_UPSERT`]).
    async fn step(&mut self, job: i64, step: i64, data: &str) -> Result<(), StoreError>;
    /// The round's job events, numbered on from each job's last, and the prune to `keep`.
    async fn events(&mut self, events: &[(u64, JobEvent)], keep: u32) -> Result<(), StoreError>;
    /// An audit entry ([`AUDIT_INSERT`]).
    async fn audit(&mut self, entry: &AuditEntry) -> Result<(), StoreError>;
    /// A `meta` value ([`META_UPSERT`]).
    async fn meta(&mut self, key: &str, value: &str) -> Result<(), StoreError>;
}

impl RoundWrites {
    /// Writes the round into `t` in the one order of a round: jobs, promotions and
    /// compact tasks, nodes, tokens,
    /// services, reservations (upserts and deletions of each in the order given), job
    /// steps, job events, audit entries, `meta` values. No table refers to another by key, so the order only fixes which
    /// statement a failing round stops at; the transaction makes it all or nothing.
    pub(crate) async fn write_to(&self, t: &mut impl RoundTarget) -> Result<(), StoreError> {
        t.jobs(&self.jobs).await?;
        let mut moved = Vec::new();
        for id in &self.promoted {
            moved.extend(t.promote(*id).await?.into_iter().map(|e| (*id, e)));
        }
        t.tasks(&self.tasks).await?;
        for (name, data) in &self.nodes {
            t.node(name, data).await?;
        }
        for (id, hash, data) in &self.tokens {
            t.token(*id, hash, data).await?;
        }
        for (name, data) in &self.services {
            match data {
                Some(data) => t.service(name, data).await?,
                None => t.service_gone(name).await?,
            }
        }
        for (name, data) in &self.reservations {
            match data {
                Some(data) => t.reservation(name, data).await?,
                None => t.reservation_gone(name).await?,
            }
        }
        for (job, step, data) in &self.steps {
            t.step(*job, *step, data).await?;
        }
        if moved.is_empty() {
            t.events(&self.events, self.keep).await?;
        } else {
            moved.extend(self.events.iter().cloned());
            t.events(&moved, self.keep).await?;
        }
        for entry in &self.audit {
            t.audit(entry).await?;
        }
        for (key, value) in &self.meta {
            t.meta(key, value).await?;
        }
        Ok(())
    }
}

/// The audit entry's values, in [`AUDIT_INSERT`]'s order.
pub(crate) fn audit_values(e: &AuditEntry) -> Result<[Val<'_>; 5], StoreError> {
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

#[cfg(test)]
mod tests {
    use gpusched_wire::history::{AuditAction, JobEventKind};

    use super::super::test_dbs::test_dbs;
    use super::*;
    use crate::record::tests::{reservation, service};

    fn job(id: u64, token: Option<&str>) -> StoredJob {
        let mut j = crate::stored_job::tests::full_stored();
        j.id = id;
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
    fn round(first_job: u64) -> (RoundWrites, Vec<StoredJob>) {
        let mut w = RoundWrites::default();
        let jobs: Vec<StoredJob> = (first_job..first_job + 70).map(|i| job(i, None)).collect();
        for j in &jobs {
            w.job(j.clone());
        }
        w.node(&node("n1")).unwrap();
        w.token(&token(first_job)).unwrap();
        w.service(&service("resnet")).unwrap();
        w.reservation(&reservation("workshop")).unwrap();
        let events = jobs
            .iter()
            .flat_map(|j| [(j.id, event(1)), (j.id, event(2))])
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
            assert_eq!(s.load_services().await.unwrap(), [service("resnet")]);
            assert_eq!(
                s.load_reservations().await.unwrap(),
                [reservation("workshop")]
            );
            // Every job is `full_stored`'s, a replica of a service, with placement rules,
            // interactive.
            assert!(jobs
                .iter()
                .all(|j| j.service.is_some() && j.placement.is_some() && j.interactive));
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
            w.job(job(500, Some("tok")));
            w.job(job(501, Some("tok")));
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
                assert_eq!(r.load_services().await.unwrap(), []);
                assert_eq!(r.load_reservations().await.unwrap(), []);
                assert_eq!(r.job_events(1).await.unwrap().events.len(), 0);
                assert_eq!(r.meta("predictor").await.unwrap(), None);
            }
            s.set_fence(Some(epoch));
            let (w, jobs) = round(1);
            s.write_round(w).await.unwrap();
            assert_eq!(db.open().await.load_jobs().await.unwrap(), jobs);
            // A failed round's deletion and update are not made either.
            let mut w = RoundWrites::default();
            w.service_gone("resnet");
            let mut changed = service("whisper");
            changed.spec.name = "resnet".into();
            w.service(&changed).unwrap();
            w.job(job(600, Some("tok-1")));
            w.job(job(601, Some("tok-1")));
            assert!(s.write_round(w).await.is_err());
            assert_eq!(
                db.open().await.load_services().await.unwrap(),
                [service("resnet")]
            );
            // Nor a failed round's reservations (deleted, replaced, added), nor its
            // jobs' changed rules.
            let mut w = RoundWrites::default();
            w.reservation_gone("workshop");
            let mut changed = reservation("other");
            changed.spec.name = "workshop".into();
            w.reservation(&changed).unwrap();
            w.reservation(&reservation("new")).unwrap();
            let mut j = jobs[0].clone();
            j.placement = None;
            j.interactive = false;
            w.job(j);
            w.job(job(600, Some("tok-1")));
            w.job(job(601, Some("tok-1")));
            assert!(s.write_round(w).await.is_err());
            let mut r = db.open().await;
            assert_eq!(
                r.load_reservations().await.unwrap(),
                [reservation("workshop")]
            );
            assert_eq!(r.load_jobs().await.unwrap(), jobs);
            let mut w = RoundWrites::default();
            assert!(w.meta("schema_version", "9".into()).is_err());
        }
    }

    /// A round whose job rows are made as they are written (`write_round_streamed`,
    /// several chunks of [`crate::JOB_ROWS_AT_ONCE`]) is one transaction: written whole
    /// with the round's other writes, or, when a later chunk fails (a client token held
    /// twice) or the commit does, not at all; the writer goes on with the next round.
    #[tokio::test]
    async fn a_streamed_round_is_one_transaction() {
        let n = crate::JOB_ROWS_AT_ONCE as u64 * 2 + 7;
        for db in &test_dbs("a_streamed_round_is_one_transaction").await {
            let mut s = db.open().await;
            // A duplicate token in the last chunk: nothing of the first chunks stays.
            let (w, _) = round(10_000);
            let mut rows = (1..=n)
                .map(|i| job(i, (i == n).then_some("tok-1")))
                .chain([job(n + 1, Some("tok-1"))]);
            assert!(s.write_round_streamed(w, &mut rows).await.is_err());
            {
                let mut r = db.open().await;
                assert_eq!(r.load_jobs().await.unwrap(), []);
                assert_eq!(r.load_nodes().await.unwrap(), []);
                assert_eq!(r.job_events(10_000).await.unwrap().events.len(), 0);
            }
            // A fault at the commit, after every chunk was written: nothing either.
            if let crate::StoreUrl::Sqlite(file) = &db.url {
                super::super::fail_commits(file.parent().unwrap(), 1);
                let (w, _) = round(10_000);
                let mut rows = (1..=n).map(|i| job(i, None));
                let e = s.write_round_streamed(w, &mut rows).await.unwrap_err();
                assert!(matches!(e, StoreError::InjectedFault), "{e}");
                assert_eq!(db.open().await.load_jobs().await.unwrap(), []);
            }
            // Then whole: every chunk's rows, the round's own rows after them, its events.
            let (w, round_jobs) = round(10_000);
            let mut rows = (1..=n).map(|i| job(i, None));
            s.write_round_streamed(w, &mut rows).await.unwrap();
            let mut want: Vec<StoredJob> = (1..=n).map(|i| job(i, None)).collect();
            want.extend(round_jobs);
            let mut r = db.open().await;
            assert_eq!(r.load_jobs().await.unwrap(), want);
            assert_eq!(r.load_nodes().await.unwrap(), [node("n1")]);
            assert_eq!(r.job_events(10_000).await.unwrap().events.len(), 2);
            // A small one is a plain round.
            let mut rows = [job(n + 5, None)].into_iter();
            s.write_round_streamed(RoundWrites::default(), &mut rows)
                .await
                .unwrap();
            assert_eq!(
                db.open().await.load_jobs().await.unwrap().len(),
                want.len() + 1
            );
        }
    }

    /// Services' rows: inserted, replaced and deleted by name, in the order a round
    /// gave them; read back by name (in byte order on either backend); a replica's
    /// `service` goes with its job's row, changed and cleared like any column.
    #[tokio::test]
    async fn services_are_upserted_deleted_in_order_and_read_by_name() {
        for db in &test_dbs("services_are_upserted_deleted_in_order_and_read_by_name").await {
            let mut s = db.open().await;
            let mut w = RoundWrites::default();
            // Names whose order a database's collation may not keep (`-` against a
            // letter or a digit).
            for name in ["ab", "a-b", "b", "a1"] {
                w.service(&service(name)).unwrap();
            }
            assert!(!w.is_empty());
            s.write_round(w).await.unwrap();
            let names = |v: Vec<ServiceRecord>| -> Vec<String> {
                v.into_iter().map(|r| r.spec.name).collect()
            };
            assert_eq!(
                names(s.load_services().await.unwrap()),
                ["a-b", "a1", "ab", "b"]
            );
            // An update replaces the whole record; a deletion removes the row; a
            // deletion of a row that is not there is nothing.
            let mut updated = service("b");
            updated.version = 4;
            updated.desired = 0;
            updated.spec.replicas = Some(7);
            updated.last_failure = None;
            updated.last_failure_ms = None;
            updated.deleting = false;
            let mut w = RoundWrites::default();
            w.service(&updated).unwrap();
            w.service_gone("a1");
            w.service_gone("never");
            s.write_round(w).await.unwrap();
            let got = s.load_services().await.unwrap();
            assert_eq!(names(got.clone()), ["a-b", "ab", "b"]);
            assert_eq!(got[2], updated);
            // In one round, in the order given: written then deleted ends deleted;
            // deleted then written ends written.
            let mut w = RoundWrites::default();
            w.service(&service("c")).unwrap();
            w.service_gone("c");
            w.service_gone("ab");
            w.service(&service("ab")).unwrap();
            s.write_round(w).await.unwrap();
            let mut s = db.open().await;
            assert_eq!(
                s.load_services().await.unwrap(),
                [service("a-b"), service("ab"), updated]
            );
            // A deletion alone is a round to write.
            let mut w = RoundWrites::default();
            w.service_gone("a-b");
            assert!(!w.is_empty());
            s.write_round(w).await.unwrap();
            assert_eq!(names(s.load_services().await.unwrap()), ["ab", "b"]);

            // A replica's job: written, changed (ready, then draining), cleared.
            let mut j = job(7, None);
            let mut w = RoundWrites::default();
            w.job(j.clone());
            s.write_round(w).await.unwrap();
            let mut r = j.service.clone().expect("full_stored is a replica");
            r.ready = false;
            r.port = None;
            r.draining_since_ms = None;
            for step in 0..3 {
                match step {
                    0 => j.service = Some(r.clone()),
                    1 => {
                        r.ready = true;
                        r.port = Some(40_001);
                        r.draining_since_ms = Some(5);
                        j.service = Some(r.clone());
                    }
                    _ => j.service = None,
                }
                let mut w = RoundWrites::default();
                w.job(j.clone());
                s.write_round(w).await.unwrap();
                assert_eq!(s.job(7).await.unwrap().as_ref(), Some(&j), "step {step}");
                assert_eq!(s.load_jobs().await.unwrap(), [j.clone()], "step {step}");
            }
        }
    }

    /// A service's row that does not decode fails the load, naming the service; so does
    /// one whose record names another service.
    #[tokio::test]
    async fn a_corrupt_service_row_is_named() {
        for db in &test_dbs("a_corrupt_service_row_is_named").await {
            let mut s = db.open().await;
            sqlx::query("INSERT INTO services (name, data) VALUES ('bad', '{\"spec\": 1}')")
                .execute(&mut s.conn)
                .await
                .unwrap();
            let e = s.load_services().await.unwrap_err();
            assert!(
                matches!(&e, StoreError::Corrupt { what, .. } if what == "service bad"),
                "{e}"
            );
            sqlx::query("DELETE FROM services")
                .execute(&mut s.conn)
                .await
                .unwrap();
            let data = serde_json::to_string(&service("other")).unwrap();
            sqlx::query("INSERT INTO services (name, data) VALUES ('mine', $1)")
                .bind(data)
                .execute(&mut s.conn)
                .await
                .unwrap();
            let e = s.load_services().await.unwrap_err().to_string();
            assert!(
                e.contains("service mine") && e.contains("names service other"),
                "{e}"
            );
        }
    }

    /// Reservations' rows: inserted, replaced and deleted by name, in the order a round
    /// gave them; read back by name (in byte order on either backend); a job's placement
    /// and interactive flag go with its row, changed and cleared like any column.
    #[tokio::test]
    async fn reservations_are_upserted_deleted_in_order_and_read_by_name() {
        for db in &test_dbs("reservations_are_upserted_deleted_in_order_and_read_by_name").await {
            let mut s = db.open().await;
            let mut w = RoundWrites::default();
            // Names whose order a database's collation may not keep (`-` and `.`
            // against a letter or a digit).
            for name in ["ab", "a-b", "b", "a1", "a.b"] {
                w.reservation(&reservation(name)).unwrap();
            }
            assert!(!w.is_empty());
            s.write_round(w).await.unwrap();
            let names = |v: Vec<ReservationRecord>| -> Vec<String> {
                v.into_iter().map(|r| r.spec.name).collect()
            };
            assert_eq!(
                names(s.load_reservations().await.unwrap()),
                ["a-b", "a.b", "a1", "ab", "b"]
            );
            // An update replaces the whole record (a reservation of nodes now, not of
            // GPUs, for everyone); a deletion removes the row; a deletion of a row that
            // is not there is nothing.
            let mut updated = reservation("b");
            updated.spec.nodes = vec!["n7".into()];
            updated.spec.gpus = None;
            updated.spec.gpu_model = None;
            updated.spec.features = None;
            updated.spec.users.clear();
            updated.spec.queues.clear();
            updated.spec.maintenance = false;
            updated.nodes = vec!["n7".into()];
            updated.gpus = 8;
            updated.updated_ms += 1;
            let mut w = RoundWrites::default();
            w.reservation(&updated).unwrap();
            w.reservation_gone("a1");
            w.reservation_gone("never");
            s.write_round(w).await.unwrap();
            let got = s.load_reservations().await.unwrap();
            assert_eq!(names(got.clone()), ["a-b", "a.b", "ab", "b"]);
            assert_eq!(got[3], updated);
            // In one round, in the order given: written then deleted ends deleted;
            // deleted then written ends written. Services' writes are apart.
            let mut w = RoundWrites::default();
            w.reservation(&reservation("c")).unwrap();
            w.reservation_gone("c");
            w.reservation_gone("ab");
            w.reservation(&reservation("ab")).unwrap();
            w.service_gone("ab");
            s.write_round(w).await.unwrap();
            let mut s = db.open().await;
            assert_eq!(
                s.load_reservations().await.unwrap(),
                [
                    reservation("a-b"),
                    reservation("a.b"),
                    reservation("ab"),
                    updated
                ]
            );
            assert_eq!(s.load_services().await.unwrap(), []);
            // A deletion alone is a round to write.
            let mut w = RoundWrites::default();
            w.reservation_gone("a-b");
            assert!(!w.is_empty());
            s.write_round(w).await.unwrap();
            assert_eq!(
                names(s.load_reservations().await.unwrap()),
                ["a.b", "ab", "b"]
            );

            // A job's rules: written, changed (one rule, not interactive), cleared.
            let mut j = job(7, None);
            let mut w = RoundWrites::default();
            w.job(j.clone());
            s.write_round(w).await.unwrap();
            assert_eq!(s.job(7).await.unwrap().as_ref(), Some(&j));
            for step in 0..3 {
                match step {
                    0 => {
                        j.placement = Some(Box::new(crate::StoredPlacement {
                            reservation: Some("ab".into()),
                            ..Default::default()
                        }));
                        j.interactive = false;
                    }
                    1 => {
                        j.placement = Some(Box::new(crate::StoredPlacement {
                            partitions: vec!["debug".into()],
                            constraint: Some("!slow".into()),
                            ..Default::default()
                        }));
                        j.interactive = true;
                    }
                    _ => {
                        j.placement = None;
                        j.interactive = false;
                    }
                }
                let mut w = RoundWrites::default();
                w.job(j.clone());
                s.write_round(w).await.unwrap();
                assert_eq!(s.job(7).await.unwrap().as_ref(), Some(&j), "step {step}");
                assert_eq!(s.load_jobs().await.unwrap(), [j.clone()], "step {step}");
            }
        }
    }

    /// A reservation's row that does not decode fails the load, naming the reservation;
    /// so does one whose record names another reservation. A job's placement that does
    /// not decode names the job and the column.
    #[tokio::test]
    async fn a_corrupt_reservation_row_is_named() {
        for db in &test_dbs("a_corrupt_reservation_row_is_named").await {
            let mut s = db.open().await;
            sqlx::query("INSERT INTO reservations (name, data) VALUES ('bad', '{\"spec\": 1}')")
                .execute(&mut s.conn)
                .await
                .unwrap();
            let e = s.load_reservations().await.unwrap_err();
            assert!(
                matches!(&e, StoreError::Corrupt { what, .. } if what == "reservation bad"),
                "{e}"
            );
            sqlx::query("DELETE FROM reservations")
                .execute(&mut s.conn)
                .await
                .unwrap();
            let data = serde_json::to_string(&reservation("other")).unwrap();
            sqlx::query("INSERT INTO reservations (name, data) VALUES ('mine', $1)")
                .bind(data)
                .execute(&mut s.conn)
                .await
                .unwrap();
            let e = s.load_reservations().await.unwrap_err().to_string();
            assert!(
                e.contains("reservation mine") && e.contains("names reservation other"),
                "{e}"
            );
            let mut w = RoundWrites::default();
            w.job(job(9, None));
            s.write_round(w).await.unwrap();
            sqlx::query("UPDATE jobs SET placement = '{\"partitions\": 3}' WHERE id = 9")
                .execute(&mut s.conn)
                .await
                .unwrap();
            let e = s.load_jobs().await.unwrap_err().to_string();
            assert!(e.contains("job 9") && e.contains("column placement"), "{e}");
        }
    }
}
