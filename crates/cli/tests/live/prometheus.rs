//! `/metrics` end to end: a real Prometheus (Debian's `prometheus` package, which
//! scripts/install_test_deps.sh installs; without it that test skips, and fails under
//! CI) scrapes a live server with a metrics token, and its HTTP API answers for the
//! series the docs promise; every query of the shipped Grafana dashboard is sent to that
//! Prometheus and must parse. Also who may read `/metrics`, and what a metrics token may
//! do elsewhere (nothing).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

/// Where Debian's package puts the server; `GPUSCHED_PROMETHEUS` overrides it. `None`
/// (after a skip line, or a failure under CI) where it is not installed.
fn prometheus_bin(test: &str) -> Option<PathBuf> {
    match std::env::var_os("GPUSCHED_PROMETHEUS") {
        Some(path) => {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "GPUSCHED_PROMETHEUS is {}, which is no file: point it at a prometheus binary \
                 or unset it for /usr/bin/prometheus",
                path.display()
            );
            Some(path)
        }
        None => gpusched_store::testing::require_program(test, "/usr/bin/prometheus", "prometheus"),
    }
}

/// The dashboard the repository ships.
fn dashboard_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/grafana/gpusched.json")
}

/// Percent-encodes a query parameter.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A Prometheus server scraping one target every second with a bearer token.
struct Prom {
    _proc: Proc,
    url: String,
    log: PathBuf,
}

