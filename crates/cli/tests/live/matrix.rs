//! The authorization matrix: every route of the server's own route list
//! (`gpusched_server::ROUTES`), called by every kind of caller, answers the expected
//! status, on a server with and without `--private-jobs`. A route added to the router
//! without a row here fails the test. Then what the statuses cannot show: the content
//! of what each caller gets (no one else's output, environment or private jobs).

use std::time::Duration;

use serde_json::Value;

use crate::support::*;

/// Who calls, in the order of [`Row::expect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Caller {
    /// TCP without a token.
    Anonymous,
    /// The user who owns the jobs the paths name.
    Owner,
    /// Another user with a token.
    Other,
    /// Over the Unix socket as this process's uid (root or the server's user).
    AdminSocket,
    /// An admin token (not the jobs' owner).
    AdminToken,
    /// The agents' join token.
    Agent,
    /// A token an admin revoked.
    Revoked,
}

const CALLERS: [Caller; 7] = [
    Caller::Anonymous,
    Caller::Owner,
    Caller::Other,
    Caller::AdminSocket,
    Caller::AdminToken,
    Caller::Agent,
    Caller::Revoked,
];

/// One route: the call made (placeholders `{job}`: the owner's running job,
/// `{pending}`: the owner's pending job, `{spare}`: another, `{array}`: the owner's
/// pending array of tasks 0-3, `{token}`: a spare token's id), and the status per caller
/// in the order of [`CALLERS`]; `private_other`: the other user's status under
/// `--private-jobs` where it differs.
struct Row {
    method: &'static str,
    path: &'static str,
    call: &'static str,
    body: Option<&'static str>,
    expect: [u16; 7],
    private_other: Option<u16>,
}

const fn row(
    method: &'static str,
    path: &'static str,
    call: &'static str,
    body: Option<&'static str>,
    expect: [u16; 7],
    private_other: Option<u16>,
) -> Row {
    Row {
        method,
        path,
        call,
        body,
        expect,
        private_other,
    }
}

const PUBLIC: [u16; 7] = [200; 7];
/// Any person may (anonymous and revoked: 401; the join token: 403).
const PERSONS: [u16; 7] = [401, 200, 200, 200, 200, 403, 401];
/// Only the job's owner and admins.
const OWNER: [u16; 7] = [401, 200, 403, 200, 200, 403, 401];
const ADMINS: [u16; 7] = [401, 403, 403, 200, 200, 403, 401];
const AGENTS: [u16; 7] = [401, 403, 403, 403, 403, 200, 401];
/// Agent calls naming a node instance that is not the server's: the agent is told to
/// register again; everyone else is refused first.
const AGENTS_STALE: [u16; 7] = [401, 403, 403, 403, 403, 409, 401];
const SUBMIT: [u16; 7] = [401, 201, 201, 201, 201, 403, 401];
const JOB: &str = r#"{"command": ["true"], "cwd": "/tmp"}"#;
const WORKFLOW: &str = r#"{"steps": [{"key": "a", "job": {"command": ["true"], "cwd": "/tmp"}}]}"#;
/// Hold and release of the spare pending job: its owner and admins pass the check of
/// who may (the owner holds it first, so an admin's second hold is 409: already held).
const HOLDERS: [u16; 7] = [401, 200, 403, 409, 409, 403, 401];
/// A reservation far ahead on the matrix's one node.
const RESERVATION: &str = r#"{"name": "matrix-resv", "start_ms": 4102444800000,
    "duration_s": 3600, "nodes": ["n1"]}"#;

const SERVICE: &str = r#"{"name": "matrix-svc", "replicas": 0,
    "replica": {"command": ["true"], "cwd": "/tmp", "gpus": 0}}"#;
const REGISTER: &str = r#"{"node": "matrix-probe", "agent_version": "0", "gpus": [],
    "cpus": 1, "mem_mib": 1, "log_url": null, "running": [], "events": []}"#;

