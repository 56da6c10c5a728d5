//! Jobs in container images (`submit --image`) on a real agent with rootful podman and
//! an image built here (busybox-static's binary in an empty root; no registry is
//! reachable): the job sees its image's files and its working directory, runs as its
//! submitter, sees its GPU's device node and no other, inside its part's cgroup; its
//! exit status is the job's; cancel leaves no container; a missing image and one the
//! agent does not allow fail at once, saying why. Skipped (saying why) without podman
//! or busybox-static, or when not root; under CI that fails instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::*;

const IMAGE: &str = "gpusched-test/busybox:1";

/// Whether this test may run here: root, podman and busybox-static.
fn runnable(test: &str) -> Option<PathBuf> {
    let podman = gpusched_store::testing::require_program(test, "podman", "podman runc")?;
    let _busybox =
        gpusched_store::testing::require_program(test, "/bin/busybox", "busybox-static")?;
    let root = std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false);
    if !root {
        let why = format!("SKIPPED {test}: rootful podman needs root");
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("{why}");
        return None;
    }
    Some(podman)
}

/// The test image: /bin/busybox and its applets, nothing of the host's.
fn build_image(podman: &Path, dir: &Path) {
    let exists = Command::new(podman)
        .args(["image", "exists", IMAGE])
        .status()
        .unwrap();
    if exists.success() {
        return;
    }
    let root = dir.join("rootfs");
    for d in ["bin", "etc", "tmp", "proc", "sys", "dev"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::copy("/bin/busybox", root.join("bin/busybox")).unwrap();
    for applet in [
        "sh", "ls", "id", "cat", "sleep", "true", "test", "pwd", "echo",
    ] {
        std::os::unix::fs::symlink("busybox", root.join("bin").join(applet)).unwrap();
    }
    let tar = Command::new("tar")
        .arg("-C")
        .arg(&root)
        .args(["-c", "."])
        .output()
        .unwrap();
    assert!(tar.status.success());
    let mut import = Command::new(podman)
        .args(["import", "-", IMAGE])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    import.stdin.take().unwrap().write_all(&tar.stdout).unwrap();
    assert!(import.wait().unwrap().success(), "podman import failed");
}

/// The uid of a Unix user of this machine.
fn uid_of(user: &str) -> Option<String> {
    std::fs::read_to_string("/etc/passwd")
        .ok()?
        .lines()
        .find(|l| l.starts_with(&format!("{user}:")))
        .and_then(|l| l.split(':').nth(2))
        .map(str::to_string)
}

fn submit_as(url: &str, token: &str, args: &[&str]) -> u64 {
    let mut all = vec!["submit", "--json"];
    all.extend_from_slice(args);
    let o = cli_as(url, Some(token), &all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str::<Value>(&stdout(&o)).unwrap()["ids"][0]
        .as_u64()
        .unwrap()
}

fn containers(podman: &Path, prefix: &str) -> String {
    let o = Command::new(podman)
        .args(["ps", "--all", "--format", "{{.Names}}"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|n| n.starts_with(prefix))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How many processes run `sleep SECONDS`.
fn sleeping(seconds: u32) -> usize {
    let want = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| c == want.as_bytes())
                .unwrap_or(false)
        })
        .count()
}

#[test]
fn image_jobs_see_their_image_cwd_and_gpu_only_and_run_as_their_submitter() {
    let test = "image_jobs_see_their_image_cwd_and_gpu_only_and_run_as_their_submitter";
    let Some(podman) = runnable(test) else {
        return;
    };
    let Some(alice_uid) = uid_of("alice") else {
        let why = format!("SKIPPED {test}: no Unix user alice here");
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("{why}");
        return;
    };
    let (_d, dir) = scratch();
    build_image(&podman, &dir);
    // Device nodes standing for two GPUs (NVIDIA's major, no driver behind them).
    let devs = dir.join("dev");
    std::fs::create_dir_all(&devs).unwrap();
    for i in 0..2u64 {
        let path =
            std::ffi::CString::new(devs.join(format!("nvidia{i}")).to_str().unwrap()).unwrap();
        let rc = unsafe {
            libc::mknod(
                path.as_ptr(),
                libc::S_IFCHR | 0o666,
                libc::makedev(195, i as u32),
            )
        };
        assert_eq!(rc, 0, "mknod: {}", std::io::Error::last_os_error());
    }
    // The harness gives jobs 1 s of grace.
    let (_server, url) = server(&dir.join("data"), free_port(), &[]);
    let _agent = agent_with(
        &url,
        "img1",
        &dir.join("a"),
        Gpus::Fake(2),
        &[
            "--image-runtime",
            "podman",
            "--image-allow",
            "gpusched-test/",
            "--gpu-device-dir",
            devs.to_str().unwrap(),
        ],
    );
    let (code, body) = http(&url, "GET", "/api/nodes", None);
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"image_runtime\":\"podman "), "{body}");
    let sock = socket(&url);
    let alice = stdout(&cli_as(&sock, None, &["token", "create", "alice"]))
        .trim()
        .to_string();
    // Alice's working directory, hers alone.
    let work = dir.join("alice-work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("data.txt"), "hers\n").unwrap();
    let uid: u32 = alice_uid.parse().unwrap();
    nix::unistd::chown(&work, Some(uid.into()), None).unwrap();
    std::os::unix::fs::chown(work.join("data.txt"), Some(uid), None).unwrap();
    let cwd = work.to_str().unwrap();

    let script = "id -u; echo root: $(ls /); pwd; cat data.txt; \
                  echo devs: $(ls /dev | grep nvidia); \
                  test -w \"$GPUSCHED_CHECKPOINT_DIR\" && echo checkpoint ok; \
                  echo job $GPUSCHED_JOB_ID; grep memory /proc/self/cgroup";
    let id = submit_as(
        &url,
        &alice,
        &[
            "--image", IMAGE, "--gpus", "1", "--cwd", cwd, "--", "sh", "-c", script,
        ],
    );
    let v = wait_job(&url, id, SLOW);
    let out = stdout(&cli_as(&url, Some(&alice), &["logs", &id.to_string()]));
    let err = stdout(&cli_as(
        &url,
        Some(&alice),
        &["logs", "--stderr", &id.to_string()],
    ));
    assert_eq!(v["state"], "succeeded", "{v}\n{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], alice_uid, "runs as its submitter: {out}");
    // The image's root, not the host's (which has /usr, /home, /var ...).
    assert!(lines[1].contains("bin"), "{out}");
    for host_only in ["usr", "home", "var", "root", "opt", "work"] {
        assert!(
            !lines[1].split_whitespace().any(|e| e == host_only),
            "/{host_only} of the host is not in the container: {out}"
        );
    }
    assert_eq!(lines[2], cwd, "{out}");
    assert_eq!(lines[3], "hers", "{out}");
    let gpu = v["gpu_indices"][0].as_u64().unwrap();
    assert_eq!(
        lines[4],
        format!("devs: nvidia{gpu}"),
        "its GPU's device node and no other: {out}"
    );
    assert_eq!(lines[5], "checkpoint ok", "{out}");
    assert_eq!(lines[6], format!("job {id}"), "{out}");
    // Inside its part's cgroup, where the agent has one.
    let contained = body.contains("\"memory\"");
    if contained {
        assert!(
            lines[7].contains(&format!("/job-{id}.1/")),
            "the container's cgroup is inside the job's: {out}"
        );
    }

    // Its exit status is the job's.
    let id = submit_as(
        &url,
        &alice,
        &[
            "--image", IMAGE, "--gpus", "0", "--cwd", cwd, "--", "sh", "-c", "exit 3",
        ],
    );
    let v = wait_job(&url, id, SLOW);
    assert_eq!(
        (v["state"].as_str(), v["exit_code"].as_i64()),
        (Some("failed"), Some(3)),
        "{v}"
    );

    // Cancel stops it and leaves no container.
    let id = submit_as(
        &url,
        &alice,
        &[
            "--image", IMAGE, "--gpus", "1", "--cwd", cwd, "--", "sleep", "1000",
        ],
    );
    wait_until(SLOW, || {
        job(&url, id)["state"] == "running"
            && !containers(&podman, &format!("gpusched-img1-{id}-")).is_empty()
    });
    let asked = std::time::Instant::now();
    assert!(cli(&url, &["cancel", &id.to_string()]).status.success());
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "cancelled", "{v}");
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(20),
        "SIGTERM reached the job through the runtime: {:?}",
        asked.elapsed()
    );
    assert_eq!(containers(&podman, &format!("gpusched-img1-{id}-")), "");

    // One that ignores SIGTERM is killed after the grace, its container too: the
    // runtime's client dies with the job's process group, the agent removes the rest.
    let id = submit_as(
        &url,
        &alice,
        &[
            "--image",
            IMAGE,
            "--gpus",
            "0",
            "--cwd",
            cwd,
            "--",
            "sh",
            "-c",
            "trap '' TERM; sleep 7777; sleep 7777",
        ],
    );
    wait_until(SLOW, || sleeping(7777) > 0);
    assert!(cli(&url, &["cancel", &id.to_string()]).status.success());
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "cancelled", "{v}");
    assert_eq!(containers(&podman, &format!("gpusched-img1-{id}-")), "");
    assert_eq!(
        sleeping(7777),
        0,
        "nothing of the container outlives the job"
    );

    // A missing image fails at once with the runtime's words.
    let id = submit_as(
        &url,
        &alice,
        &[
            "--image",
            "gpusched-test/nosuch:1",
            "--gpus",
            "0",
            "--cwd",
            cwd,
            "--",
            "true",
        ],
    );
    let v = wait_job(&url, id, SLOW);
    let reason = v["reason"].as_str().unwrap_or_default();
    assert_eq!(v["state"], "failed", "{v}");
    assert!(
        reason.contains("not on this node") && reason.contains("image not known"),
        "{v}"
    );
    // One the agent does not allow is refused before anything runs.
    let id = submit_as(
        &url,
        &alice,
        &[
            "--image",
            "docker.io/library/alpine:3",
            "--gpus",
            "0",
            "--cwd",
            cwd,
            "--",
            "true",
        ],
    );
    let v = wait_job(&url, id, SLOW);
    let reason = v["reason"].as_str().unwrap_or_default();
    assert_eq!(v["state"], "failed", "{v}");
    assert!(
        reason.contains("not allowed on this node") && reason.contains("gpusched-test/"),
        "{v}"
    );
}
