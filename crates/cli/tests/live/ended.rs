//! Ended jobs live in the store only (issue 14 item 3): with a real server and agent,
//! jobs run to their end still answer `show`, the list's pages, `wait`, `usage`, `logs`
//! and `cancel` (from the store, since the server dropped them from memory), also after
//! a restart that loads only live jobs; `gpusched admin purge` deletes them (404 naming
//! the id after), records itself in the audit log, and never frees an id for reuse.

use std::time::Duration;

use serde_json::Value;

use crate::support::*;

fn list(url: &str, query: &str) -> Value {
    let (code, body) = http(url, "GET", &format!("/api/jobs?{query}"), None);
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).expect("list JSON")
}

fn ids(page: &Value) -> Vec<u64> {
    page["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| j["id"].as_u64().expect("id"))
        .collect()
}

/// Succeeded and cancelled jobs over all time, summed over `gpusched usage`'s rows.
fn outcomes(url: &str) -> (u64, u64) {
    let o = cli(url, &["usage", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let u: Value = serde_json::from_str(&stdout(&o)).expect("usage JSON");
    let rows = u["rows"].as_array().expect("rows");
    let sum = |k: &str| rows.iter().map(|r| r[k].as_u64().unwrap_or(0)).sum();
    (sum("succeeded"), sum("cancelled"))
}

#[test]
fn ended_jobs_answer_from_the_store_until_purged() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let (mut server1, url) = server(&data, 0, &[]);
    let _agent = agent(&url, "gpu-e", &dir.join("agent"), Gpus::Fake(1));
    let mut done = Vec::new();
    for n in 1..=3 {
        let id = submit(&url, &["--", "echo", &format!("hello-{n}")]);
        let v = wait_job(&url, id, SLOW);
        assert_eq!(v["state"], "succeeded", "{v}");
        done.push(id);
    }
    // Live jobs too (one holds the only GPU, one waits behind it), so lists merge
    // memory and store.
    let long = submit(&url, &["--", "sleep", "60"]);
    let pending = submit(&url, &["--", "true"]);

    // show, wait, cancel, logs: each answered from the store's row.
    for &id in &done {
        let v = job(&url, id);
        assert_eq!(v["state"], "succeeded", "{v}");
        assert_eq!(v["node"], "gpu-e", "{v}");
        let v = wait_job(&url, id, Duration::from_secs(10));
        assert_eq!(v["id"], id, "{v}");
    }
    let (code, body) = http(&url, "POST", &format!("/api/jobs/{}/cancel", done[0]), None);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("already_ended"), "{body}");
    let o = cli(&url, &["logs", &done[1].to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("hello-2"), "{}", stdout(&o));

    // The list: newest first, pages of 2 through live and ended jobs alike.
    let all = ids(&list(&url, "state=all"));
    assert_eq!(all, [pending, long, done[2], done[1], done[0]]);
    let first = list(&url, "state=all&limit=2");
    assert_eq!(ids(&first), [pending, long]);
    let before = first["next_before"].as_u64().expect("a next page");
    let second = list(&url, &format!("state=all&limit=2&before={before}"));
    assert_eq!(ids(&second), [done[2], done[1]]);
    let before = second["next_before"].as_u64().expect("a last page");
    let third = list(&url, &format!("state=all&limit=2&before={before}"));
    assert_eq!(ids(&third), [done[0]]);
    assert!(third["next_before"].is_null(), "{third}");
    assert_eq!(
        ids(&list(&url, "state=succeeded")),
        [done[2], done[1], done[0]]
    );
    assert_eq!(ids(&list(&url, "state=pending")), [pending]);

    // Usage over all time counts the ended jobs: the first report reads the store's
    // aggregate, later ones the sums the server keeps as jobs leave memory.
    assert_eq!(outcomes(&url), (3, 0));

    // A restart loads only the live jobs; the ended ones still answer.
    let (code, body) = http(&url, "POST", &format!("/api/jobs/{long}/cancel"), None);
    assert_eq!(code, 200, "{body}");
    wait_job(&url, long, SLOW);
    wait_job(&url, pending, SLOW);
    // Both ended after the sums were read: counted from memory, then as they left it.
    assert_eq!(outcomes(&url), (4, 1));
    server1.kill();
    let (_server2, url) = server(&data, 0, &[]);
    assert_eq!(job(&url, done[0])["state"], "succeeded");
    assert_eq!(ids(&list(&url, "state=all")).len(), 5);
    assert_eq!(outcomes(&url), (4, 1));

    // Purge: a time in the future is refused; then everything that ended goes.
    let o = cli(&url, &["admin", "purge", "--before", "2999-01-01"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("in the future"), "{}", stderr(&o));
    std::thread::sleep(Duration::from_millis(1100));
    let o = cli(&url, &["admin", "purge", "--before", "1s"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("purged 5 jobs"), "{}", stdout(&o));
    let (code, body) = http(&url, "GET", &format!("/api/jobs/{}", done[0]), None);
    assert_eq!(code, 404, "{body}");
    assert!(
        body.contains(&format!("no job with id {}", done[0])),
        "{body}"
    );
    assert!(ids(&list(&url, "state=all")).is_empty());
    // The purged jobs are out of usage too.
    assert_eq!(outcomes(&url), (0, 0));
    let o = cli(&url, &["audit", "--json"]);
    assert!(stdout(&o).contains("\"purge\""), "{}", stdout(&o));
    // Ids are never reused, even once the newest job was purged.
    let next = submit(&url, &["--", "true"]);
    assert!(next > pending, "id {next} reused (last was {pending})");
}
