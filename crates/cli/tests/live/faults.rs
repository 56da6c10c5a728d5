//! Faults with real processes: a killed agent, a restarted agent, a killed server.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

/// A job that appends "id attempt node" to a ledger, so the test can count runs.
fn ledger_job(ledger: &std::path::Path, secs: f64) -> Vec<String> {
    vec![
        "--".into(),
        "sh".into(),
        "-c".into(),
        format!(
            "echo \"$GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT $$\" >> {}; sleep {secs}",
            ledger.display()
        ),
    ]
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The ledger's complete lines as (job, attempt, pid).
fn ledger_runs(text: &str) -> Vec<(u64, u64, i32)> {
    full_lines(text)
        .iter()
        .filter_map(|l| {
            let mut f = l.split(' ').map(str::parse::<i64>);
            match (f.next(), f.next(), f.next()) {
                (Some(Ok(j)), Some(Ok(a)), Some(Ok(p))) => Some((j as u64, a as u64, p as i32)),
                _ => None,
            }
        })
        .collect()
}

/// Waits until the ledger holds a run of `job` (the job's shell has written its line)
/// and returns that run's pid.
fn wait_ledger(ledger: &std::path::Path, job: u64, attempt: u64) -> i32 {
    let text = wait_for_text(ledger, SLOW, |t| {
        ledger_runs(t)
            .iter()
            .any(|&(j, a, _)| (j, a) == (job, attempt))
    });
    ledger_runs(&text)
        .into_iter()
        .find(|&(j, a, _)| (j, a) == (job, attempt))
        .map(|(_, _, pid)| pid)
        .expect("found above")
}

#[test]
fn a_killed_agents_jobs_are_requeued_and_run_on_another_node() {
    let (_d, dir) = scratch();
    // A short heartbeat timeout: the test waits for it to declare node-a lost.
    let (_server, url) = server(&dir.join("data"), 0, &["--heartbeat-timeout", "5s"]);
    let mut a = agent(&url, "node-a", &dir.join("a"), Gpus::Declared(1));
    let ledger = dir.join("ledger");
    // The jobs hold their GPUs until the test opens the gate, however slow the machine.
    let gate = dir.join("gate");
    let job_args: Vec<String> = vec![
        "--".into(),
        "sh".into(),
        "-c".into(),
        format!(
            "echo \"$GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT $$\" >> {}; while [ ! -e {} ]; do sleep 0.05; done",
            ledger.display(),
            gate.display()
        ),
    ];
    let mut first = vec!["--max-retries", "2"];
    first.extend(args(&job_args));
    let moved = submit(&url, &first);
    let mut second = vec!["--max-retries", "0"];
    second.extend(args(&job_args));
    wait_until(SLOW, || job(&url, moved)["state"] == "running");
    let no_retry = submit(&url, &second);
    let _b = agent(&url, "node-b", &dir.join("b"), Gpus::Declared(1));
    wait_until(SLOW, || job(&url, no_retry)["state"] == "running");
    assert_eq!(job(&url, moved)["node"], "node-a");
    assert_eq!(job(&url, no_retry)["node"], "node-b");

    // Kill node-a's agent; its job's process dies with it (no run twice). The job's
    // own ledger line is the evidence that it ran, not its `running` state.
    let first_pid = wait_ledger(&ledger, moved, 1);
    a.kill();
    wait_until(SLOW, || !pid_alive(first_pid));
    // After the heartbeat timeout node-a is offline and the job requeued; it then runs
    // on node-b once node-b's job is done (the gate opens).
    wait_until(SLOW, || {
        node_state(&url, "node-a").as_deref() == Some("offline")
    });
    std::fs::write(&gate, "").unwrap();
    let v = wait_job(&url, moved, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["attempt"], 2);
    assert_eq!(v["node"], "node-b");
    assert_eq!(wait_job(&url, no_retry, SLOW)["state"], "succeeded");

    // A job with no retries left fails with the reason instead of running again.
    let mut c = agent(&url, "node-c", &dir.join("c"), Gpus::Declared(4));
    let mut last = vec!["--max-retries", "0", "--gpus", "4"];
    let long = ledger_job(&ledger, 60.0);
    last.extend(args(&long));
    let doomed = submit(&url, &last);
    wait_ledger(&ledger, doomed, 1);
    c.kill();
    let v = wait_job(&url, doomed, SLOW);
    assert_eq!(v["state"], "failed", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("no retries left"),
        "{v}"
    );
}

#[test]
fn a_restarted_agent_reports_the_job_it_lost_and_it_runs_again() {
    let (_d, dir) = scratch();
    // A long heartbeat timeout: the restart is noticed through the agent's report, not
    // through silence.
    let (_server, url) = server(&dir.join("data"), 0, &["--heartbeat-timeout", "60s"]);
    let mut a = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    let ledger = dir.join("ledger");
    let j = ledger_job(&ledger, 1.0);
    let id = submit(&url, &args(&j));
    // Killed only once its shell has written its line: a run that never got that far
    // leaves no evidence to count.
    wait_ledger(&ledger, id, 1);
    a.kill();
    let _a2 = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["attempt"], 2, "{v}");
    // The job succeeded, so its second line was written before it exited.
    let runs = std::fs::read_to_string(&ledger).unwrap();
    assert_eq!(
        ledger_runs(&runs)
            .iter()
            .map(|&(j, a, _)| (j, a))
            .collect::<Vec<_>>(),
        vec![(id, 1), (id, 2)],
        "one lost run, one full run: {runs}"
    );
}

