//! Bad input gets a 4xx whose message says what to fix — never a 500 — and the CLI
//! prints it and exits 2.

use serde_json::Value;

use crate::support::*;

fn error_of(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("JSON error body: {body}"));
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("an `error` field: {body}"))
        .to_string()
}

#[test]
fn the_api_refuses_bad_requests_with_advice() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);

    // Before any node joined, nothing could run a job: say how to add one. A well-formed
    // job the cluster as it is cannot hold is a conflict with its state (409), not a
    // malformed request (400): the OpenAPI document promises well-formed ones are taken.
    let (code, body) = http(&url, "POST", "/api/jobs", Some(r#"{"command":["true"]}"#));
    assert_eq!(code, 409, "{body}");
    assert!(error_of(&body).contains("gpusched agent"), "{body}");

    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(8));
    let cases: &[(&str, &str, &str, u16, &str)] = &[
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"],"#,
            400,
            "invalid JSON",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "gpu": 1}"#,
            400,
            "unknown field `gpu`",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "gpus": -1}"#,
            400,
            "invalid value: integer `-1`",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "gpus": 100000}"#,
            400,
            "absurd",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "gpus": 16}"#,
            409,
            "largest node (n1) has 8",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "gpu_model": "H100"}"#,
            409,
            "no node has GPUs of model `H100*`",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": []}"#,
            400,
            "`command` is empty",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "walltime_s": 0}"#,
            400,
            "walltime_s",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "cwd": "rel"}"#,
            400,
            "absolute path",
        ),
        ("POST", "/api/jobs", "", 400, "invalid JSON"),
        (
            "POST",
            "/api/jobs/batch",
            r#"{"jobs": []}"#,
            400,
            "at least one job",
        ),
        (
            "POST",
            "/api/jobs/batch",
            r#"{"jobs": [{"command": ["true"]}, {"command": ["true"], "gpus": 9}]}"#,
            409,
            "job #1 of the batch",
        ),
        ("GET", "/api/jobs/424242", "", 404, "no job with id 424242"),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "cpus": 100000}"#,
            409,
            "but the largest node has",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "cpus": -2}"#,
            400,
            "must be above 0",
        ),
        (
            "POST",
            "/api/jobs",
            r#"{"command": ["true"], "mem_mib": 0}"#,
            400,
            "`mem_mib` must be above 0",
        ),
        ("GET", "/api/jobs/abc", "", 400, "whole number"),
        ("POST", "/api/jobs/99/cancel", "", 404, "no job with id 99"),
        (
            "GET",
            "/api/jobs?state=runnin",
            "",
            400,
            "unknown state `runnin`",
        ),
        ("GET", "/api/jobs?limit=0", "", 400, "limit"),
        ("GET", "/api/jobs?colour=red", "", 400, "colour"),
        ("GET", "/api/jobs/1/logs", "", 404, "no job with id 1"),
        ("GET", "/api/nope", "", 404, "openapi.json"),
        (
            "POST",
            "/api/agent/report",
            r#"{"node":"ghost","instance":"x","events":[]}"#,
            403,
            "only agents",
        ),
    ];
    for (method, path, body, want, needle) in cases {
        let (code, got) = http(&url, method, path, Some(body));
        assert_eq!(code, *want, "{method} {path} {body}: {got}");
        let msg = error_of(&got);
        assert!(
            msg.contains(needle),
            "{method} {path} {body}: {msg:?} lacks {needle:?}"
        );
    }
    // None of that created a job.
    let (_, list) = http(&url, "GET", "/api/jobs?state=all", None);
    assert_eq!(
        serde_json::from_str::<Value>(&list).unwrap()["jobs"],
        serde_json::json!([])
    );
}

#[test]
fn the_cli_prints_the_servers_advice_and_exits_2() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(2));
    for (args, needle) in [
        (
            vec!["submit", "--gpus", "3", "--", "true"],
            "largest node (n1) has 2",
        ),
        (
            vec!["submit", "--walltime", "soon", "--", "true"],
            "HH:MM:SS",
        ),
        (vec!["submit", "--gpus", "1"], "no command given"),
        (
            vec!["submit", "-N", "2", "--gpus-per-node", "2", "--", "true"],
            "2 nodes with 2 GPUs each",
        ),
        (
            vec![
                "submit",
                "--gpus-per-node",
                "2",
                "--tasks-per-node",
                "3",
                "--",
                "true",
            ],
            "must divide",
        ),
        (
            vec![
                "submit",
                "-N",
                "2",
                "--gpus-per-node",
                "1",
                "-G",
                "3",
                "--",
                "true",
            ],
            "--gpus 3 disagrees with --nodes 2 x --gpus-per-node 1 = 2",
        ),
        (
            vec![
                "submit",
                "-N",
                "2",
                "--gpus-per-node",
                "1",
                "--gpu-share",
                "0.5",
                "--",
                "true",
            ],
            "whole GPUs",
        ),
        (vec!["show", "77"], "no job with id 77"),
        (vec!["logs", "77"], "no job with id 77"),
        (vec!["queue", "--state", "done"], "unknown state `done`"),
    ] {
        let o = cli(&url, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.starts_with("error: ") && e.contains(needle),
            "{args:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
    // No server at all: say where we looked and how to start one.
    let o = cli("http://127.0.0.1:1", &["queue"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("gpusched up"), "{}", stderr(&o));
}

#[test]
fn the_openapi_document_describes_every_endpoint() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let (code, body) = http(&url, "GET", "/api/openapi.json", None);
    assert_eq!(code, 200);
    let doc: Value = serde_json::from_str(&body).unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    for path in [
        "/api/jobs",
        "/api/jobs/batch",
        "/api/jobs/{id}",
        "/api/jobs/{id}/cancel",
        "/api/jobs/{id}/wait",
        "/api/jobs/{id}/logs",
        "/api/nodes",
        "/api/agent/register",
        "/api/agent/poll",
        "/api/agent/report",
    ] {
        assert!(
            doc["paths"][path].is_object(),
            "{path} missing from the OpenAPI document"
        );
    }
    for schema in ["JobSubmit", "SliceAsk", "SliceAt", "MigInfo", "SliceView"] {
        assert!(
            doc["components"]["schemas"][schema].is_object(),
            "schema {schema} missing"
        );
    }
    let submit = &doc["components"]["schemas"]["JobSubmit"]["properties"];
    for field in ["gpu_share", "gpu_mem", "mig"] {
        assert!(submit[field].is_object(), "JobSubmit.{field} missing");
    }
}
