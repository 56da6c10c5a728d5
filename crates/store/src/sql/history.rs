//! Schema 5's history tables: `job_events` (each job's timeline, keyed by job id and
//! sequence) and `audit` (admin actions). Both are written by the server in the
//! transaction of the change they describe, and read on request, never loaded at start.
//!
//! A job keeps at most `keep` events: its first (`submitted`, sequence 1) and the newest
//! others. Sequences are never reused, so how many were dropped is the last sequence less
//! the rows left: no counter of its own to keep in step.

use gpusched_wire::history::{AuditAction, AuditEntry, AuditList, AuditQuery};
use gpusched_wire::history::{JobEvent, JobEventKind, JobEvents};
use sqlx::{AnyConnection, Row};

use std::collections::HashMap;

use super::dialect::{pow2_chunks, pow2_sizes, Dialect, TextCache};
use super::values::{bind_all, Val};

use crate::StoreError;

/// Schema 5: the tables, the purge rule and the timelines of jobs stored before it.
pub const CREATE_V5: &[&str] = &[
    "CREATE TABLE job_events (
        job INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        at_ms INTEGER NOT NULL,
        kind TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        nodes TEXT NOT NULL,
        detail TEXT NOT NULL,
        PRIMARY KEY (job, seq)
    ) WITHOUT ROWID",
    // A job's events go with its row, whoever deletes it.
    "CREATE TRIGGER job_events_follow_jobs AFTER DELETE ON jobs
     BEGIN DELETE FROM job_events WHERE job = old.id; END",
    // AUTOINCREMENT: ids never reused, so `before` paging stays stable.
    "CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at_ms INTEGER NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        detail TEXT NOT NULL
    )",
    "CREATE INDEX audit_at ON audit(at_ms)",
    // Jobs from before schema 5: what the row still knows, said as such.
    "INSERT INTO job_events (job, seq, at_ms, kind, attempt, nodes, detail)
     SELECT id, 1, submit_ms, 'submitted', 0, '[]',
            'queue ' || queue || ' (recorded before gpusched kept timelines: steps until '
            || 'the upgrade to schema 5 are not known)'
     FROM jobs",
    "INSERT INTO job_events (job, seq, at_ms, kind, attempt, nodes, detail)
     SELECT id, 2, end_ms, 'ended', attempt, CASE WHEN node IS NULL THEN '[]'
            ELSE json_array(node) END, state || ': ' || COALESCE(end_reason, '')
     FROM jobs WHERE end_ms IS NOT NULL",
];

fn kind_of(name: &str) -> Option<JobEventKind> {
    use JobEventKind::*;
    [
        Submitted,
        Placed,
        Started,
        Checkpoint,
        Preempted,
        Requeued,
        CancelRequested,
        Ended,
        Held,
        Released,
        Updated,
        IdleWarning,
        StepStarted,
        StepEnded,
    ]
    .into_iter()
    .find(|k| k.name() == name)
}

fn action_of(name: &str) -> Option<AuditAction> {
    AuditAction::ALL.into_iter().find(|a| a.name() == name)
}

fn int(what: &str, v: u64) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Row {
        what: what.to_string(),
        why: format!("{v} does not fit a database integer"),
    })
}

/// Rows of job events one statement writes (7 values each) and jobs one sequence
/// query asks about.
pub(crate) const ROWS_PER_STATEMENT: usize = 64;

