//! `gpusched top --once` against a real cluster: a running job shows in the GPU panel
//! (its GPU, held by its id and user) and in the job panel (its node and GPU), and a
//! server that is down makes `--once` fail with a message, not a frame.

use crate::support::*;

#[test]
fn top_once_shows_a_running_job_on_its_node_and_gpu() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent_with(
        &url,
        "top-node",
        &dir.join("agent"),
        Gpus::Fake(2),
        &["--telemetry-interval", "300ms"],
    );
    let id = submit(&url, &["--gpus", "1", "--", "sleep", "60"]);
    wait_until(SLOW, || job(&url, id)["state"] == "running");
    let view = job(&url, id);
    let user = view["user"].as_str().unwrap().to_string();
    let gpu = view["gpu_indices"][0].as_u64().unwrap();

    // The GPU row: `top-node  <gpu>  <model>  job <id> <user>`; wait for it, as the
    // node list may lag the job's state by a report.
    let holder = format!("job {id} {user}");
    let mut frame = String::new();
    wait_until(SLOW, || {
        let o = cli(&url, &["top", "--once", "--width", "160"]);
        assert!(o.status.success(), "top --once: {}", stderr(&o));
        frame = stdout(&o);
        frame.contains(&holder)
    });
    assert!(!frame.contains('\u{1b}'), "escape codes in {frame}");
    let row = frame
        .lines()
        .find(|l| l.contains(&holder))
        .unwrap()
        .trim_matches(|c: char| c.is_whitespace() || c == '│');
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[0], "top-node", "{frame}");
    assert_eq!(cells[1], gpu.to_string(), "{frame}");
    let job_row = frame
        .lines()
        .find(|l| l.contains(&format!("top-node:{gpu}")))
        .unwrap_or_else(|| panic!("no job row on top-node:{gpu} in {frame}"));
    let cells: Vec<&str> = job_row
        .trim_matches(|c: char| c.is_whitespace() || c == '│')
        .split_whitespace()
        .collect();
    assert_eq!(
        cells[..2],
        [id.to_string().as_str(), user.as_str()],
        "{frame}"
    );
    assert!(cells.contains(&"running"), "{frame}");
    assert!(
        frame.contains("nodes 1 up, 0 drained, 0 offline"),
        "{frame}"
    );
    assert!(frame.contains("GPUs 1 busy, 1 free"), "{frame}");
    assert!(frame.contains("jobs 1 running, 0 pending"), "{frame}");

    // A fixed size is honoured exactly.
    let o = cli(&url, &["top", "--once", "--width", "80", "--height", "12"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let small = stdout(&o);
    assert_eq!(small.lines().count(), 12, "{small}");
    assert!(small.lines().all(|l| l.chars().count() <= 80), "{small}");

    // Without a terminal, the live view refuses and says what to use instead.
    let o = cli(&url, &["top"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("gpusched top --once"), "{}", stderr(&o));

    let o = cli(&url, &["cancel", &id.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn top_once_against_no_server_says_how_to_reach_one() {
    let port = free_port();
    let o = cli_as(
        &format!("http://127.0.0.1:{port}"),
        None,
        &["top", "--once"],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("cannot reach the gpusched server"), "{err}");
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
}
