//! Several servers on one store, one leader (issue 15): three `gpusched server`s share
//! one store, agents and the CLI are given every server's URL. This module holds what
//! the failover tests share (a cluster of three servers and two agents, a client that
//! keeps submitting, the ledger every job writes its attempt to) and the test on ONE
//! SQLite file (WAL lets processes on one host share it); `failover_pg.rs` runs the
//! faults on PostgreSQL, where the servers may be on different machines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// One server of the cluster.
pub struct Srv {
    pub proc: Proc,
    pub url: String,
    pub dir: PathBuf,
}

/// Starts a server on the shared store `store` with the cluster's join token file.
pub fn start(dir: &Path, store: &str, join: &Path, extra: &[&str]) -> Srv {
    start_on(
        dir,
        &format!("127.0.0.1:{}", free_port()),
        store,
        join,
        extra,
    )
}

/// [`start`] on a given listen address (a server restarted where clients know it).
pub fn start_on(dir: &Path, listen: &str, store: &str, join: &Path, extra: &[&str]) -> Srv {
    let mut child = Command::new(BIN)
        .args(["server", "--listen", listen, "--data-dir"])
        .arg(dir)
        .args(["--store", store, "--join-token-file"])
        .arg(join)
        // Longer than any failover here: agents keep their jobs through it.
        .args(["--heartbeat-timeout", "30s", "--grace", "1s"])
        .args(extra)
        .env("GPUSCHED_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gpusched server");
    let stderr = child.stderr.take().expect("piped stderr");
    let url = read_url(stderr, "listening on ");
    Srv {
        proc: Proc { child },
        url,
        dir: dir.to_path_buf(),
    }
}

