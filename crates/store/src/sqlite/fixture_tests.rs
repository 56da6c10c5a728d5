//! Databases written by real releases (tests/fixtures, see their README) open and upgrade.

use std::path::{Path, PathBuf};

use gpusched_wire::JobState;

use super::*;
use crate::sql::migrate;
use crate::{StoredJob, StoredSlice, RELEASE, SCHEMA_VERSION};
use sqlx::{Connection, SqliteConnection};

/// A copy of a fixture in a temporary data directory (the original is never opened).
pub(super) fn copy_of(name: &str) -> (tempfile::TempDir, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .join(DB_FILE);
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&src, dir.path().join(DB_FILE)).unwrap();
    let path = dir.path().to_path_buf();
    (dir, path)
}

#[tokio::test]
async fn the_schema_1_fixture_upgrades_and_keeps_every_fact() {
    let (_d, dir) = copy_of("v1-2026-11-30");
    let mut s = Store::open_dir(&dir).await.unwrap();
    // 1 -> 2 -> ... -> 13 in one open.
    assert_eq!(s.schema_version().await.unwrap(), SCHEMA_VERSION);

    let jobs = s.load_jobs().await.unwrap();
    let ids: Vec<u64> = jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, (1..=9).collect::<Vec<_>>());
    let j = |id: u64| &jobs[id as usize - 1];
    let states: Vec<JobState> = jobs.iter().map(|j| j.state).collect();
    use JobState::*;
    assert_eq!(
        states,
        [Succeeded, Failed, Cancelled, TimedOut, Running, Running, Running, Pending, Pending]
    );
    let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ok",
            "failed",
            "cancelled",
            "timed-out",
            "requeued",
            "running",
            "share",
            "too-big",
            "after"
        ]
    );
    for job in &jobs {
        let v = job;
        assert_eq!(v.user, "root");
        // The CLI sent a token with every submission; schema 1 kept it in a column too.
        let token = job.client_token.as_deref().unwrap_or("");
        assert!(token.starts_with("root/"), "job {}: token {token:?}", v.id);
        assert_eq!(job.grace_s, 1);
        assert!(v.submit_ms > 1_700_000_000_000, "job {}", v.id);
        if v.state == Pending {
            assert_eq!(v.node, None);
            assert!(v.gpu_indices.is_empty());
            assert_eq!(v.start_ms, None);
        } else {
            assert_eq!(v.node.as_deref(), Some("n1"), "job {}", v.id);
            assert!(v.start_ms.is_some(), "job {}", v.id);
        }
        assert_eq!(v.end_ms.is_some(), v.state.is_terminal(), "job {}", v.id);
        // Schema 3's columns: every job from before gangs ran on one node.
        assert_eq!(
            (v.nodes, v.gpus_per_node, v.split, v.tasks_per_node),
            (1, v.gpus, false, None),
            "job {}",
            v.id
        );
        assert!(
            v.parts.is_empty() && v.master_port.is_none(),
            "job {}",
            v.id
        );
        assert_eq!(job.first_failure, None);
        // Schema 4's column: nothing was measured before it.
        assert_eq!(v.energy_j, None, "job {}", v.id);
        // Schema 11's columns: host processes, measured by no cgroup.
        assert_eq!(
            (&v.image, v.pids_max, &v.usage),
            (&None, None, &None),
            "job {}",
            v.id
        );
        // Schema 12's column: no service's replica.
        assert_eq!(v.service, None, "job {}", v.id);
        // Schema 15's column: no account.
        assert_eq!(v.account, None, "job {}", v.id);
        // Schema 13's columns: no placement rule (NULL), not interactive.
        assert_eq!(
            (&v.placement, v.interactive),
            (&None, false),
            "job {}",
            v.id
        );
    }

    // Ended jobs: their end reasons and exit codes.
    let end = |id: u64| (j(id).end_reason.as_deref(), j(id).note.as_deref());
    assert_eq!(end(1), (Some("exited with code 0"), None));
    assert_eq!(j(1).exit_code, Some(0));
    assert_eq!(j(1).env, [("GREETING".into(), "hello".into())].into());
    assert_eq!(end(2), (Some("exited with code 1"), None));
    assert_eq!(j(2).exit_code, Some(1));
    assert_eq!(end(3), (Some("cancelled while running"), None));
    assert_eq!(
        end(4),
        (Some("stopped after passing its walltime of 1 s"), None)
    );
    assert_eq!(j(4).walltime_s, Some(1));

    // The requeued job: attempt 2 after its agent stopped, both attempts' nodes kept.
    let r = j(5);
    assert_eq!((r.attempt, r.agent_stops, r.max_retries), (2, 1, 1));
    assert_eq!(
        r.attempt_nodes,
        [(1, "n1".to_string()), (2, "n1".to_string())].into()
    );
    assert_eq!(r.gpu_indices.len(), 1);

    // The running job: queue, priority, walltime, env.
    let r = j(6);
    assert_eq!(r.queue, "research");
    assert_eq!(r.priority, 7);
    assert_eq!(r.walltime_s, Some(7200));
    assert_eq!(r.attempt, 1);
    assert_eq!(r.gpu_indices.len(), 1);
    assert_eq!(r.env.keys().collect::<Vec<_>>(), ["MODEL", "STEPS"]);
    assert_eq!(r.env.get("STEPS").map(String::as_str), Some("100"));

    // The share: what it asked for and where it sits.
    let r = j(7);
    assert_eq!(r.gpus, 0);
    assert_eq!(r.slice, Some(StoredSlice::Share { milli: 500 }));
    let at = r.slice_at.as_ref().expect("a running share has a place");
    assert_eq!((at.gpu, at.milli), (2, 500));
    assert_eq!(r.gpu_indices, [at.gpu]);

    // The running jobs hold three different GPUs.
    let mut held: Vec<u32> = [5, 6, 7]
        .iter()
        .flat_map(|&id| j(id).gpu_indices.clone())
        .collect();
    held.sort();
    held.dedup();
    assert_eq!(held.len(), 3);

    // Pending jobs: what they wait for is the server's to work out, so nothing is read.
    assert_eq!(j(8).gpus, 4);
    assert_eq!(end(8), (None, None));
    assert_eq!(j(9).after, [6]);
    assert_eq!(end(9), (None, None));

    // Nodes and tokens are kept as they were.
    let nodes = s.load_nodes().await.unwrap();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].register.node, "n1");
    assert_eq!(nodes[0].register.gpus.len(), 4);
    let tokens = s.load_tokens().await.unwrap();
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0].user, "alice");
    // Schema 12's services and 13's reservations: none before them.
    assert_eq!(s.load_services().await.unwrap(), []);
    assert_eq!(s.load_reservations().await.unwrap(), []);
    // Schema 14's job steps: none before them.
    assert_eq!(s.load_live_steps().await.unwrap(), []);

    // Stored as columns now, the old table gone.
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .fetch_all(&mut s.conn)
            .await
            .unwrap();
    assert_eq!(
        tables,
        [
            "array_tasks",
            "audit",
            "job_events",
            "jobs",
            "leader_lease",
            "meta",
            "nodes",
            "reservations",
            "schema_history",
            "services",
            "sqlite_sequence",
            "steps",
            "tokens"
        ]
    );

    // Schema 5: every job's timeline starts with what its row knows, said as such.
    for job in &jobs {
        let v = job;
        let t = s.job_events(v.id).await.unwrap();
        assert_eq!(t.dropped, 0);
        let kinds: Vec<_> = t.events.iter().map(|e| e.kind.name()).collect();
        if v.state.is_terminal() {
            assert_eq!(kinds, ["submitted", "ended"], "job {}", v.id);
            let end = &t.events[1];
            assert_eq!(Some(end.at_ms), v.end_ms);
            assert!(end.detail.starts_with(v.state.name()), "{}", end.detail);
            assert_eq!(end.nodes, ["n1"]);
        } else {
            assert_eq!(kinds, ["submitted"], "job {}", v.id);
        }
        assert_eq!(t.events[0].at_ms, v.submit_ms);
        assert!(t.events[0]
            .detail
            .contains("before gpusched kept timelines"));
    }
    assert_eq!(
        s.job_events(2).await.unwrap().events[1].detail,
        "failed: exited with code 1"
    );
    assert!(s
        .audit(&Default::default())
        .await
        .unwrap()
        .entries
        .is_empty());
}

