//! `gpusched alloc` end to end (docs/interactive-alloc.md): a real server and agent, the
//! CLI as a user runs it (no terminal: the command after `--` is a shell line). The
//! allocation runs while the command runs and ends after it; Ctrl-C while it waits
//! cancels it; an idle one is warned and ended by its queue's policy on the fake GPUs'
//! utilisation; a server restart keeps a running one.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::*;

/// A running `gpusched alloc`, its output collected as it comes.
struct Alloc {
    proc: Proc,
    out: Arc<Mutex<String>>,
    err: Arc<Mutex<String>>,
}

fn collect(mut stream: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let into = text.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut t = into.lock().unwrap_or_else(|p| p.into_inner());
            t.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    text
}

fn alloc(url: &str, args: &[&str]) -> Alloc {
    let mut child = Command::new(BIN)
        .arg("alloc")
        .args(args)
        .env("GPUSCHED_SERVER", socket(url))
        .env_remove("GPUSCHED_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gpusched alloc");
    let out = collect(child.stdout.take().expect("piped"));
    let err = collect(child.stderr.take().expect("piped"));
    Alloc {
        proc: Proc { child },
        out,
        err,
    }
}

impl Alloc {
    fn stderr(&self) -> String {
        self.err.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn stdout(&self) -> String {
        self.out.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Waits (bounded) for stderr to say `text`.
    fn says(&self, text: &str) {
        let start = Instant::now();
        while !self.stderr().contains(text) {
            assert!(
                start.elapsed() < SLOW,
                "alloc never said {text:?}; it said:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits (bounded) for alloc to exit.
    fn exit(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.proc.child.try_wait().expect("try_wait") {
                return s;
            }
            assert!(
                start.elapsed() < SLOW,
                "alloc did not exit; it said:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The allocation's id, from `pending job allocation N`.
    fn id(&self) -> u64 {
        self.says("pending job allocation ");
        let err = self.stderr();
        let at = err.find("pending job allocation ").unwrap() + "pending job allocation ".len();
        err[at..]
            .split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .expect("an id")
    }
}

fn state(url: &str, id: u64) -> String {
    job(url, id)["state"].as_str().unwrap_or("").to_string()
}

#[test]
fn alloc_runs_its_command_with_the_allocation_and_ends_it_after() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(2));
    // The command checks that its allocation runs while it does, then exits 7.
    let script = format!(
        "echo \"id=$GPUSCHED_JOB_ID nodes=$GPUSCHED_NODELIST gpus=$GPUSCHED_GPUS \
         n=$GPUSCHED_NUM_NODES g=$GPUSCHED_NUM_GPUS\"; {BIN} show $GPUSCHED_JOB_ID; exit 7"
    );
    let mut a = alloc(
        &url,
        &["--gpus", "2", "-t", "10m", "--", "sh", "-c", &script],
    );
    let status = a.exit();
    assert_eq!(status.code(), Some(7), "{}", a.stderr());
    let id = a.id();
    let out = a.stdout();
    assert!(
        out.contains(&format!("id={id} nodes=n1 gpus=n1:0,1 n=1 g=2")),
        "{out}"
    );
    let state_line = out
        .lines()
        .find(|l| l.trim_start().starts_with("state:"))
        .unwrap_or_else(|| panic!("no state in {out}"));
    assert!(
        state_line.contains("running") && state_line.contains("interactive"),
        "{state_line}"
    );
    let err = a.stderr();
    assert!(
        err.contains(&format!("granted job allocation {id}: n1:0,1")),
        "{err}"
    );
    assert!(
        err.contains(&format!("relinquishing job allocation {id}")),
        "{err}"
    );
    // Ended after the command: cancelled, its GPUs free for the next job.
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "cancelled", "{v}");
    assert_eq!(v["interactive"], true, "{v}");
    let next = submit(&url, &["--gpus", "2", "--", "true"]);
    assert_eq!(wait_job(&url, next, SLOW)["state"], "succeeded");
}

#[test]
fn ctrl_c_while_waiting_cancels_the_allocation() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    let busy = submit(&url, &["--gpus", "1", "--", "sleep", "60"]);
    wait_until(SLOW, || state(&url, busy) == "running");
    let mut a = alloc(
        &url,
        &["--gpus", "1", "--", "sh", "-c", "echo never; exit 3"],
    );
    let id = a.id();
    // It says why it waits.
    a.says(&format!("job {id} pending"));
    assert_eq!(state(&url, id), "pending");
    let pid = nix::unistd::Pid::from_raw(a.proc.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert_eq!(a.exit().code(), Some(130), "{}", a.stderr());
    assert!(!a.stdout().contains("never"));
    assert!(a
        .stderr()
        .contains(&format!("job allocation {id} cancelled")));
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "cancelled", "{v}");
    assert!(v["start_ms"].is_null(), "{v}");
    let o = cli(&url, &["cancel", &busy.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn an_idle_allocation_is_warned_on_its_terminal_and_ended_by_its_queues_policy() {
    let (_d, dir) = scratch();
    let queues = dir.join("queues.toml");
    std::fs::write(
        &queues,
        "[idle]\nthreshold_pct = 5\nafter = \"2s\"\naction = \"end\"\ngrace = \"2s\"\n\n\
         [queues.default]\n",
    )
    .unwrap();
    let (_server, url) = server(
        &dir.join("data"),
        0,
        &["--queues", queues.to_str().unwrap()],
    );
    let state_dir = dir.join("agent");
    let _agent = agent_with(
        &url,
        "n1",
        &state_dir,
        Gpus::Fake(1),
        &["--telemetry-interval", "300ms"],
    );
    // The fake GPU reads busy while a job holds it, unless told otherwise.
    let tmp = state_dir.join("fake-faults.tmp");
    std::fs::write(&tmp, "[gpu.0]\nutil_pct = 1\n").unwrap();
    std::fs::rename(&tmp, state_dir.join("fake-faults.toml")).unwrap();
    // The command outlives its allocation: it waits for the end, then a moment for
    // alloc to say so.
    let script = format!("{BIN} wait $GPUSCHED_JOB_ID --timeout 60; sleep 4; exit 0");
    let mut a = alloc(&url, &["--gpus", "1", "--", "sh", "-c", &script]);
    let id = a.id();
    a.says("below 5% utilisation");
    a.says(&format!("job allocation {id} has been revoked"));
    assert_eq!(a.exit().code(), Some(0), "{}", a.stderr());
    let err = a.stderr();
    assert!(
        err.contains("it will be ended in 2s unless they are used"),
        "{err}"
    );
    assert!(!err.contains("relinquishing"), "{err}");
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "cancelled", "{v}");
    let reason = v["reason"].as_str().unwrap_or("");
    assert!(
        reason.starts_with("ended by the idle policy of queue `default`"),
        "{v}"
    );
    // The timeline has the warning; usage the time held idle.
    let o = cli(&url, &["show", &id.to_string(), "--events"]);
    assert!(stdout(&o).contains("idle_warning"), "{}", stdout(&o));
    let o = cli(&url, &["usage", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let idle = report["rows"][0]["idle_gpu_hours"].as_f64().unwrap_or(0.0);
    assert!(idle > 0.0, "{report}");
}

#[test]
fn a_server_restart_during_an_allocation_keeps_it() {
    let (_d, dir) = scratch();
    let port = free_port();
    let data = dir.join("data");
    let (mut server1, url) = server(&data, port, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    // The command runs until the test lets it go (bounded: two minutes).
    let flag = dir.join("done");
    let script = format!(
        "for i in $(seq 600); do [ -e {} ] && exit 0; sleep 0.2; done; exit 9",
        flag.display()
    );
    let mut a = alloc(&url, &["--gpus", "1", "--", "sh", "-c", &script]);
    let id = a.id();
    a.says(&format!("granted job allocation {id}"));
    assert_eq!(state(&url, id), "running");

    server1.kill();
    let (_server2, url2) = server(&data, port, &[]);
    assert_eq!(url2, url);
    wait_until(SLOW, || node_state(&url, "n1").as_deref() == Some("online"));
    // The agent kept holding it: still running, the same attempt, nothing revoked.
    std::thread::sleep(Duration::from_secs(3));
    let v = job(&url, id);
    assert_eq!(
        (v["state"].as_str(), v["attempt"].as_u64()),
        (Some("running"), Some(1)),
        "{v}"
    );
    assert_eq!(v["interactive"], true, "the store keeps the flag: {v}");
    assert!(!a.stderr().contains("revoked"), "{}", a.stderr());

    std::fs::write(&flag, "").unwrap();
    assert_eq!(a.exit().code(), Some(0), "{}", a.stderr());
    let v = wait_job(&url, id, SLOW);
    assert_eq!(
        (v["state"].as_str(), v["attempt"].as_u64()),
        (Some("cancelled"), Some(1)),
        "{v}"
    );
}
