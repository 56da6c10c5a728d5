//! Same trace + same policy => byte-identical report, for every policy.

use gpusched_core::{Cluster, PolicyConfig, PolicyKind};
use gpusched_sim::report;
use gpusched_sim::trace::synthetic::{generate, SyntheticSpec};
use gpusched_sim::{simulate, SimOptions, Summary};

fn render(kind: PolicyKind) -> String {
    let cluster = Cluster::parse_shape("4x8", "V100").unwrap();
    let w = generate(&SyntheticSpec {
        jobs: 600,
        seed: 42,
        load: 1.2,
        cluster_gpus: 32,
        max_job_gpus: 32,
        tenants: 3,
    });
    let run = simulate(
        &w,
        &cluster,
        &SimOptions::new(PolicyConfig::new(kind)),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(run.jobs.len(), 600, "{}: every job finishes", kind.name());
    let s = Summary::of(&run, kind.name(), "consolidated", false);
    let mut csv = Vec::new();
    report::write_jobs_csv(&mut csv, &run, &w).unwrap();
    serde_json::to_string(&s).unwrap() + &String::from_utf8(csv).unwrap()
}

#[test]
fn every_policy_is_deterministic_and_finishes_every_job() {
    for kind in PolicyKind::ALL {
        assert_eq!(render(kind), render(kind), "{}", kind.name());
    }
}

#[test]
fn policies_differ_where_they_should() {
    let fifo = render(PolicyKind::Fifo);
    let srtf = render(PolicyKind::Srtf);
    assert_ne!(fifo, srtf);
}
