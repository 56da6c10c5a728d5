//! A fixture of every schema since 2 (tests/fixtures/vN-DATE, written by the last commit
//! of main at schema N that builds, with scripts/make_store_fixture.sh; see each README) opens, upgrades to this binary's schema, and
//! keeps every fact: each table's rows, column by column, exactly as that release wrote
//! them; the columns later schemas added, at what they mean for an older row; and the
//! jobs, as the store reads them, with what the fixture's script made of each.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gpusched_wire::JobState;
use sqlx::{Connection, Row, SqliteConnection};

use super::fixture_tests::copy_of;
use super::*;
use crate::{StoredArray, StoredJob, StoredSlice, SCHEMA_VERSION};

/// What a fixture holds besides the nine jobs of schema 1's script (each flag: the script
/// made those jobs, because that release's CLI could).
struct Fixture {
    dir: &'static str,
    schema: i64,
    /// A second node and a pending gang (schema 3).
    gang: bool,
    /// A held job, `any:` and `notok:` dependencies (schema 6).
    deps: bool,
    /// An array of tasks with a cancelled index (schema 6's store; its CLI came after).
    array: bool,
    /// A job queued behind another on its GPU (schema 9).
    follower: bool,
    /// An image and process caps (schema 11).
    contained: bool,
    /// Columns of its own schema that the release did not have yet (added to that
    /// schema's list later without a new version; the upgrade adds them).
    lacks: &'static [&'static str],
}

const FIXTURES: &[Fixture] = &[
    Fixture {
        dir: "v2-2026-11-30",
        schema: 2,
        gang: false,
        deps: false,
        array: false,
        follower: false,
        contained: false,
        lacks: &[],
    },
    Fixture {
        dir: "v3-2026-12-01",
        schema: 3,
        gang: true,
        deps: false,
        array: false,
        follower: false,
        contained: false,
        lacks: &[],
    },
    Fixture {
        dir: "v4-2026-12-01",
        schema: 4,
        gang: true,
        deps: false,
        array: false,
        follower: false,
        contained: false,
        lacks: &[],
    },
    Fixture {
        dir: "v5-2026-12-01",
        schema: 5,
        gang: true,
        deps: false,
        array: false,
        follower: false,
        contained: false,
        lacks: &[],
    },
    Fixture {
        dir: "v6-2026-12-01",
        schema: 6,
        gang: true,
        deps: true,
        array: false,
        follower: false,
        contained: false,
        lacks: &["array_progress"],
    },
    Fixture {
        dir: "v7-2026-12-01",
        schema: 7,
        gang: true,
        deps: true,
        array: true,
        follower: false,
        contained: false,
        lacks: &[],
    },
    Fixture {
        dir: "v8-2026-12-04",
        schema: 8,
        gang: true,
        deps: true,
        array: true,
        follower: false,
        contained: false,
        lacks: &[],
    },
    Fixture {
        dir: "v9-2026-12-06",
        schema: 9,
        gang: true,
        deps: true,
        array: true,
        follower: true,
        contained: false,
        lacks: &[],
    },
    Fixture {
        dir: "v10-2026-12-06",
        schema: 10,
        gang: true,
        deps: true,
        array: true,
        follower: true,
        contained: false,
        lacks: &[],
    },
    Fixture {
        dir: "v11-2026-12-06",
        schema: 11,
        gang: true,
        deps: true,
        array: true,
        follower: true,
        contained: true,
        lacks: &[],
    },
    // Schema 12's services: the script makes none (see its README).
    Fixture {
        dir: "v12-2026-12-06",
        schema: 12,
        gang: true,
        deps: true,
        array: true,
        follower: true,
        contained: true,
        lacks: &[],
    },
];