#[tokio::test]
async fn an_upgraded_fixture_opens_again_as_it_is() {
    let (_d, dir) = copy_of("v1-2026-11-30");
    let first = {
        let mut s = Store::open_dir(&dir).await.unwrap();
        let jobs = s.load_jobs().await.unwrap();
        s.close().await.unwrap();
        jobs
    };
    let mut s = Store::open_dir(&dir).await.unwrap();
    assert_eq!(s.load_jobs().await.unwrap(), first);
    let history: Vec<(i64, String)> =
        sqlx::query_as("SELECT version, by_release FROM schema_history ORDER BY version")
            .fetch_all(&mut s.conn)
            .await
            .unwrap();
    // Schema 1 predates the history; the upgrades to 2 and on are recorded once each.
    let each: Vec<(i64, String)> = (2..=crate::sqlite::migrate::LATEST)
        .map(|v| (v, RELEASE.to_string()))
        .collect();
    assert_eq!(history, each);
    assert_eq!(
        migrate::run(&mut s.conn, Dialect::Sqlite, "x")
            .await
            .unwrap(),
        Vec::<i64>::new()
    );
}

#[tokio::test]
async fn a_schema_1_row_that_does_not_decode_fails_the_upgrade_and_changes_nothing() {
    let (_d, dir) = copy_of("v1-2026-11-30");
    {
        let mut conn =
            SqliteConnection::connect(&format!("sqlite://{}", dir.join(DB_FILE).display()))
                .await
                .unwrap();
        sqlx::query("UPDATE jobs SET data = '{\"view\": 1}' WHERE id = 4")
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
    }
    let err = Store::open_dir(&dir).await.err().unwrap();
    assert!(err.to_string().contains("job 4 (schema 1)"), "{err}");
    let mut conn = SqliteConnection::connect(&format!("sqlite://{}", dir.join(DB_FILE).display()))
        .await
        .unwrap();
    let version: String = sqlx::query_scalar("SELECT value FROM meta WHERE key = 'schema_version'")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(version, "1");
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE data IS NOT NULL")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(n, 9, "the schema-1 table is still there, whole");
}

