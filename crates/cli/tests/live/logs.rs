//! `logs --attempt N` (an earlier run's output after a requeue) and `logs -f` on a job
//! that has not started yet.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

#[test]
fn an_earlier_attempts_output_stays_readable_with_attempt() {
    let (_d, dir) = scratch();
    // A long heartbeat timeout: the restart is noticed through the agent's report.
    let (_server, url) = server(&dir.join("data"), 0, &["--heartbeat-timeout", "60s"]);
    let mut a = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    // The first attempt prints and keeps running; the second prints and ends.
    let script = "echo run $GPUSCHED_ATTEMPT; [ $GPUSCHED_ATTEMPT = 1 ] && exec sleep 300; true";
    let id = submit(&url, &["--cwd", "/tmp", "--", "sh", "-c", script]);
    let ids = id.to_string();
    // The evidence itself: the first attempt's line is in its log.
    wait_until(Duration::from_secs(30), || {
        stdout(&cli(&url, &["logs", &ids])) == "run 1\n"
    });
    // A follower stays with the job through the lost node and the requeue.
    let sock = socket(&url);
    let mut follower = Proc {
        child: Command::new(BIN)
            .args(["logs", "-f", &ids])
            .env("GPUSCHED_SERVER", &sock)
            .env_remove("GPUSCHED_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    };
    // What it printed so far, read as it comes.
    let printed = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reader = {
        let (printed, mut pipe) = (printed.clone(), follower.child.stdout.take().unwrap());
        std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                printed.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    // The follower has read the first attempt's line before its node goes.
    wait_until(Duration::from_secs(30), || {
        printed.lock().unwrap().as_slice() == b"run 1\n"
    });
    a.kill();
    let _a2 = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    let v = wait_job(&url, id, Duration::from_secs(30));
    assert_eq!(
        (v["state"].as_str(), v["attempt"].as_u64()),
        (Some("succeeded"), Some(2)),
        "{v}"
    );
    let start = Instant::now();
    let status = loop {
        if let Some(s) = follower.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "logs -f did not end with the job"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    reader.join().unwrap();
    let out = String::from_utf8_lossy(&printed.lock().unwrap()).into_owned();
    let mut err = String::new();
    let mut pipe = follower.child.stderr.take().unwrap();
    pipe.read_to_string(&mut err).unwrap();
    assert!(status.success(), "{err}");
    assert_eq!(out, "run 1\nrun 2\n", "{err}");

    assert_eq!(stdout(&cli(&url, &["logs", &ids])), "run 2\n");
    let o = cli(&url, &["logs", "--attempt", "1", &ids]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "run 1\n");
    assert_eq!(
        stdout(&cli(&url, &["logs", "--attempt", "2", &ids])),
        "run 2\n"
    );
    let o = cli(&url, &["logs", "--attempt", "3", &ids]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("has had 2 attempts; --attempt must be between 1 and 2"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn logs_follow_waits_for_a_pending_job_to_start() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    let gate = dir.join("gate");
    let hold = format!("while [ ! -e {} ]; do sleep 0.05; done", gate.display());
    let blocker = submit(&url, &["--cwd", "/tmp", "--", "sh", "-c", &hold]);
    let id = submit(&url, &["--cwd", "/tmp", "--", "echo", "after the wait"]);
    assert_eq!(job(&url, id)["state"], "pending");

    let sock = socket(&url);
    let mut follower = Proc {
        child: Command::new(BIN)
            .args(["logs", "-f", &id.to_string()])
            .env("GPUSCHED_SERVER", &sock)
            .env_remove("GPUSCHED_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    };
    // It says it waits (on stderr) and does not give up while the job is pending.
    let mut err = follower.child.stderr.take().unwrap();
    let said = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        follower.child.try_wait().unwrap().is_none(),
        "logs -f gave up on a pending job"
    );
    assert_eq!(job(&url, id)["state"], "pending");

    std::fs::write(&gate, "").unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = follower.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "logs -f did not end with the job"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    follower
        .child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let said = said.join().unwrap();
    assert!(status.success(), "{said}");
    assert_eq!(out, "after the wait\n", "{said}");
    assert!(said.contains(&format!("job {id} is pending")), "{said}");
    assert_eq!(
        wait_job(&url, blocker, Duration::from_secs(20))["state"],
        "succeeded"
    );
}
