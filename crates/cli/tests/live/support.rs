//! A real cluster for tests: `gpusched server` and `gpusched agent` processes on
//! loopback, each killed (SIGKILL) when its handle drops, and helpers to drive the CLI
//! and the raw HTTP API. Every wait is bounded.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_gpusched");

/// What the tests know of each server they started, by URL: its data directory (for the
/// Unix socket and the join token) and an admin token for raw TCP requests.
struct Known {
    data: PathBuf,
    token: Option<String>,
}

static SERVERS: Mutex<Option<HashMap<String, Known>>> = Mutex::new(None);

fn known<T>(url: &str, f: impl FnOnce(&Known) -> T) -> Option<T> {
    let g = SERVERS.lock().unwrap_or_else(|p| p.into_inner());
    g.as_ref().and_then(|m| m.get(url)).map(f)
}

/// Remembers a server's data directory and makes an admin token for raw requests.
pub fn register(url: &str, data: &Path) {
    {
        let mut g = SERVERS.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert_with(HashMap::new).insert(
            url.to_string(),
            Known {
                data: data.to_path_buf(),
                token: None,
            },
        );
    }
    let o = cli(url, &["token", "create", "tester", "--admin"]);
    assert!(o.status.success(), "token create: {}", stderr(&o));
    let token = stdout(&o).trim().to_string();
    let mut g = SERVERS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = g.as_mut().and_then(|m| m.get_mut(url)) {
        k.token = Some(token);
    }
}

/// `unix:` address of a registered server's socket.
pub fn socket(url: &str) -> String {
    known(url, |k| {
        format!("unix:{}", k.data.join("gpusched.sock").display())
    })
    .expect("a registered server")
}

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
        // An agent SIGKILLed for good leaves its job cgroups (and, if its jobs left
        // daemons, their processes): no next life of it sweeps them here. Agents that
        // tests start themselves (not through `agent_with`) are known by their command
        // line, read while the process is still ours.
        let started = AGENTS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.child.id())
            .or_else(|| agent_of_cmdline(self.child.id()));
        self.kill();
        if let Some((node, state)) = started {
            gpusched_agent::cgroup::remove_agent_tree(&gpusched_agent::cgroup::agent_key(
                &node, &state,
            ));
        }
    }
}

/// The node and state directory of the agent in process `pid`, from its command line: a
/// `gpusched agent` given both (`--name`, `--state-dir`), or a `gpusched up` given its
/// `--data-dir` (its agent's state is `DATA/agent`, its name `--name` or the host's).
fn agent_of_cmdline(pid: u32) -> Option<(String, PathBuf)> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let value = |flag: &str| {
        let at = args.iter().position(|a| a == flag)?;
        args.get(at + 1).cloned()
    };
    match args.get(1).map(String::as_str) {
        Some("agent") => Some((value("--name")?, PathBuf::from(value("--state-dir")?))),
        Some("up") => {
            let host = || {
                std::fs::read_to_string("/proc/sys/kernel/hostname")
                    .ok()
                    .map(|h| h.trim().to_string())
            };
            let name = value("--name").or_else(host)?;
            Some((name, PathBuf::from(value("--data-dir")?).join("agent")))
        }
        _ => None,
    }
}

/// The agents started by [`agent_with`], by pid: their node and state directory.
static AGENTS: std::sync::Mutex<std::collections::BTreeMap<u32, (String, PathBuf)>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

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
            // Long enough that an agent starved of CPU on a busy machine stays online;
            // tests about expiry pass a shorter one.
            &["--heartbeat-timeout", "10s"][..]
        })
        .args(
            match extra.iter().position(|a| *a == "--heartbeat-timeout") {
                // The node lease as long as the heartbeat timeout unless a test says
                // otherwise: tests about a lost node wait for that silence, not 5 minutes.
                _ if extra.contains(&"--node-lease") => vec![],
                Some(i) => vec!["--node-lease", extra[i + 1]],
                None => vec!["--node-lease", "10s"],
            },
        )
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
    let p = Proc { child };
    register(&url, data);
    (p, url)
}

/// Reads lines until one holding `marker` followed by a URL; keeps draining after.
pub fn read_url(stream: impl Read + Send + 'static, marker: &str) -> String {
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
    rx.recv_timeout(SLOW)
        .expect("the process printed its address within 60 s")
}

