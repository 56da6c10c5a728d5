//! Identity and authorization: the Unix socket knows the caller by uid; TCP needs a
//! token; users may only change their own jobs; agents can only be agents.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::*;

fn error_of(body: &str) -> String {
    serde_json::from_str::<Value>(body).unwrap()["error"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn tokens_roles_and_ownership_are_enforced() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(2));
    let sock = socket(&url);

    // The socket knows who we are without a token.
    let me = stdout(&cli_as(&sock, None, &["whoami"]));
    assert!(me.contains("(admin, via unix-socket)"), "{me}");

    // TCP without a token, or with a wrong one: 401 that says what to do.
    let (code, body) = http_with(&url, None, "GET", "/api/jobs", None);
    assert_eq!(code, 401);
    assert!(error_of(&body).contains("token create"), "{body}");
    let (code, _) = http_with(&url, Some("gst_nonsense"), "GET", "/api/jobs", None);
    assert_eq!(code, 401);
    let o = cli_as(&url, Some("gst_nonsense"), &["queue"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not valid"), "{}", stderr(&o));
    // Public endpoints stay public.
    assert_eq!(
        http_with(&url, None, "GET", "/api/openapi.json", None).0,
        200
    );

    // An admin issues tokens for alice and bob.
    let alice = stdout(&cli_as(&sock, None, &["token", "create", "alice"]))
        .trim()
        .to_string();
    let bob = stdout(&cli_as(&sock, None, &["token", "create", "bob"]))
        .trim()
        .to_string();
    assert!(alice.starts_with("gst_") && bob.starts_with("gst_"));
    let who = stdout(&cli_as(&url, Some(&alice), &["whoami"]));
    assert_eq!(who.trim(), "alice (user, via token)");

    // Alice's job is alice's, whatever the client claims; bob may read but not cancel.
    let o = cli_as(
        &url,
        Some(&alice),
        &["submit", "--json", "--", "sleep", "30"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let id = serde_json::from_str::<Value>(&stdout(&o)).unwrap()["ids"][0]
        .as_u64()
        .unwrap();
    assert_eq!(job(&url, id)["user"], "alice");
    let (code, body) = http_with(
        &url,
        Some(&bob),
        "POST",
        "/api/jobs",
        Some(r#"{"command": ["true"], "user": "alice"}"#),
    );
    assert_eq!(code, 403, "{body}");
    assert!(error_of(&body).contains("only an admin may submit jobs as another user"));
    let q = cli_as(&url, Some(&bob), &["queue", "--all"]);
    assert!(stdout(&q).contains("alice"), "anyone may read the queue");
    let o = cli_as(&url, Some(&bob), &["cancel", &id.to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("job {id} belongs to alice")),
        "{}",
        stderr(&o)
    );
    assert_ne!(job(&url, id)["state"], "cancelled");

    // Users cannot manage tokens or speak the agent protocol.
    let (code, body) = http_with(&url, Some(&bob), "GET", "/api/tokens", None);
    assert_eq!(code, 403, "{body}");
    let (code, _) = http_with(
        &url,
        Some(&bob),
        "GET",
        "/api/agent/poll?node=n1&instance=x&gen=0",
        None,
    );
    assert_eq!(code, 403);
    // The join token cannot read the queue.
    let join = std::fs::read_to_string(dir.join("data/join-token")).unwrap();
    let (code, body) = http_with(&url, Some(join.trim()), "GET", "/api/jobs", None);
    assert_eq!(code, 403, "{body}");

    // The owner cancels; a revoked token stops working at once.
    let o = cli_as(&url, Some(&alice), &["cancel", &id.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let list = stdout(&cli_as(&sock, None, &["token", "list"]));
    let alice_id = list
        .lines()
        .find(|l| l.contains(" alice "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    let o = cli_as(&sock, None, &["token", "revoke", &alice_id]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        http_with(&url, Some(&alice), "GET", "/api/jobs", None).0,
        401
    );
    assert!(stdout(&cli_as(&sock, None, &["token", "list"])).contains("revoked"));
}

/// One rule for other users' commands (docs/live-cluster.md): anyone may list another
/// user's jobs, ended ones included, but the command line comes only to its owner and
/// admins, in the list (any `user=` and `state=`) and in one job, as in the history
/// export (export.rs).
#[test]
fn another_users_command_is_not_in_the_job_list_nor_in_one_job() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    let sock = socket(&url);
    // `nobody` exists on every host, so bob's job could run as its submitter.
    let o = cli_as(&sock, None, &["token", "create", "nobody"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bob = stdout(&o).trim().to_string();
    let theirs = submit(
        &url,
        &["--name", "theirs", "--", "echo", "password=hunter2"],
    );
    assert_eq!(wait_job(&url, theirs, SLOW)["state"], "succeeded");
    let owner = job(&url, theirs)["user"].as_str().unwrap().to_string();
    let o = cli_as(
        &url,
        Some(&bob),
        &["submit", "--json", "--hold", "--", "echo", "mine"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mine = serde_json::from_str::<Value>(&stdout(&o)).unwrap()["ids"][0]
        .as_u64()
        .unwrap();

    let get = |token: Option<&str>, path: &str| {
        let (code, body) = http_with(&url, token, "GET", path, None);
        assert_eq!(code, 200, "{path}: {body}");
        serde_json::from_str::<Value>(&body).unwrap()
    };
    let listed = format!("/api/jobs?user={owner}&state=succeeded,failed,cancelled,timed_out");
    let list = get(Some(&bob), &listed);
    let row = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == theirs)
        .unwrap_or_else(|| panic!("bob may list {owner}'s ended jobs: {list}"));
    assert_eq!(row["name"], "theirs", "{row}");
    assert_eq!(row["command"], serde_json::json!([]), "{row}");
    let one = get(Some(&bob), &format!("/api/jobs/{theirs}"));
    assert_eq!(one["command"], serde_json::json!([]), "{one}");
    assert!(!list.to_string().contains("hunter2") && !one.to_string().contains("hunter2"));
    let o = cli_as(&url, Some(&bob), &["show", &theirs.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("hunter2"), "{}", stdout(&o));
    // His own command he sees; the owner and an admin see theirs.
    let own = get(Some(&bob), &format!("/api/jobs/{mine}"));
    assert_eq!(own["command"], serde_json::json!(["echo", "mine"]), "{own}");
    let all = job(&url, theirs);
    assert_eq!(
        all["command"],
        serde_json::json!(["echo", "password=hunter2"])
    );
}

#[test]
fn an_agent_needs_the_join_token() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let o = Command::new(BIN)
        .args([
            "agent",
            "--server",
            &url,
            "--gpus",
            "1",
            "--gpu-backend",
            "declared",
        ])
        .env("HOME", &dir) // no default data directory to find a token in
        .env_remove("XDG_DATA_HOME")
        .env_remove("GPUSCHED_JOIN_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("join token"), "{}", stderr(&o));
}

/// A root agent runs each job as its submitter and refuses root's own jobs by default.
#[test]
fn a_root_agent_runs_jobs_as_their_submitter_and_refuses_root() {
    if !nix_is_root() {
        eprintln!("skipped: needs root to switch users");
        return;
    }
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let join = dir.join("data/join-token");
    let _agent = Proc {
        child: Command::new(BIN)
            .args(["agent", "--server", &url, "--name", "strict", "--state-dir"])
            .arg(dir.join("agent"))
            .arg("--join-token-file")
            .arg(&join)
            .args(["--gpus", "1", "--gpu-backend", "declared"])
            .env("GPUSCHED_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    };
    wait_until(SLOW, || {
        node_state(&url, "strict").as_deref() == Some("online")
    });
    // Root (this test, over the socket) submits: refused on the node, with the reason.
    let id = submit(&url, &["--cwd", "/tmp", "--", "id", "-u"]);
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "failed", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("refusing to run a job as root"),
        "{v}"
    );

    // `nobody` submits with a token: the job runs with nobody's uid.
    let sock = socket(&url);
    let token = stdout(&cli_as(&sock, None, &["token", "create", "nobody"]))
        .trim()
        .to_string();
    let o = cli_as(
        &url,
        Some(&token),
        &[
            "submit",
            "--json",
            "--cwd",
            "/tmp",
            "--",
            "sh",
            "-c",
            "id -u; echo $USER",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let id = serde_json::from_str::<Value>(&stdout(&o)).unwrap()["ids"][0]
        .as_u64()
        .unwrap();
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    let out = stdout(&cli(&url, &["logs", &id.to_string()]));
    let uid = std::fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("nobody:"))
        .and_then(|l| l.split(':').nth(2))
        .unwrap()
        .to_string();
    assert_eq!(out, format!("{uid}\nnobody\n"));
}

fn nix_is_root() -> bool {
    // The effective uid, from the kernel's view of this process.
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// With a certificate the TCP listener speaks HTTPS only; clients and agents that trust
/// the certificate work, others are refused.
#[test]
fn tls_on_the_tcp_listener() {
    let (_d, dir) = scratch();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let Some(openssl) =
        gpusched_store::testing::require_program("tls_on_the_tcp_listener", "openssl", "openssl")
    else {
        return;
    };
    let made = Command::new(openssl)
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        // A subject no system certificate has (Debian's snakeoil one, made with
        // PostgreSQL's package, is CN=localhost): untrusted means UnknownIssuer.
        .args(["-nodes", "-days", "1", "-subj", "/CN=gpusched test server"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        // A leaf, not a CA: rustls refuses a CA certificate as the server's own.
        .args(["-addext", "basicConstraints=critical,CA:FALSE", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("run openssl");
    assert!(
        made.status.success(),
        "openssl req could not make a certificate: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let (c, k) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let (_server, url) = server(&dir.join("data"), 0, &["--tls-cert", c, "--tls-key", k]);
    assert!(url.starts_with("https://"), "{url}");
    let sock = socket(&url);
    let token = stdout(&cli_as(&sock, None, &["token", "create", "alice"]))
        .trim()
        .to_string();

    let run = |ca: Option<&str>, args: &[&str]| {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env("GPUSCHED_SERVER", &url)
            .env("GPUSCHED_TOKEN", &token)
            .env_remove("GPUSCHED_CA_CERT");
        if let Some(ca) = ca {
            cmd.env("GPUSCHED_CA_CERT", ca);
        }
        cmd.stdin(Stdio::null()).output().unwrap()
    };
    let o = run(Some(c), &["whoami"]);
    assert_eq!(
        stdout(&o).trim(),
        "alice (user, via token)",
        "{}",
        stderr(&o)
    );
    // Untrusted: the certificate is the cause, and `--ca-cert` the fix (not `up`).
    let o = run(None, &["whoami"]);
    assert_eq!(o.status.code(), Some(2));
    let said = stderr(&o);
    assert!(said.contains("(UnknownIssuer)"), "{said}");
    assert!(said.contains("--ca-cert FILE"), "{said}");
    assert!(!said.contains("gpusched up"), "{said}");
    // A key given as the CA is refused before any request, naming the file.
    let o = run(Some(k), &["whoami"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("{k} holds no PEM certificate")),
        "{}",
        stderr(&o)
    );
    // Plain HTTP to the TLS port gets nowhere.
    let plain = url.replace("https://", "http://");
    assert_eq!(
        http_with(&plain, Some(&token), "GET", "/api/whoami", None).0,
        0
    );

    // An agent that trusts the certificate joins and runs a job over HTTPS.
    let _agent = Proc {
        child: Command::new(BIN)
            .args([
                "agent",
                "--server",
                &url,
                "--name",
                "tls-node",
                "--state-dir",
            ])
            .arg(dir.join("agent"))
            .arg("--join-token-file")
            .arg(dir.join("data/join-token"))
            .args([
                "--gpus",
                "1",
                "--gpu-backend",
                "declared",
                "--allow-root-jobs",
                "--ca-cert",
                c,
            ])
            .env("GPUSCHED_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    };
    wait_until(SLOW, || {
        stdout(&cli_as(&sock, None, &["nodes"])).contains("online")
    });
    let id = {
        let o = cli_as(&sock, None, &["submit", "--json", "--", "echo", "over tls"]);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()["ids"][0]
            .as_u64()
            .unwrap()
    };
    let o = cli_as(&sock, None, &["wait", "--timeout", "20", &id.to_string()]);
    assert!(o.status.success(), "{} {}", stdout(&o), stderr(&o));
    assert_eq!(
        stdout(&cli_as(&sock, None, &["logs", &id.to_string()])),
        "over tls\n"
    );
}

/// Makes Unix user `name` unless there is one (CI runs as root and has none of ours).
fn ensure_user(name: &str) -> u32 {
    let uid = |name: &str| {
        nix::unistd::User::from_name(name)
            .ok()
            .flatten()
            .map(|u| u.uid.as_raw())
    };
    if let Some(u) = uid(name) {
        return u;
    }
    let o = Command::new("useradd")
        .args(["--no-create-home", "--shell", "/bin/sh", name])
        .output()
        .expect("run useradd");
    assert!(o.status.success(), "useradd {name}: {}", stderr(&o));
    uid(name).unwrap()
}

/// Two Unix users on one pair of nodes: bob's job can read, list or guess none of
/// alice's files (logs of a plain job, an array task and both ranks of a gang, their
/// checkpoint directories, the gang's hostfile, the journal holding her environment
/// values, the server's database), while her jobs use their own checkpoint directories.
#[test]
fn another_users_job_reads_none_of_a_jobs_files() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !nix_is_root() {
        eprintln!("skipped: needs root to run jobs as two Unix users");
        return;
    }
    let alice_uid = ensure_user("alice");
    ensure_user("bob");
    let (_d, dir) = scratch();
    // The scratch directory is 0700: jobs that run as alice and bob must pass through.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711)).unwrap();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let states = [dir.join("a1"), dir.join("a2")];
    let _n1 = agent(&url, "n1", &states[0], Gpus::Declared(4));
    let _n2 = agent(&url, "n2", &states[1], Gpus::Declared(4));
    let sock = socket(&url);
    let token = |who: &str| {
        stdout(&cli_as(&sock, None, &["token", "create", who]))
            .trim()
            .to_string()
    };
    let (alice, bob) = (token("alice"), token("bob"));
    let submit_as = |token: &str, args: &[&str]| -> Vec<u64> {
        let o = cli_as(&url, Some(token), &[&["submit", "--json"], args].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    // Each of alice's processes prints her secret, keeps it in its checkpoint
    // directory and runs on, so nothing of hers is cleaned up while bob looks.
    let work = "echo out-$SECRET; echo err-$SECRET >&2; \
                echo ckpt-$SECRET > \"$GPUSCHED_CHECKPOINT_DIR/state.${RANK:-0}\" && sleep 300";
    let common = [
        "--env",
        "SECRET=alice-s3cret",
        "--cwd",
        "/tmp",
        "-t",
        "10m",
        "--",
        "sh",
        "-c",
        work,
    ];
    let mut ids = submit_as(&alice, &common);
    let array = submit_as(&alice, &[&["--array", "0-1"], &common[..]].concat());
    ids.extend(array);
    let gang = submit_as(
        &alice,
        &[&["-N", "2", "--gpus-per-node", "1"], &common[..]].concat(),
    )[0];
    // Every process of hers has written its secret where bob would look.
    let files = |root: &std::path::Path| -> Vec<std::path::PathBuf> {
        let mut all = Vec::new();
        let mut todo = vec![root.to_path_buf()];
        while let Some(d) = todo.pop() {
            all.push(d.clone());
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                if e.file_type().unwrap().is_dir() {
                    todo.push(e.path());
                } else {
                    all.push(e.path());
                }
            }
        }
        all
    };
    let secret_files = || {
        states
            .iter()
            .flat_map(|s| files(s))
            .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("ckpt-alice-s3cret")))
            .count()
    };
    // A plain job, both array tasks, and both ranks of the gang: each could use its
    // checkpoint directory.
    let t0 = std::time::Instant::now();
    while secret_files() < 5 {
        if t0.elapsed() > SLOW {
            let states: Vec<String> = ids
                .iter()
                .chain([&gang])
                .map(|id| {
                    let v = job(&url, *id);
                    format!("job {id}: {} {} {}", v["state"], v["reason"], v["note"])
                })
                .collect();
            panic!(
                "alice's processes did not all write to their checkpoint directories:\n{}",
                states.join("\n")
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for id in ids.iter().chain([&gang]) {
        let v = job(&url, *id);
        assert_eq!(v["state"], "running", "{v}");
    }
    let hostfile = states
        .iter()
        .map(|s| s.join(format!("jobs/hostfiles/{gang}.1")))
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            let held: Vec<_> = states
                .iter()
                .flat_map(|s| files(&s.join("jobs/hostfiles")))
                .collect();
            panic!("no hostfile of gang {gang} among {held:?}")
        });
    let meta = std::fs::metadata(&hostfile).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (alice_uid, 0o600));
    // What bob tries: every directory and file of both agents (but the hostfile that
    // every job of a node shares, which names only the node) and of the server.
    let mut targets: Vec<std::path::PathBuf> = states
        .iter()
        .flat_map(|s| files(s))
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("node-")
        })
        .collect();
    targets.extend(files(&dir.join("data")).into_iter().filter(|p| {
        // The socket is everyone's way in; the server's id names the server, nothing
        // of any job.
        !p.ends_with(gpusched_server::SOCKET_NAME) && !p.ends_with("server-id")
    }));
    let probe = "for p in \"$@\"; do \
                 if [ -d \"$p\" ]; then ls \"$p\" >/dev/null 2>&1 && echo \"LISTED $p\"; \
                 else cat \"$p\" 2>/dev/null | grep -q . && echo \"READ $p\"; fi; \
                 done; echo probed";
    let mut args = vec!["--cwd", "/tmp", "-t", "5m", "--", "sh", "-c", probe, "sh"];
    let owned: Vec<String> = targets.iter().map(|p| p.display().to_string()).collect();
    args.extend(owned.iter().map(String::as_str));
    let id = submit_as(&bob, &args)[0];
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    let out = stdout(&cli(&url, &["logs", &id.to_string()]));
    assert!(
        out.ends_with("probed\n"),
        "bob's job did not finish its look: {out}"
    );
    let seen: Vec<&str> = out.lines().filter(|l| *l != "probed").collect();
    assert!(
        seen.is_empty(),
        "bob's job got at alice's files ({} tried):\n{}",
        targets.len(),
        seen.join("\n")
    );
    assert!(targets.len() > 15, "{targets:?}");
}
