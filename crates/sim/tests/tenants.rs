//! Per-tenant metrics on a case small enough to check by hand: two tenants submit four
//! 4-GPU, 100-s jobs each at t=0 on one 8-GPU node (tenant A's jobs first in the file).
//!
//! - fifo runs A's four (two at a time, 0-200 s), then B's (200-400 s): JCTs A 100, 100,
//!   200, 200 (mean 150), B 300, 300, 400, 400 (mean 350).
//! - drf alternates, one job of each at a time: both tenants' JCTs 100..400 (mean 250),
//!   and each holds half the busy GPUs in every 100-s bin.
//! - Entitlements (100-s bins of 800 GPU-s): under drf both ask for more than half in
//!   bins 0-2 and exactly half in bin 3, so each is entitled to 400 per bin and got it:
//!   fair ratios 1 and 1. Under fifo A holds 1600 GPU-s against 400 + 400 entitled (bins
//!   2-3 it asks for nothing), B holds 1600 against 400 + 400 + 800 + 800: ratios 2 and
//!   2/3, Jain (8/3)^2 / (2 (4 + 4/9)) = 0.8.

use gpusched_core::{Cluster, PolicyConfig, PolicyKind};
use gpusched_sim::tenants::plot::share_series;
use gpusched_sim::tenants::table::{write_shares_csv, write_tenants_csv};
use gpusched_sim::tenants::TenantReport;
use gpusched_sim::trace::{self, Workload};
use gpusched_sim::{simulate, SimOptions, SimRun};

fn workload() -> Workload {
    let mut csv = String::from("submit,gpus,duration,user\n");
    for user in ["A", "B"] {
        for _ in 0..4 {
            csv.push_str(&format!("0,4,100,{user}\n"));
        }
    }
    trace::native::parse_csv("two.csv", &csv).unwrap()
}

fn run(kind: PolicyKind) -> (Workload, SimRun, TenantReport) {
    let w = workload();
    let cluster = Cluster::parse_shape("1x8", "V100").unwrap();
    let mut opts = SimOptions::new(PolicyConfig::new(kind));
    opts.tenant_bins = Some(100.0);
    let run = simulate(&w, &cluster, &opts, &mut |_, _| {}).unwrap();
    let report = TenantReport::of(&run, &w, kind.name(), false);
    (w, run, report)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn drf_gives_each_tenant_half_in_every_bin() {
    let (_, run, r) = run(PolicyKind::Drf);
    let [a, b] = &r.tenants[..] else {
        panic!("two tenants: {:?}", r.tenants)
    };
    assert_eq!((a.tenant.as_str(), b.tenant.as_str()), ("A", "B"));
    for t in [a, b] {
        assert_eq!(t.jobs, 4);
        assert!(close(t.avg_jct, 250.0), "{t:?}");
        assert!(close(t.p50_jct, 300.0), "nearest rank: index 2 of 100..400");
        assert!(close(t.p95_jct, 400.0));
        assert!(close(t.avg_wait, 150.0));
        assert!(close(t.gpu_hours, 1600.0 / 3600.0));
        assert!(close(t.gpu_share, 0.5));
        assert!(close(t.entitled_gpu_hours, 1600.0 / 3600.0));
        assert!(close(t.fair_ratio, 1.0));
    }
    assert!(close(r.jain_fair_ratio, 1.0));
    assert_eq!(r.contended_bins, 3);
    assert!(close(r.jain_contended_bins, 1.0));
    let usage = run.tenants.as_ref().unwrap();
    for (_, pts) in share_series(usage) {
        let shares: Vec<f64> = pts.iter().map(|p| p.1).take(4).collect();
        assert_eq!(shares, vec![0.5; 4]);
    }
}

#[test]
fn fifo_serves_the_first_tenant_first() {
    let (_, _, r) = run(PolicyKind::Fifo);
    let (a, b) = (&r.tenants[0], &r.tenants[1]);
    assert!(close(a.avg_jct, 150.0) && close(b.avg_jct, 350.0), "{r:?}");
    assert!(close(a.avg_wait, 50.0) && close(b.avg_wait, 250.0));
    assert!(close(a.gpu_share, 0.5) && close(b.gpu_share, 0.5));
    assert!(close(a.fair_ratio, 2.0) && close(b.fair_ratio, 2.0 / 3.0));
    assert!(close(r.jain_fair_ratio, 0.8));
    // Bins 0 and 1: A holds all, entitled to half (Jain 1/2); bin 2: B alone (1).
    assert_eq!(r.contended_bins, 3);
    assert!(close(r.jain_contended_bins, 2.0 / 3.0));
}

#[test]
fn without_recording_the_run_is_the_same_and_has_no_usage() {
    let w = workload();
    let cluster = Cluster::parse_shape("1x8", "V100").unwrap();
    let plain = SimOptions::new(PolicyConfig::new(PolicyKind::Drf));
    let a = simulate(&w, &cluster, &plain, &mut |_, _| {}).unwrap();
    let (_, b, _) = run(PolicyKind::Drf);
    assert!(a.tenants.is_none());
    assert_eq!(a.jobs, b.jobs);
    assert_eq!(a.timeline, b.timeline);
}

#[test]
fn per_tenant_output_is_deterministic() {
    let render = || {
        let (w, run, r) = run(PolicyKind::Drf);
        let mut out = Vec::new();
        write_tenants_csv(&mut out, &r).unwrap();
        write_shares_csv(&mut out, run.tenants.as_ref().unwrap(), &w.users).unwrap();
        serde_json::to_string(&r).unwrap() + &String::from_utf8(out).unwrap()
    };
    let first = render();
    assert_eq!(first, render());
    assert!(first.contains("\n0,A,4,16,0.5\n"), "{first}");
}