pub enum Gpus {
    Declared(u32),
    Fake(u32),
}

/// Starts an agent and waits until the server lists its node online.
pub fn agent(url: &str, name: &str, state: &Path, gpus: Gpus) -> Proc {
    agent_with(url, name, state, gpus, &[])
}

/// [`agent`] with more flags (`--gpu-model` given there wins over the default).
pub fn agent_with(url: &str, name: &str, state: &Path, gpus: Gpus, extra: &[&str]) -> Proc {
    let (n, backend, default_model) = match gpus {
        Gpus::Declared(n) => (n, "declared", "A100-SXM4-80GB"),
        Gpus::Fake(n) => (n, "fake", "NVIDIA H100 80GB HBM3"),
    };
    let model = extra
        .iter()
        .position(|a| *a == "--gpu-model")
        .and_then(|i| extra.get(i + 1))
        .copied()
        .unwrap_or(default_model);
    let extra: Vec<&str> = match extra.iter().position(|a| *a == "--gpu-model") {
        Some(i) => extra
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i && *k != i + 1)
            .map(|(_, a)| *a)
            .collect(),
        None => extra.to_vec(),
    };
    let join = known(url, |k| k.data.join("join-token")).expect("a registered server");
    let child = Command::new(BIN)
        .args(["agent", "--server", url, "--name", name, "--state-dir"])
        .arg(state)
        .arg("--join-token-file")
        .arg(join)
        // The tests submit as whoever runs them, root in CI.
        .arg("--allow-root-jobs")
        .args([
            "--gpus",
            &n.to_string(),
            "--gpu-model",
            model,
            "--gpu-backend",
            backend,
        ])
        .args(&extra)
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
    AGENTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(child.id(), (name.to_string(), state.to_path_buf()));
    let p = Proc { child };
    wait_until(SLOW, || node_state(url, name).as_deref() == Some("online"));
    p
}

