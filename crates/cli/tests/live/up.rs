//! The README's main-job command: `gpusched up`, then submit and read the output.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::*;

#[test]
fn up_runs_a_one_box_cluster_that_runs_jobs() {
    let (_d, dir) = scratch();
    let mut child = Command::new(BIN)
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .args([
            "--gpus",
            "2",
            "--gpu-model",
            "A100-SXM4-80GB",
            "--name",
            "box",
            "--allow-root-jobs",
        ])
        .env("GPUSCHED_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(out).read_line(&mut first).unwrap();
    // Only the first line is read: the rest of the banner meets a closed pipe, which
    // must not stop the server.
    let _up = Proc { child };
    assert!(
        first.starts_with("gpusched is up: server http://"),
        "{first}"
    );
    let url = first["gpusched is up: server ".len()..]
        .split(',')
        .next()
        .unwrap()
        .to_string();
    assert!(first.contains("2 GPUs (declared)"), "{first}");
    register(&url, &dir.join("data"));
    wait_until(SLOW, || {
        node_state(&url, "box").as_deref() == Some("online")
    });
    let id = submit(&url, &["--", "echo", "hello from gpusched"]);
    assert_eq!(wait_job(&url, id, SLOW)["state"], "succeeded");
    assert_eq!(
        stdout(&cli(&url, &["logs", &id.to_string()])),
        "hello from gpusched\n"
    );
    let nodes = stdout(&cli(&url, &["nodes"]));
    assert!(nodes.contains("declared"), "{nodes}");
    // Its files are its own: local users pass through to the socket and jobs to their
    // checkpoint directories, nobody lists either directory.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.join("data")), 0o711);
    assert_eq!(mode(&dir.join("data").join("agent")), 0o711);
}

/// `gpusched up` on `data`, with its URL and its stderr lines as they come.
fn start_up(data: &std::path::Path) -> (Proc, String, std::sync::mpsc::Receiver<String>) {
    let mut child = Command::new(BIN)
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .args([
            "--gpus",
            "1",
            "--gpu-model",
            "A100-SXM4-80GB",
            "--name",
            "box",
            "--allow-root-jobs",
            "--grace",
            "20s",
        ])
        .env("GPUSCHED_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut first = String::new();
    BufReader::new(out).read_line(&mut first).unwrap();
    let url = first["gpusched is up: server ".len()..]
        .split(',')
        .next()
        .unwrap()
        .to_string();
    register(&url, data);
    wait_until(SLOW, || {
        node_state(&url, "box").as_deref() == Some("online")
    });
    (Proc { child }, url, rx)
}

/// Waits (bounded) for a stderr line holding `needle`.
fn wait_line(rx: &std::sync::mpsc::Receiver<String>, needle: &str) -> String {
    let start = std::time::Instant::now();
    loop {
        let left = SLOW.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => {}
            Err(_) => panic!("no line with {needle:?} on stderr within {SLOW:?}"),
        }
    }
}

/// Waits (bounded) for a process to exit and returns its status.
fn wait_exit(p: &mut Proc) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(s) = p.child.try_wait().unwrap() {
            return s;
        }
        assert!(
            start.elapsed() < SLOW,
            "the process did not exit within {SLOW:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGHUP is logged and ignored; SIGTERM stops the job's whole process group with
/// SIGTERM and its grace (its trap runs, its background child dies), and the job is
/// requeued without using a retry: a `--max-retries 0` job runs again at the next `up`.
#[test]
fn stopping_up_stops_jobs_with_their_grace_and_requeues_them_without_a_retry() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let (mut up, url, lines) = start_up(&data);
    let ledger = dir.join("ledger");
    let script = format!(
        "trap 'echo \"term $GPUSCHED_ATTEMPT\" >> {l}; exit 0' TERM; sleep 60 & \
         echo \"run $GPUSCHED_ATTEMPT $$ $!\" >> {l}; wait",
        l = ledger.display()
    );
    let id = submit(&url, &["--max-retries", "0", "--", "sh", "-c", &script]);
    let text = wait_for_text(&ledger, SLOW, |t| t.contains("run 1 "));
    let pids: Vec<i32> = full_lines(&text)[0]
        .split(' ')
        .skip(2)
        .map(|p| p.parse().unwrap())
        .collect();

    // The agent's report of the start may still be on its way.
    wait_until(SLOW, || job(&url, id)["state"] == "running");
    // SIGHUP: said and ignored; the server still answers and the job still runs.
    let pid = up.child.id().to_string();
    Command::new("kill").args(["-HUP", &pid]).status().unwrap();
    wait_line(&lines, "SIGHUP received");
    assert_eq!(job(&url, id)["state"], "running");
    assert!(up.child.try_wait().unwrap().is_none(), "up died of SIGHUP");

    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let status = wait_exit(&mut up);
    assert!(status.success(), "{status:?}");
    let text = std::fs::read_to_string(&ledger).unwrap();
    assert!(
        text.contains("term 1"),
        "the job's TERM trap never ran: {text}"
    );
    for p in &pids {
        wait_until(SLOW, || !pid_alive(*p));
    }

    // The next `up` runs it again: attempt 2, no retry used.
    let (_up2, url, _lines) = start_up(&data);
    wait_for_text(&ledger, SLOW, |t| t.contains("run 2 "));
    wait_until(SLOW, || {
        let v = job(&url, id);
        v["attempt"] == 2 && v["state"] == "running"
    });
    cli(&url, &["cancel", &id.to_string()]);
}
