//! Compact array tasks read as job rows would, on each backend: one by id and by index,
//! pages and their filters, usage and counts, timelines, promotion to a job row, the
//! restart's load, purge, copy, and the schema 17 upgrade moving task rows.

use gpusched_wire::history::{JobEvent, JobEventKind};
use gpusched_wire::JobState;

use super::test_dbs::test_dbs;
use super::{EndedQuery, RoundWrites, Store, TaskRows};
use crate::array_task::tests::{array_row, ended_task};
use crate::array_task::{compact_if_exact, CompactTask};
use crate::stored_job::StoredJob;

fn event(kind: JobEventKind, at_ms: u64) -> JobEvent {
    JobEvent {
        at_ms,
        kind,
        attempt: 1,
        nodes: vec!["n1".into()],
        detail: format!("{} at {at_ms}", kind.name()),
    }
}

fn compact(array: &StoredJob, task: &StoredJob, events: &[JobEvent]) -> CompactTask {
    let mut t = compact_if_exact(array, task.clone()).expect("the task fits its record");
    t.events = events.to_vec();
    t
}

/// Array 10 of alice with tasks 11 (index 0, succeeded on n1) and 12 (index 1, failed
/// on n2) as compact records, and job 13 (a plain job of bob) as a row; each task's
/// `submitted` in `job_events`, the rest of its timeline in its record.
async fn seed(s: &mut Store) -> (StoredJob, StoredJob, StoredJob) {
    let mut array = array_row(10, "alice");
    array.state = JobState::Failed;
    // Its span, from its first task's start to its last's end, is charged to no one.
    array.start_ms = Some(2_000);
    array.end_ms = Some(9_000);
    let t0 = ended_task(&array, 11, 0, JobState::Succeeded, "n1", (2_000, 5_600_000));
    let t1 = ended_task(&array, 12, 1, JobState::Failed, "n2", (3_000, 4_000));
    let mut plain = array_row(13, "bob");
    plain.array = None;
    plain.array_progress = None;
    plain.state = JobState::Succeeded;
    plain.end_ms = Some(8_000);
    plain.start_ms = Some(7_000);
    // The round that materialised them: their `submitted`.
    let mut w = RoundWrites::default();
    w.job(array.clone());
    w.job(plain.clone());
    w.events(
        vec![
            (11, event(JobEventKind::Submitted, 1_000)),
            (12, event(JobEventKind::Submitted, 1_000)),
        ],
        256,
    );
    s.write_round(w).await.unwrap();
    // Placed and started, then ended, in two rounds: events appended.
    let mut running = t0.clone();
    running.state = JobState::Running;
    running.end_ms = None;
    running.exit_code = None;
    running.end_reason = None;
    running.energy_j = None;
    running.usage = None;
    let mut w = RoundWrites::default();
    w.task(compact(
        &array,
        &running,
        &[
            event(JobEventKind::Placed, 1_500),
            event(JobEventKind::Started, 2_000),
        ],
    ));
    s.write_round(w).await.unwrap();
    let mut w = RoundWrites::default();
    w.task(compact(
        &array,
        &t0,
        &[event(JobEventKind::Ended, 5_600_000)],
    ));
    w.task(compact(&array, &t1, &[event(JobEventKind::Ended, 4_000)]));
    s.write_round(w).await.unwrap();
    (array, t0, t1)
}

