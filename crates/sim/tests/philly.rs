//! The Philly job table reads whole, with the README's size histogram, and simulates.

mod common;

use std::collections::BTreeMap;

use gpusched_core::{Cluster, PolicyConfig, PolicyKind};
use gpusched_sim::{simulate, trace, SimOptions, Summary};

#[test]
fn philly_reads_all_jobs_with_the_published_histogram() {
    let w = trace::read(&common::shared_trace("philly/philly.csv"), None).unwrap();
    assert_eq!(w.jobs.len(), 82_247);
    assert_eq!(w.queues.len(), 15, "15 virtual clusters");
    let mut sizes: BTreeMap<u32, usize> = BTreeMap::new();
    for j in &w.jobs {
        *sizes.entry(j.spec.gpus).or_default() += 1;
    }
    let want: BTreeMap<u32, usize> = [
        (1, 76_627),
        (2, 1_818),
        (4, 1_870),
        (8, 1_643),
        (12, 7),
        (16, 199),
        (24, 7),
        (32, 67),
        (64, 6),
        (128, 3),
    ]
    .into_iter()
    .collect();
    assert_eq!(sizes, want);
    assert_eq!(
        w.jobs[0].spec.submit, 0.0,
        "times start at the earliest submit"
    );
}

#[test]
fn a_slice_of_philly_simulates_under_drf_by_virtual_cluster() {
    let mut w = trace::read(&common::shared_trace("philly/philly.csv"), None).unwrap();
    w.jobs.truncate(3_000);
    let cluster = Cluster::parse_shape("16x8", "V100").unwrap();
    let mut cfg = PolicyConfig::new(PolicyKind::Drf);
    cfg.tenant = gpusched_core::policy::Tenant::Queue;
    let run = simulate(&w, &cluster, &SimOptions::new(cfg), &mut |_, _| {}).unwrap();
    let s = Summary::of(&run, "drf", "consolidated", true);
    assert_eq!(s.jobs, 3_000);
    assert!(s.utilization > 0.0 && s.utilization <= 1.0, "{s:?}");
    assert!(s.jain_fairness > 0.0 && s.jain_fairness <= 1.0, "{s:?}");
}
