//! What the round writer's second SQLite driver buys: the same rounds written through it
//! (rusqlite on a thread of its own, one hand-off per round, `writer.rs`) and through
//! sqlx's driver, statement by statement on the store's own connection (the way
//! PostgreSQL's rounds go, `postgres/round.rs`), alternated in one process on one file.
//! A measurement, not a CI test (docs/benchmarks-log.md has the figures):
//! `cargo test -p gpusched-store --release -- --ignored round_writer_against_sqlx --nocapture`.

use std::time::{Duration, Instant};

use gpusched_wire::history::{JobEvent, JobEventKind};
use gpusched_wire::JobState;

use crate::sql::round::RoundWrites;
use crate::{Store, StoredJob};

/// This process's CPU time so far, user and system (`/proc/self/stat`, in clock ticks of
/// 10 ms: the runs below take seconds of it).
fn cpu() -> (Duration, Duration) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // The fields after the command's `(...)`: utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let tick = |s: &str| Duration::from_millis(s.parse::<u64>().unwrap() * 10);
    (tick(f[11]), tick(f[12]))
}

/// Round `n` of `rows` job rows (the full row of the store's tests, ids cycling over a
/// working set of 512 from `base` + 1, as a server rewrites its live jobs) and an event
/// for each. Each way has jobs of its own: the round writer keeps the last event
/// sequence of the jobs it wrote, which the other way's events would make stale.
fn round(n: u64, rows: u64, base: u64) -> RoundWrites {
    let mut w = RoundWrites::default();
    let mut events = Vec::new();
    for i in 0..rows {
        let id = base + 1 + (n * rows + i) % 512;
        let mut j: StoredJob = crate::stored_job::tests::full_stored();
        j.id = id;
        j.client_token = None;
        j.attempt = 1 + (n % 7) as u32;
        j.state = if n.is_multiple_of(2) {
            JobState::Running
        } else {
            JobState::Pending
        };
        w.job(j);
        events.push((
            id,
            JobEvent {
                at_ms: n,
                kind: JobEventKind::Started,
                attempt: 1,
                nodes: vec!["n1".into()],
                detail: format!("round {n}"),
            },
        ));
    }
    w.events(events, 64);
    w
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Way {
    /// `write_round`: the SQLite round writer (rusqlite).
    Rusqlite,
    /// The same writes through sqlx's SQLite driver.
    Sqlx,
}

/// Writes `rounds` rounds of `rows` rows one way; (wall, user CPU, system CPU) per round.
async fn run(s: &mut Store, way: Way, first: u64, rounds: u64, rows: u64) -> [f64; 3] {
    let (u0, s0) = cpu();
    let t = Instant::now();
    for n in first..first + rounds {
        let w = round(n, rows, if way == Way::Rusqlite { 0 } else { 1_000 });
        match way {
            Way::Rusqlite => s.write_round(w).await.unwrap(),
            Way::Sqlx => crate::postgres::round::write_round(s, w, None)
                .await
                .unwrap(),
        }
    }
    let wall = t.elapsed();
    let (u1, s1) = cpu();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / rounds as f64;
    [per(wall), per(u1 - u0), per(s1 - s0)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement; run it by name with --release"]
async fn round_writer_against_sqlx() {
    let rounds: u64 = std::env::var("ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open_dir(dir.path()).await.unwrap();
    // Fenced, as a leading server's rounds are.
    let epoch = s
        .acquire_lease("bench", "http://bench", 600_000, false)
        .await
        .unwrap()
        .expect("the lease");
    s.set_fence(Some(epoch));
    // What the round writer's connection has beyond the store's settings; one driver
    // would set it on its one connection.
    sqlx::query("PRAGMA temp_store = MEMORY")
        .execute(&mut s.conn)
        .await
        .unwrap();
    let mut n = 0;
    for rows in [5u64, 64] {
        // Warm both ways (the writer's thread and statements, the file's pages).
        for way in [Way::Rusqlite, Way::Sqlx] {
            run(&mut s, way, n, 100, rows).await;
            n += 100;
        }
        for pass in 1..=2 {
            for way in [Way::Rusqlite, Way::Sqlx, Way::Sqlx, Way::Rusqlite] {
                let [wall, user, sys] = run(&mut s, way, n, rounds, rows).await;
                n += rounds;
                eprintln!(
                    "{rows:>3} rows + {rows} events, pass {pass}, {way:?}: per round {wall:.0} us \
                     wall, {:.0} us CPU ({user:.0} user + {sys:.0} system)",
                    user + sys
                );
            }
        }
    }
    s.close().await.unwrap();
}
