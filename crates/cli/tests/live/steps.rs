//! Job steps (`gpusched run`, Slurm's `srun`) with real processes: a server, two agents
//! with fake GPUs, a two-node job; steps on both nodes and on one, stdin forwarded,
//! exit codes and signal deaths propagated, the steps listed in `show`; another user
//! refused; `run --pty` driven through a pseudo-terminal this test opens (echo of typed
//! input, a resize seen by `stty size`, Ctrl-C interrupting a `sleep`); and `run`
//! without `--jobid`, which makes a job for the step and ends it after.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// `gpusched run ARGS` against `url` (its socket, as this uid) with `input` on stdin.
fn run_with_input(url: &str, args: &[&str], input: &[u8]) -> std::process::Output {
    let target = socket(url);
    let mut c = Command::new(BIN)
        .arg("run")
        .args(args)
        .env("GPUSCHED_SERVER", &target)
        .env_remove("GPUSCHED_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gpusched run");
    let mut stdin = c.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    drop(stdin);
    let deadline = Instant::now() + SLOW;
    loop {
        if c.try_wait().unwrap().is_some() {
            return c.wait_with_output().unwrap();
        }
        if Instant::now() > deadline {
            let _ = c.kill();
            let o = c.wait_with_output().unwrap();
            panic!(
                "gpusched run did not end within 60 s: {}{}",
                stdout(&o),
                stderr(&o)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A running two-node job of one GPU per node on agents n1 and n2.
fn two_node_job(url: &str) -> u64 {
    let id = submit(
        url,
        &["--nodes", "2", "--gpus-per-node", "1", "--", "sleep", "600"],
    );
    wait_until(SLOW, || job(url, id)["state"] == "running");
    id
}

#[test]
fn steps_run_on_a_two_node_job_with_its_gpus_stdin_and_exit_codes() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(1));
    let _b = agent(&url, "n2", &dir.join("a2"), Gpus::Fake(1));
    let id = two_node_job(&url);
    let sid = id.to_string();

    // Step 0 on both nodes: each task says who it is; the step exits with the first
    // non-zero exit (task 1's 3).
    let o = run_with_input(
        &url,
        &[
            "--jobid",
            &sid,
            "--",
            "sh",
            "-c",
            "echo task=$GPUSCHED_STEP_TASK step=$GPUSCHED_STEP_ID job=$GPUSCHED_JOB_ID \
             gpus=$CUDA_VISIBLE_DEVICES; echo to-stderr >&2; exit $GPUSCHED_STEP_TASK$GPUSCHED_STEP_TASK$GPUSCHED_STEP_TASK",
        ],
        b"",
    );
    let out = stdout(&o);
    assert!(
        out.contains(&format!("task=0 step=0 job={id}")),
        "{out}{}",
        stderr(&o)
    );
    assert!(out.contains(&format!("task=1 step=0 job={id}")), "{out}");
    assert!(!out.contains("gpus= ") && out.contains("gpus="), "{out}");
    assert!(stderr(&o).contains("to-stderr"), "{}", stderr(&o));
    // Task 0 exits 000 = 0, task 1 exits 111.
    assert_eq!(o.status.code(), Some(111), "{out}{}", stderr(&o));

    // Step 1 on the first node only: stdin reaches it, its exit is 0.
    let o = run_with_input(
        &url,
        &[
            "--jobid",
            &sid,
            "-N",
            "1",
            "--",
            "sh",
            "-c",
            "read x; read y; echo got:$x:$y",
        ],
        b"hello\nworld\n",
    );
    assert_eq!(stdout(&o), "got:hello:world\n", "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(0));

    // Step 2: a death by signal is 128+N.
    let o = run_with_input(
        &url,
        &["--jobid", &sid, "-N", "1", "--", "sh", "-c", "kill -9 $$"],
        b"",
    );
    assert_eq!(o.status.code(), Some(137), "{}", stderr(&o));

    // Two tasks per node, four in all.
    let o = run_with_input(
        &url,
        &[
            "--jobid",
            &sid,
            "--tasks-per-node",
            "2",
            "--",
            "sh",
            "-c",
            "echo t$GPUSCHED_STEP_TASK",
        ],
        b"",
    );
    let text = stdout(&o);
    let mut tasks: Vec<&str> = text.lines().collect();
    tasks.sort();
    assert_eq!(tasks, ["t0", "t1", "t2", "t3"], "{}", stderr(&o));

    // A command that does not exist: said, and 127.
    let o = run_with_input(
        &url,
        &["--jobid", &sid, "-N", "1", "--", "no-such-program-xyz"],
        b"",
    );
    assert_eq!(o.status.code(), Some(127), "{}", stderr(&o));
    assert!(stderr(&o).contains("no-such-program-xyz"), "{}", stderr(&o));

    // `show --json` lists the steps with their nodes, states and exit codes.
    let o = cli(&url, &["show", "--json", &sid]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("show --json");
    let steps = v["steps"].as_array().expect("steps listed");
    assert_eq!(steps.len(), 5, "{v}");
    assert_eq!(steps[0]["nodes"], serde_json::json!(["n1", "n2"]), "{v}");
    assert_eq!(steps[0]["state"], "failed");
    assert_eq!(steps[0]["exit_code"], 111);
    assert_eq!(steps[1]["state"], "completed");
    assert_eq!(steps[1]["nodes"], serde_json::json!(["n1"]));
    assert_eq!(steps[2]["exit_code"], 137);
    assert!(steps[1]["ended_ms"].as_u64() >= steps[1]["started_ms"].as_u64());
    let text = stdout(&cli(&url, &["show", &sid]));
    assert!(
        text.contains("steps:") && text.contains(&format!("{id}.1")),
        "{text}"
    );

    // Another user may not run a step in it, and is told why.
    let (code, token) = {
        let (c, b) = http_unix(&url, "POST", "/api/tokens", Some(r#"{"user": "bob"}"#));
        let v: Value = serde_json::from_str(&b).unwrap();
        (c, v["token"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(code, 201);
    let o = cli_as(&url, Some(&token), &["run", "--jobid", &sid, "--", "true"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("belongs to") && stderr(&o).contains("403"),
        "{}",
        stderr(&o)
    );
    // The job itself still runs: steps never end it.
    assert_eq!(job(&url, id)["state"], "running");
    cli(&url, &["cancel", &sid]);
}

/// A child killed if the test fails before it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A pseudo-terminal the test drives: the CLI's controlling terminal.
struct Term {
    master: std::fs::File,
    seen: Arc<Mutex<String>>,
}

impl Term {
    fn open(cols: u16, rows: u16) -> (Term, OwnedFd) {
        let ws = nix::pty::Winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = nix::pty::openpty(Some(&ws), None).expect("openpty");
        let master = std::fs::File::from(pty.master);
        let mut reader = master.try_clone().unwrap();
        let seen = Arc::new(Mutex::new(String::new()));
        let s2 = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                s2.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        (Term { master, seen }, pty.slave)
    }

    fn send(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).unwrap();
    }

    /// Waits (bounded) for `text` to appear after what was seen at `from`; returns
    /// where it ends.
    fn expect(&self, from: usize, text: &str) -> usize {
        let deadline = Instant::now() + SLOW;
        loop {
            {
                let s = self.seen.lock().unwrap();
                if let Some(i) = s[from.min(s.len())..].find(text) {
                    return from + i + text.len();
                }
                if Instant::now() > deadline {
                    panic!("{text:?} did not appear within 60 s; the terminal shows:\n{s}");
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn resize(&self, cols: u16, rows: u16) {
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads one winsize; the kernel sends SIGWINCH to the
        // terminal's foreground process group (the CLI).
        let r = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
        assert_eq!(r, 0);
    }
}

#[test]
fn run_pty_is_a_terminal_with_echo_resize_and_ctrl_c() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(1));
    let id = submit(&url, &["--", "sleep", "600"]);
    wait_until(SLOW, || job(&url, id)["state"] == "running");
    let (mut term, slave) = Term::open(100, 30);
    let slave = std::fs::File::from(slave);
    let mut cmd = Command::new(BIN);
    cmd.args(["run", "--jobid", &id.to_string(), "--pty", "--", "sh", "-i"])
        .env("GPUSCHED_SERVER", socket(&url))
        .env("TERM", "dumb")
        .env_remove("GPUSCHED_TOKEN")
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave);
    // SAFETY: setsid and TIOCSCTTY only, between fork and exec: the terminal becomes
    // the CLI's controlling terminal, the CLI its foreground group (SIGWINCH reaches
    // it).
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = Killed(cmd.spawn().expect("spawn gpusched run --pty"));
    drop(cmd);

    // What is typed is echoed by the remote terminal and run.
    term.send(b"echo typed-$((6*7))\r");
    let at = term.expect(0, "typed-42");
    // The first size is the local terminal's...
    term.send(b"stty size\r");
    let at = term.expect(at, "30 100");
    // ...and a resize reaches the remote one.
    term.resize(120, 40);
    std::thread::sleep(Duration::from_millis(300));
    term.send(b"stty size\r");
    let at = term.expect(at, "40 120");
    // Ctrl-C interrupts a sleep (the remote line discipline's SIGINT), and the shell
    // goes on.
    term.send(b"sleep 50; echo not-interrupted\r");
    std::thread::sleep(Duration::from_millis(500));
    let began = Instant::now();
    term.send(b"\x03");
    term.send(b"echo after-ctrl-c\r");
    let at = term.expect(at, "after-ctrl-c\r\n");
    assert!(began.elapsed() < Duration::from_secs(20));
    // (The typed line's echo holds the words; their output would start a line.)
    assert!(!term.seen.lock().unwrap()[..at].contains("\nnot-interrupted"));
    // Leaving the shell ends the step; its exit code is the CLI's.
    term.send(b"exit 7\r");
    let deadline = Instant::now() + SLOW;
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "run --pty did not end");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(7), "{}", term.seen.lock().unwrap());
    let v = job(&url, id);
    assert_eq!(v["steps"][0]["pty"], true, "{v}");
    assert_eq!(v["steps"][0]["exit_code"], 7, "{v}");
    cli(&url, &["cancel", &id.to_string()]);
}

#[test]
fn run_without_a_job_makes_one_for_the_step_and_ends_it() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(1));
    let o = run_with_input(
        &url,
        &[
            "--gpus",
            "1",
            "-t",
            "5m",
            "--",
            "sh",
            "-c",
            "echo in-job-$GPUSCHED_JOB_ID; exit 4",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(4), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    let id: u64 = out
        .trim()
        .strip_prefix("in-job-")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        stderr(&o).contains(&format!("job {id} submitted")),
        "{}",
        stderr(&o)
    );
    // The job ends with its step.
    let v = wait_job(&url, id, SLOW);
    assert!(v["state"].as_str().unwrap() != "running", "{v}");
    // An ended job's steps are read from the store.
    let v = job(&url, id);
    assert_eq!(v["steps"][0]["exit_code"], 4, "{v}");
    assert_eq!(v["steps"][0]["state"], "failed", "{v}");
}

#[test]
fn a_step_cut_by_a_server_restart_ends_failed_saying_so_and_its_tasks_are_killed() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let port = free_port();
    let (server1, url) = server(&data, port, &[]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(1));
    let id = submit(&url, &["--", "sleep", "600"]);
    wait_until(SLOW, || job(&url, id)["state"] == "running");
    let pid_file = dir.join("step.pid");
    let mut run = Killed(
        Command::new(BIN)
            .args(["run", "--jobid", &id.to_string(), "--", "sh", "-c"])
            .arg(format!("echo $$ > {}; exec sleep 300", pid_file.display()))
            .env("GPUSCHED_SERVER", socket(&url))
            .env_remove("GPUSCHED_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn gpusched run"),
    );
    let pid: i32 = wait_for_text(&pid_file, SLOW, |t| t.trim().parse::<i32>().is_ok())
        .trim()
        .parse()
        .unwrap();
    assert!(pid_alive(pid));
    drop(server1);
    // The client hears that its stream was cut, and fails.
    let deadline = Instant::now() + SLOW;
    let status = loop {
        if let Some(s) = run.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "run did not end with its server");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success());
    let mut err = String::new();
    run.0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("stream"), "{err}");
    // The step's task dies with its stream.
    wait_until(SLOW, || !pid_alive(pid));
    // The next life of the server records it as failed, saying why.
    let (_server2, url) = server(&data, port, &[]);
    let v = job(&url, id);
    assert_eq!(v["steps"][0]["state"], "failed", "{v}");
    assert!(
        v["steps"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("server restarted")),
        "{v}"
    );
    // Its job goes on, and takes new steps once its agent is back.
    wait_until(SLOW, || node_state(&url, "n1").as_deref() == Some("online"));
    let o = run_with_input(
        &url,
        &["--jobid", &id.to_string(), "--", "echo", "again"],
        b"",
    );
    assert_eq!(stdout(&o), "again\n", "{}", stderr(&o));
    assert_eq!(job(&url, id)["steps"][1]["state"], "completed");
    cli(&url, &["cancel", &id.to_string()]);
}

/// `alloc` + `run`, as `salloc` + `srun`: an allocation of one GPU on each of two nodes,
/// whose shell runs two steps in it (one on both nodes, one on the first), each task
/// inside the allocation's GPUs; the steps are listed on the allocation, which ends
/// with the shell.
#[test]
fn alloc_then_two_steps_on_two_nodes_run_inside_the_allocation() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(1));
    let _b = agent(&url, "n2", &dir.join("a2"), Gpus::Fake(1));
    let script = format!(
        "{bin} run --jobid $GPUSCHED_JOB_ID -- sh -c 'echo task $GPUSCHED_STEP_TASK gpus $CUDA_VISIBLE_DEVICES' && \
         {bin} run --jobid $GPUSCHED_JOB_ID -N 1 -- sh -c 'echo one node' && echo job $GPUSCHED_JOB_ID",
        bin = BIN
    );
    let o = Command::new(BIN)
        .args([
            "alloc",
            "--nodes",
            "2",
            "--gpus-per-node",
            "1",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .env("GPUSCHED_SERVER", socket(&url))
        .env_remove("GPUSCHED_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run gpusched alloc");
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    // Each task sees its node's one GPU of the allocation (fake GPUs go by UUID).
    let mut tasks: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("task "))
        .map(|l| l.split(" gpus GPU-").next().unwrap_or(l))
        .collect();
    tasks.sort();
    assert_eq!(tasks, ["task 0", "task 1"], "{out}");
    assert!(out.contains("one node"), "{out}");
    let id: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("job "))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("the shell names its allocation: {out}"));
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["interactive"], true, "{v}");
    let o = cli(&url, &["show", "--json", &id.to_string()]);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("show --json");
    let steps = v["steps"].as_array().expect("steps listed");
    assert_eq!(steps.len(), 2, "{v}");
    assert_eq!(steps[0]["nodes"], serde_json::json!(["n1", "n2"]), "{v}");
    assert_eq!(steps[1]["nodes"].as_array().map(Vec::len), Some(1), "{v}");
    assert!(steps.iter().all(|s| s["state"] == "completed"), "{v}");
    // Accounted with the job: two steps, and `usage` counts them (from the store once
    // the job has left memory, from memory before).
    assert_eq!(v["step_use"]["steps"], 2, "{v}");
    let o = cli(&url, &["usage", "--json"]);
    let u: Value = serde_json::from_str(&stdout(&o)).expect("usage --json");
    let steps: u64 = u["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["steps"].as_u64())
        .sum();
    assert_eq!(steps, 2, "{u}");
}
