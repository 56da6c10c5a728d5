//! What the agent keeps of ended jobs: checkpoint directories go once the end is
//! acknowledged (kept only while the job may run again), and logs go after
//! `--log-retention`, after which `logs` says they were removed (issue 14 item 3).

use std::time::Duration;

use crate::support::*;

#[test]
fn ended_jobs_leave_no_checkpoint_directory_and_their_logs_expire() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let state = dir.join("a");
    let _a = agent_with(
        &url,
        "n1",
        &state,
        Gpus::Declared(1),
        &["--log-retention", "2s"],
    );
    let ckpts = state.join("jobs").join("checkpoints");
    // One job writes a checkpoint and prints; one does neither.
    let script = "echo saved > $GPUSCHED_CHECKPOINT_DIR/model; echo hello";
    let printed = submit(&url, &["--cwd", "/tmp", "--", "sh", "-c", script]);
    let quiet = submit(&url, &["--cwd", "/tmp", "--", "true"]);
    for id in [printed, quiet] {
        let v = wait_job(&url, id, Duration::from_secs(60));
        assert_eq!(v["state"], "succeeded", "{v}");
    }
    // Both ended for good: their directories go once the server has the ends.
    wait_until(Duration::from_secs(30), || {
        [printed, quiet]
            .iter()
            .all(|id| !ckpts.join(id.to_string()).exists())
    });
    // The quiet job's empty directory is kept for the next job (`spare_dirs.rs`), unless
    // new directories here are not bare (extended attributes on every inode): the next
    // job's is that one, empty and its own; it writes into it, so it is not kept after.
    let kept: Vec<u64> = std::fs::read_dir(&ckpts)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".spare-"))
        .map(|e| std::os::unix::fs::MetadataExt::ino(&e.metadata().unwrap()))
        .collect();
    let seen = dir.join("next-ino");
    let check = format!(
        r#"d="$GPUSCHED_CHECKPOINT_DIR"; [ -z "$(ls -A "$d")" ] && [ -O "$d" ] && stat -c %i "$d" > {} && touch "$d/x""#,
        seen.display()
    );
    let next = submit(&url, &["--cwd", "/tmp", "--", "sh", "-c", &check]);
    let v = wait_job(&url, next, Duration::from_secs(60));
    assert_eq!(v["state"], "succeeded", "{v}");
    let ino: u64 = std::fs::read_to_string(&seen)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(kept.len() <= 1, "{kept:?}");
    if let Some(&k) = kept.first() {
        assert_eq!(ino, k, "the next job got the kept directory");
    }
    wait_until(Duration::from_secs(30), || {
        !ckpts.join(next.to_string()).exists()
    });
    // Nothing but kept empty directories is left.
    for e in std::fs::read_dir(&ckpts).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            name.starts_with(".spare-"),
            "{name} left in {}",
            ckpts.display()
        );
        assert_eq!(std::fs::read_dir(e.path()).unwrap().count(), 0, "{name}");
    }
    // The output is there, then retention removes it and `logs` says so.
    let ids = printed.to_string();
    let mut said = String::new();
    wait_until(Duration::from_secs(60), || {
        let o = cli(&url, &["logs", &ids]);
        if o.status.success() {
            assert!(
                stdout(&o) == "hello\n" || stdout(&o).is_empty(),
                "{}",
                stdout(&o)
            );
            return false;
        }
        said = stderr(&o);
        true
    });
    assert!(said.contains("log retention"), "{said}");
    // A job that printed nothing still reads as empty.
    let o = cli(&url, &["logs", &quiet.to_string()]);
    assert!(
        o.status.success() && stdout(&o).is_empty(),
        "{}",
        stderr(&o)
    );
}
