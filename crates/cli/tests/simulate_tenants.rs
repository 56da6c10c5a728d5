//! `gpusched simulate --per-tenant` end to end, on a Philly-format table small enough to
//! check by hand: two virtual clusters submit four 4-GPU, 100-s jobs each at once on one
//! 8-GPU node. fifo serves `vc-a` first (mean JCT 150 s, `vc-b` 350 s); drf alternates
//! (250 s each).

use std::process::{Command, Output};

fn gpusched(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gpusched"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn philly(dir: &std::path::Path) -> String {
    let mut csv = String::from("timestamp,duration,num_gpus,gpu_time,cluster\n");
    for vc in ["vc-a", "vc-b"] {
        for _ in 0..4 {
            csv.push_str(&format!("2017-10-01 00:00:00,100.0,4,400.0,{vc}\n"));
        }
    }
    let path = dir.join("two-vcs.csv");
    std::fs::write(&path, csv).unwrap();
    path.display().to_string()
}

#[test]
fn per_tenant_prints_one_row_per_vc_with_the_policies_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let trace = philly(dir.path());
    let base = [
        "simulate",
        "--trace",
        &trace,
        "--cluster",
        "1x8",
        "--policy",
        "fifo,drf",
        "--fair-by",
        "queue",
    ];
    let plain = gpusched(&base);
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(
        !stdout(&plain).contains("vc-a"),
        "no per-tenant table unless asked"
    );

    // 100-s bins: one per wave of jobs, so fifo's turn-taking shows as unfairness.
    let o = gpusched(&[&base[..], &["--per-tenant", "--share-bin", "100"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with(&stdout(&plain)),
        "the usual table comes first, unchanged:\n{out}"
    );
    assert!(
        out.contains("fifo avg JCT") && out.contains("drf share"),
        "{out}"
    );
    let row = |vc: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.starts_with(vc))
            .unwrap_or_else(|| panic!("no {vc} row in\n{out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // tenant, jobs, then avg JCT, p95 JCT, wait, share, fair for fifo and for drf.
    assert_eq!(row("vc-a")[..3], ["vc-a", "4", "2.5m"]);
    assert_eq!(row("vc-b")[2], "5.8m");
    assert_eq!(row("vc-a")[7], "4.2m");
    assert_eq!(row("vc-b")[7], "4.2m");
    assert_eq!(row("vc-b")[11], "1.00", "drf gives vc-b its fair share");
    assert!(out.contains("fifo 0.800, drf 1.000"), "{out}");

    let bad = gpusched(&[&base[..], &["--per-tenant", "--share-bin", "0"]].concat());
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--share-bin must be a positive number of seconds"));
}

#[test]
fn per_tenant_json_and_out_files() {
    let dir = tempfile::tempdir().unwrap();
    let trace = philly(dir.path());
    let d = dir.path().join("report");
    let args = [
        "simulate",
        "--trace",
        &trace,
        "--cluster",
        "1x8",
        "--policy",
        "fifo,drf",
        "--per-tenant",
        "--json",
        "--out",
        d.to_str().unwrap(),
    ];
    let o = gpusched(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tenants = doc["tenants"].as_array().unwrap();
    assert_eq!(tenants.len(), 2);
    assert_eq!(tenants[1]["policy"], "drf");
    assert_eq!(tenants[1]["tenants"][1]["tenant"], "vc-b");
    assert_eq!(tenants[1]["tenants"][1]["gpu_share"], 0.5);
    for f in [
        "tenants-fifo.csv",
        "tenants-drf.csv",
        "shares-fifo.csv",
        "shares-drf.csv",
        "tenant_share-fifo.svg",
        "tenant_share-drf.svg",
    ] {
        let p = d.join(f);
        assert!(
            p.metadata().map(|m| m.len() > 50).unwrap_or(false),
            "{} missing or empty",
            p.display()
        );
    }
    let csv = std::fs::read_to_string(d.join("tenants-drf.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "header + 2 VCs:\n{csv}");
    assert_eq!(gpusched(&args).stdout, o.stdout, "same input, same bytes");

    let plain = gpusched(&["simulate", "--trace", &trace, "--cluster", "1x8", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(
        doc.get("tenants").is_none(),
        "no tenants field unless asked"
    );
}