/// `n` placeholders for the values of one statement: anonymous `?` on SQLite (it looks a
/// numbered one up among those before it), `$N` on PostgreSQL, in groups of `width`.
fn value_marks(d: Dialect, rows: usize, width: usize) -> String {
    let mut m = super::dialect::Marks::default();
    let one = |m: &mut super::dialect::Marks| match d {
        Dialect::Sqlite => vec!["?"; width].join(", "),
        Dialect::Postgres => m.list(width),
    };
    (0..rows)
        .map(|_| format!("({})", one(&mut m)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `SELECT job, MAX(seq) ... WHERE job IN (...)` for `jobs` job ids.
pub(crate) fn last_seq_sql(d: Dialect, jobs: usize) -> std::borrow::Cow<'static, str> {
    static TEXTS: TextCache<7> = TextCache::new();
    TEXTS.get(d, jobs, || {
        let marks = match d {
            Dialect::Sqlite => vec!["?"; jobs].join(", "),
            Dialect::Postgres => super::dialect::marks(jobs),
        };
        format!("SELECT job, MAX(seq) FROM job_events WHERE job IN ({marks}) GROUP BY job")
    })
}

/// The multi-row insert of `rows` events.
pub(crate) fn insert_sql(d: Dialect, rows: usize) -> std::borrow::Cow<'static, str> {
    static TEXTS: TextCache<7> = TextCache::new();
    TEXTS.get(d, rows, || {
        format!(
            "INSERT INTO job_events (job, seq, at_ms, kind, attempt, nodes, detail) VALUES {}",
            value_marks(d, rows, 7)
        )
    })
}

/// The distinct jobs of a round's events, in order (as database integers).
pub(crate) fn event_jobs(events: &[(u64, JobEvent)]) -> Result<Vec<i64>, StoreError> {
    let mut jobs: Vec<i64> = Vec::with_capacity(events.len());
    for (job, _) in events {
        jobs.push(int("job_events.job", *job)?);
    }
    jobs.sort_unstable();
    jobs.dedup();
    Ok(jobs)
}

/// The values of the round's event rows (7 a row, in `insert_sql`'s order), each job's
/// numbered on from `next` (its last sequence so far; updated to the new last).
pub(crate) fn event_values<'e>(
    events: &'e [(u64, JobEvent)],
    next: &mut HashMap<i64, i64>,
) -> Result<Vec<Val<'e>>, StoreError> {
    let mut vals = Vec::with_capacity(events.len() * 7);
    for (job, e) in events {
        let id = int("job_events.job", *job)?;
        let seq = next.entry(id).or_insert(0);
        *seq += 1;
        let nodes = serde_json::to_string(&e.nodes).map_err(|source| StoreError::Corrupt {
            what: "event nodes".into(),
            source,
        })?;
        vals.extend([
            Val::Int(id),
            Val::Int(*seq),
            Val::Int(int("job_events.at_ms", e.at_ms)?),
            Val::Text(e.kind.name().into()),
            Val::Int(i64::from(e.attempt)),
            Val::Text(nodes.into()),
            Val::Text(e.detail.as_str().into()),
        ]);
    }
    Ok(vals)
}

/// Deletes a job's events past the bound: [`prunes`] says which.
pub(crate) const PRUNE_SQL: &str =
    "DELETE FROM job_events WHERE job = $1 AND seq > 1 AND seq <= $2";

/// The jobs whose timelines passed `keep` after this round, with the last sequence to
/// drop: sequence 1 and the newest `keep - 1` stay (only jobs past the bound, rare).
pub(crate) fn prunes(next: &HashMap<i64, i64>, keep: u32) -> Vec<(i64, i64)> {
    let room = i64::from(keep.max(2)) - 1;
    let mut out: Vec<(i64, i64)> = next
        .iter()
        .filter(|(_, newest)| **newest - room > 1)
        .map(|(id, newest)| (*id, newest - room))
        .collect();
    out.sort_unstable();
    out
}

