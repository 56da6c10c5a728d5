//! `gpusched history --format gpusched` with a real server and agent: jobs run to their
//! end, an admin exports every user's, a user their own (and another's without their
//! commands), and the export replays in `gpusched simulate`.

use serde_json::Value;

use crate::support::*;

/// The data rows of a CSV export (the header checked and dropped).
fn rows(csv: &str) -> Vec<&str> {
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("id,submit,gpus,duration,user,queue,priority,gpu_model,name,command,walltime"),
        "{csv}"
    );
    lines.collect()
}

#[test]
fn an_exported_history_holds_whose_jobs_it_may_and_replays_in_the_simulator() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "gpu-x", &dir.join("agent"), Gpus::Fake(2));
    // `nobody` exists on every host, so the job can run as its submitter.
    let o = cli(&url, &["token", "create", "nobody"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bob = stdout(&o).trim().to_string();

    let mut ids = vec![
        submit(&url, &["--gpus", "1", "--name", "prep", "--", "true"]),
        submit(
            &url,
            &[
                "--gpus",
                "2",
                "--name",
                "train",
                "--",
                "sh",
                "-c",
                "sleep 0.2",
            ],
        ),
    ];
    let o = cli_as(
        &url,
        Some(&bob),
        &[
            "submit",
            "--json",
            "--gpus",
            "1",
            "--name",
            "bobs",
            "--walltime",
            "10m",
            "--",
            "echo",
            "secret=1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("submit --json prints JSON");
    let bobs = v["ids"][0].as_u64().expect("an id");
    ids.push(bobs);
    for &id in &ids {
        let v = wait_job(&url, id, SLOW);
        assert_eq!(v["state"], "succeeded", "{v}");
    }
    let admin_user = job(&url, ids[0])["user"]
        .as_str()
        .expect("user")
        .to_string();

    // The admin: every user's jobs, oldest first, with their features.
    let o = cli(&url, &["history", "--format", "gpusched"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let all = stdout(&o);
    let lines = rows(&all);
    assert_eq!(lines.len(), 3, "{all}");
    let first: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(first[0], ids[0].to_string(), "{all}");
    assert_eq!(
        (first[2], first[4], first[8]),
        ("1", admin_user.as_str(), "prep"),
        "{all}"
    );
    assert!(lines[1].contains(",train,sh -c 'sleep 0.2',"), "{all}");
    let bob_line = lines[2];
    assert!(
        bob_line.starts_with(&format!("{bobs},"))
            && bob_line.contains(",nobody,default,0,,bobs,echo secret=1,600"),
        "{all}"
    );
    assert!(
        stderr(&o).contains("exported 3 ended jobs"),
        "{}",
        stderr(&o)
    );

    // Bob: his own by default; another user's as the job list shows them, without
    // their commands (the one rule of docs/live-cluster.md, "Other users' commands").
    let o = cli_as(&url, Some(&bob), &["history"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mine = stdout(&o);
    assert_eq!(rows(&mine), [bob_line], "{mine}");
    let o = cli_as(&url, Some(&bob), &["history", "--user", &admin_user]);
    assert!(o.status.success(), "{}", stderr(&o));
    let theirs = stdout(&o);
    let theirs = rows(&theirs);
    assert_eq!(theirs.len(), 2, "{theirs:?}");
    assert!(
        theirs[0].starts_with(&format!("{},", ids[0])) && theirs[0].contains(",prep,,"),
        "{theirs:?}"
    );
    assert!(theirs[1].contains(",train,,"), "{theirs:?}");
    let path = format!("/api/history/jobs?user={admin_user}");
    let (code, body) = http_with(&url, Some(&bob), "GET", &path, None);
    assert_eq!(code, 200, "{body}");
    let page: Value = serde_json::from_str(&body).unwrap();
    let jobs = page["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "{body}");
    for j in jobs {
        assert_eq!(j["user"], admin_user.as_str(), "{j}");
        assert_eq!(j["command"], serde_json::json!([]), "{j}");
    }
    // The same rule as the job list: there too the command is left out.
    let listed = format!("/api/jobs?user={admin_user}&state=succeeded");
    let (code, body) = http_with(&url, Some(&bob), "GET", &listed, None);
    assert_eq!(code, 200, "{body}");
    assert!(
        !body.contains("sleep 0.2") && body.contains("\"command\":[]"),
        "{body}"
    );
    let (code, body) = http_with(&url, Some(&bob), "GET", "/api/history/jobs?limit=0", None);
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("between 1 and 10000"), "{body}");

    // Paging: one job a page still gives all three, newest first.
    let mut seen = Vec::new();
    let mut before = String::new();
    loop {
        let (code, body) = http(
            &url,
            "GET",
            &format!("/api/history/jobs?limit=1{before}"),
            None,
        );
        assert_eq!(code, 200, "{body}");
        let page: Value = serde_json::from_str(&body).expect("a page");
        for j in page["jobs"].as_array().expect("jobs") {
            seen.push(j["id"].as_u64().expect("id"));
        }
        match page["next_before"].as_u64() {
            Some(b) => before = format!("&before={b}"),
            None => break,
        }
        assert!(seen.len() <= 3, "{seen:?}");
    }
    assert_eq!(seen, [ids[2], ids[1], ids[0]]);

    // The export replays: the simulator reads it and learns from its features.
    let trace = dir.join("trace.csv");
    std::fs::write(&trace, &all).expect("write the trace");
    let o = cli(
        &url,
        &[
            "simulate",
            "--trace",
            trace.to_str().expect("utf-8 path"),
            "--cluster",
            "1x2",
            "--policy",
            "fifo,blend",
            "--estimates",
            "predicted",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report: Value = serde_json::from_str(&stdout(&o)).expect("simulate --json prints JSON");
    let runs: Vec<(&str, u64)> = report["policies"]
        .as_array()
        .expect("policies")
        .iter()
        .map(|p| {
            (
                p["policy"].as_str().unwrap_or("?"),
                p["jobs"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(runs, [("fifo", 3), ("blend", 3)], "{report}");
    assert_eq!(report["policies"][0]["estimates"], "predicted", "{report}");
}