#[tokio::test]
async fn compact_tasks_read_as_their_rows_would() {
    for db in test_dbs("compact_tasks_read_as_their_rows_would").await {
        let mut s = db.open().await;
        let (array, t0, t1) = seed(&mut s).await;
        let d = db.dialect;
        assert_eq!(s.job(11).await.unwrap(), Some(t0.clone()), "{d:?}");
        assert_eq!(s.task(10, 1).await.unwrap(), Some(t1.clone()), "{d:?}");
        assert_eq!(s.task(10, 5).await.unwrap(), None);
        assert_eq!(s.job(10).await.unwrap(), Some(array.clone()));
        assert_eq!(s.max_job_id().await.unwrap(), 13);
        // Pages: newest first, merged with job rows, filtered as rows are.
        let page = |q: EndedQuery| EndedQuery {
            from: 0,
            to: u64::MAX,
            limit: 100,
            ..q
        };
        let ids = |jobs: Vec<StoredJob>| jobs.iter().map(|j| j.id).collect::<Vec<_>>();
        let all = s.ended_jobs(&page(EndedQuery::default())).await.unwrap();
        assert_eq!(ids(all.clone()), [13, 12, 11, 10], "{d:?}");
        assert_eq!(all[1], t1);
        let q = EndedQuery {
            limit: 2,
            ..page(EndedQuery::default())
        };
        assert_eq!(ids(s.ended_jobs(&q).await.unwrap()), [13, 12]);
        let q = EndedQuery {
            user: Some("alice".into()),
            ..page(EndedQuery::default())
        };
        assert_eq!(ids(s.ended_jobs(&q).await.unwrap()), [12, 11, 10]);
        let q = EndedQuery {
            node: Some("n2".into()),
            ..page(EndedQuery::default())
        };
        assert_eq!(ids(s.ended_jobs(&q).await.unwrap()), [12]);
        let q = EndedQuery {
            states: vec![JobState::Succeeded],
            ..page(EndedQuery::default())
        };
        assert_eq!(ids(s.ended_jobs(&q).await.unwrap()), [13, 11]);
        let q = EndedQuery {
            tasks: TaskRows::Of(10),
            ..page(EndedQuery::default())
        };
        assert_eq!(ids(s.ended_jobs(&q).await.unwrap()), [12, 11]);
        let q = EndedQuery {
            tasks: TaskRows::None,
            ..page(EndedQuery::default())
        };
        assert_eq!(ids(s.ended_jobs(&q).await.unwrap()), [13, 10]);
        let q = EndedQuery {
            from: 12,
            ..page(EndedQuery::default())
        };
        assert_eq!(ids(s.ended_jobs(&q).await.unwrap()), [13, 12]);
        // Counts and usage count the tasks under their own queue and their array's user.
        let counts = s.ended_counts().await.unwrap();
        let n = |state| {
            counts
                .iter()
                .find(|(q, st, _)| q == "research" && *st == state)
                .map_or(0, |c| c.2)
        };
        assert_eq!(
            (n(JobState::Succeeded), n(JobState::Failed)),
            (2, 2),
            "{d:?}"
        );
        let usage = s.ended_usage(0, false, Some("alice")).await.unwrap();
        assert_eq!(usage.len(), 1);
        let alice = &usage[0];
        // The array itself never ran (no start): its two tasks did.
        assert_eq!(
            (alice.jobs, alice.succeeded, alice.failed),
            (2, 1, 1),
            "{d:?}"
        );
        let hours = (5_600_000.0 - 2_000.0 + 1_000.0) / 3_600_000.0;
        assert!(
            (alice.gpu_hours - hours).abs() < 1e-9,
            "{}",
            alice.gpu_hours
        );
        assert_eq!((alice.energy_j, alice.cpu_ms), (200, 80));
        // A timeline: its `submitted` row, then its record's events.
        let kinds: Vec<JobEventKind> = s
            .job_events(11)
            .await
            .unwrap()
            .events
            .iter()
            .map(|e| e.kind)
            .collect();
        use JobEventKind::*;
        assert_eq!(kinds, [Submitted, Placed, Started, Ended], "{d:?}");
        // Copied whole (backup, migrate-store).
        let snap = s.snapshot().await.unwrap();
        assert_eq!(snap.tasks.len(), 2);
        let dir = tempfile::tempdir().unwrap();
        let to = crate::StoreUrl::Sqlite(crate::sqlite::default_file(dir.path()));
        let mut copy = Store::open(&to).await.unwrap();
        copy.restore(&snap).await.unwrap();
        assert_eq!(copy.job(11).await.unwrap(), Some(t0.clone()));
        assert_eq!(
            copy.job_events(11).await.unwrap(),
            s.job_events(11).await.unwrap()
        );
        assert!(copy
            .contents()
            .await
            .unwrap()
            .contains(&"2 compact array tasks".to_string()));
        // Purged with what ended before: the task that ended at 4,000 goes, its
        // `submitted` row with it; the array and its other task stay.
        let mut tx = s.begin().await.unwrap();
        assert_eq!(tx.purge_ended(5_000).await.unwrap(), 1);
        tx.commit().await.unwrap();
        assert_eq!(s.job(12).await.unwrap(), None);
        assert!(s.job_events(12).await.unwrap().events.is_empty());
        assert_eq!(s.job(11).await.unwrap(), Some(t0.clone()));
        // The array's end takes the rest.
        let mut tx = s.begin().await.unwrap();
        assert_eq!(tx.purge_ended(10_000).await.unwrap(), 3);
        tx.commit().await.unwrap();
        assert_eq!(s.job(11).await.unwrap(), None);
        assert_eq!(s.max_job_id().await.unwrap(), 13, "ids stay issued");
    }
}

