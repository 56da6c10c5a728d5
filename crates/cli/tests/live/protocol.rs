//! Rolling upgrades of the agent protocol (`gpusched_wire::agent::AGENT_PROTOCOL`): an
//! agent of the previous protocol, speaking exactly as the previous release's agent did,
//! runs a job on this server; an agent of a protocol the server cannot serve is refused
//! at registration with both versions named and what to upgrade.
//!
//! The previous protocol is 5, the releases with service replicas and before job steps
//! (git: the parent of the commit that added `Desired::steps`): the protocol header
//! saying 5, its messages as that release's types read them (below, frozen), and its
//! reports as it wrote them. A change that breaks an agent of protocol 5 without bumping
//! the protocol fails this test: the job here asks `--mem` and `--cpus` (protocol 5 and
//! later take them), and a job step, which only protocol 6 runs, must never be sent to
//! it (`gpusched run` says which node's agent is too old). Protocols 1 to 4 are refused
//! since protocol 6 (the refusal test covers it). When `AGENT_PROTOCOL` goes to 7, this
//! agent is replaced by protocol 6's.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::support::*;

/// Protocol 5's messages from the server, as its agent parsed them.
mod v5 {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    pub struct Registered {
        pub instance: String,
        pub poll_wait_ms: u64,
        pub heartbeat_timeout_ms: u64,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    pub struct AttemptRef {
        pub job: u64,
        pub attempt: u32,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    pub struct Desired {
        pub gen: u64,
        pub run: Vec<Launch>,
        pub cancel: Vec<AttemptRef>,
        #[serde(default)]
        pub preempt: Vec<PreemptOrder>,
        #[serde(default)]
        pub reserve_ports: Vec<AttemptRef>,
        #[serde(default)]
        pub epoch: u64,
        #[serde(default)]
        pub queued: Vec<Value>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    pub struct PreemptOrder {
        pub job: u64,
        pub attempt: u32,
        pub signal: i32,
        pub grace_s: u64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    pub struct Launch {
        pub job: u64,
        pub attempt: u32,
        pub name: String,
        pub user: String,
        pub command: Vec<String>,
        pub cwd: String,
        pub env: BTreeMap<String, String>,
        pub gpus: Vec<u32>,
        pub walltime_s: Option<u64>,
        pub grace_s: u64,
        #[serde(default)]
        pub slice: Option<Value>,
        #[serde(default)]
        pub resources: BTreeMap<String, u64>,
        #[serde(default)]
        pub dist: Option<Value>,
        #[serde(default)]
        pub cpu_milli: u64,
        #[serde(default)]
        pub mem_mib: u64,
        #[serde(default)]
        pub pids_max: Option<u64>,
        #[serde(default)]
        pub image: Option<String>,
        #[serde(default)]
        pub serve: Option<Value>,
    }

    #[derive(Debug, Deserialize)]
    pub struct ReportAck {
        pub ok: bool,
    }
}

/// An agent of protocol 5 over raw HTTP: its join token as the bearer, the protocol
/// header saying 4, its bodies as that release wrote them.
struct OldAgent {
    url: String,
    join: String,
    node: String,
    instance: String,
}

impl OldAgent {
    fn register_body(node: &str) -> String {
        json!({
            "node": node,
            "agent_version": "0.1.0",
            "gpus": [{"index": 0, "uuid": null, "model": "A100-SXM4-80GB",
                      "mem_mib": 81920, "source": "declared"}],
            "cpus": 8,
            "mem_mib": 32768,
            "mps": false,
            "resources": {},
            "log_url": null,
            "log_token": null,
            "advertise_addr": "127.0.0.1",
            "location": {"switch": null, "rack": null},
            "gpu_links": [],
            "running": [],
            "events": []
        })
        .to_string()
    }

    /// Registers as protocol 5 did (or as `protocol`'s header says, none: no header); the
    /// answer.
    fn register_raw(
        url: &str,
        join: &str,
        node: &str,
        protocol: Option<&str>,
    ) -> (u16, String, String) {
        let headers: Vec<(&str, &str)> = protocol
            .map(|p| vec![("x-gpusched-agent-protocol", p)])
            .unwrap_or_default();
        let body = Self::register_body(node);
        http_headers(
            url,
            Some(join),
            &headers,
            "POST",
            "/api/agent/register",
            Some(&body),
        )
    }

    fn register(url: &str, join: &str, node: &str) -> OldAgent {
        let (code, head, body) = Self::register_raw(url, join, node, Some("5"));
        assert_eq!(code, 200, "{head}\n{body}");
        let r: v5::Registered = serde_json::from_str(&body).expect("protocol 5's Registered");
        assert!(r.poll_wait_ms > 0 && r.heartbeat_timeout_ms > 0, "{r:?}");
        OldAgent {
            url: url.to_string(),
            join: join.to_string(),
            node: node.to_string(),
            instance: r.instance,
        }
    }

    /// One poll; the desired state read as protocol 5 read it, and the raw JSON.
    fn poll(&self, gen: u64) -> (v5::Desired, Value) {
        let path = format!(
            "/api/agent/poll?node={}&instance={}&gen={gen}",
            self.node, self.instance
        );
        let (code, body) = http_with(&self.url, Some(&self.join), "GET", &path, None);
        assert_eq!(code, 200, "poll: {body}");
        let d: v5::Desired = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("protocol 5 cannot read the desired state ({e}): {body}"));
        (d, serde_json::from_str(&body).expect("JSON"))
    }

    fn report(&self, events: Value) {
        let body = json!({"node": self.node, "instance": self.instance, "events": events});
        let (code, body) = http_with(
            &self.url,
            Some(&self.join),
            "POST",
            "/api/agent/report",
            Some(&body.to_string()),
        );
        assert_eq!(code, 200, "report: {body}");
        let ack: v5::ReportAck = serde_json::from_str(&body).expect("protocol 5's ReportAck");
        assert!(ack.ok);
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn join_token(data: &std::path::Path) -> String {
    std::fs::read_to_string(data.join("join-token"))
        .expect("the server's join token")
        .trim()
        .to_string()
}

#[test]
fn an_agent_of_the_previous_protocol_runs_a_job_on_this_server() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let (_server, url) = server(&data, 0, &[]);
    let join = join_token(&data);
    let old = OldAgent::register(&url, &join, "old-agent");
    let (mut d, raw) = old.poll(0);
    // The leader's epoch, which protocol 5 reads.
    assert!(raw.get("epoch").is_some(), "{raw}");
    wait_until(SLOW, || {
        node_state(&url, "old-agent").as_deref() == Some("online")
    });
    let out = dir.join("out");
    let id = submit(
        &url,
        &[
            "--gpus",
            "1",
            "--mem",
            "64M",
            "--cpus",
            "1",
            "--",
            "sh",
            "-c",
            &format!("echo ran-by-a-protocol-5-agent > {}", out.display()),
        ],
    );
    // Poll (the heartbeat too) until the launch comes, as protocol 5's agent did.
    let start = Instant::now();
    let launch = loop {
        if let Some(l) = d.run.iter().find(|l| l.job == id) {
            break l;
        }
        assert!(start.elapsed() < SLOW, "no launch of job {id}: {d:?}");
        d = old.poll(d.gen).0;
    };
    assert_eq!((launch.attempt, launch.gpus.len()), (1, 1), "{launch:?}");
    // Protocol 5 takes the limits.
    assert_eq!((launch.cpu_milli, launch.mem_mib), (1000, 64), "{launch:?}");
    let mut child = std::process::Command::new(&launch.command[0])
        .args(&launch.command[1..])
        .envs(&launch.env)
        .current_dir(&launch.cwd)
        .spawn()
        .expect("start the job");
    let attempt = launch.attempt;
    old.report(json!([{"job": id, "attempt": attempt, "at_ms": now_ms(),
                       "event": {"kind": "started", "pid": child.id()}}]));
    let status = child.wait().expect("the job ends");
    old.report(json!([{"job": id, "attempt": attempt, "at_ms": now_ms(),
                       "event": {"kind": "ended",
                                 "outcome": {"kind": "exited", "code": status.code().unwrap_or(-1)}}}]));
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["node"], "old-agent", "{v}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "ran-by-a-protocol-5-agent\n"
    );
    // The ended attempt leaves the desired state; the node stays online on its polls.
    let start = Instant::now();
    while d.run.iter().any(|l| l.job == id) {
        assert!(start.elapsed() < SLOW, "job {id} still wanted: {d:?}");
        d = old.poll(d.gen).0;
    }
    assert_eq!(node_state(&url, "old-agent").as_deref(), Some("online"));

    // A job step is never sent to it: `gpusched run` is refused, naming the node whose
    // agent is too old, while its job runs there.
    let id = submit(&url, &["--gpus", "1", "--", "sleep", "600"]);
    let start = Instant::now();
    let launch = loop {
        if let Some(l) = d.run.iter().find(|l| l.job == id) {
            break l;
        }
        assert!(start.elapsed() < SLOW, "no launch of job {id}: {d:?}");
        d = old.poll(d.gen).0;
    };
    let attempt = launch.attempt;
    old.report(json!([{"job": id, "attempt": attempt, "at_ms": now_ms(),
                       "event": {"kind": "started", "pid": std::process::id()}}]));
    wait_until(SLOW, || job(&url, id)["state"] == "running");
    let o = cli(&url, &["run", "--jobid", &id.to_string(), "--", "true"]);
    assert!(!o.status.success(), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the agent on node old-agent is too old") && err.contains("protocol 6"),
        "{err}"
    );
    let (_, raw) = old.poll(0);
    assert!(raw.get("steps").is_none(), "{raw}");
    old.report(json!([{"job": id, "attempt": attempt, "at_ms": now_ms(),
                       "event": {"kind": "ended", "outcome": {"kind": "exited", "code": 0}}}]));
}

#[test]
fn an_agent_of_an_unsupported_protocol_is_refused_with_both_versions() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let (_server, url) = server(&data, 0, &[]);
    let join = join_token(&data);
    let current = gpusched_wire::agent::AGENT_PROTOCOL;
    let older = (gpusched_wire::agent::MIN_AGENT_PROTOCOL - 1).to_string();
    let (code, head, body) = OldAgent::register_raw(&url, &join, "too-old", Some(&older));
    assert_eq!(code, 409, "{head}\n{body}");
    for part in [
        format!("speaks agent protocol {older}, too old"),
        format!("speaks agent protocol {current}"),
        "Upgrade the agent on too-old".to_string(),
    ] {
        assert!(body.contains(&part), "{part:?} missing from: {body}");
    }
    let newer = (current + 1).to_string();
    let (code, head, body) = OldAgent::register_raw(&url, &join, "too-new", Some(&newer));
    assert_eq!(code, 409, "{head}\n{body}");
    assert!(body.contains("Upgrade the servers first"), "{body}");
    let (code, _, body) = OldAgent::register_raw(&url, &join, "garbled", Some("two"));
    assert_eq!(code, 400, "{body}");
    // None of them joined; this release's agent (the header, this protocol) does.
    for node in ["too-old", "too-new", "garbled"] {
        assert_eq!(node_state(&url, node), None, "{node}");
    }
    let _a = agent(&url, "current", &dir.join("a"), Gpus::Declared(1));
    let (code, _, _) = OldAgent::register_raw(&url, &join, "same", Some(&current.to_string()));
    assert_eq!(code, 200);
}