const ROWS: &[Row] = &[
    row("GET", "/api/health", "/api/health", None, PUBLIC, None),
    row(
        "GET",
        "/api/openapi.json",
        "/api/openapi.json",
        None,
        PUBLIC,
        None,
    ),
    row("POST", "/api/jobs", "/api/jobs", Some(JOB), SUBMIT, None),
    // Under --private-jobs the other user still may list: their own jobs only.
    row(
        "GET",
        "/api/jobs",
        "/api/jobs?state=all",
        None,
        PERSONS,
        None,
    ),
    row(
        "POST",
        "/api/jobs/batch",
        "/api/jobs/batch",
        Some(r#"{"jobs": [{"command": ["true"], "cwd": "/tmp"}]}"#),
        SUBMIT,
        None,
    ),
    // Several ids in one request: each id's refusal is in the answer (200 for any person).
    row(
        "POST",
        "/api/jobs/cancel",
        "/api/jobs/cancel",
        Some(r#"{"ids": [999999]}"#),
        PERSONS,
        None,
    ),
    row(
        "GET",
        "/api/jobs/{id}",
        "/api/jobs/{job}",
        None,
        PERSONS,
        Some(404),
    ),
    row(
        "POST",
        "/api/jobs/{id}/cancel",
        "/api/jobs/{pending}/cancel",
        None,
        OWNER,
        Some(404),
    ),
    row(
        "POST",
        "/api/jobs/{id}/checkpoint",
        "/api/jobs/{job}/checkpoint",
        None,
        OWNER,
        Some(404),
    ),
    row(
        "GET",
        "/api/jobs/{id}/wait",
        "/api/jobs/{job}/wait?timeout_s=0",
        None,
        PERSONS,
        Some(404),
    ),
    row(
        "GET",
        "/api/jobs/{id}/logs",
        "/api/jobs/{job}/logs",
        None,
        OWNER,
        Some(404),
    ),
    row(
        "GET",
        "/api/jobs/{id}/events",
        "/api/jobs/{job}/events",
        None,
        OWNER,
        Some(404),
    ),
    row(
        "POST",
        "/api/jobs/{id}/hold",
        "/api/jobs/{spare}/hold",
        None,
        HOLDERS,
        Some(404),
    ),
    row(
        "POST",
        "/api/jobs/{id}/release",
        "/api/jobs/{spare}/release",
        None,
        HOLDERS,
        Some(404),
    ),
    row(
        "PATCH",
        "/api/jobs/{id}",
        "/api/jobs/{spare}",
        Some(r#"{"priority": 0}"#),
        OWNER,
        Some(404),
    ),
    row(
        "POST",
        "/api/workflows",
        "/api/workflows",
        Some(WORKFLOW),
        SUBMIT,
        None,
    ),
    // A step's stream needs an HTTP upgrade (steps.rs streams real ones, and shows
    // another user's 403 there): without one, people get past authorization to the
    // 400 that says so.
    row(
        "POST",
        "/api/jobs/{id}/steps",
        "/api/jobs/{job}/steps",
        Some(r#"{"command": ["true"]}"#),
        [401, 400, 400, 400, 400, 403, 401],
        None,
    ),
    row(
        "GET",
        "/api/jobs/{id}/tasks",
        "/api/jobs/{array}/tasks",
        None,
        PERSONS,
        Some(404),
    ),
    row(
        "GET",
        "/api/jobs/{id}/tasks/{index}",
        "/api/jobs/{array}/tasks/1",
        None,
        PERSONS,
        Some(404),
    ),
    // Task 3 never starts (the array waits for the running job): cancelled, then
    // already ended, 200 for its owner and admins alike.
    row(
        "POST",
        "/api/jobs/{id}/tasks/{index}/cancel",
        "/api/jobs/{array}/tasks/3/cancel",
        None,
        OWNER,
        Some(404),
    ),
    row("GET", "/api/nodes", "/api/nodes", None, PERSONS, None),
    row("GET", "/api/usage", "/api/usage", None, PERSONS, None),
    row("GET", "/api/queues", "/api/queues", None, PERSONS, None),
    row("GET", "/api/accounts", "/api/accounts", None, PERSONS, None),
    row(
        "POST",
        "/api/agent/register",
        "/api/agent/register",
        Some(REGISTER),
        AGENTS,
        None,
    ),
    row(
        "GET",
        "/api/agent/poll",
        "/api/agent/poll?node=matrix-probe&instance=stale&gen=0",
        None,
        AGENTS_STALE,
        None,
    ),
    row(
        "POST",
        "/api/agent/report",
        "/api/agent/report",
        Some(r#"{"node": "matrix-probe", "instance": "stale", "events": []}"#),
        AGENTS_STALE,
        None,
    ),
    row(
        "GET",
        "/api/agent/steps/{id}/{step}",
        "/api/agent/steps/{job}/0?node=matrix-probe",
        None,
        [401, 403, 403, 403, 403, 400, 401],
        None,
    ),
    row(
        "POST",
        "/api/tokens",
        "/api/tokens",
        Some(r#"{"user": "carol"}"#),
        [401, 403, 403, 201, 201, 403, 401],
        None,
    ),
    row("GET", "/api/tokens", "/api/tokens", None, ADMINS, None),
    row(
        "POST",
        "/api/tokens/{id}/revoke",
        "/api/tokens/{token}/revoke",
        None,
        ADMINS,
        None,
    ),
    row("GET", "/api/whoami", "/api/whoami", None, PERSONS, None),
    // An unknown node: admins get past authorization to the 404 (a real drain would
    // hold the other rows' jobs; drain.rs drains real nodes).
    row(
        "POST",
        "/api/nodes/{name}/drain",
        "/api/nodes/matrix-none/drain",
        Some(r#"{"reason": "matrix"}"#),
        [401, 403, 403, 404, 404, 403, 401],
        None,
    ),
    row(
        "POST",
        "/api/nodes/{name}/resume",
        "/api/nodes/matrix-none/resume",
        None,
        [401, 403, 403, 404, 404, 403, 401],
        None,
    ),
    row(
        "GET",
        "/api/audit",
        "/api/audit?limit=5",
        None,
        ADMINS,
        None,
    ),
    // A time before any job ended: admins get through and nothing is deleted.
    row(
        "POST",
        "/api/admin/purge",
        "/api/admin/purge",
        Some(r#"{"before_ms": 1}"#),
        ADMINS,
        None,
    ),
    // Users export their own ended jobs, admins everyone's (export.rs checks which).
    row(
        "GET",
        "/api/history/jobs",
        "/api/history/jobs?limit=5",
        None,
        PERSONS,
        None,
    ),
    // Services: the owner creates one (no replicas, so nothing runs), after which the
    // name is taken for everyone; any person reads them; the owner and admins change
    // it; the owner's delete removes it at once (no replica to drain), so the others
    // find nothing.
    row(
        "POST",
        "/api/services",
        "/api/services",
        Some(SERVICE),
        [401, 201, 409, 409, 409, 403, 401],
        None,
    ),
    row("GET", "/api/services", "/api/services", None, PERSONS, None),
    row(
        "GET",
        "/api/services/{name}",
        "/api/services/matrix-svc",
        None,
        PERSONS,
        None,
    ),
    row(
        "PUT",
        "/api/services/{name}",
        "/api/services/matrix-svc",
        Some(SERVICE),
        OWNER,
        None,
    ),
    row(
        "DELETE",
        "/api/services/{name}",
        "/api/services/matrix-svc",
        None,
        [401, 200, 404, 404, 404, 403, 401],
        None,
    ),
    // Reservations: admins create, change and delete them (the admin token's create
    // finds the name taken, its delete finds it gone); any person reads them.
    row(
        "POST",
        "/api/reservations",
        "/api/reservations",
        Some(RESERVATION),
        [401, 403, 403, 201, 409, 403, 401],
        None,
    ),
    row(
        "GET",
        "/api/reservations",
        "/api/reservations",
        None,
        PERSONS,
        None,
    ),
    row(
        "GET",
        "/api/reservations/{name}",
        "/api/reservations/matrix-resv",
        None,
        PERSONS,
        None,
    ),
    row(
        "PUT",
        "/api/reservations/{name}",
        "/api/reservations/matrix-resv",
        Some(RESERVATION),
        [401, 403, 403, 200, 200, 403, 401],
        None,
    ),
    row(
        "DELETE",
        "/api/reservations/{name}",
        "/api/reservations/matrix-resv",
        None,
        [401, 403, 403, 200, 404, 403, 401],
        None,
    ),
    // Gateways: a gateway token or an admin (tests/live/serving.rs uses a gateway token).
    row(
        "POST",
        "/api/gateway/sync",
        "/api/gateway/sync",
        Some(r#"{"gateway": "matrix-gw", "load": []}"#),
        ADMINS,
        None,
    ),
    // Admins and metrics tokens (tests/live/prometheus.rs walks the routes with one).
    row("GET", "/metrics", "/metrics", None, ADMINS, None),
    // The dashboard's page and assets hold no data: anyone may load them.
    row("GET", "/", "/", None, PUBLIC, None),
    row("GET", "/ui/{*path}", "/ui/js/app.js", None, PUBLIC, None),
];

/// The matrix's rows, checked against the router's own list both ways.
fn rows_for_every_route() -> Vec<&'static Row> {
    let mut missing = Vec::new();
    let mut rows = Vec::new();
    for route in gpusched_server::ROUTES {
        match ROWS
            .iter()
            .find(|r| r.method == route.method && r.path == route.path)
        {
            Some(r) => rows.push(r),
            None => missing.push(format!("{} {}", route.method, route.path)),
        }
    }
    assert!(
        missing.is_empty(),
        "routes without a row in the authorization matrix (add one to ROWS in \
         tests/live/matrix.rs): {missing:?}"
    );
    for r in ROWS {
        assert!(
            gpusched_server::ROUTES
                .iter()
                .any(|route| route.method == r.method && route.path == r.path),
            "the matrix has a row for {} {}, which the router does not serve",
            r.method,
            r.path
        );
    }
    rows
}

/// A cluster with an owner's running job (which printed a secret), two pending jobs of
/// theirs, and tokens for every caller.
struct World {
    _server: Proc,
    _agent: Proc,
    _dir: tempfile::TempDir,
    url: String,
    owner: String,
    owner_token: String,
    other_token: String,
    admin_token: String,
    join_token: String,
    revoked_token: String,
    spare_token_id: u64,
    running: u64,
    pending: u64,
    /// Another pending job of the owner's, for hold, release and update (`{spare}`).
    spare: u64,
    array: u64,
}

const SECRET: &str = "owner-secret-4711";

/// The Unix user the owner's jobs can run as: `nobody` under a root agent (which runs
/// jobs as their submitter), else this user (an agent runs only its own user's jobs).
fn owner_name(url: &str) -> String {
    let me = stdout(&cli(url, &["whoami"]));
    let me = me.split_whitespace().next().unwrap_or("").to_string();
    if me == "root" {
        "nobody".into()
    } else {
        me
    }
}

fn token_for(url: &str, user: &str, admin: bool) -> (u64, String) {
    let body = format!(
        r#"{{"user": "{user}", "role": "{}"}}"#,
        if admin { "admin" } else { "user" }
    );
    let (code, body) = http_unix(url, "POST", "/api/tokens", Some(&body));
    assert_eq!(code, 201, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    (
        v["id"].as_u64().unwrap(),
        v["token"].as_str().unwrap().to_string(),
    )
}

fn world(private: bool) -> World {
    let (d, dir) = scratch();
    let extra: &[&str] = if private { &["--private-jobs"] } else { &[] };
    let (server, url) = server(&dir.join("data"), 0, extra);
    let agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(2));
    let owner = owner_name(&url);
    let (_, owner_token) = token_for(&url, &owner, false);
    let (_, other_token) = token_for(&url, "bob", false);
    let (_, admin_token) = token_for(&url, "root-of-tokens", true);
    let (revoked_id, revoked_token) = token_for(&url, "dave", false);
    let (spare_token_id, _) = token_for(&url, "erin", false);
    let (code, body) = http_unix(
        &url,
        "POST",
        &format!("/api/tokens/{revoked_id}/revoke"),
        None,
    );
    assert_eq!(code, 200, "{body}");
    let join_token = std::fs::read_to_string(dir.join("data/join-token"))
        .unwrap()
        .trim()
        .to_string();

    let submit_as = |body: &str| {
        let (code, out) = http_with(&url, Some(&owner_token), "POST", "/api/jobs", Some(body));
        assert_eq!(code, 201, "{out}");
        serde_json::from_str::<Value>(&out).unwrap()["ids"][0]
            .as_u64()
            .unwrap()
    };
    let running = submit_as(&format!(
        r#"{{"command": ["sh", "-c", "echo $OWNER_ENV_SECRET; exec sleep 300"], "cwd": "/tmp",
            "env": {{"OWNER_ENV_SECRET": "{SECRET}"}}}}"#
    ));
    let pending = submit_as(&format!(
        r#"{{"command": ["true"], "cwd": "/tmp", "after": [{running}]}}"#
    ));
    let spare = submit_as(&format!(
        r#"{{"command": ["true"], "cwd": "/tmp", "after": [{running}]}}"#
    ));
    let array = submit_as(&format!(
        r#"{{"command": ["true"], "cwd": "/tmp", "array": {{"first": 0, "last": 3}},
            "after": [{running}]}}"#
    ));
    // The evidence itself: the job's output holds the secret (so it runs and its log
    // exists), read by its owner.
    wait_until(Duration::from_secs(30), || {
        let (code, out) = http_with(
            &url,
            Some(&owner_token),
            "GET",
            &format!("/api/jobs/{running}/logs"),
            None,
        );
        code == 200 && out.contains(SECRET)
    });
    World {
        _server: server,
        _agent: agent,
        _dir: d,
        url,
        owner,
        owner_token,
        other_token,
        admin_token,
        join_token,
        revoked_token,
        spare_token_id,
        running,
        pending,
        spare,
        array,
    }
}

impl World {
    fn call(&self, who: Caller, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let token = match who {
            Caller::AdminSocket => return http_unix(&self.url, method, path, body),
            Caller::Anonymous => None,
            Caller::Owner => Some(&self.owner_token),
            Caller::Other => Some(&self.other_token),
            Caller::AdminToken => Some(&self.admin_token),
            Caller::Agent => Some(&self.join_token),
            Caller::Revoked => Some(&self.revoked_token),
        };
        if path.starts_with("/api/agent/") {
            return http_agent(&self.url, token.map(String::as_str), method, path, body);
        }
        http_with(&self.url, token.map(String::as_str), method, path, body)
    }

    fn check_matrix(&self, private: bool) {
        let mut wrong = Vec::new();
        for r in rows_for_every_route() {
            let path = r
                .call
                .replace("{job}", &self.running.to_string())
                .replace("{pending}", &self.pending.to_string())
                .replace("{spare}", &self.spare.to_string())
                .replace("{array}", &self.array.to_string())
                .replace("{token}", &self.spare_token_id.to_string());
            for (i, &who) in CALLERS.iter().enumerate() {
                let want = match (who, private, r.private_other) {
                    (Caller::Other, true, Some(p)) => p,
                    _ => r.expect[i],
                };
                let (got, body) = self.call(who, r.method, &path, r.body);
                if got != want {
                    wrong.push(format!(
                        "{} {path} as {who:?}: {got}, expected {want} ({body})",
                        r.method
                    ));
                }
                // Whatever the status, an unknown endpoint is never the answer.
                assert!(
                    !body.contains("no such endpoint"),
                    "{} {path} is in ROUTES but not served: {body}",
                    r.method
                );
            }
        }
        assert!(
            wrong.is_empty(),
            "private_jobs = {private}:\n{}",
            wrong.join("\n")
        );
    }

    fn get(&self, who: Caller, path: &str) -> Value {
        let (code, body) = self.call(who, "GET", path, None);
        assert_eq!(code, 200, "{path} as {who:?}: {body}");
        serde_json::from_str(&body).unwrap()
    }
}

fn error_of(body: &str) -> String {
    serde_json::from_str::<Value>(body).unwrap()["error"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// No caller sees a job's environment in any view of it (the secret is only in the
/// environment, which the job printed).
fn assert_no_env(w: &World, who: Caller) {
    for path in [
        format!("/api/jobs/{}", w.running),
        "/api/jobs?state=all".to_string(),
        format!("/api/jobs/{}/wait?timeout_s=0", w.running),
    ] {
        let (_, body) = w.call(who, "GET", &path, None);
        assert!(
            !body.contains(SECRET),
            "{path} as {who:?} shows the environment: {body}"
        );
    }
}

#[test]
fn every_route_answers_every_caller_as_the_matrix_says() {
    let w = world(false);
    w.check_matrix(false);

    // Another user may see the job but not what it printed.
    let logs = format!("/api/jobs/{}/logs", w.running);
    let (code, body) = w.call(Caller::Other, "GET", &logs, None);
    assert_eq!(code, 403);
    assert_eq!(
        error_of(&body),
        format!(
            "job {} belongs to {}; only its owner or an admin may read its output (you are bob)",
            w.running, w.owner
        )
    );
    for who in [Caller::Owner, Caller::AdminSocket, Caller::AdminToken] {
        let (code, body) = w.call(who, "GET", &logs, None);
        assert_eq!(
            (code, body.contains(SECRET)),
            (200, true),
            "{who:?}: {body}"
        );
    }
    let o = cli_as(
        &w.url,
        Some(&w.other_token),
        &["logs", &w.running.to_string()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("only its owner or an admin"),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains(SECRET));

    // The checkpoint time (set by the matrix's owner and admin calls) is the owner's.
    let path = format!("/api/jobs/{}", w.running);
    assert!(w.get(Caller::Owner, &path)["last_checkpoint_ms"].is_u64());
    assert!(w.get(Caller::Other, &path)["last_checkpoint_ms"].is_null());
    for who in [Caller::Owner, Caller::Other, Caller::AdminToken] {
        assert_no_env(&w, who);
    }
    // Without --private-jobs the other user lists the owner's job.
    let list = w.get(Caller::Other, "/api/jobs?state=all");
    assert!(list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|j| j["id"] == w.running));
}

#[test]
fn private_jobs_hide_other_users_jobs_everywhere() {
    let w = world(true);
    w.check_matrix(true);

    // A hidden job answers exactly as an id never issued.
    let (code, hidden) = w.call(
        Caller::Other,
        "GET",
        &format!("/api/jobs/{}", w.running),
        None,
    );
    assert_eq!(code, 404);
    let (_, unknown) = w.call(Caller::Other, "GET", "/api/jobs/999999", None);
    assert_eq!(
        error_of(&hidden),
        error_of(&unknown).replace("999999", &w.running.to_string())
    );
    let ids = |who: Caller| -> Vec<u64> {
        w.get(who, "/api/jobs?state=all")["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["id"].as_u64().unwrap())
            .collect()
    };
    assert!(!ids(Caller::Other).contains(&w.running));
    // Nor does a dependency on it tell that it exists.
    let after = format!(r#"{{"command": ["true"], "after": [{}]}}"#, w.running);
    let (code, body) = w.call(Caller::Other, "POST", "/api/jobs", Some(&after));
    assert_eq!(code, 409, "{body}");
    assert_eq!(
        error_of(&body),
        format!("`after`: there is no job {}", w.running)
    );
    assert!(ids(Caller::Owner).contains(&w.running));
    assert!(ids(Caller::AdminToken).contains(&w.running));
    let q = stdout(&cli_as(&w.url, Some(&w.other_token), &["queue", "--all"]));
    assert!(!q.contains(&w.owner), "{q}");

    // Nodes: the other user sees the GPU taken, by an anonymous holder.
    let holder = |who: Caller| -> (Value, Value) {
        let nodes = w.get(who, "/api/nodes");
        let gpus = nodes["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == "n1")
            .unwrap()["gpus"]
            .clone();
        let g = gpus
            .as_array()
            .unwrap()
            .iter()
            .find(|g| !g["user"].is_null())
            .cloned()
            .unwrap_or_else(|| panic!("no held GPU as {who:?}: {gpus}"));
        (g["job"].clone(), g["user"].clone())
    };
    assert_eq!(
        holder(Caller::Other),
        (Value::Null, Value::from("(another user)"))
    );
    assert_eq!(
        holder(Caller::Owner),
        (Value::from(w.running), Value::from(w.owner.as_str()))
    );
    let table = stdout(&cli_as(&w.url, Some(&w.other_token), &["nodes", "--gpus"]));
    assert!(table.contains("(another user)"), "{table}");
    assert!(!table.contains(&format!("job {}", w.running)), "{table}");

    // Usage counts only the caller's own jobs.
    let keys = |who: Caller| -> Vec<String> {
        w.get(who, "/api/usage")["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["key"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!keys(Caller::Other).contains(&w.owner));
    assert!(keys(Caller::Owner).contains(&w.owner));
    assert!(keys(Caller::AdminToken).contains(&w.owner));
    for who in [Caller::Owner, Caller::Other, Caller::AdminToken] {
        assert_no_env(&w, who);
    }
}
