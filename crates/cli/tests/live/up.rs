//! The README's main-job command: `gpusched up`, then submit and read the output.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::*;

#[test]
fn up_runs_a_one_box_cluster_that_runs_jobs() {
    let (_d, dir) = scratch();
    let mut child = Command::new(BIN)
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .args([
            "--gpus",
            "2",
            "--gpu-model",
            "A100-SXM4-80GB",
            "--name",
            "box",
            "--allow-root-jobs",
        ])
        .env("GPUSCHED_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(out).read_line(&mut first).unwrap();
    // Only the first line is read: the rest of the banner meets a closed pipe, which
    // must not stop the server.
    let _up = Proc { child };
    assert!(
        first.starts_with("gpusched is up: server http://"),
        "{first}"
    );
    let url = first["gpusched is up: server ".len()..]
        .split(',')
        .next()
        .unwrap()
        .to_string();
    assert!(first.contains("2 GPUs (declared)"), "{first}");
    register(&url, &dir.join("data"));
    wait_until(Duration::from_secs(20), || {
        node_state(&url, "box").as_deref() == Some("online")
    });
    let id = submit(&url, &["--", "echo", "hello from gpusched"]);
    assert_eq!(
        wait_job(&url, id, Duration::from_secs(20))["state"],
        "succeeded"
    );
    assert_eq!(
        stdout(&cli(&url, &["logs", &id.to_string()])),
        "hello from gpusched\n"
    );
    let nodes = stdout(&cli(&url, &["nodes"]));
    assert!(nodes.contains("declared"), "{nodes}");
}
