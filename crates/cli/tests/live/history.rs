//! Job timelines and the audit log with a real server and agent: a job run to its end
//! lists submitted, placed, started and ended in order in `show --events`; an admin's
//! drain, resume and token creation appear in `gpusched audit`, which a user is refused;
//! both survive a server killed and started again on the same data directory.

use serde_json::Value;

use crate::support::*;

/// The event kinds of `show ID --events --json`.
fn kinds(url: &str, id: u64) -> Vec<String> {
    let o = cli(url, &["show", &id.to_string(), "--events", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("show --json prints JSON");
    assert_eq!(v["job"]["id"], id, "{v}");
    assert_eq!(v["events"]["job"], id, "{v}");
    v["events"]["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["kind"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The audit log's actions and targets, newest first, as an admin reads it.
fn audit(url: &str) -> Vec<(String, String)> {
    let o = cli(url, &["audit", "--json", "--since", "1d"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("audit --json prints JSON");
    v["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("?").to_string();
            (s("action"), s("target"))
        })
        .collect()
}

#[test]
fn a_jobs_timeline_and_the_audit_log_are_recorded_and_survive_a_restart() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let (mut server1, url) = server(&data, 0, &[]);
    let _agent = agent(&url, "gpu-h", &dir.join("agent"), Gpus::Fake(1));
    let id = submit(&url, &["--", "echo", "hello"]);
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    // The end is committed before `wait` answers, so its event is there already.
    assert_eq!(kinds(&url, id), ["submitted", "placed", "started", "ended"]);
    let text = stdout(&cli(&url, &["show", &id.to_string(), "--events"]));
    // The job's own lines come first (its `submitted:` and `started:` times too).
    let events = text
        .find("events:")
        .map(|i| &text[i..])
        .unwrap_or_else(|| panic!("no events section in:\n{text}"));
    let at = |word: &str| {
        events
            .find(&format!(" {word} "))
            .unwrap_or_else(|| panic!("{word} missing from:\n{text}"))
    };
    assert!(
        at("submitted") < at("placed")
            && at("placed") < at("started")
            && at("started") < at("ended"),
        "{text}"
    );
    assert!(text.contains("gpu-h: GPU 0"), "{text}");
    assert!(text.contains("succeeded: exited with code 0"), "{text}");

    // Admin actions over the socket; then a user's token.
    for args in [
        &["drain", "gpu-h", "--reason", "history test"][..],
        &["resume", "gpu-h"][..],
    ] {
        let o = cli(&url, args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    let o = cli(&url, &["token", "create", "bob"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bob = stdout(&o).trim().to_string();
    let entries = audit(&url);
    let want = [
        ("token_create", "bob"),
        ("resume", "gpu-h"),
        ("drain", "gpu-h"),
    ];
    let newest: Vec<(&str, &str)> = entries
        .iter()
        .take(3)
        .map(|(a, t)| (a.as_str(), t.as_str()))
        .collect();
    assert_eq!(newest, want, "{entries:?}");
    let table = stdout(&cli(&url, &["audit"]));
    assert!(
        table.contains("history test (its jobs finish)") && table.contains("token_create"),
        "{table}"
    );

    // A user: no audit log, and not another user's timeline.
    let o = cli_as(&url, Some(&bob), &["audit"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("only an admin may read the audit log"),
        "{}",
        stderr(&o)
    );
    let (code, body) = http_with(&url, Some(&bob), "GET", "/api/audit", None);
    assert_eq!(code, 403, "{body}");
    let o = cli_as(&url, Some(&bob), &["show", &id.to_string(), "--events"]);
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(stderr(&o).contains("timeline"), "{}", stderr(&o));

    // Killed (not stopped): what was acknowledged is on disk.
    server1.kill();
    let (_server2, url2) = server(&data, 0, &[]);
    assert_eq!(
        kinds(&url2, id),
        ["submitted", "placed", "started", "ended"]
    );
    let after = audit(&url2);
    for w in want {
        assert!(
            after.iter().any(|(a, t)| (a.as_str(), t.as_str()) == w),
            "{w:?} lost in the restart: {after:?}"
        );
    }
}