pub fn node_state(url: &str, name: &str) -> Option<String> {
    let (code, body) = http(url, "GET", "/api/nodes", None);
    if code == 401 {
        return None; // not registered yet
    }
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

/// Runs the CLI against `url`: through the server's Unix socket (as this uid, an admin)
/// when the test started that server, else over TCP.
pub fn cli(url: &str, args: &[&str]) -> Output {
    let target = known(url, |k| {
        format!("unix:{}", k.data.join("gpusched.sock").display())
    })
    .unwrap_or_else(|| url.to_string());
    cli_as(&target, None, args)
}

/// Runs the CLI against `server` with an optional bearer token.
pub fn cli_as(server: &str, token: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args)
        .env("GPUSCHED_SERVER", server)
        .env_remove("GPUSCHED_TOKEN");
    if let Some(t) = token {
        c.env("GPUSCHED_TOKEN", t);
    }
    c.stdin(Stdio::null()).output().expect("run gpusched")
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

/// Waits (bounded) until the file at `path` holds text that `ok` accepts, and returns
/// that text. A job's state says nothing about what its shell has written yet: tests
/// wait for the evidence itself (the ledger line, the pid file), never for `running`
/// and then read the file.
pub fn wait_for_text(path: &Path, limit: Duration, ok: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if ok(&text) {
            return text;
        }
        assert!(
            start.elapsed() < limit,
            "{} did not get the expected content within {limit:?}; it holds {text:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Complete lines of `text` (a line still being written, without its newline, is left out).
pub fn full_lines(text: &str) -> Vec<&str> {
    match text.rfind('\n') {
        Some(end) => text[..end].lines().collect(),
        None => Vec::new(),
    }
}

/// How long a test waits for something that happens quickly on an idle machine: long,
/// because CI runs on two busy cores.
pub const SLOW: Duration = Duration::from_secs(60);

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

/// One plain HTTP/1.1 request with the tests' admin token; returns status and body.
/// Raw on purpose, so tests can send what a well-behaved client never would.
pub fn http(url: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let token = known(url, |k| k.token.clone()).flatten();
    http_with(url, token.as_deref(), method, path, body)
}

/// [`http`] with a chosen bearer token (or none).
pub fn http_with(
    url: &str,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, String) {
    let (code, _, body) = http_full(url, token, method, path, body);
    (code, body)
}

/// [`http_with`] that also returns the response's head (status line and headers).
pub fn http_full(
    url: &str,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, String, String) {
    http_headers(url, token, &[], method, path, body)
}

/// [`http_with`] as an agent of this build speaks: its protocol in the header (a request
/// without it is of protocol 1, which the server refuses at registration).
pub fn http_agent(
    url: &str,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, String) {
    let protocol = gpusched_wire::agent::AGENT_PROTOCOL.to_string();
    let header = [(gpusched_wire::agent::PROTOCOL_HEADER, protocol.as_str())];
    let (code, _, body) = http_headers(url, token, &header, method, path, body);
    (code, body)
}

/// [`http_full`] with more request headers.
pub fn http_headers(
    url: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, String, String) {
    let r = Http {
        token,
        headers,
        body,
        ..Http::new(url)
    }
    .send(method, path);
    (r.code, r.head, r.body)
}

/// [`http_with`] over a test server's Unix socket: the caller is this process's uid
/// (an admin), with no token.
pub fn http_unix(url: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let r = Http {
        body,
        unix: true,
        ..Http::new(url)
    }
    .send(method, path);
    (r.code, r.body)
}

/// One HTTP/1.1 request: the only code in the live tests that speaks HTTP (the helpers
/// above and the modules' own are thin wrappers of it). Fill in what differs from
/// [`Http::new`] with struct-update syntax, then [`Http::send`].
pub struct Http<'a> {
    /// `http://host:port` of the server.
    pub url: &'a str,
    /// Sent as `Authorization: Bearer`.
    pub token: Option<&'a str>,
    /// More request headers, after the token.
    pub headers: &'a [(&'a str, &'a str)],
    /// The request body (sent as JSON); none is an empty body.
    pub body: Option<&'a str>,
    /// Through the registered server's Unix socket instead of TCP.
    pub unix: bool,
    /// Bounds the connect, the write and each read.
    pub timeout: Duration,
}

/// What came back: status 0 (and the rest empty) when the connection failed or broke off.
#[derive(Default)]
pub struct Reply {
    pub code: u16,
    /// The status line and headers.
    pub head: String,
    /// The body, de-chunked.
    pub body: String,
}

impl<'a> Http<'a> {
    /// Over TCP, no token, no extra headers, no body, 30 s bounds.
    pub fn new(url: &'a str) -> Self {
        Http {
            url,
            token: None,
            headers: &[],
            body: None,
            unix: false,
            timeout: Duration::from_secs(30),
        }
    }

    pub fn send(&self, method: &str, path: &str) -> Reply {
        if self.unix {
            let sock =
                known(self.url, |k| k.data.join("gpusched.sock")).expect("a registered server");
            let Ok(s) = std::os::unix::net::UnixStream::connect(sock) else {
                return Reply::default();
            };
            let _ = s.set_read_timeout(Some(self.timeout));
            let _ = s.set_write_timeout(Some(self.timeout));
            self.exchange(s, "localhost", method, path)
        } else {
            let host = self.url.trim_start_matches("http://").trim_end_matches('/');
            let Some(s) = host.to_socket_addrs().ok().and_then(|mut addrs| {
                addrs.find_map(|a| TcpStream::connect_timeout(&a, self.timeout).ok())
            }) else {
                return Reply::default();
            };
            let _ = s.set_read_timeout(Some(self.timeout));
            let _ = s.set_write_timeout(Some(self.timeout));
            self.exchange(s, host, method, path)
        }
    }

    /// One exchange on a connected stream, read to its close.
    fn exchange(&self, mut s: impl Read + Write, host: &str, method: &str, path: &str) -> Reply {
        let body = self.body.unwrap_or("");
        let auth = self
            .token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let extra: String = self
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\r\n"))
            .collect();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{auth}{extra}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        if s.write_all(req.as_bytes()).is_err() {
            return Reply::default();
        }
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        let text = String::from_utf8_lossy(&raw);
        let Some((head, rest)) = text.split_once("\r\n\r\n") else {
            return Reply::default();
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
        Reply {
            code,
            head: head.to_string(),
            body,
        }
    }
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
