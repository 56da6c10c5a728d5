//! The live (deferred) preemptive pass: victims keep their GPUs until requeued, the
//! protected are never victims, and nobody is asked to stop for nothing.

use std::collections::BTreeSet;

use crate::schedule::PreemptMode;
use crate::{
    Cluster, Decision, JobId, JobSpec, PlacementStrategy, PolicyConfig, PolicyKind, QueueId,
    SchedJob, Scheduler, UserId,
};

fn job(id: u64, gpus: u32, submit: f64, estimate: Option<f64>) -> SchedJob {
    SchedJob::new(JobSpec {
        id: JobId(id),
        gpus,
        gpu_model: None,
        user: UserId(0),
        queue: QueueId(0),
        account: Default::default(),
        priority: 0,
        submit,
        estimate,
        cpu_milli: 0,
        mem_mib: 0,
        generic: Default::default(),
        gang: None,
        nodes: Vec::new(),
        prefer: Vec::new(),
        deadline: None,
    })
}

fn scheduler(kind: PolicyKind, gpus: u32) -> Scheduler {
    let c = Cluster::uniform(1, 1, gpus, "A100");
    let mut cfg = PolicyConfig::new(kind);
    // Demotion after 10 GPU-seconds, then 100.
    cfg.las_limits = vec![10.0, 100.0];
    let mut s = Scheduler::new(&c, cfg, PlacementStrategy::BestFit, PreemptMode::Deferred);
    assert!(
        s.reserve_node_resources(),
        "the deferred mode reserves room"
    );
    s
}

/// (starts, preempts) of one pass at `now`, running jobs accounted first; jobs never
/// seen (rank 0) are enqueued first, as the live cluster does when they arrive.
fn pass(s: &mut Scheduler, jobs: &mut [SchedJob], now: f64) -> (Vec<u64>, Vec<u64>) {
    for j in jobs.iter_mut().filter(|j| j.rank == 0) {
        s.enqueue(j);
    }
    for j in jobs.iter_mut().filter(|j| j.running) {
        j.account(now);
    }
    let (mut starts, mut preempts) = (Vec::new(), Vec::new());
    for d in s.pass(jobs, now).decisions {
        match d {
            Decision::Start { job, .. } => starts.push(job.0),
            Decision::Preempt { job, .. } => preempts.push(job.0),
        }
    }
    (starts, preempts)
}

#[test]
fn tiresias_asks_a_demoted_job_to_stop_and_the_new_one_starts_once_it_has() {
    let mut s = scheduler(PolicyKind::Tiresias, 1);
    let mut jobs = vec![job(1, 1, 0.0, None)];
    assert_eq!(pass(&mut s, &mut jobs, 0.0), (vec![1], vec![]));
    jobs.push(job(2, 1, 5.0, None));
    // Job 1 is still in queue 0 (5 GPU-s of 10): job 2 waits behind it, nobody stops.
    assert_eq!(pass(&mut s, &mut jobs, 5.0), (vec![], vec![]));
    // At 12 s job 1 has 12 GPU-s: demoted, so job 2 (queue 0) goes first.
    assert_eq!(pass(&mut s, &mut jobs, 12.0), (vec![], vec![1]));
    assert!(
        jobs[0].running,
        "a victim keeps its GPUs until the caller requeues it"
    );
    // Asked again while it stops: the same answer, and still no start on its GPU.
    assert_eq!(pass(&mut s, &mut jobs, 13.0), (vec![], vec![1]));
    // It stopped: requeued with its service kept, job 2 starts.
    jobs[0].account(14.0);
    s.finish(&mut jobs[0]);
    assert_eq!(pass(&mut s, &mut jobs, 14.0), (vec![2], vec![]));
    assert_eq!(jobs[0].attained, 14.0);
    assert_eq!(jobs[0].las.level, 1);
}

#[test]
fn a_protected_job_is_never_a_victim() {
    let mut s = scheduler(PolicyKind::Tiresias, 1);
    let mut jobs = vec![job(1, 1, 0.0, None), job(2, 1, 1.0, None)];
    assert_eq!(pass(&mut s, &mut jobs, 0.0), (vec![1], vec![]));
    s.set_protected(BTreeSet::from([JobId(1)]));
    assert_eq!(pass(&mut s, &mut jobs, 50.0), (vec![], vec![]));
    s.set_protected(BTreeSet::new());
    assert_eq!(pass(&mut s, &mut jobs, 51.0), (vec![], vec![1]));
}

#[test]
fn srtf_preempts_the_longer_remaining_estimate_and_jobs_without_one_go_last() {
    let mut s = scheduler(PolicyKind::Srtf, 2);
    let mut jobs = vec![job(1, 1, 0.0, Some(1000.0)), job(2, 1, 0.0, None)];
    assert_eq!(pass(&mut s, &mut jobs, 0.0), (vec![1, 2], vec![]));
    // A short job: the one without an estimate (last in srtf's order) is asked to stop,
    // not the one with 900 s to go.
    jobs.push(job(3, 1, 100.0, Some(50.0)));
    assert_eq!(pass(&mut s, &mut jobs, 100.0), (vec![], vec![2]));
    // Another short one: now job 1 (900 s left) is the longest that may go.
    jobs[1].account(101.0);
    s.finish(&mut jobs[1]);
    assert_eq!(pass(&mut s, &mut jobs, 101.0), (vec![3], vec![]));
    jobs.push(job(4, 1, 102.0, Some(20.0)));
    assert_eq!(pass(&mut s, &mut jobs, 102.0), (vec![], vec![1]));
}

#[test]
fn nobody_is_asked_to_stop_when_every_wanted_job_fits_now() {
    let mut s = scheduler(PolicyKind::Srtf, 4);
    let mut jobs = vec![job(1, 2, 0.0, Some(100.0))];
    assert_eq!(pass(&mut s, &mut jobs, 0.0), (vec![1], vec![]));
    jobs.push(job(2, 2, 1.0, Some(10.0)));
    assert_eq!(pass(&mut s, &mut jobs, 1.0), (vec![2], vec![]));
}

#[test]
fn restored_service_puts_a_job_in_the_queue_its_service_earned() {
    let cfg = {
        let mut c = PolicyConfig::new(PolicyKind::Tiresias);
        c.las_limits = vec![10.0, 100.0];
        c
    };
    let mut j = job(1, 2, 0.0, None);
    super::restore_service(&cfg, &mut j, 30.0);
    assert_eq!((j.attained, j.las.level), (30.0, 1));
    super::restore_service(&cfg, &mut j, 4.0);
    assert_eq!(j.las.level, 0);
}