#[tokio::test]
async fn a_promoted_task_keeps_its_timeline_in_order_and_live_ones_load() {
    for db in test_dbs("a_promoted_task_keeps_its_timeline_in_order").await {
        let mut s = db.open().await;
        let d = db.dialect;
        let mut array = array_row(10, "alice");
        array.state = JobState::Running;
        array.end_ms = None;
        let mut t = ended_task(&array, 11, 0, JobState::Running, "n1", (2_000, 0));
        t.end_ms = None;
        t.exit_code = None;
        t.end_reason = None;
        let mut w = RoundWrites::default();
        w.job(array.clone());
        w.events(vec![(11, event(JobEventKind::Submitted, 1_000))], 256);
        w.task(compact(&array, &t, &[event(JobEventKind::Started, 2_000)]));
        s.write_round(w).await.unwrap();
        // A restart finds it live, rebuilt, and knows it is compact.
        let live = s.load_live_jobs().await.unwrap();
        assert_eq!(live, [array.clone(), t.clone()], "{d:?}");
        assert_eq!(s.live_compact_tasks().await.unwrap(), [11]);
        // It changes beyond its record: its job row, the record gone, the events moved
        // ahead of the round's own.
        let mut changed = t.clone();
        changed.env.insert("EXTRA".into(), "1".into());
        assert!(compact_if_exact(&array, changed.clone()).is_none());
        let mut w = RoundWrites::default();
        w.job(changed.clone());
        w.promote(11);
        w.events(vec![(11, event(JobEventKind::Requeued, 3_000))], 256);
        s.write_round(w).await.unwrap();
        assert_eq!(s.live_compact_tasks().await.unwrap(), Vec::<u64>::new());
        assert_eq!(s.job(11).await.unwrap(), Some(changed.clone()));
        assert_eq!(s.load_live_jobs().await.unwrap(), [array.clone(), changed]);
        let timeline = s.job_events(11).await.unwrap();
        let kinds: Vec<JobEventKind> = timeline.events.iter().map(|e| e.kind).collect();
        use JobEventKind::*;
        assert_eq!(kinds, [Submitted, Started, Requeued], "{d:?}");
        assert_eq!(timeline.dropped, 0);
        // Written again by a fresh connection too (the SQLite writer's sequence cache).
        drop(s);
        let mut s = db.open().await;
        let mut w = RoundWrites::default();
        w.events(vec![(11, event(JobEventKind::Started, 4_000))], 256);
        s.write_round(w).await.unwrap();
        assert_eq!(s.job_events(11).await.unwrap().events.len(), 4);
    }
}

/// A store of the schema before compact records (SQLite's 16, PostgreSQL's 9) with an
/// array and two task rows upgrades: the task its record stands for moves, with its
/// timeline; the one whose environment was changed keeps its job row; both read back as
/// they were, and a restart loads the live one.
#[tokio::test]
async fn the_upgrade_moves_the_task_rows_a_record_stands_for() {
    for db in test_dbs("the_upgrade_moves_the_task_rows").await {
        let d = db.dialect;
        let path = match &db.url {
            crate::StoreUrl::Sqlite(f) => f.clone(),
            crate::StoreUrl::Postgres(u) => std::path::PathBuf::from(u),
        };
        let before = super::migrate::latest(d) - 1;
        let mut s = Store::connect(d, path, None).await.unwrap();
        super::migrate::run_to(&mut s.conn, d, before).await;
        let mut array = array_row(10, "alice");
        array.end_ms = None;
        let ended = ended_task(&array, 11, 0, JobState::Succeeded, "n1", (2_000, 3_000));
        let mut live = ended_task(&array, 12, 1, JobState::Running, "n1", (2_500, 0));
        live.end_ms = None;
        live.exit_code = None;
        live.end_reason = None;
        let mut odd = ended_task(&array, 13, 2, JobState::Failed, "n2", (2_000, 4_000));
        odd.env.insert("EXTRA".into(), "1".into());
        let mut tx = s.begin().await.unwrap();
        tx.put_jobs(&[array.clone(), ended.clone(), live.clone(), odd.clone()])
            .await
            .unwrap();
        tx.add_events(
            &[
                (11, event(JobEventKind::Submitted, 1_000)),
                (11, event(JobEventKind::Started, 2_000)),
                (11, event(JobEventKind::Ended, 3_000)),
                (12, event(JobEventKind::Submitted, 1_000)),
                (13, event(JobEventKind::Submitted, 1_000)),
            ],
            256,
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
        s.close().await.unwrap();
        let mut s = db.open().await;
        assert_eq!(s.schema_version().await.unwrap(), before + 1, "{d:?}");
        assert_eq!(s.live_compact_tasks().await.unwrap(), [12], "{d:?}");
        let rows: Vec<u64> = s.load_jobs().await.unwrap().iter().map(|j| j.id).collect();
        assert_eq!(rows, [10, 13], "{d:?}: the moved tasks left `jobs`");
        assert_eq!(s.job(11).await.unwrap(), Some(ended), "{d:?}");
        assert_eq!(s.job(13).await.unwrap(), Some(odd), "{d:?}");
        assert_eq!(s.load_live_jobs().await.unwrap(), [array, live], "{d:?}");
        use JobEventKind::*;
        let kinds = |e: gpusched_wire::history::JobEvents| {
            e.events.iter().map(|e| e.kind).collect::<Vec<_>>()
        };
        assert_eq!(
            kinds(s.job_events(11).await.unwrap()),
            [Submitted, Started, Ended]
        );
        assert_eq!(kinds(s.job_events(13).await.unwrap()), [Submitted]);
    }
}