/// Appends a round's events (by job, each job's in order) to their timelines, then drops
/// the oldest beyond `keep` per job (the first event always stays). Two statements per
/// 64 jobs and per 64 events, their values bound directly: the jobs' last sequences,
/// then the rows. (One statement per event cost ~55 us each; reading the rows out of one
/// JSON array with SQLite's json_each, as before, cost about a sixth of the server's
/// instructions per job in its JSON functions.)
pub async fn append(
    conn: &mut AnyConnection,
    d: Dialect,
    events: &[(u64, JobEvent)],
    keep: u32,
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let jobs = event_jobs(events)?;
    let mut next: HashMap<i64, i64> = HashMap::with_capacity(jobs.len());
    for chunk in pow2_chunks(&jobs, ROWS_PER_STATEMENT) {
        let sql = last_seq_sql(d, chunk.len());
        let mut q = sqlx::query_as::<_, (i64, i64)>(&sql);
        for id in chunk {
            q = q.bind(*id);
        }
        next.extend(q.fetch_all(&mut *conn).await?);
    }
    // One statement's values at a time: a 10,000-job batch's events never all at once.
    let mut at = 0;
    for rows in pow2_sizes(events.len(), ROWS_PER_STATEMENT) {
        let vals = event_values(&events[at..at + rows], &mut next)?;
        let sql = insert_sql(d, rows);
        bind_all(sqlx::query(&sql), &vals)
            .execute(&mut *conn)
            .await?;
        at += rows;
    }
    for (id, upto) in prunes(&next, keep) {
        sqlx::query(PRUNE_SQL)
            .bind(id)
            .bind(upto)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Job `job`'s timeline, oldest first (empty for a job without one).
pub async fn timeline(conn: &mut AnyConnection, job: u64) -> Result<JobEvents, StoreError> {
    let id = int("job_events.job", job)?;
    let rows = sqlx::query(
        "SELECT seq, at_ms, kind, attempt, nodes, detail FROM job_events
         WHERE job = $1 ORDER BY seq",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    let what = || format!("events of job {job}");
    let mut events = Vec::with_capacity(rows.len());
    let mut last = 0i64;
    for r in &rows {
        let seq: i64 = r.try_get("seq")?;
        last = seq;
        let kind: String = r.try_get("kind")?;
        let nodes: String = r.try_get("nodes")?;
        events.push(JobEvent {
            at_ms: r.try_get::<i64, _>("at_ms")?.max(0) as u64,
            kind: kind_of(&kind).ok_or_else(|| StoreError::Row {
                what: what(),
                why: format!("unknown event kind `{kind}`"),
            })?,
            attempt: r.try_get::<i64, _>("attempt")?.clamp(0, u32::MAX.into()) as u32,
            nodes: serde_json::from_str(&nodes).map_err(|source| StoreError::Corrupt {
                what: what(),
                source,
            })?,
            detail: r.try_get("detail")?,
        });
    }
    let dropped = (last - rows.len() as i64).max(0) as u64;
    // A compact array task's events since it was first written follow (`array_tasks.rs`).
    events.extend(super::array_tasks::events(conn, job).await?);
    Ok(JobEvents {
        job,
        dropped,
        events,
    })
}

/// The default and largest page of `audit_page`.
pub const AUDIT_PAGE: usize = 100;
pub const AUDIT_PAGE_MAX: usize = 10_000;

/// One page of the audit log, newest first. The caller checked `q.limit`'s range.
pub async fn audit_page(conn: &mut AnyConnection, q: &AuditQuery) -> Result<AuditList, StoreError> {
    let limit = q.limit.unwrap_or(AUDIT_PAGE).clamp(1, AUDIT_PAGE_MAX);
    // Bounds past the database's integers mean "no bound" (before) and "nothing yet" (since):
    // a filter, not a value to store, so never an error.
    let before = q
        .before
        .map_or(i64::MAX, |b| i64::try_from(b).unwrap_or(i64::MAX));
    let since = q
        .since_ms
        .map_or(0, |s| i64::try_from(s).unwrap_or(i64::MAX));
    // One more than asked, to know whether an older page exists.
    let rows = sqlx::query(
        "SELECT id, at_ms, actor, action, target, detail FROM audit
         WHERE id < $1 AND at_ms >= $2 ORDER BY id DESC LIMIT $3",
    )
    .bind(before)
    .bind(since)
    .bind(limit as i64 + 1)
    .fetch_all(&mut *conn)
    .await?;
    let more = rows.len() > limit;
    let mut entries = Vec::with_capacity(rows.len().min(limit));
    for r in rows.iter().take(limit) {
        let id: i64 = r.try_get("id")?;
        let action: String = r.try_get("action")?;
        entries.push(AuditEntry {
            id: id.max(0) as u64,
            at_ms: r.try_get::<i64, _>("at_ms")?.max(0) as u64,
            actor: r.try_get("actor")?,
            action: action_of(&action).ok_or_else(|| StoreError::Row {
                what: format!("audit entry {id}"),
                why: format!("unknown action `{action}`"),
            })?,
            target: r.try_get("target")?,
            detail: r.try_get("detail")?,
        });
    }
    let next_before = if more {
        entries.last().map(|e| e.id)
    } else {
        None
    };
    Ok(AuditList {
        entries,
        next_before,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::test_dbs::test_dbs;

    /// Every action the server writes reads back (an action missing here made
    /// `GET /api/audit` fail once a reservation was audited).
    #[test]
    fn every_audit_action_reads_back_by_its_name() {
        for a in AuditAction::ALL {
            assert_eq!(super::action_of(a.name()), Some(a), "{}", a.name());
        }
    }

    fn ev(at_ms: u64, kind: JobEventKind, detail: &str) -> JobEvent {
        JobEvent {
            at_ms,
            kind,
            attempt: 1,
            nodes: vec!["n1".into(), "n2".into()],
            detail: detail.into(),
        }
    }

    #[tokio::test]
    async fn events_survive_a_reopen_in_order_and_a_rolled_back_round_leaves_none() {
        for db in
            &test_dbs("events_survive_a_reopen_in_order_and_a_rolled_back_round_leaves_none").await
        {
            let first = vec![
                ev(1, JobEventKind::Submitted, "queue default"),
                ev(2, JobEventKind::Placed, "n1: GPUs 0, 1"),
            ];
            {
                let mut s = db.open().await;
                let mut tx = s.begin().await.unwrap();
                tx.add_job_events(7, &first, 256).await.unwrap();
                tx.commit().await.unwrap();
                let mut tx = s.begin().await.unwrap();
                tx.add_job_events(7, &[ev(3, JobEventKind::Started, "")], 256)
                    .await
                    .unwrap();
                drop(tx);
                s.close().await.unwrap();
            }
            let mut s = db.open().await;
            let t = s.job_events(7).await.unwrap();
            assert_eq!((t.job, t.dropped), (7, 0));
            assert_eq!(t.events, first);
            let none = s.job_events(8).await.unwrap();
            assert!(none.events.is_empty() && none.dropped == 0);
        }
    }

    #[tokio::test]
    async fn holds_releases_and_updates_read_back_as_written() {
        for db in &test_dbs("holds_releases_and_updates_read_back_as_written").await {
            let mut s = db.open().await;
            let evs = [
                ev(1, JobEventKind::Held, "by alice"),
                ev(2, JobEventKind::Updated, "by root: priority 0 -> 5"),
                ev(3, JobEventKind::Released, "by root (held by alice)"),
            ];
            let mut tx = s.begin().await.unwrap();
            tx.add_job_events(3, &evs, 256).await.unwrap();
            tx.commit().await.unwrap();
            assert_eq!(s.job_events(3).await.unwrap().events, evs);
            let actions = [
                AuditAction::HoldOther,
                AuditAction::ReleaseOther,
                AuditAction::UpdateOther,
            ];
            for (i, action) in actions.into_iter().enumerate() {
                let e = AuditEntry {
                    id: 0,
                    at_ms: i as u64,
                    actor: "root".into(),
                    action,
                    target: "job 3".into(),
                    detail: "of alice".into(),
                };
                let mut tx = s.begin().await.unwrap();
                tx.add_audit(&e).await.unwrap();
                tx.commit().await.unwrap();
            }
            let got = audit_page(&mut s.conn, &AuditQuery::default())
                .await
                .unwrap();
            let mut read: Vec<AuditAction> = got.entries.iter().map(|e| e.action).collect();
            read.sort();
            assert_eq!(read, actions);
        }
    }

    #[tokio::test]
    async fn a_job_keeps_its_first_event_and_the_newest_others_and_counts_the_dropped() {
        for db in
            &test_dbs("a_job_keeps_its_first_event_and_the_newest_others_and_counts_the_dropped")
                .await
        {
            let mut s = db.open().await;
            let mut tx = s.begin().await.unwrap();
            tx.add_job_events(1, &[ev(0, JobEventKind::Submitted, "q")], 4)
                .await
                .unwrap();
            tx.commit().await.unwrap();
            // 10 more, in rounds of different sizes.
            for round in [1u64..4, 4..5, 5..11] {
                let mut tx = s.begin().await.unwrap();
                let evs: Vec<_> = round
                    .map(|i| ev(i, JobEventKind::Checkpoint, &i.to_string()))
                    .collect();
                tx.add_job_events(1, &evs, 4).await.unwrap();
                tx.add_job_events(2, &evs, 4).await.unwrap();
                tx.commit().await.unwrap();
            }
            let t = s.job_events(1).await.unwrap();
            let at: Vec<u64> = t.events.iter().map(|e| e.at_ms).collect();
            assert_eq!(at, [0, 8, 9, 10]);
            assert_eq!(t.events[0].kind, JobEventKind::Submitted);
            assert_eq!(t.dropped, 7);
            // A job's events go when its row goes.
            let mut tx = s.begin().await.unwrap();
            let mut row = crate::stored_job::tests::full_stored();
            row.id = 2;
            row.client_token = None;
            tx.put_job(&row).await.unwrap();
            tx.commit().await.unwrap();
            assert_eq!(s.job_events(2).await.unwrap().events.len(), 4);
            sqlx::query("DELETE FROM jobs WHERE id = 2")
                .execute(&mut s.conn)
                .await
                .unwrap();
            assert!(s.job_events(2).await.unwrap().events.is_empty());
            assert_eq!(s.job_events(1).await.unwrap().events.len(), 4);
        }
    }

    #[tokio::test]
    async fn a_rounds_events_of_several_jobs_interleaved_keep_each_jobs_order() {
        for db in
            &test_dbs("a_rounds_events_of_several_jobs_interleaved_keep_each_jobs_order").await
        {
            let mut s = db.open().await;
            let round = |evs: &[(u64, u64)]| -> Vec<(u64, JobEvent)> {
                evs.iter()
                    .map(|&(job, at)| (job, ev(at, JobEventKind::Checkpoint, "")))
                    .collect()
            };
            for evs in [&[(1, 1), (2, 2), (1, 3)][..], &[(2, 4), (1, 5), (1, 6)][..]] {
                let mut tx = s.begin().await.unwrap();
                tx.add_events(&round(evs), 3).await.unwrap();
                tx.commit().await.unwrap();
            }
            let at = |t: JobEvents| t.events.iter().map(|e| e.at_ms).collect::<Vec<_>>();
            let one = s.job_events(1).await.unwrap();
            assert_eq!(one.dropped, 1);
            assert_eq!(at(one), [1, 5, 6]);
            assert_eq!(at(s.job_events(2).await.unwrap()), [2, 4]);
        }
    }

    /// More jobs and events in one round than one statement takes (64 of each, in chunks of powers of two): every
    /// chunk gets its jobs' sequences right, and the next round goes on from them.
    #[tokio::test]
    async fn a_round_larger_than_one_statement_numbers_every_jobs_events_in_order() {
        for db in &test_dbs("a_round_larger_than_one_statement_numbers_every_jobs_events").await {
            let mut s = db.open().await;
            let mut first = Vec::new();
            for job in 1..=150u64 {
                first.push((job, ev(job * 10, JobEventKind::Submitted, "queue default")));
                first.push((job, ev(job * 10 + 1, JobEventKind::Placed, "n1: GPU 0")));
            }
            let mut tx = s.begin().await.unwrap();
            tx.add_events(&first, 256).await.unwrap();
            tx.commit().await.unwrap();
            let then: Vec<(u64, JobEvent)> = (1..=150u64)
                .map(|job| (job, ev(job * 10 + 2, JobEventKind::Started, "")))
                .collect();
            let mut tx = s.begin().await.unwrap();
            tx.add_events(&then, 256).await.unwrap();
            tx.commit().await.unwrap();
            for job in [1u64, 64, 65, 128, 129, 150] {
                let t = s.job_events(job).await.unwrap();
                let got: Vec<(u64, JobEventKind)> =
                    t.events.iter().map(|e| (e.at_ms, e.kind)).collect();
                assert_eq!(
                    got,
                    [
                        (job * 10, JobEventKind::Submitted),
                        (job * 10 + 1, JobEventKind::Placed),
                        (job * 10 + 2, JobEventKind::Started)
                    ],
                    "job {job}"
                );
                assert_eq!(t.events[0].nodes, ["n1", "n2"]);
                assert_eq!(t.dropped, 0);
            }
        }
    }

    fn entry(at_ms: u64, action: AuditAction, target: &str) -> AuditEntry {
        AuditEntry {
            id: 0,
            at_ms,
            actor: "root".into(),
            action,
            target: target.into(),
            detail: String::new(),
        }
    }

    #[tokio::test]
    async fn the_audit_log_pages_newest_first_and_survives_a_reopen() {
        for db in &test_dbs("the_audit_log_pages_newest_first_and_survives_a_reopen").await {
            {
                let mut s = db.open().await;
                let mut tx = s.begin().await.unwrap();
                for i in 1..=5 {
                    tx.add_audit(&entry(i * 10, AuditAction::Drain, &format!("n{i}")))
                        .await
                        .unwrap();
                }
                tx.commit().await.unwrap();
                s.close().await.unwrap();
            }
            let mut s = db.open().await;
            let q = |before, since_ms, limit| AuditQuery {
                before,
                since_ms,
                limit,
            };
            let page = s.audit(&q(None, None, Some(2))).await.unwrap();
            let targets: Vec<&str> = page.entries.iter().map(|e| e.target.as_str()).collect();
            assert_eq!(targets, ["n5", "n4"]);
            assert_eq!(page.next_before, Some(4));
            let page = s.audit(&q(Some(4), None, Some(2))).await.unwrap();
            assert_eq!(page.entries[0].target, "n3");
            let page = s.audit(&q(Some(2), None, Some(2))).await.unwrap();
            assert_eq!(page.entries.len(), 1);
            assert_eq!(page.next_before, None, "the last page says so");
            // Bounds past SQLite's integers filter, never fail.
            let page = s.audit(&q(Some(u64::MAX), Some(u64::MAX - 1), None)).await;
            assert!(page.unwrap().entries.is_empty());
            let page = s.audit(&q(Some(u64::MAX), None, Some(1))).await.unwrap();
            assert_eq!(page.entries[0].target, "n5");
            let page = s.audit(&q(None, Some(40), None)).await.unwrap();
            assert_eq!(page.entries.len(), 2);
            assert_eq!(page.entries[0].action, AuditAction::Drain);
            assert_eq!(page.entries[0].at_ms, 50);
        }
    }
}