#[test]
fn a_server_killed_mid_traffic_loses_and_duplicates_nothing() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let port = free_port();
    // The agent's lease outlasts the restart however busy the machine: every job runs once.
    let hb = ["--heartbeat-timeout", "30s"];
    let (server1, url) = server(&data, port, &hb);
    let _agent = agent(&url, "n1", &dir.join("a"), Gpus::Declared(8));
    let ledger = dir.join("ledger");
    let job_args = ledger_job(&ledger, 0.3);

    // A client submits in a loop; an id counts as accepted only when the CLI said so.
    let accepted = Arc::new(Mutex::new(Vec::<u64>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let submitter = {
        let (accepted, stop, url, job_args) = (
            accepted.clone(),
            stop.clone(),
            url.clone(),
            job_args.clone(),
        );
        std::thread::spawn(move || {
            let mut refused = 0;
            while !stop.load(Ordering::SeqCst) {
                let mut a = vec!["submit", "--json"];
                a.extend(args(&job_args));
                let o = cli(&url, &a);
                if o.status.success() {
                    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
                    accepted.lock().unwrap().push(v["ids"][0].as_u64().unwrap());
                } else {
                    refused += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            refused
        })
    };
    wait_until(SLOW, || accepted.lock().unwrap().len() >= 15);
    let mut server1 = server1;
    server1.kill(); // SIGKILL, mid-traffic
    std::thread::sleep(Duration::from_millis(500));
    let (_server2, url2) = server(&data, port, &hb);
    assert_eq!(url, url2);
    let before = accepted.lock().unwrap().len();
    wait_until(SLOW, || accepted.lock().unwrap().len() >= before + 10);
    stop.store(true, Ordering::SeqCst);
    let refused = submitter.join().unwrap();
    let accepted = accepted.lock().unwrap().clone();
    assert!(
        refused > 0,
        "some submissions must have hit the dead server"
    );

    for &id in &accepted {
        let v = wait_job(&url, id, SLOW);
        assert_eq!(v["state"], "succeeded", "{v}");
    }
    let (_, body) = http(&url, "GET", "/api/jobs?limit=100000", None);
    let all: Value = serde_json::from_str(&body).unwrap();
    let ids: Vec<u64> = all["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_u64().unwrap())
        .collect();
    let mut uniq = ids.clone();
    uniq.dedup();
    assert_eq!(ids, uniq, "no duplicate ids");
    for id in &accepted {
        assert!(ids.contains(id), "accepted job {id} survived the crash");
    }
    // Every job the server knows ran exactly once, accepted or not (one whose answer
    // was lost in the crash may exist; it too runs once).
    wait_until(SLOW, || {
        let (_, b) = http(&url, "GET", "/api/jobs?state=active", None);
        serde_json::from_str::<Value>(&b)
            .map(|v| v["jobs"].as_array().map(|a| a.is_empty()).unwrap_or(false))
            .unwrap_or(false)
    });
    let mut runs: BTreeMap<u64, u32> = BTreeMap::new();
    for line in std::fs::read_to_string(&ledger).unwrap().lines() {
        let id: u64 = line.split(' ').next().unwrap().parse().unwrap();
        *runs.entry(id).or_default() += 1;
    }
    for id in &ids {
        assert_eq!(
            runs.get(id),
            Some(&1),
            "job {id} ran exactly once: {runs:?}"
        );
    }
    assert_eq!(
        runs.len(),
        ids.len(),
        "nothing ran that the server does not know"
    );
}

/// A node cut off from its server stops its jobs before the server requeues them, so an
/// attempt never runs on two nodes at once; the server, frozen itself, does not blame
/// the nodes for its own silence.
#[test]
fn a_cut_off_agent_fences_its_jobs_and_a_frozen_server_expires_nobody() {
    use std::process::{Command, Stdio};
    let (_d, dir) = scratch();
    // A short heartbeat timeout: the freeze below must outlast the agent's lease.
    let (server, url) = server(&dir.join("data"), 0, &["--heartbeat-timeout", "2s"]);
    let join = std::fs::read_to_string(dir.join("data/join-token")).unwrap();
    // The join token comes from the environment here: the job must not see it.
    let _agent = Proc {
        child: Command::new(BIN)
            .args(["agent", "--server", &url, "--name", "n1", "--state-dir"])
            .arg(dir.join("agent"))
            .args([
                "--gpus",
                "1",
                "--gpu-backend",
                "declared",
                "--allow-root-jobs",
            ])
            .env("GPUSCHED_JOIN_TOKEN", join.trim())
            .env("GPUSCHED_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    };
    wait_until(SLOW, || node_state(&url, "n1").as_deref() == Some("online"));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let id = submit(
        &url,
        &[
            "-D",
            work.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "env | grep -c GPUSCHED_JOIN_TOKEN > leaks; echo $$ >> pids; sleep 60",
        ],
    );
    // `leaks` is written before `pids`, so a complete pid line means both are there.
    let pids = wait_for_text(&work.join("pids"), SLOW, |t| full_lines(t).len() == 1);
    assert_eq!(
        std::fs::read_to_string(work.join("leaks")).unwrap().trim(),
        "0"
    );
    let first: i32 = pids.trim().parse().unwrap();

    // Freeze the server for 4 s (twice its 2 s heartbeat timeout).
    let pid = server.child.id().to_string();
    Command::new("kill").args(["-STOP", &pid]).status().unwrap();
    wait_until(SLOW, || !pid_alive(first));
    std::thread::sleep(Duration::from_secs(3));
    Command::new("kill").args(["-CONT", &pid]).status().unwrap();

    // The fenced attempt is reported lost and runs again (its second pid line is the
    // evidence); the node stayed online.
    let pids = wait_for_text(&work.join("pids"), SLOW, |t| full_lines(t).len() >= 2);
    // The agent's report of the start may still be on its way.
    wait_until(SLOW, || {
        let v = job(&url, id);
        v["attempt"] == 2 && v["state"] == "running"
    });
    assert_eq!(node_state(&url, "n1").as_deref(), Some("online"));
    assert_eq!(pids.lines().count(), 2, "{pids}");
    cli(&url, &["cancel", &id.to_string()]);
}

/// SIGINT to an agent stops its job's process group with SIGTERM and the grace, and the
/// job goes back in the queue without using a retry; the node leaves the cluster until
/// its agent returns, and then the job runs there again.
#[test]
fn an_interrupted_agent_stops_its_jobs_and_they_are_requeued_without_a_retry() {
    use std::process::Command;
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &["--heartbeat-timeout", "30s"]);
    let mut a = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    let ledger = dir.join("ledger");
    let script = format!(
        "trap 'echo \"term $GPUSCHED_ATTEMPT\" >> {l}; exit 0' TERM; sleep 60 & \
         echo \"run $GPUSCHED_ATTEMPT $!\" >> {l}; wait",
        l = ledger.display()
    );
    let id = submit(&url, &["--max-retries", "0", "--", "sh", "-c", &script]);
    let text = wait_for_text(&ledger, SLOW, |t| t.contains("run 1 "));
    let child: i32 = full_lines(&text)[0]
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let pid = a.child.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = a.child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < SLOW, "the agent did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert!(std::fs::read_to_string(&ledger).unwrap().contains("term 1"));
    wait_until(SLOW, || !pid_alive(child));
    let v = job(&url, id);
    assert_eq!(
        (v["state"].as_str(), v["attempt"].as_u64()),
        (Some("pending"), Some(2)),
        "{v}"
    );
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("without using a retry"),
        "{v}"
    );
    assert_eq!(node_state(&url, "n1").as_deref(), Some("offline"));

    let _a2 = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    wait_for_text(&ledger, SLOW, |t| t.contains("run 2 "));
    cli(&url, &["cancel", &id.to_string()]);
}

/// A server stopped for 20 s (longer than the agents' old lease of half a 30 s heartbeat
/// timeout) kills nothing: the jobs on two agents, `--max-retries 0`, run on through the
/// outage and succeed as their first attempt, each run once. A node whose agent died
/// before the stop is known from the store but unreachable after the start: nothing is
/// placed on it, though its GPUs are free.
#[test]
fn a_server_outage_kills_nothing_and_nothing_goes_to_a_node_without_an_agent() {
    use std::process::Command;
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let port = free_port();
    // The default lease (5 minutes); a short heartbeat timeout so the dead agent's node
    // is unreachable within seconds.
    let flags = ["--heartbeat-timeout", "3s", "--node-lease", "5m"];
    let (mut s1, url) = server(&data, port, &flags);
    let _a1 = agent(&url, "n1", &dir.join("a1"), Gpus::Declared(1));
    let _a2 = agent(&url, "n2", &dir.join("a2"), Gpus::Declared(1));
    let mut a3 = agent(&url, "n3", &dir.join("a3"), Gpus::Declared(2));
    a3.kill();
    wait_until(SLOW, || {
        node_state(&url, "n3").as_deref() == Some("unreachable")
    });
    let ledger = dir.join("ledger");
    let j = ledger_job(&ledger, 30.0);
    let mut a = args(&j);
    a.splice(0..0, ["-G", "1", "--max-retries", "0"]);
    let ids = [submit(&url, &a), submit(&url, &a)];
    let pids: Vec<i32> = ids.iter().map(|&id| wait_ledger(&ledger, id, 1)).collect();
    let nodes: Vec<String> = ids
        .iter()
        .map(|&id| job(&url, id)["node"].as_str().unwrap_or("").to_string())
        .collect();
    let mut sorted = nodes.clone();
    sorted.sort();
    assert_eq!(sorted, ["n1", "n2"], "one job on each live agent");
    let pid = s1.child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let start = std::time::Instant::now();
    while s1.child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < SLOW, "the server did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(20));
    for &p in &pids {
        assert!(pid_alive(p), "a job died during the server's outage");
    }
    let (_s2, url2) = server(&data, port, &flags);
    assert_eq!(url, url2);
    // n3 is known from the store, and its agent is gone: unreachable, not online.
    assert_eq!(node_state(&url, "n3").as_deref(), Some("unreachable"));
    // Only n3 could hold two GPUs: the job waits, and says why.
    let big = submit(&url, &["-G", "2", "--max-retries", "0", "--", "true"]);
    for &id in &ids {
        let v = wait_job(&url, id, Duration::from_secs(90));
        assert_eq!(
            (v["state"].as_str(), v["attempt"].as_u64()),
            (Some("succeeded"), Some(1)),
            "{v}"
        );
    }
    let v = job(&url, big);
    assert_eq!(v["state"].as_str(), Some("pending"), "{v}");
    let reason = v["reason"].as_str().unwrap_or("");
    assert!(reason.contains("unreachable"), "{v}");
    let runs = std::fs::read_to_string(&ledger).unwrap();
    assert_eq!(ledger_runs(&runs).len(), 2, "each job ran once: {runs}");
    cli(&url, &["cancel", &big.to_string()]);
}

/// An agent stopped with SIGTERM while idle takes its node out at once: the next job
/// goes to the node whose agent runs, not to the stopped one (where it would wait for a
/// start nobody makes and be lost).
#[test]
fn nothing_is_placed_on_a_node_whose_agent_stopped() {
    use std::process::Command;
    let (_d, dir) = scratch();
    let (_s, url) = server(&dir.join("data"), 0, &["--heartbeat-timeout", "30s"]);
    let _a1 = agent(&url, "n1", &dir.join("a1"), Gpus::Declared(1));
    // n2 has the most GPUs: placement would pick it while it counted as online.
    let mut a2 = agent(&url, "n2", &dir.join("a2"), Gpus::Declared(4));
    let pid = a2.child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let start = std::time::Instant::now();
    while a2.child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < SLOW, "the agent did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(node_state(&url, "n2").as_deref(), Some("offline"));
    let id = submit(&url, &["-G", "1", "--max-retries", "0", "--", "true"]);
    let v = wait_job(&url, id, SLOW);
    assert_eq!(
        (v["state"].as_str(), v["node"].as_str()),
        (Some("succeeded"), Some("n1")),
        "{v}"
    );
}

/// Servers on one PostgreSQL store cannot disagree on the join token: the second server,
/// whose data directory made a token of its own, refuses to start and says which file
/// to copy, instead of running until the first failover refuses every agent.
#[test]
fn a_server_whose_join_token_differs_from_its_stores_refuses_to_start() {
    use gpusched_store::testing::TempPostgres;
    let Some(pg) = TempPostgres::start_or_skip("join_token_differs_on_postgres") else {
        return;
    };
    let (_d, dir) = scratch();
    let store = pg.url();
    let (_s1, url) = server(&dir.join("one"), 0, &["--store", &store]);
    let _a = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    let other = dir.join("two");
    let run_second = |token_file: &std::path::Path| {
        let mut child = std::process::Command::new(BIN)
            .args(["server", "--listen", "127.0.0.1:0", "--store", &store])
            .arg("--data-dir")
            .arg(&other)
            .arg("--join-token-file")
            .arg(token_file)
            .env("GPUSCHED_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn gpusched server");
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                use std::io::Read;
                child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut err)
                    .unwrap();
                return Some((status, err));
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let own = other.join("join-token");
    let (status, err) = run_second(&own).expect("the second server exits at once");
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("join token") && err.contains(&own.display().to_string()),
        "{err}"
    );
    // With the first server's file it starts (and is stopped here).
    assert!(
        run_second(&dir.join("one").join("join-token")).is_none(),
        "a server with the store's join token starts and runs"
    );
}

/// Two thousand idle and half-sent TCP connections (a slow or hostile client, a leaking
/// proxy) do not keep the CLI out: the server raises its open-files limit from the 1024
/// it was started with, each listener holds at most its cap, and the Unix socket keeps a
/// share of its own. Before, the 1,025th descriptor failed and `nodes` hung.
#[test]
fn two_thousand_idle_connections_leave_the_cli_its_answer() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    if hard < 4096 {
        eprintln!(
            "SKIPPED two_thousand_idle_connections: the hard open-files limit here is {hard}; \
             it needs 4096"
        );
        return;
    }
    // This test holds the connections: its own limit up to the hard one too.
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).expect("raise this test's limit");
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(["server", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .args(["--heartbeat-timeout", "10s", "--node-lease", "10s"])
        .env("GPUSCHED_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // Started as many systems start a service: a soft limit of 1024.
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            setrlimit(Resource::RLIMIT_NOFILE, 1024, hard).map_err(std::io::Error::from)
        });
    }
    let mut child = cmd.spawn().expect("spawn gpusched server");
    let url = read_url(child.stderr.take().expect("piped"), "listening on ");
    let _server = Proc { child };
    register(&url, &data);
    let addr = url.trim_start_matches("http://").to_string();
    let mut held = Vec::with_capacity(2000);
    for i in 0..2000 {
        let mut s = std::net::TcpStream::connect(&addr).expect("connect");
        if i % 4 == 0 {
            // Half-sent: headers that never end.
            s.write_all(b"GET /api/health HTTP/1.1\r\nHost: x\r\n")
                .expect("write");
        }
        held.push(s);
    }
    std::thread::sleep(Duration::from_secs(1));
    let began = std::time::Instant::now();
    let o = cli(&url, &["nodes"]);
    let took = began.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    eprintln!(
        "the CLI answered in {took:?} beside {} open connections",
        held.len()
    );
    // The bound is generous for a busy machine; the failure it guards against is a hang.
    assert!(took < Duration::from_secs(10), "the CLI took {took:?}");
    drop(held);
}