/// Each column a later schema added to `jobs`, the schema that added it, and what it
/// holds for a row written before it (an SQL condition on the upgraded row).
const ADDED_COLUMNS: &[(i64, &str, &str)] = &[
    (3, "nodes", "nodes = 1"),
    // Schema 3's upgrade: a job of one node holds all its GPUs on it.
    (3, "gpus_per_node", "gpus_per_node = gpus"),
    (3, "split", "split = 0"),
    (3, "tasks_per_node", "tasks_per_node IS NULL"),
    (3, "mixed_models", "mixed_models = 0"),
    (3, "parts", "parts = '[]'"),
    (3, "master_port", "master_port IS NULL"),
    (3, "first_failure", "first_failure IS NULL"),
    (4, "energy_j", "energy_j IS NULL"),
    (6, "after_any", "after_any = '[]'"),
    (6, "after_notok", "after_notok = '[]'"),
    (6, "held", "held = 0"),
    (6, "array_spec", "array_spec IS NULL"),
    (6, "array_id", "array_id IS NULL"),
    (6, "array_index", "array_index IS NULL"),
    (6, "array_progress", "array_progress IS NULL"),
    (9, "behind", "behind IS NULL"),
    (9, "recalls", "recalls = 0"),
    (11, "image", "image IS NULL"),
    (11, "pids_max", "pids_max IS NULL"),
    (11, "used_cpu_ms", "used_cpu_ms IS NULL"),
    (11, "used_mem_peak_bytes", "used_mem_peak_bytes IS NULL"),
    (11, "used_cpu_pressure_ms", "used_cpu_pressure_ms IS NULL"),
    (11, "used_mem_pressure_ms", "used_mem_pressure_ms IS NULL"),
    // Schema 12: no job of an older release is a service's replica.
    (12, "service", "service IS NULL"),
    // Schema 13: no job of an older release had placement rules or was interactive.
    (13, "placement", "placement IS NULL"),
    (13, "interactive", "interactive = 0"),
    // Schema 15: no older release counted idle time or steps in a job's row.
    (15, "idle_gpu_s", "idle_gpu_s IS NULL"),
    (15, "steps_run", "steps_run = 0"),
    (15, "step_gpu_s", "step_gpu_s = 0"),
    // Schema 16: no job of an older release was charged to an account.
    (16, "account", "account IS NULL"),
];

/// Each table a later schema added, the schema that added it and its columns: an older
/// release had none of its rows, so it is empty after the upgrade.
const ADDED_TABLES: &[(i64, &str, &[&str])] = &[
    (12, "services", &["name", "data"]),
    (13, "reservations", &["name", "data"]),
];

/// A table as SQLite holds it: its columns, and each row's values as SQL literals
/// (`quote()`: the type is part of the value, 1 is not '1').
#[derive(Debug)]
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// The values of `columns` in each row.
    fn only(&self, columns: &[String]) -> Vec<Vec<String>> {
        let at: Vec<usize> = columns
            .iter()
            .map(|c| {
                self.columns
                    .iter()
                    .position(|d| d == c)
                    .unwrap_or_else(|| panic!("column {c} is gone"))
            })
            .collect();
        self.rows
            .iter()
            .map(|r| at.iter().map(|&i| r[i].clone()).collect())
            .collect()
    }
}