/// Times the store on 10,000 jobs (the fixture's running job copied): reading and writing
/// them as schema 1 did (one JSON row each), the upgrade to schema 3 (through 2), and
/// reading and rewriting them as schema 3 (what a failed commit's reload and a big round
/// cost).
/// A measurement, not a CI test (docs/benchmarks.md has the figures):
/// `cargo test -p gpusched-store --release -- --ignored store_on_10000_jobs --nocapture`.
#[tokio::test]
#[ignore = "a measurement; run it by name with --release"]
async fn store_on_10000_jobs() {
    let (_d, dir) = copy_of("v1-2026-11-30");
    let url = format!("sqlite://{}", dir.join(DB_FILE).display());
    let mut conn = SqliteConnection::connect(&url).await.unwrap();
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM n WHERE i < 10090)
         INSERT INTO jobs (id, state, user, node, client_token, data)
         SELECT i, state, user, node, NULL,
                json_set(data, '$.view.id', i, '$.client_token', NULL)
         FROM n, jobs WHERE jobs.id = 6",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let t = std::time::Instant::now();
    let rows: Vec<(String,)> = sqlx::query_as("SELECT data FROM jobs ORDER BY id")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    // Decoded as the upgrade reads them (schema 1's frozen shape, `v1.rs`).
    let old: Vec<StoredJob> = rows
        .iter()
        .map(|(d,)| {
            serde_json::from_str::<super::v1::V1Job>(d)
                .unwrap()
                .upgrade()
                .unwrap()
        })
        .collect();
    eprintln!("schema 1: load {} jobs {:?}", old.len(), t.elapsed());
    assert_eq!(old.len(), 10_000);
    // What schema 1 wrote back: each row's JSON, re-encoded.
    let data: Vec<serde_json::Value> = rows
        .iter()
        .map(|(d,)| serde_json::from_str(d).unwrap())
        .collect();
    sqlx::query(
        "CREATE TABLE jobs1 (id INTEGER PRIMARY KEY, state TEXT NOT NULL, user TEXT NOT NULL,
         node TEXT, client_token TEXT UNIQUE, data TEXT NOT NULL)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let t = std::time::Instant::now();
    let mut tx = conn.begin().await.unwrap();
    for (r, d) in old.iter().zip(&data) {
        sqlx::query(
            "INSERT INTO jobs1 (id, state, user, node, client_token, data)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(r.id as i64)
        .bind(r.state.name())
        .bind(&r.user)
        .bind(r.node.as_deref())
        .bind(r.client_token.as_deref())
        .bind(serde_json::to_string(d).unwrap())
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    eprintln!(
        "schema 1: write {} jobs in one transaction {:?}",
        old.len(),
        t.elapsed()
    );
    sqlx::query("DROP TABLE jobs1")
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();

    let t = std::time::Instant::now();
    let mut s = Store::open_dir(&dir).await.unwrap();
    eprintln!(
        "upgrade of {} jobs to schema 5 (through 2, 3 and 4) {:?}",
        old.len(),
        t.elapsed()
    );
    let t = std::time::Instant::now();
    let jobs = s.load_jobs().await.unwrap();
    eprintln!("schema 5: load {} jobs {:?}", jobs.len(), t.elapsed());
    assert_eq!(jobs, old, "the upgrade keeps every job as schema 1 read it");
    let t = std::time::Instant::now();
    let mut tx = s.begin().await.unwrap();
    for j in &jobs {
        tx.put_job(j).await.unwrap();
    }
    tx.commit().await.unwrap();
    eprintln!(
        "schema 5: write {} jobs in one transaction {:?}",
        jobs.len(),
        t.elapsed()
    );
    // What a round that submits 10,000 jobs writes since schema 5: each row and its
    // `submitted` event.
    let event = |at_ms| gpusched_wire::history::JobEvent {
        at_ms,
        kind: gpusched_wire::history::JobEventKind::Submitted,
        attempt: 0,
        nodes: Vec::new(),
        detail: "queue default".into(),
    };
    let events: Vec<_> = jobs.iter().map(|j| (j.id, event(j.submit_ms))).collect();
    let t = std::time::Instant::now();
    let mut tx = s.begin().await.unwrap();
    for j in &jobs {
        tx.put_job(j).await.unwrap();
    }
    tx.add_events(&events, 256).await.unwrap();
    tx.commit().await.unwrap();
    eprintln!(
        "schema 5: write {} jobs and an event each in one transaction {:?}",
        jobs.len(),
        t.elapsed()
    );
}
