//! Resources besides GPUs, end to end: a CPU-only job sees no GPU, memory held by one
//! job keeps the next off the node (and its reason says so), and a generic resource an
//! agent declares runs one job per count while an undeclared one is refused.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

/// A job that writes `KEY=value` lines into `out`, then waits for the file `gate`.
fn held(out: &Path, gate: &Path, lines: &str) -> String {
    format!(
        "{lines} > {out}.tmp && mv {out}.tmp {out}; while [ ! -e {gate} ]; do sleep 0.05; done",
        out = out.display(),
        gate = gate.display()
    )
}

fn node(url: &str, name: &str) -> Value {
    let (_, body) = http(url, "GET", "/api/nodes", None);
    let v: Value = serde_json::from_str(&body).unwrap();
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn cpu_only_jobs_see_no_gpu_and_memory_taken_makes_the_next_job_wait() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent_with(
        &url,
        "n1",
        &dir.join("a"),
        Gpus::Declared(1),
        &["--cpus", "4", "--mem", "8G"],
    );
    // 0 GPUs: CUDA_VISIBLE_DEVICES is set, and empty.
    let cpu = submit(
        &url,
        &[
            "--gpus",
            "0",
            "--cpus",
            "2",
            "--",
            "sh",
            "-c",
            "echo CVD=[$CUDA_VISIBLE_DEVICES] SET=${CUDA_VISIBLE_DEVICES+yes}",
        ],
    );
    let v = wait_job(&url, cpu, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["gpus"], 0);
    assert_eq!(v["gpu_indices"], serde_json::json!([]));
    let out = stdout(&cli(&url, &["logs", &cpu.to_string()]));
    assert!(out.contains("CVD=[] SET=yes"), "{out}");

    // Two jobs that each need 6 of the node's 8 GiB: one after the other.
    let gate = dir.join("gate");
    let (a_out, b_out) = (dir.join("a.out"), dir.join("b.out"));
    let a = submit(
        &url,
        &[
            "--gpus",
            "0",
            "--mem",
            "6G",
            "--",
            "sh",
            "-c",
            &held(&a_out, &gate, "echo A"),
        ],
    );
    let b = submit(
        &url,
        &[
            "--gpus",
            "0",
            "--mem",
            "6G",
            "--",
            "sh",
            "-c",
            &held(&b_out, &gate, "echo B"),
        ],
    );
    wait_for_text(&a_out, SLOW, |t| t.contains('A'));
    let mut reason = String::new();
    wait_until(SLOW, || {
        reason = job(&url, b)["reason"].as_str().unwrap_or("").to_string();
        reason.contains("memory")
    });
    assert!(
        reason.starts_with("waiting for memory on n1 (asks 6144 MiB of memory, 2048 MiB free)"),
        "{reason}"
    );
    assert_eq!(job(&url, b)["state"], "pending");
    assert!(!b_out.exists(), "job {b} ran beside job {a}");
    let n = node(&url, "n1");
    assert_eq!(
        (n["free_mem_mib"].as_u64(), n["mem_mib"].as_u64()),
        (Some(2048), Some(8192))
    );
    assert_eq!(n["free_cpu_milli"], 4000, "job {a} asked no CPUs");
    let table = stdout(&cli(&url, &["nodes"]));
    assert!(table.contains("4/4 cpu, 2048/8192 MiB"), "{table}");

    std::fs::write(&gate, "").unwrap();
    let (va, vb) = (wait_job(&url, a, SLOW), wait_job(&url, b, SLOW));
    assert_eq!(
        (&va["state"], &vb["state"]),
        (&"succeeded".into(), &"succeeded".into())
    );
    assert!(
        vb["start_ms"].as_u64() >= va["end_ms"].as_u64(),
        "{va} {vb}"
    );
}

#[test]
fn a_declared_resource_runs_one_job_per_count_and_an_undeclared_one_is_refused() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent_with(
        &url,
        "fpga-node",
        &dir.join("a"),
        Gpus::Declared(2),
        &["--resource", "fpga=1"],
    );
    assert_eq!(
        node(&url, "fpga-node")["resources"],
        serde_json::json!({"fpga": 1})
    );

    let gate = dir.join("gate");
    let (a_out, b_out) = (dir.join("a.out"), dir.join("b.out"));
    let env = "echo R=$GPUSCHED_RESOURCE_FPGA";
    let a = submit(
        &url,
        &[
            "--resource",
            "fpga=1",
            "--",
            "sh",
            "-c",
            &held(&a_out, &gate, env),
        ],
    );
    let b = submit(
        &url,
        &[
            "--resource",
            "fpga=1",
            "--",
            "sh",
            "-c",
            &held(&b_out, &gate, env),
        ],
    );
    assert_eq!(
        wait_for_text(&a_out, SLOW, |t| t.contains("R=")).trim(),
        "R=1"
    );
    // A GPU is free, the FPGA is not: job b waits and says why.
    let mut reason = String::new();
    wait_until(SLOW, || {
        reason = job(&url, b)["reason"].as_str().unwrap_or("").to_string();
        reason.contains("fpga")
    });
    assert!(
        reason.starts_with("waiting for `fpga` on fpga-node (asks fpga=1, 0 free)"),
        "{reason}"
    );
    assert!(!b_out.exists(), "two jobs held the one FPGA");
    let table = stdout(&cli(&url, &["nodes"]));
    assert!(table.contains("fpga 0/1"), "{table}");
    std::fs::write(&gate, "").unwrap();
    assert_eq!(
        wait_for_text(&b_out, SLOW, |t| t.contains("R=")).trim(),
        "R=1"
    );
    assert_eq!(wait_job(&url, b, SLOW)["state"], "succeeded");
    assert_eq!(wait_job(&url, a, SLOW)["state"], "succeeded");

    // A resource no node declares: 409 with what to do; the CLI says the same.
    let (code, body) = http(
        &url,
        "POST",
        "/api/jobs",
        Some(r#"{"command":["true"],"resources":{"tpu":1}}"#),
    );
    assert_eq!(code, 409, "{body}");
    assert!(
        body.contains("no node declares resource `tpu`") && body.contains("are: fpga"),
        "{body}"
    );
    let o = cli(&url, &["submit", "--resource", "tpu=1", "--", "true"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no node declares resource `tpu`"),
        "{}",
        stderr(&o)
    );
    // Malformed asks never reach the server's scheduler.
    let o = cli(&url, &["submit", "--resource", "fpga", "--", "true"]);
    assert!(
        stderr(&o).contains("--resource") && stderr(&o).contains("NAME=COUNT"),
        "{}",
        stderr(&o)
    );
    let (code, body) = http(
        &url,
        "POST",
        "/api/jobs",
        Some(r#"{"command":["true"],"resources":{"fpga":0}}"#),
    );
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("`resources`") && body.contains("at least 1"),
        "{body}"
    );
}
