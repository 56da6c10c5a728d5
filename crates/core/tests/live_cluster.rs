//! The calls the live server makes when nodes come and go: `set_cluster` keeps the
//! queue order, `occupy` restores running jobs' GPUs and refuses what does not fit.

use gpusched_core::schedule::PreemptMode;
use gpusched_core::{
    Cluster, Decision, JobId, JobSpec, NodeId, Placement, PlacementStrategy, PolicyConfig,
    PolicyKind, QueueId, SchedJob, Scheduler, UserId,
};

fn job(id: u64, gpus: u32) -> SchedJob {
    SchedJob::new(JobSpec {
        id: JobId(id),
        gpus,
        gpu_model: None,
        user: UserId(0),
        queue: QueueId(0),
        priority: 0,
        submit: id as f64,
        estimate: None,
    })
}

#[test]
fn a_new_cluster_keeps_the_queue_order_and_restored_jobs_hold_their_gpus() {
    let one = Cluster::parse_shape("1x4", "A100").unwrap();
    let two = Cluster::parse_shape("2x4", "A100").unwrap();
    let mut s = Scheduler::new(
        &one,
        PolicyConfig::new(PolicyKind::Fifo),
        PlacementStrategy::BestFit,
        PreemptMode::InPlace,
    );
    let mut jobs = vec![job(1, 4), job(2, 4), job(3, 2)];
    for j in &mut jobs {
        s.enqueue(j);
    }
    // Job 1 already runs on node 0 (restored from the store).
    let p = Placement {
        parts: vec![(NodeId(0), 4)],
    };
    assert!(s.occupy(&p));
    jobs[0].running = true;
    jobs[0].placement = Some(p.clone());
    assert!(!s.occupy(&p), "node 0 has no free GPUs left");
    assert!(s.pass(&mut jobs, 10.0).decisions.is_empty());

    // A second node joins: rebuild, re-occupy, and job 2 (not 3) goes first.
    s.set_cluster(&two);
    assert!(s.occupy(&p));
    let d = s.pass(&mut jobs, 11.0).decisions;
    let started: Vec<u64> = d
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, .. } => Some(job.0),
            _ => None,
        })
        .collect();
    assert_eq!(started, [2]);
    assert!(
        !s.occupy(&Placement {
            parts: vec![(NodeId(7), 1)]
        }),
        "no such node"
    );
}