/// A server's health (Null when it does not answer 200 within `limit`: stopped, gone,
/// or its state task busy).
pub fn health_within(url: &str, limit: Duration) -> Value {
    let r = Http {
        timeout: limit,
        ..Http::new(url)
    }
    .send("GET", "/api/health");
    match r.code {
        200 => serde_json::from_str(&r.body).unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

pub fn health(url: &str) -> Value {
    health_within(url, Duration::from_secs(30))
}

/// Waits (bounded) until one of `urls` says it leads; its index and epoch.
pub fn wait_leader(urls: &[&str], limit: Duration) -> (usize, u64) {
    let start = Instant::now();
    loop {
        for (i, u) in urls.iter().enumerate() {
            let h = health_within(u, Duration::from_secs(2));
            if h["role"] == "leader" {
                return (i, h["epoch"].as_u64().expect("a leader's epoch"));
            }
        }
        assert!(
            start.elapsed() < limit,
            "no server of {urls:?} led within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An admin token, made over the leader's Unix socket (it is in the store: every
/// later leader knows it).
pub fn admin_token(leader: &Srv) -> String {
    let sock = format!("unix:{}", leader.dir.join("gpusched.sock").display());
    // For this Unix user: jobs run as their submitter.
    let me = Command::new("id").arg("-un").output().expect("id -un");
    let me = String::from_utf8_lossy(&me.stdout).trim().to_string();
    let o = cli_as(&sock, None, &["token", "create", &me, "--admin"]);
    assert!(o.status.success(), "token create: {}", stderr(&o));
    stdout(&o).trim().to_string()
}

/// Starts an agent given every server (`list`), with two declared GPUs.
pub fn agent_of(list: &str, name: &str, state: &Path, join: &Path) -> Proc {
    let child = Command::new(BIN)
        .args(["agent", "--server", list, "--name", name, "--state-dir"])
        .arg(state)
        .arg("--join-token-file")
        .arg(join)
        .args([
            "--allow-root-jobs",
            "--gpus",
            "2",
            "--gpu-model",
            "A100-SXM4-80GB",
        ])
        .args(["--gpu-backend", "declared"])
        .env("GPUSCHED_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gpusched agent");
    Proc { child }
}

pub fn nodes_online(url: &str, token: &str) -> usize {
    let (code, body) = http_with(url, Some(token), "GET", "/api/nodes", None);
    if code != 200 {
        return 0;
    }
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    v["nodes"]
        .as_array()
        .map_or(0, |n| n.iter().filter(|n| n["state"] == "online").count())
}

/// Waits (bounded) for job `id` to end, asking the servers of `list` in turn.
pub fn wait_end(urls: &[&str], token: &str, id: u64, limit: Duration) -> Value {
    let start = Instant::now();
    loop {
        for u in urls {
            let path = format!("/api/jobs/{id}/wait?timeout_s=1");
            let (code, body) = http_with(u, Some(token), "GET", &path, None);
            if code == 200 {
                let v: Value = serde_json::from_str(&body).expect("job JSON");
                if ["succeeded", "failed", "cancelled", "timed_out"]
                    .contains(&v["state"].as_str().unwrap_or(""))
                {
                    return v;
                }
            }
        }
        assert!(
            start.elapsed() < limit,
            "job {id} did not end within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("run kill")
        .success();
    assert!(ok, "kill {sig} {pid}");
}

/// Every line `job attempt` of the ledger, counted.
pub fn ledger_counts(text: &str) -> BTreeMap<(u64, u64), usize> {
    let mut out = BTreeMap::new();
    for l in full_lines(text) {
        let mut f = l.split(' ').map(str::parse::<u64>);
        if let (Some(Ok(j)), Some(Ok(a))) = (f.next(), f.next()) {
            *out.entry((j, a)).or_default() += 1;
        }
    }
    out
}

/// Three servers on one store and two agents given every server, with an admin token.
/// Server `i` is given the store `store(i)` (the same store, maybe reached another way:
/// through a proxy, or under its own `application_name`).
pub struct Trio {
    /// None once a test took it away (killed).
    pub servers: Vec<Option<Srv>>,
    pub urls: Vec<String>,
    /// Every server's URL, comma-separated (`--server`, `GPUSCHED_SERVER`).
    pub list: String,
    pub token: String,
    pub ledger: PathBuf,
    /// The job that runs across the failover until [`Trio::open_gate`].
    pub across: u64,
    gate: PathBuf,
    _agents: Vec<Proc>,
}

impl Trio {
    /// The first server alone (it makes the schema and leads; `first_leads` runs then,
    /// e.g. to install something in the new schema), then the two others, which follow;
    /// two agents (one given the list backwards: it reaches the leader through a 307),
    /// and a job that runs until the gate opens (the takeover grace must let it run on
    /// through the failover, never requeue it).
    pub fn start(
        dir: &Path,
        store: impl Fn(usize) -> String,
        extra: &[&str],
        first_leads: impl FnOnce(),
    ) -> Trio {
        let join = dir.join("join-token");
        let first = start(&dir.join("s0"), &store(0), &join, extra);
        wait_leader(&[&first.url], SLOW);
        first_leads();
        let s1 = start(&dir.join("s1"), &store(1), &join, extra);
        let s2 = start(&dir.join("s2"), &store(2), &join, extra);
        let urls = vec![first.url.clone(), s1.url.clone(), s2.url.clone()];
        for u in &urls[1..] {
            assert_eq!(health(u)["role"], "follower", "{u}");
        }
        let list = urls.join(",");
        let token = admin_token(&first);
        let reversed: Vec<&str> = urls.iter().rev().map(String::as_str).collect();
        let agents = vec![
            agent_of(&reversed.join(","), "node-a", &dir.join("a"), &join),
            agent_of(&list, "node-b", &dir.join("b"), &join),
        ];
        wait_until(SLOW, || nodes_online(&first.url, &token) == 2);
        let ledger = dir.join("ledger");
        let gate = dir.join("gate");
        let long_cmd = format!(
            "echo \"$GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT\" >> {}; while [ ! -e {} ]; do sleep 0.05; done",
            ledger.display(),
            gate.display()
        );
        let o = cli_as(
            &list,
            Some(&token),
            &[
                "submit",
                "--json",
                "--name",
                "across",
                "--max-retries",
                "2",
                "--",
                "sh",
                "-c",
                &long_cmd,
            ],
        );
        assert!(o.status.success(), "submit: {}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).expect("submit --json");
        let across = v["ids"][0].as_u64().expect("an id");
        wait_for_text(&ledger, SLOW, |t| {
            ledger_counts(t).contains_key(&(across, 1))
        });
        Trio {
            servers: vec![Some(first), Some(s1), Some(s2)],
            urls,
            list,
            token,
            ledger,
            across,
            gate,
            _agents: agents,
        }
    }

    pub fn srv(&self, i: usize) -> &Srv {
        self.servers[i].as_ref().expect("a running server")
    }

    pub fn pid(&self, i: usize) -> u32 {
        self.srv(i).proc.child.id()
    }

    /// The URLs of every server but `i`.
    pub fn others(&self, i: usize) -> Vec<&str> {
        (0..self.urls.len())
            .filter(|&j| j != i)
            .map(|j| self.urls[j].as_str())
            .collect()
    }

    /// Which server leads now (bounded wait), and its epoch.
    pub fn leader(&self) -> (usize, u64) {
        let all: Vec<&str> = self.urls.iter().map(String::as_str).collect();
        wait_leader(&all, SLOW)
    }

    /// Submits continuously through every server's URL (see [`Load`]).
    pub fn load(&self, prefix: &str) -> Load {
        Load::start(&self.list, &self.token, &self.ledger, prefix)
    }

    /// Lets the job that ran across the failover end.
    pub fn open_gate(&self) {
        std::fs::write(&self.gate, "").expect("open the gate");
    }

    /// Stops the load and proves what it submitted ran cleanly ([`Trio::each_ran_once`]),
    /// asking the servers of `live`; the ids acknowledged.
    pub fn settle(&self, load: Load, live: &[&str]) -> Vec<u64> {
        let (accepted, refused) = load.stop();
        eprintln!(
            "{} submissions acknowledged, {refused} refused",
            accepted.len()
        );
        self.each_ran_once(live, &accepted);
        accepted
    }

    /// The proof of a clean failover: every job in `accepted` (and the one across it)
    /// succeeded at its first attempt, asking the servers of `live`; the ledger holds
    /// each (job, attempt) exactly once (no job ran twice) and every job it names at
    /// attempt 1; and each submission (its name) is one job, nothing duplicated.
    pub fn each_ran_once(&self, live: &[&str], accepted: &[u64]) {
        self.open_gate();
        let mut accepted = accepted.to_vec();
        accepted.push(self.across);
        for &id in &accepted {
            let v = wait_end(live, &self.token, id, SLOW);
            assert_eq!(v["state"], "succeeded", "job {id}: {v}");
            assert_eq!(v["attempt"], 1, "job {id} ran again: {v}");
        }
        let text = wait_for_text(&self.ledger, SLOW, |t| {
            let c = ledger_counts(t);
            accepted.iter().all(|id| c.contains_key(&(*id, 1)))
        });
        for ((job, attempt), n) in ledger_counts(&text) {
            assert_eq!(n, 1, "job {job} attempt {attempt} ran {n} times");
            assert_eq!(attempt, 1, "job {job} needed attempt {attempt}");
        }
        let mut names = BTreeMap::new();
        for j in self.jobs(live) {
            *names
                .entry(j["name"].as_str().unwrap_or("").to_string())
                .or_insert(0) += 1;
        }
        assert!(names.values().all(|&n| n == 1), "duplicated: {names:?}");
    }

    /// Every job the cluster knows, from the first of `live` that leads.
    pub fn jobs(&self, live: &[&str]) -> Vec<Value> {
        let start = Instant::now();
        loop {
            for u in live {
                let (code, body) =
                    http_with(u, Some(&self.token), "GET", "/api/jobs?limit=100000", None);
                if code == 200 {
                    let v: Value = serde_json::from_str(&body).expect("job list");
                    return v["jobs"].as_array().expect("jobs").clone();
                }
            }
            assert!(
                start.elapsed() < SLOW,
                "no server of {live:?} listed the jobs"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A client that keeps submitting short jobs (each writes `job attempt` to the ledger)
/// through every server's URL, as users would through a failover, and keeps the ids
/// the cluster acknowledged. A refused submission (no leader at that moment, after the
/// CLI's own retries) is not counted: only what was acknowledged must survive.
pub struct Load {
    accepted: Arc<Mutex<Vec<u64>>>,
    refused: Arc<Mutex<u64>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Load {
    pub fn start(list: &str, token: &str, ledger: &Path, prefix: &str) -> Load {
        let accepted: Arc<Mutex<Vec<u64>>> = Arc::default();
        let refused: Arc<Mutex<u64>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (accepted, refused, stop) = (accepted.clone(), refused.clone(), stop.clone());
            let (list, token, ledger) = (list.to_string(), token.to_string(), ledger.to_owned());
            let prefix = prefix.to_string();
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) {
                    let name = format!("{prefix}-{i}");
                    let cmd = format!(
                        "echo \"$GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT\" >> {}; sleep 0.3",
                        ledger.display()
                    );
                    let o = cli_as(
                        &list,
                        Some(&token),
                        &["submit", "--json", "--name", &name, "--max-retries", "0"]
                            .into_iter()
                            .chain(["--", "sh", "-c", &cmd])
                            .collect::<Vec<_>>(),
                    );
                    if o.status.success() {
                        let v: Value = serde_json::from_str(&stdout(&o)).expect("submit --json");
                        let id = v["ids"][0].as_u64().expect("an id");
                        accepted.lock().unwrap().push(id);
                    } else {
                        let mut n = refused.lock().unwrap();
                        *n += 1;
                        if *n <= 3 {
                            eprintln!("submission {name} refused: {}", stderr(&o).trim());
                        }
                    }
                    i += 1;
                    std::thread::sleep(Duration::from_millis(50));
                }
            })
        };
        Load {
            accepted,
            refused,
            stop,
            thread: Some(thread),
        }
    }

    pub fn count(&self) -> usize {
        self.accepted.lock().unwrap().len()
    }

    /// Waits (bounded) until `n` more submissions than now were acknowledged.
    pub fn wait_more(&self, n: usize) {
        let target = self.count() + n;
        wait_until(SLOW, || self.count() >= target);
    }

    /// Stops submitting; the ids acknowledged, and how many submissions were refused.
    pub fn stop(mut self) -> (Vec<u64>, u64) {
        self.halt();
        let ids = self.accepted.lock().unwrap().clone();
        let refused = *self.refused.lock().unwrap();
        (ids, refused)
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.halt();
    }
}

/// SIGKILL of the leader under continuous submission: a follower leads within the
/// time asserted, and nothing accepted is lost, duplicated or run twice. Server `i` is
/// given the store `store(i)`; `first_leads` runs once the first server leads (alone).
/// The time from the kill to the first health saying another server leads.
pub fn kill_the_leader_under_submission(
    dir: &Path,
    store: impl Fn(usize) -> String,
    first_leads: impl FnOnce(),
) -> (Trio, Duration) {
    let mut trio = Trio::start(dir, store, &[], first_leads);
    let load = trio.load("f");
    // An array whose tasks run across the takeover (compact records in the store): each
    // index runs once, at its first attempt, and each task reads back from the new leader.
    let tasks = 40u64;
    let array_ledger = dir.join("array-ledger");
    let cmd = format!(
        "echo \"$GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT $GPUSCHED_ARRAY_INDEX\" >> {}; sleep 0.3",
        array_ledger.display()
    );
    let range = format!("0-{}", tasks - 1);
    let o = cli_as(
        &trio.list,
        Some(&trio.token),
        &[
            "submit",
            "--json",
            "--name",
            "arr",
            "--array",
            &range,
            "--max-retries",
            "0",
        ]
        .into_iter()
        .chain(["--", "sh", "-c", &cmd])
        .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let array: u64 = serde_json::from_str::<Value>(&stdout(&o)).expect("submit --json")["ids"][0]
        .as_u64()
        .expect("an id");
    wait_for_text(&array_ledger, SLOW, |t| !full_lines(t).is_empty());
    load.wait_more(6);
    let (lead, epoch0) = trio.leader();
    let mut killed = trio.servers[lead].take().expect("the leader");
    killed.proc.kill();
    let at = Instant::now();
    let (_, epoch) = wait_leader(&trio.others(lead), SLOW);
    let failover = at.elapsed();
    eprintln!("failover: a follower led {failover:?} after the leader's SIGKILL (epoch {epoch})");
    assert!(
        epoch > epoch0,
        "a takeover bumps the epoch ({epoch0} -> {epoch})"
    );
    load.wait_more(6);
    trio.settle(load, &trio.others(lead));
    let live = trio.others(lead);
    let v = wait_end(&live, &trio.token, array, SLOW);
    let leader = live[wait_leader(&live, SLOW).0];
    assert_eq!(v["state"], "succeeded", "array {array}: {v}");
    let text = wait_for_text(&array_ledger, SLOW, |t| full_lines(t).len() as u64 >= tasks);
    let mut indices = BTreeMap::new();
    for l in full_lines(&text) {
        let w: Vec<&str> = l.split(' ').collect();
        assert_eq!(w[1], "1", "task {l} needed another attempt");
        *indices.entry(w[2].to_string()).or_insert(0) += 1;
        let (code, b) = http_with(
            leader,
            Some(&trio.token),
            "GET",
            &format!("/api/jobs/{array}/tasks/{}", w[2]),
            None,
        );
        assert_eq!(code, 200, "task {}: {b}", w[2]);
        let t: Value = serde_json::from_str(&b).expect("a task");
        assert_eq!(t["id"].to_string(), w[0], "{t}");
        assert_eq!(t["state"], "succeeded", "{t}");
    }
    assert_eq!(indices.len() as u64, tasks, "every index ran: {indices:?}");
    assert!(
        indices.values().all(|&n| n == 1),
        "an index ran twice: {indices:?}"
    );
    assert!(
        failover < Duration::from_secs(20),
        "failover took {failover:?} (about 4-5 s on an idle machine with the default lease)"
    );
    (trio, failover)
}

#[test]
fn killing_the_leader_under_submission_loses_duplicates_and_reruns_nothing() {
    let (_d, dir) = scratch();
    let store = format!("sqlite:{}", dir.join("shared.db").display());
    kill_the_leader_under_submission(&dir, |_| store.clone(), || {});
}
