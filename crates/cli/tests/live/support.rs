//! A real cluster for tests: `gpusched server` and `gpusched agent` processes on
//! loopback, each killed (SIGKILL) when its handle drops, and helpers to drive the CLI
//! and the raw HTTP API. Every wait is bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_gpusched");

/// A child process killed with SIGKILL on drop.
pub struct Proc {
    pub child: Child,
}

impl Proc {
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port that was free a moment ago (for a server that must come back on the same
/// address after a crash).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Starts `gpusched server` and returns it with its URL (read from its first line).
pub fn server(data: &Path, port: u16, extra: &[&str]) -> (Proc, String) {
    let listen = format!("127.0.0.1:{port}");
    let mut child = Command::new(BIN)
        .args(["server", "--listen", &listen, "--data-dir"])
        .arg(data)
        .args(if extra.contains(&"--heartbeat-timeout") {
            &[][..]
        } else {
            &["--heartbeat-timeout", "2s"][..]
        })
        .args(["--grace", "1s"])
        .args(extra)
        .env("GPUSCHED_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gpusched server");
    let stderr = child.stderr.take().expect("piped stderr");
    let url = read_url(stderr, "listening on ");
    (Proc { child }, url)
}

/// Reads lines until one holding `marker` followed by a URL; keeps draining after.
fn read_url(stream: impl Read + Send + 'static, marker: &str) -> String {
    let (tx, rx) = mpsc::channel();
    let marker = marker.to_string();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if !sent {
                if let Some(i) = line.find(&marker) {
                    let url: String = line[i + marker.len()..]
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .trim_end_matches([',', '.'])
                        .to_string();
                    let _ = tx.send(url);
                    sent = true;
                }
            }
            if std::env::var_os("GPUSCHED_TEST_ECHO").is_some() {
                eprintln!("[child] {line}");
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the process printed its address within 20 s")
}

pub enum Gpus {
    Declared(u32),
    Fake(u32),
}

/// Starts an agent and waits until the server lists its node online.
pub fn agent(url: &str, name: &str, state: &Path, gpus: Gpus) -> Proc {
    let (n, backend, model) = match gpus {
        Gpus::Declared(n) => (n, "declared", "A100-SXM4-80GB"),
        Gpus::Fake(n) => (n, "fake", "NVIDIA H100 80GB HBM3"),
    };
    let child = Command::new(BIN)
        .args(["agent", "--server", url, "--name", name, "--state-dir"])
        .arg(state)
        .args([
            "--gpus",
            &n.to_string(),
            "--gpu-model",
            model,
            "--gpu-backend",
            backend,
        ])
        .env("GPUSCHED_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(if std::env::var_os("GPUSCHED_TEST_ECHO").is_some() {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .spawn()
        .expect("spawn gpusched agent");
    let p = Proc { child };
    wait_until(Duration::from_secs(20), || {
        node_state(url, name).as_deref() == Some("online")
    });
    p
}

pub fn node_state(url: &str, name: &str) -> Option<String> {
    let (code, body) = http(url, "GET", "/api/nodes", None);
    if code != 200 {
        return None;
    }
    let v: Value = serde_json::from_str(&body).ok()?;
    v["nodes"]
        .as_array()?
        .iter()
        .find(|n| n["name"] == name)
        .and_then(|n| n["state"].as_str().map(String::from))
}

/// Runs the CLI against `url`.
pub fn cli(url: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("GPUSCHED_SERVER", url)
        .stdin(Stdio::null())
        .output()
        .expect("run gpusched")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Submits through the CLI and returns the job id.
pub fn submit(url: &str, args: &[&str]) -> u64 {
    let mut all = vec!["submit", "--json"];
    all.extend_from_slice(args);
    let o = cli(url, &all);
    assert!(o.status.success(), "submit failed: {}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("submit --json prints JSON");
    v["ids"][0].as_u64().expect("an id")
}

pub fn job(url: &str, id: u64) -> Value {
    let (code, body) = http(url, "GET", &format!("/api/jobs/{id}"), None);
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).expect("job JSON")
}

/// Waits (bounded) for the job to end and returns it.
pub fn wait_job(url: &str, id: u64, limit: Duration) -> Value {
    let start = Instant::now();
    loop {
        let (code, body) = http(
            url,
            "GET",
            &format!("/api/jobs/{id}/wait?timeout_s=2"),
            None,
        );
        if code == 200 {
            let v: Value = serde_json::from_str(&body).expect("job JSON");
            if ["succeeded", "failed", "cancelled", "timed_out"]
                .contains(&v["state"].as_str().unwrap_or(""))
            {
                return v;
            }
        }
        assert!(
            start.elapsed() < limit,
            "job {id} did not end within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn wait_until(limit: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < limit,
            "condition not met within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One plain HTTP/1.1 request; returns status and body. Raw on purpose, so tests can
/// send what a well-behaved client never would.
pub fn http(url: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let Ok(mut s) = TcpStream::connect(host) else {
        return (0, String::new());
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let body = body.unwrap_or("");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if s.write_all(req.as_bytes()).is_err() {
        return (0, String::new());
    }
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    let Some((head, rest)) = text.split_once("\r\n\r\n") else {
        return (0, String::new());
    };
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    (code, body)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// A scratch directory for one test.
pub fn scratch() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().to_path_buf();
    (d, p)
}

pub fn pid_alive(pid: i32) -> bool {
    // A zombie still has a /proc entry; count it as dead.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}
