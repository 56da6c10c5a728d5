//! A real full disk under the server (a tmpfs; scripts/full_disk.py does the longer
//! drill, the agent's disk included): the server refuses with 503 and says what to do,
//! keeps what it accepted, and takes work again once space is freed, without a restart.
//! Mounting needs root (CI runs as root); elsewhere the test says it skipped.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

/// Unmounts on drop, so a failing test leaves no mount behind.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn mount_tmpfs(path: &Path, size: &str) -> Option<Mount> {
    std::fs::create_dir_all(path).ok()?;
    let o = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(path)
        .output()
        .ok()?;
    if o.status.success() {
        Some(Mount(path.to_path_buf()))
    } else {
        eprintln!(
            "SKIPPED: cannot mount a tmpfs here ({}); run as root to test a full disk",
            String::from_utf8_lossy(&o.stderr).trim()
        );
        None
    }
}

#[test]
fn a_full_disk_answers_503_keeps_what_was_accepted_and_recovers_when_freed() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let Some(_mount) = mount_tmpfs(&data, "8m") else {
        return;
    };
    // A long heartbeat: the agent's lease must outlast the outage by the design (polls
    // write nothing), not by luck.
    let (_server, url) = server(&data, 0, &["--heartbeat-timeout", "10s"]);
    let _agent = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    // A token for the raw requests below (made while the disk has room).
    let o = cli(&url, &["token", "create", "root", "--admin"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let token = stdout(&o).trim().to_string();
    let before: Vec<u64> = (0..3)
        .map(|_| submit(&url, &["--", "sleep", "1"]))
        .collect();

    // Fill the disk.
    {
        use std::io::Write;
        let mut f = std::fs::File::create(data.join("filler")).unwrap();
        let block = vec![0u8; 1 << 16];
        while f.write_all(&block).and_then(|_| f.flush()).is_ok() {}
    }
    // Raw requests first: the first refusal and a read right after it, before the lone
    // server's lease (which it cannot renew on a full disk) runs out.
    let body =
        serde_json::json!({ "command": ["true"], "env": { "PAD": "x".repeat(3000) } }).to_string();
    let mut refusal = None;
    for _ in 0..500 {
        let (code, head, text) = http_full(&url, Some(&token), "POST", "/api/jobs", Some(&body));
        if code != 201 {
            refusal = Some((code, head, text));
            break;
        }
    }
    let (code, head, text) = refusal.expect("a submission is refused on a full disk");
    assert_eq!(code, 503, "{text}");
    assert!(text.contains("free space"), "{text}");
    // Nothing was done, and the answer says when to try again.
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 1"),
        "{head}"
    );
    // Reads are answered meanwhile, and the jobs accepted before go on (their ends are
    // refused and resent); held past the agent's 5 s lease.
    let (code, _) = http(&url, "GET", "/api/jobs?limit=10", None);
    assert_eq!(code, 200);
    // The CLI sends a 503 again after its Retry-After, saying why, then gives up with
    // the server's advice.
    let pad = format!("PAD={}", "x".repeat(3000));
    let o = cli(&url, &["submit", "--json", "-e", &pad, "--", "true"]);
    assert!(!o.status.success(), "{}", stdout(&o));
    let said = stderr(&o);
    assert!(
        said.contains("the server is busy (HTTP 503)")
            && said.contains("free space")
            && said.contains("trying again in 1 s"),
        "{said}"
    );
    std::thread::sleep(Duration::from_secs(6));

    std::fs::remove_file(data.join("filler")).unwrap();
    let mut after = None;
    wait_until(SLOW, || {
        let o = cli(&url, &["submit", "--json", "--", "true"]);
        if o.status.success() {
            let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
            after = v["ids"][0].as_u64();
        }
        after.is_some()
    });
    for id in before.iter().chain(after.iter()) {
        let v = wait_job(&url, *id, SLOW);
        assert_eq!(
            (v["state"].as_str(), v["attempt"].as_u64()),
            (Some("succeeded"), Some(1)),
            "{v}"
        );
    }
}