impl Prom {
    fn start(bin: PathBuf, dir: &Path, target: &str, token: &str) -> Prom {
        std::fs::create_dir_all(dir).unwrap();
        let token_file = dir.join("token");
        std::fs::write(&token_file, token).unwrap();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: gpusched\n    scrape_timeout: 1s\n\
                 \x20   authorization:\n      credentials_file: {}\n\
                 \x20   static_configs:\n      - targets: ['{}']\n",
                token_file.display(),
                target.trim_start_matches("http://")
            ),
        )
        .unwrap();
        // Prometheus cannot listen on port 0: take a free one and hope it stays free.
        let port = free_port();
        let log = dir.join("prometheus.log");
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("spawn prometheus");
        let p = Prom {
            _proc: Proc { child },
            url: format!("http://127.0.0.1:{port}"),
            log,
        };
        let ready = || http_with(&p.url, None, "GET", "/-/ready", None).0 == 200;
        let start = std::time::Instant::now();
        while !ready() {
            assert!(
                start.elapsed() < SLOW,
                "prometheus was not ready within {SLOW:?}; its log:\n{}",
                p.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        p
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `/api/v1/query`: the answer's JSON (status 200 or 400 alike).
    fn query(&self, expr: &str) -> Value {
        let (code, body) = http_with(
            &self.url,
            None,
            "GET",
            &format!("/api/v1/query?query={}", enc(expr)),
            None,
        );
        serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{expr}: answer {code} is not JSON ({e}): {body}"))
    }

    /// The series `expr` returns, once it returns at least one (within a minute).
    fn series(&self, expr: &str) -> Vec<Value> {
        let mut last = Value::Null;
        let start = std::time::Instant::now();
        loop {
            let v = self.query(expr);
            if let Some(r) = v["data"]["result"].as_array().filter(|r| !r.is_empty()) {
                return r.clone();
            }
            last = if v.is_null() { last } else { v };
            if start.elapsed() > SLOW {
                let (_, targets) = http_with(&self.url, None, "GET", "/api/v1/targets", None);
                panic!(
                    "{expr} returned nothing within {SLOW:?}: {last}\ntargets: {targets}\n\
                     prometheus log:\n{}",
                    self.log_text()
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

fn value_of(series: &Value) -> f64 {
    series["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// A node of no agent: registers with the join token and reports samples every second
/// (which keeps it online) until dropped.
struct Probe {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Probe {
    fn start(url: &str, join: &str) -> Probe {
        let register = r#"{"node": "probe", "agent_version": "test", "cpus": 1, "mem_mib": 1024,
            "gpus": [{"index": 0, "uuid": "GPU-probe-0", "model": "NVIDIA H100 80GB HBM3",
                      "mem_mib": 81559, "source": "fake"}],
            "log_url": null, "running": [], "events": []}"#;
        let (code, body) = http_agent(
            url,
            Some(join),
            "POST",
            "/api/agent/register",
            Some(register),
        );
        assert_eq!(code, 200, "{body}");
        let instance = serde_json::from_str::<Value>(&body).unwrap()["instance"]
            .as_str()
            .unwrap()
            .to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let (url, join, halt) = (url.to_string(), join.to_string(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut at = 0u64;
            while !halt.load(Ordering::Relaxed) {
                at += 1;
                let report = format!(
                    r#"{{"node": "probe", "instance": "{instance}", "events": [],
                        "telemetry": {{"gpus": [{{"index": 0, "at_ms": {at}, "util_pct": 93,
                        "mem_used_mib": 40000, "temp_c": 67, "power_mw": 612000,
                        "energy_mj": {}, "xids": []}}]}}}}"#,
                    1_000_000 + at * 612_000
                );
                let _ = http_with(
                    &url,
                    Some(&join),
                    "POST",
                    "/api/agent/report",
                    Some(&report),
                );
                std::thread::sleep(Duration::from_millis(1000));
            }
        });
        Probe {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn token(url: &str, user: &str, role: &str) -> String {
    let o = cli(url, &["token", "create", user, "--role", role]);
    assert!(
        o.status.success(),
        "token create --role {role}: {}",
        stderr(&o)
    );
    stdout(&o).trim().to_string()
}

fn join_token(data: &Path) -> String {
    std::fs::read_to_string(data.join("join-token"))
        .unwrap()
        .trim()
        .to_string()
}

fn error_of(body: &str) -> String {
    serde_json::from_str::<Value>(body).map_or_else(
        |_| body.to_string(),
        |v| v["error"].as_str().unwrap_or("").to_string(),
    )
}

/// A body each route accepts from a caller allowed to call it, so a refusal is about
/// the caller, not the request.
fn body_for(method: &str, path: &str) -> Option<&'static str> {
    Some(match (method, path) {
        ("GET", _) => return None,
        ("POST", "/api/jobs") => r#"{"command": ["true"], "cwd": "/tmp"}"#,
        ("POST", "/api/jobs/batch") => r#"{"jobs": [{"command": ["true"], "cwd": "/tmp"}]}"#,
        ("POST", "/api/jobs/cancel") => r#"{"ids": [1]}"#,
        ("POST", "/api/agent/register") => {
            r#"{"node": "x", "agent_version": "0", "gpus": [], "cpus": 1, "mem_mib": 1,
                "log_url": null, "running": [], "events": []}"#
        }
        ("POST", "/api/agent/report") => r#"{"node": "x", "instance": "x", "events": []}"#,
        ("POST", "/api/tokens") => r#"{"user": "x"}"#,
        ("POST", "/api/workflows") => r#"{"steps": [{"key": "a", "job": {"command": ["true"]}}]}"#,
        ("POST", "/api/admin/purge") => r#"{"before_ms": 1}"#,
        ("POST", "/api/services") | ("PUT", "/api/services/{name}") => {
            r#"{"name": "n1", "replica": {"command": ["true"]}}"#
        }
        ("POST", "/api/gateway/sync") => r#"{"gateway": "x"}"#,
        ("POST", "/api/reservations") | ("PUT", "/api/reservations/{name}") => {
            r#"{"name": "n1", "start_ms": 4102444800000, "duration_s": 3600, "nodes": ["n1"]}"#
        }
        _ => "{}",
    })
}

#[test]
fn who_may_read_metrics_and_what_a_metrics_token_may_do() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let (_server, url) = server(&data, 0, &[]);
    let metrics = token(&url, "prometheus", "metrics");
    let user = token(&url, "bob", "user");

    let (code, body) = http_with(&url, None, "GET", "/metrics", None);
    assert_eq!(code, 401, "{body}");
    assert!(error_of(&body).contains("--role metrics"), "{body}");
    assert!(error_of(&body).contains("--metrics-public"), "{body}");
    let (code, body) = http_with(&url, Some(&user), "GET", "/metrics", None);
    assert_eq!(code, 403, "{body}");
    assert!(error_of(&body).contains("you are bob (user)"), "{body}");
    let (code, body) = http_with(&url, Some(&join_token(&data)), "GET", "/metrics", None);
    assert_eq!(code, 403, "{body}");
    let (code, head, body) = http_full(&url, Some(&metrics), "GET", "/metrics", None);
    assert_eq!(code, 200, "{body}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    assert!(body.contains("# TYPE gpusched_jobs gauge"), "{body}");

    // The metrics token opens nothing else: every other route of the router refuses it.
    let mut wrong = Vec::new();
    for r in gpusched_server::ROUTES {
        let path = r
            .path
            .replace("{id}", "1")
            .replace("{name}", "n1")
            .replace("{node}", "n1")
            .replace("{*path}", "style.css");
        let (code, body) = http_with(
            &url,
            Some(&metrics),
            r.method,
            &path,
            body_for(r.method, r.path),
        );
        let want = match r.path {
            "/api/health" | "/api/openapi.json" | "/metrics" | "/" | "/ui/{*path}" => 200,
            _ => 403,
        };
        if code != want {
            wrong.push(format!(
                "{} {path}: {code}, expected {want} ({body})",
                r.method
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let (_, body) = http_with(&url, Some(&metrics), "GET", "/api/jobs", None);
    assert!(
        error_of(&body).contains("metrics role"),
        "the refusal says why: {body}"
    );
    let o = cli_as(&url, Some(&metrics), &["whoami"]);
    assert!(!o.status.success());
    let listed = stdout(&cli(&url, &["token", "list"]));
    assert!(
        listed
            .lines()
            .any(|l| l.contains("prometheus") && l.contains("metrics")),
        "{listed}"
    );
}

#[test]
fn metrics_public_serves_anyone_and_private_jobs_names_no_job() {
    let (_d, dir) = scratch();
    let (_server, url) = server(
        &dir.join("data"),
        0,
        &["--metrics-public", "--private-jobs"],
    );
    let _agent = agent(&url, "n2", &dir.join("agent"), Gpus::Fake(1));
    let id = submit(&url, &["--gpus", "1", "--", "sleep", "300"]);
    let series = r#"gpusched_gpu_job_info{node="n2",gpu="0",kind="whole"} 1"#;
    let mut last = String::new();
    wait_until(SLOW, || {
        let (code, body) = http_with(&url, None, "GET", "/metrics", None);
        last = body;
        code == 200 && last.lines().any(|l| l == series)
    });
    assert!(!last.contains("job_id"), "{last}");
    let user = job(&url, id)["user"].as_str().unwrap().to_string();
    assert!(!last.contains(&format!("user=\"{user}\"")), "{last}");
}

#[test]
fn prometheus_scrapes_the_server_and_the_dashboard_queries_parse() {
    let Some(bin) = prometheus_bin("prometheus_scrapes_the_server_and_the_dashboard_queries_parse")
    else {
        return;
    };
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let (_server, url) = server(&data, 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Fake(1));
    let id = submit(&url, &["--gpus", "1", "--", "sleep", "300"]);
    wait_until(SLOW, || job(&url, id)["state"] == "running");
    let user = job(&url, id)["user"].as_str().unwrap().to_string();
    // Samples from a node of our own: the fake agent's depend on its version.
    let _probe = Probe::start(&url, &join_token(&data));
    let prom = Prom::start(
        bin,
        &dir.join("prom"),
        &url,
        &token(&url, "prometheus", "metrics"),
    );

    let up = prom.series(r#"up{job="gpusched"} == 1"#);
    assert_eq!(up.len(), 1, "{up:?}");
    let running = prom.series(r#"gpusched_jobs{state="running",queue="default"} > 0"#);
    assert_eq!(value_of(&running[0]), 1.0, "{running:?}");
    let temp = prom.series(r#"DCGM_FI_DEV_GPU_TEMP{node="probe"}"#);
    let m = &temp[0]["metric"];
    assert_eq!(value_of(&temp[0]), 67.0);
    assert_eq!(
        (
            &m["gpu"],
            &m["UUID"],
            &m["Hostname"],
            &m["modelName"],
            &m["device"]
        ),
        (
            &Value::from("0"),
            &Value::from("GPU-probe-0"),
            &Value::from("probe"),
            &Value::from("NVIDIA H100 80GB HBM3"),
            &Value::from("nvidia0")
        ),
        "DCGM exporter's labels: {m}"
    );
    let power = prom.series(r#"DCGM_FI_DEV_POWER_USAGE{node="probe",gpu="0"}"#);
    assert_eq!(value_of(&power[0]), 612.0);
    // The real (fake-GPU) agent's samples reach Prometheus through the server too: its
    // GPU holds the job, so it reads warm and busy.
    let busy = prom.series(r#"DCGM_FI_DEV_GPU_UTIL{node="n1",gpu="0"} >= 90"#);
    assert_eq!(busy.len(), 1, "{busy:?}");
    let warm = prom.series(r#"DCGM_FI_DEV_GPU_TEMP{node="n1"} > 20"#);
    assert_eq!(warm.len(), 1, "{warm:?}");
    let held = prom.series(&format!(r#"gpusched_gpu_job_info{{job_id="{id}"}}"#));
    let m = &held[0]["metric"];
    assert_eq!(
        (&m["node"], &m["gpu"], &m["user"]),
        (
            &Value::from("n1"),
            &Value::from("0"),
            &Value::from(user.as_str())
        ),
        "{m}"
    );
    let started = prom.series("gpusched_jobs_started_total");
    assert!(value_of(&started[0]) >= 1.0, "{started:?}");
    prom.series("gpusched_job_wait_seconds_count > 0");
    prom.series("gpusched_store_commit_seconds_count > 0");
    prom.series(r#"gpusched_gpus{state="used"} >= 1"#);

    // Every query of the dashboard parses and runs, with Grafana's variables set as a
    // viewer of all nodes and queues would have them.
    let text = std::fs::read_to_string(dashboard_path()).unwrap();
    let board: Value = serde_json::from_str(&text).unwrap();
    let mut exprs = Vec::new();
    collect_exprs(&board["panels"], &mut exprs);
    assert!(
        exprs.len() >= 10,
        "the dashboard has few queries: {exprs:?}"
    );
    let mut bad = Vec::new();
    for e in &exprs {
        let q = e
            .replace("$__rate_interval", "1m")
            .replace("$__interval", "15s")
            .replace("$__range", "1h")
            .replace("${node:regex}", ".*")
            .replace("${queue:regex}", ".*")
            .replace("$node", ".*")
            .replace("$queue", ".*");
        assert!(!q.contains('$'), "a variable the test does not know in {e}");
        let v = prom.query(&q);
        if v["status"] != "success" {
            bad.push(format!("{e}: {}", v["error"]));
        }
    }
    assert!(
        bad.is_empty(),
        "dashboard queries Prometheus refused:\n{}",
        bad.join("\n")
    );
}

/// Every `expr` of the panels' targets (rows nest panels).
fn collect_exprs(panels: &Value, out: &mut Vec<String>) {
    for p in panels.as_array().into_iter().flatten() {
        for t in p["targets"].as_array().into_iter().flatten() {
            if let Some(e) = t["expr"].as_str() {
                out.push(e.to_string());
            }
        }
        collect_exprs(&p["panels"], out);
    }
}

/// What Grafana needs to import the dashboard anywhere: the data source is the
/// `datasource` variable everywhere (no uid of one installation), panel ids are unique,
/// every panel has a place, and every variable a query uses is defined.
#[test]
fn the_dashboard_imports_anywhere() {
    let board: Value =
        serde_json::from_str(&std::fs::read_to_string(dashboard_path()).unwrap()).unwrap();
    let vars: Vec<&str> = board["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(vars.contains(&"datasource"), "{vars:?}");
    assert_eq!(
        board["templating"]["list"][0]["type"], "datasource",
        "the data source is chosen at import"
    );
    let mut ids = std::collections::BTreeSet::new();
    let mut titles = Vec::new();
    for p in board["panels"].as_array().unwrap() {
        let title = p["title"].as_str().unwrap_or("").to_string();
        assert!(
            ids.insert(p["id"].as_u64().unwrap()),
            "duplicate id: {title}"
        );
        for k in ["h", "w", "x", "y"] {
            assert!(p["gridPos"][k].is_u64(), "{title}: gridPos.{k}");
        }
        if p["type"] == "row" {
            titles.push(title);
            continue;
        }
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{title}");
        for t in p["targets"].as_array().unwrap() {
            assert_eq!(t["datasource"]["uid"], "${datasource}", "{title}");
            let expr = t["expr"].as_str().unwrap();
            for v in ["$node", "$queue"] {
                if expr.contains(v) {
                    assert!(vars.contains(&&v[1..]), "{title}: {v} is not a variable");
                }
            }
        }
    }
    assert_eq!(titles, ["Cluster", "Queues", "Nodes", "Jobs"]);
}
