//! Accounts and the `fairtree` policy end to end: a job charged to an account, the
//! refusal of an unknown one, and the order of waiting jobs by their accounts' decayed
//! usage kept over a restart of the server (SIGKILL) on SQLite, and over the leader's
//! SIGKILL among three servers on PostgreSQL, because the usage was stored
//! (docs/accounts.md).

use serde_json::Value;

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

use crate::support::*;

const QUEUES: &str = "[queues.default]

[accounts.heavy]
users = [\"root\"]

[accounts.light]
users = [\"root\"]

[users.root]
default_account = \"heavy\"
";

/// Each account's decayed GPU-hours and the fair-share factor of its user, by name.
fn standings(url: &str) -> Vec<(String, f64, f64)> {
    parse_standings(cli(url, &["accounts", "--json"]))
}

/// A job as `show --json` gives it, through `server` (a URL or a list) with a token.
fn job_as(server: &str, token: &str, id: u64) -> Value {
    let o = cli_as(server, Some(token), &["show", "--json", &id.to_string()]);
    assert!(o.status.success(), "show {id}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("show --json prints JSON")
}

/// [`standings`] through `server` (a URL or a list) with a token.
fn standings_as(server: &str, token: Option<&str>) -> Vec<(String, f64, f64)> {
    parse_standings(cli_as(server, token, &["accounts", "--json"]))
}

fn parse_standings(o: std::process::Output) -> Vec<(String, f64, f64)> {
    assert!(o.status.success(), "accounts: {}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["name"] != "root")
        .map(|a| {
            let factor = a["users"]
                .as_array()
                .unwrap()
                .iter()
                .find(|u| u["user"] == "root")
                .map_or(0.0, |u| u["fair_share"].as_f64().unwrap());
            (
                a["name"].as_str().unwrap().to_string(),
                a["usage_gpu_hours"].as_f64().unwrap(),
                factor,
            )
        })
        .collect()
}

#[test]
fn the_order_by_account_survives_a_server_restart() {
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(&file, QUEUES).unwrap();
    let data = dir.join("data");
    let port = free_port();
    let args = ["--queues", file.to_str().unwrap(), "--policy", "fairtree"];
    let (mut server1, url) = server(&data, port, &args);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));

    // An unknown account is refused, naming the user's accounts.
    let o = cli(&url, &["submit", "--account", "nope", "--", "true"]);
    assert!(
        stderr(&o).contains("no account named `nope`; root's accounts are: heavy, light"),
        "{}",
        stderr(&o)
    );
    // heavy (root's default account) uses the GPU for a few seconds.
    let first = submit(&url, &["--", "sleep", "3"]);
    let f = wait_job(&url, first, SLOW);
    assert_eq!(
        (&f["state"], &f["account"]),
        (&"succeeded".into(), &"heavy".into()),
        "{f}"
    );
    wait_until(SLOW, || {
        let s = standings(&url);
        s.iter().any(|(a, h, _)| a == "heavy" && *h > 0.0)
    });
    // The usage is stored in the first round five seconds after the end (a tick, every
    // 2.5 s, at the latest); give it twice that. (Reading the database from outside
    // while the server runs is no evidence: another process's connection may take the
    // WAL away from it.)
    let end_ms = f["end_ms"].as_u64().unwrap();
    wait_until(SLOW, || now_ms() > end_ms + 15_000);

    // One job holds the GPU; behind it wait a heavy job, then a light one.
    let blocker = submit(&url, &["--", "sleep", "600"]);
    wait_until(SLOW, || job(&url, blocker)["state"] == "running");
    let heavy = submit(&url, &["--", "sleep", "600"]);
    let light = submit(&url, &["--account", "light", "--", "sleep", "600"]);
    assert_eq!(job(&url, light)["account"], "light");
    let before = standings(&url);
    let rank = |s: &[(String, f64, f64)], a: &str| s.iter().find(|x| x.0 == a).unwrap().2;
    assert!(
        rank(&before, "light") > rank(&before, "heavy"),
        "{before:?}"
    );

    // The server dies and comes back on the same store and address.
    server1.kill();
    let (_server2, url) = server(&data, port, &args);
    wait_until(SLOW, || node_state(&url, "n1").as_deref() == Some("online"));
    let after = standings(&url);
    assert!(
        after.iter().any(|(a, h, _)| a == "heavy" && *h > 0.0),
        "the stored usage is back: {after:?}"
    );
    assert!(rank(&after, "light") > rank(&after, "heavy"), "{after:?}");

    // The GPU frees: the light job starts first although it was submitted last.
    let o = cli(&url, &["cancel", &blocker.to_string()]);
    assert!(o.status.success(), "cancel: {}", stderr(&o));
    wait_until(SLOW, || job(&url, light)["state"] == "running");
    assert_eq!(job(&url, heavy)["state"], "pending");
    for id in [light, heavy] {
        let _ = cli(&url, &["cancel", &id.to_string()]);
    }
}

/// The same order after the leader of three servers on PostgreSQL is killed: the new
/// leader reads the decayed usage the old one stored. (Without PostgreSQL installed it
/// skips with a line, and fails under CI.)
#[test]
fn the_order_by_account_survives_the_leaders_kill_on_postgres() {
    use crate::failover::{signal, wait_end, wait_leader, Trio};
    use gpusched_store::testing::TempPostgres;
    let Some(pg) = TempPostgres::start_or_skip("the_order_by_account_survives_the_leaders_kill")
    else {
        return;
    };
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(&file, QUEUES).unwrap();
    let args = ["--queues", file.to_str().unwrap(), "--policy", "fairtree"];
    let url = pg.url();
    let mut trio = Trio::start(&dir, |_| url.clone(), &args, || {});
    let (list, token) = (trio.list.clone(), trio.token.clone());
    let run = |args: &[&str]| -> u64 {
        let mut all = vec!["submit", "--json"];
        all.extend_from_slice(args);
        let o = cli_as(&list, Some(&token), &all);
        assert!(o.status.success(), "submit: {}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["ids"][0].as_u64().unwrap()
    };
    // heavy (root's default account) uses a GPU for a few seconds; the usage is stored
    // within a tick of five seconds after the end: wait three times that.
    let first = run(&["--", "sleep", "3"]);
    let urls: Vec<&str> = trio.urls.iter().map(String::as_str).collect();
    let f = wait_end(&urls, &token, first, SLOW);
    assert_eq!(
        (&f["state"], &f["account"]),
        (&"succeeded".into(), &"heavy".into()),
        "{f}"
    );
    let end_ms = f["end_ms"].as_u64().unwrap();
    wait_until(SLOW, || now_ms() > end_ms + 15_000);

    // The trio's two nodes have 4 GPUs; the job across the failover holds one, three
    // blockers the rest. Behind them wait a heavy job, then a light one.
    let blockers: Vec<u64> = (0..3).map(|_| run(&["--", "sleep", "600"])).collect();
    for &b in &blockers {
        wait_until(SLOW, || job_as(&list, &token, b)["state"] == "running");
    }
    let heavy = run(&["--", "sleep", "600"]);
    let light = run(&["--account", "light", "--", "sleep", "600"]);
    let rank = |s: &[(String, f64, f64)], a: &str| s.iter().find(|x| x.0 == a).unwrap().2;
    let before = standings_as(&list, Some(&token));
    assert!(
        before.iter().any(|(a, h, _)| a == "heavy" && *h > 0.0),
        "{before:?}"
    );
    assert!(
        rank(&before, "light") > rank(&before, "heavy"),
        "{before:?}"
    );

    // The leader dies; another takes over and reads the stored usage.
    let (lead, _) = trio.leader();
    signal(trio.pid(lead), "-KILL");
    trio.servers[lead].take();
    let others: Vec<String> = trio.others(lead).iter().map(|u| u.to_string()).collect();
    let others: Vec<&str> = others.iter().map(String::as_str).collect();
    wait_leader(&others, SLOW);
    let after = standings_as(&list, Some(&token));
    assert!(
        after.iter().any(|(a, h, _)| a == "heavy" && *h > 0.0),
        "the stored usage is back on the new leader: {after:?}"
    );
    assert!(rank(&after, "light") > rank(&after, "heavy"), "{after:?}");

    // A GPU frees: the light job starts first although it was submitted last.
    let o = cli_as(&list, Some(&token), &["cancel", &blockers[0].to_string()]);
    assert!(o.status.success(), "cancel: {}", stderr(&o));
    wait_until(SLOW, || job_as(&list, &token, light)["state"] == "running");
    assert_eq!(job_as(&list, &token, heavy)["state"], "pending");
    let mut ids = blockers[1..].to_vec();
    ids.extend([light, heavy]);
    for id in ids {
        let _ = cli_as(&list, Some(&token), &["cancel", &id.to_string()]);
    }
    trio.open_gate();
}