/// Every table of the database file, read with a plain connection.
async fn tables(file: &Path) -> BTreeMap<String, Table> {
    let mut c = SqliteConnection::connect(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'sqlite_sequence'",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    let mut out = BTreeMap::new();
    for name in names {
        let columns: Vec<String> =
            sqlx::query_scalar(&format!("SELECT name FROM pragma_table_info('{name}')"))
                .fetch_all(&mut c)
                .await
                .unwrap();
        let list: Vec<String> = columns.iter().map(|c| format!("quote({c})")).collect();
        // In the order of the values themselves (a version 10 after 9).
        let order = columns[..columns.len().min(2)].join(", ");
        let sql = format!("SELECT {} FROM {name} ORDER BY {order}", list.join(", "));
        let rows = sqlx::query(&sql)
            .fetch_all(&mut c)
            .await
            .unwrap()
            .iter()
            .map(|r| (0..columns.len()).map(|i| r.get::<String, _>(i)).collect())
            .collect();
        out.insert(name, Table { columns, rows });
    }
    c.close().await.unwrap();
    out
}

#[tokio::test]
async fn every_schemas_fixture_upgrades_and_keeps_every_fact() {
    for f in FIXTURES {
        let (_d, dir) = copy_of(f.dir);
        let file = dir.join(DB_FILE);
        let before = tables(&file).await;
        let version = format!("'{}'", f.schema);
        assert!(
            before["meta"]
                .only(&["key".into(), "value".into()])
                .contains(&vec!["'schema_version'".into(), version]),
            "{}: the fixture is of the schema it is named for",
            f.dir
        );
        let mut s = Store::open_dir(&dir).await.unwrap();
        assert_eq!(
            s.schema_version().await.unwrap(),
            SCHEMA_VERSION,
            "{}",
            f.dir
        );
        // The job rows, and every job as the store reads it (tasks moved by schema 17
        // included, rebuilt from their compact records).
        let table_rows = s.load_jobs().await.unwrap();
        let mut rows = table_rows.clone();
        for t in s.snapshot().await.unwrap().tasks {
            rows.push(
                s.job(t.id)
                    .await
                    .unwrap()
                    .expect("a compact task reads back"),
            );
        }
        rows.sort_by_key(|j| j.id);
        let nodes = s.load_nodes().await.unwrap();
        let tokens = s.load_tokens().await.unwrap();
        let services = s.load_services().await.unwrap();
        let reservations = s.load_reservations().await.unwrap();
        let events = {
            let mut e = BTreeMap::new();
            for r in &rows {
                e.insert(r.id, s.job_events(r.id).await.unwrap());
            }
            e
        };
        s.close().await.unwrap();
        let after = tables(&file).await;

        // Schema 17 moved the tasks their compact record stands for into `array_tasks`.
        let moved: BTreeSet<String> = after["array_tasks"]
            .only(&["id".into()])
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        assert_eq!(
            after["array_tasks"].columns,
            crate::sql::array_tasks::COLUMNS,
            "{}",
            f.dir
        );
        if f.array && f.schema >= 7 {
            assert!(!moved.is_empty(), "{}: no array task moved", f.dir);
        }
        rows_are_kept(f, &before, &after, &moved);
        added_tables_are_empty(f, &before, &after);
        assert_eq!(services, [], "{}", f.dir);
        assert_eq!(reservations, [], "{}", f.dir);
        added_columns_mean_what_they_did(f, &before, &after, &file).await;
        jobs_are_what_the_script_made(f, &rows);
        // Schema 5's timeline of older jobs: what each row knew, said as such.
        for r in &rows {
            let t = &events[&r.id];
            if f.schema < 5 {
                let kinds: Vec<_> = t.events.iter().map(|e| e.kind.name()).collect();
                let want: &[&str] = match r.end_ms {
                    Some(_) => &["submitted", "ended"],
                    None => &["submitted"],
                };
                assert_eq!(kinds, want, "{}: job {}", f.dir, r.id);
                assert!(t.events[0]
                    .detail
                    .contains("before gpusched kept timelines"));
            } else if r.array_task.is_none() {
                assert!(
                    !t.events.is_empty(),
                    "{}: job {} has no timeline",
                    f.dir,
                    r.id
                );
                assert_eq!(t.events[0].kind.name(), "submitted", "{}", f.dir);
            }
        }
        let names: BTreeSet<&str> = nodes.iter().map(|n| n.register.node.as_str()).collect();
        let want: BTreeSet<&str> = match f.gang {
            true => ["n1", "n2"].into(),
            false => ["n1"].into(),
        };
        assert_eq!(names, want, "{}", f.dir);
        assert_eq!(nodes[0].register.gpus.len(), 4, "{}", f.dir);
        assert_eq!(tokens.len(), 1, "{}", f.dir);
        assert_eq!(tokens[0].user, "alice", "{}", f.dir);

        // Upgraded once: it opens again as it is, with nothing more to do.
        let mut s = Store::open_dir(&dir).await.unwrap();
        assert_eq!(s.load_jobs().await.unwrap(), table_rows, "{}", f.dir);
        // A moved task reads as its row did: its state, and its whole timeline.
        for id in &moved {
            let n: u64 = id.parse().unwrap();
            let task = s.job(n).await.unwrap().expect("a moved task reads back");
            assert!(task.array_task.is_some(), "{}: job {id}", f.dir);
            let was = before["jobs"].only(&["id".into(), "state".into()]);
            let state = format!("'{}'", task.state.name());
            assert!(
                was.contains(&vec![id.clone(), state]),
                "{}: job {id}",
                f.dir
            );
            let had: Vec<Vec<String>> = before["job_events"]
                .only(&["job".into(), "at_ms".into(), "kind".into()])
                .into_iter()
                .filter(|r| r[0] == *id)
                .collect();
            let has: Vec<Vec<String>> = (s.job_events(n).await.unwrap().events.iter())
                .map(|e| {
                    vec![
                        id.clone(),
                        e.at_ms.to_string(),
                        format!("'{}'", e.kind.name()),
                    ]
                })
                .collect();
            assert_eq!(has, had, "{}: timeline of job {id}", f.dir);
        }
        s.close().await.unwrap();
        let again = tables(&file).await;
        assert_eq!(
            again["schema_history"].rows, after["schema_history"].rows,
            "{}",
            f.dir
        );
    }
}

/// Every row of every table the fixture had is still there, each old column's value
/// unchanged; only the schema's own bookkeeping moves on.
/// The array tasks schema 17 `moved` (ids as SQL literals) are checked apart: they left
/// `jobs` and `job_events` for `array_tasks`.
fn rows_are_kept(
    f: &Fixture,
    before: &BTreeMap<String, Table>,
    after: &BTreeMap<String, Table>,
    moved: &BTreeSet<String>,
) {
    for (name, old) in before {
        let new = after
            .get(name)
            .unwrap_or_else(|| panic!("{}: table {name} is gone", f.dir));
        let mut kept = new.only(&old.columns);
        let mut had = old.rows.clone();
        match name.as_str() {
            // Each table's first column is the job's id.
            "jobs" | "job_events" => {
                assert_eq!(old.columns[0], if name == "jobs" { "id" } else { "job" });
                had.retain(|r| !moved.contains(&r[0]));
            }
            // The schema's own keys are rewritten by the upgrade.
            "meta" => {
                let own = |r: &Vec<String>| ["'schema_version'", "'written_by'"].contains(&&*r[0]);
                kept.retain(|r| !own(r));
                had.retain(|r| !own(r));
            }
            // The upgrades are added to the history.
            "schema_history" => kept.truncate(had.len()),
            _ => {}
        }
        assert_eq!(kept, had, "{}: table {name}", f.dir);
    }
    if f.schema >= 5 {
        assert!(!before["job_events"].rows.is_empty(), "{}", f.dir);
    }
}

/// The tables a later schema added are there, with their columns, and empty.
fn added_tables_are_empty(
    f: &Fixture,
    before: &BTreeMap<String, Table>,
    after: &BTreeMap<String, Table>,
) {
    for (v, name, columns) in ADDED_TABLES.iter().filter(|(v, _, _)| *v > f.schema) {
        assert!(
            !before.contains_key(*name),
            "{}: table {name} of schema {v} is in the fixture",
            f.dir
        );
        let t = after
            .get(*name)
            .unwrap_or_else(|| panic!("{}: no table {name} after the upgrade", f.dir));
        assert_eq!(t.columns, *columns, "{}: table {name}", f.dir);
        assert!(t.rows.is_empty(), "{}: table {name}", f.dir);
    }
}

/// The columns a later schema added hold, for every row written before it, what such a
/// row means (one node, nothing measured, no array...).
async fn added_columns_mean_what_they_did(
    f: &Fixture,
    before: &BTreeMap<String, Table>,
    after: &BTreeMap<String, Table>,
    file: &Path,
) {
    let old: BTreeSet<&String> = before["jobs"].columns.iter().collect();
    let added: BTreeSet<&str> = after["jobs"]
        .columns
        .iter()
        .filter(|c| !old.contains(c))
        .map(String::as_str)
        .collect();
    // The fixture lacks exactly the columns of the schemas after its own.
    let missing = |v: i64, c: &str| v > f.schema || f.lacks.contains(&c);
    let later: BTreeSet<&str> = ADDED_COLUMNS
        .iter()
        .filter(|(v, c, _)| missing(*v, c))
        .map(|(_, c, _)| *c)
        .collect();
    assert_eq!(added, later, "{}", f.dir);
    let mut c = SqliteConnection::connect(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    for (_, _, holds) in ADDED_COLUMNS.iter().filter(|(v, c, _)| missing(*v, c)) {
        let wrong: Vec<i64> = sqlx::query_scalar(&format!(
            "SELECT id FROM jobs WHERE NOT ({holds}) ORDER BY id"
        ))
        .fetch_all(&mut c)
        .await
        .unwrap();
        assert_eq!(wrong, Vec::<i64>::new(), "{}: {holds}", f.dir);
    }
    c.close().await.unwrap();
}

/// The jobs as the store reads them: the nine of schema 1's script in every fixture, and
/// what each later release's script added.
fn jobs_are_what_the_script_made(f: &Fixture, rows: &[StoredJob]) {
    let by_name: BTreeMap<&str, &StoredJob> = rows
        .iter()
        .filter(|r| r.array_task.is_none())
        .map(|r| (r.name.as_str(), r))
        .collect();
    let j = |name: &str| {
        *by_name
            .get(name)
            .unwrap_or_else(|| panic!("{}: no job {name}", f.dir))
    };
    use JobState::*;
    let mut want = vec![
        ("ok", Succeeded),
        ("failed", Failed),
        ("cancelled", Cancelled),
        ("timed-out", TimedOut),
        ("requeued", Running),
        ("running", Running),
        ("share", Running),
        ("too-big", Pending),
        ("after", Pending),
    ];
    if f.gang {
        want.push(("gang", Pending));
    }
    if f.deps {
        want.extend([
            ("held", Pending),
            ("after-any", Pending),
            ("after-notok", Pending),
        ]);
    }
    if f.array {
        want.push(("array", Running));
    }
    if f.follower {
        want.extend([("lead", Running), ("follower", Pending)]);
    }
    if f.contained {
        want.extend([("contained", Pending), ("capped", Pending)]);
    }
    for (name, state) in &want {
        assert_eq!(j(name).state, *state, "{}: job {name}", f.dir);
    }
    let names: BTreeSet<&str> = want.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        by_name.keys().copied().collect::<BTreeSet<_>>(),
        names,
        "{}: the jobs (array tasks aside)",
        f.dir
    );

    for r in rows {
        let what = format!("{}: job {} ({})", f.dir, r.id, r.name);
        assert_eq!(r.user, "root", "{what}");
        assert_eq!(r.cwd, "/tmp", "{what}");
        assert_eq!(r.grace_s, 1, "{what}");
        assert!(r.submit_ms > 1_700_000_000_000, "{what}");
        if r.array_task.is_none() {
            let token = r.client_token.as_deref().unwrap_or("");
            assert!(token.starts_with("root/"), "{what}: token {token:?}");
        }
        if r.state.is_terminal() {
            assert!(r.end_ms.is_some() && r.note.is_none(), "{what}");
            assert!(
                r.end_reason.as_deref().is_some_and(|s| !s.is_empty()),
                "{what}"
            );
        } else {
            assert_eq!((r.end_ms, &r.end_reason), (None, &None), "{what}");
        }
        if r.state == Running && r.array.is_none() && r.array_task.is_none() {
            assert!(r.node.is_some() && r.start_ms.is_some(), "{what}");
            assert_eq!(r.gpu_indices.len(), r.gpus.max(1) as usize, "{what}");
        }
        if r.state == Pending {
            assert!(r.node.is_none() && r.gpu_indices.is_empty(), "{what}");
        }
    }

    // Schema 1's jobs.
    let end = |name| j(name).end_reason.as_deref();
    assert_eq!(end("ok"), Some("exited with code 0"), "{}", f.dir);
    assert_eq!(j("ok").exit_code, Some(0));
    assert_eq!(
        j("ok").env,
        [("GREETING".to_string(), "hello".to_string())].into()
    );
    assert_eq!(end("failed"), Some("exited with code 1"), "{}", f.dir);
    assert_eq!(j("failed").exit_code, Some(1));
    assert_eq!(
        end("cancelled"),
        Some("cancelled while running"),
        "{}",
        f.dir
    );
    assert_eq!(
        end("timed-out"),
        Some("stopped after passing its walltime of 1 s"),
        "{}",
        f.dir
    );
    assert_eq!(j("timed-out").walltime_s, Some(1));
    let r = j("requeued");
    assert_eq!(
        (r.attempt, r.agent_stops, r.max_retries),
        (2, 1, 1),
        "{}",
        f.dir
    );
    assert_eq!(
        r.attempt_nodes,
        [(1, "n1".to_string()), (2, "n1".to_string())].into(),
        "{}",
        f.dir
    );
    let r = j("running");
    assert_eq!(
        (r.queue.as_str(), r.priority, r.walltime_s),
        ("research", 7, Some(7200)),
        "{}",
        f.dir
    );
    assert_eq!(
        r.env,
        [
            ("MODEL".to_string(), "llama".to_string()),
            ("STEPS".to_string(), "100".to_string())
        ]
        .into(),
        "{}",
        f.dir
    );
    let r = j("share");
    assert_eq!(
        (r.gpus, &r.slice),
        (0, &Some(StoredSlice::Share { milli: 500 })),
        "{}",
        f.dir
    );
    let at = r.slice_at.as_ref().expect("a running share has a place");
    assert_eq!((r.gpu_indices.as_slice(), at.milli), (&[at.gpu][..], 500));
    assert_eq!(j("too-big").gpus, 4);
    assert_eq!(j("after").after, [j("running").id], "{}", f.dir);
    // The jobs that ran when the server was killed hold different GPUs.
    let held: BTreeSet<u32> = rows
        .iter()
        .filter(|r| r.state == Running && r.node.as_deref() == Some("n1") && r.gpus > 0)
        .flat_map(|r| r.gpu_indices.iter().copied())
        .chain([at.gpu])
        .collect();
    let whole = rows
        .iter()
        .filter(|r| r.state == Running && r.node.as_deref() == Some("n1") && r.gpus > 0)
        .count();
    assert_eq!(held.len(), whole + 1, "{}", f.dir);

    for r in rows {
        if !(f.gang && r.name == "gang") {
            assert_eq!(
                (r.nodes, r.gpus_per_node, r.split, r.tasks_per_node),
                (1, r.gpus, false, None),
                "{}: job {}",
                f.dir,
                r.name
            );
        }
    }
    if f.gang {
        let g = j("gang");
        assert_eq!(
            (
                g.nodes,
                g.gpus_per_node,
                g.gpus,
                g.tasks_per_node,
                g.mixed_models
            ),
            (2, 2, 4, Some(2), true),
            "{}",
            f.dir
        );
        assert!(g.parts.is_empty(), "{}", f.dir);
    }
    if f.deps {
        let running = j("running").id;
        assert_eq!(j("after-any").after_any, [running], "{}", f.dir);
        assert_eq!(j("after-notok").after_notok, [running], "{}", f.dir);
        assert!(j("held").held, "{}", f.dir);
    }
    for r in rows {
        if !(f.deps && r.name == "held") {
            assert!(!r.held, "{}: {}", f.dir, r.name);
        }
    }
    if f.array {
        let a = j("array");
        assert_eq!(
            a.array,
            Some(StoredArray {
                first: 0,
                last: 5,
                step: 1,
                max_running: Some(2)
            }),
            "{}",
            f.dir
        );
        let p = a.array_progress.as_ref().expect("an array's progress");
        assert_eq!(p.skipped, [4], "{}", f.dir);
        let mut tasks: Vec<(u32, JobState)> = rows
            .iter()
            .filter_map(|r| Some((r.array_task?, r.state)))
            .filter(|(t, _)| t.array_id == a.id)
            .map(|(t, s)| (t.index, s))
            .collect();
        tasks.sort_by_key(|(i, _)| *i);
        // Two at once, and the index cancelled before it started has a row too.
        let running: Vec<u32> = tasks
            .iter()
            .filter(|(_, s)| *s == Running)
            .map(|(i, _)| *i)
            .collect();
        assert_eq!(running, [0, 1], "{}: {tasks:?}", f.dir);
        for r in rows.iter().filter(|r| r.array_task.is_some()) {
            assert_eq!(
                r.env.get("PART").map(String::as_str),
                Some("a"),
                "{}",
                f.dir
            );
            assert_eq!(r.gpus, 0, "{}", f.dir);
        }
    }
    if f.follower {
        let ahead = j("follower").behind.expect("the follower's job ahead");
        let ahead = rows.iter().find(|r| r.id == ahead).expect("its row");
        assert_eq!(
            (ahead.state, ahead.gpus, ahead.queue.as_str()),
            (Running, 1, "default"),
            "{}",
            f.dir
        );
        assert_eq!(j("follower").walltime_s, Some(1));
    }
    for r in rows {
        if !(r.name == "follower" && f.follower) {
            assert_eq!((r.behind, r.recalls), (None, 0), "{}: {}", f.dir, r.name);
        }
    }
    if f.contained {
        let c = j("contained");
        assert_eq!(
            (c.image.as_deref(), c.pids_max),
            (Some("docker.io/library/busybox:1.36"), Some(64)),
            "{}",
            f.dir
        );
        assert_eq!(
            (j("capped").image.as_deref(), j("capped").pids_max),
            (None, Some(64))
        );
    }
    for r in rows {
        if !f.contained || !["contained", "capped"].contains(&r.name.as_str()) {
            assert_eq!((&r.image, r.pids_max), (&None, None), "{}", f.dir);
        }
    }
    // No fixture holds a service's replica (the script makes no service).
    for r in rows {
        assert_eq!(r.service, None, "{}: {}", f.dir, r.name);
    }
    // No release before schema 15 charged an account.
    for r in rows {
        assert_eq!(r.account, None, "{}: {}", f.dir, r.name);
    }
    // No release before schema 13 had placement rules or interactive jobs.
    for r in rows {
        assert_eq!(
            (&r.placement, r.interactive),
            (&None, false),
            "{}: {}",
            f.dir,
            r.name
        );
    }
}
