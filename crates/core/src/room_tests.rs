//! Reservation of CPUs, memory and generic resources through the scheduler's passes.

use std::collections::BTreeMap;

use super::Lack;
use crate::schedule::PreemptMode;
use crate::{
    Cluster, Decision, JobId, JobSpec, NodeId, Placement, PlacementStrategy, PolicyConfig,
    PolicyKind, QueueId, SchedJob, Scheduler, UserId,
};

const GIB: u64 = 1024;

fn job(id: u64, gpus: u32, cpus: u64, mem_gib: u64, generic: &[(&str, u64)]) -> SchedJob {
    SchedJob::new(JobSpec {
        id: JobId(id),
        gpus,
        gpu_model: None,
        user: UserId(0),
        queue: QueueId(0),
        account: Default::default(),
        priority: 0,
        submit: id as f64,
        estimate: Some(100.0),
        cpu_milli: cpus * 1000,
        mem_mib: mem_gib * GIB,
        generic: generic.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
        gang: None,
        nodes: Vec::new(),
        prefer: Vec::new(),
        deadline: None,
    })
}

/// `nodes` nodes of 4 GPUs, 8 CPUs and 16 GiB each; node 0 declares `fpga = 1`.
fn cluster(nodes: u32) -> Cluster {
    let mut c = Cluster::parse_shape(&format!("{nodes}x4"), "A100").unwrap();
    for n in &mut c.nodes {
        n.cpu_milli = 8_000;
        n.mem_mib = 16 * GIB;
    }
    c.nodes[0].generic.insert("fpga".into(), 1);
    c
}

fn scheduler(
    c: &Cluster,
    kind: PolicyKind,
    strategy: PlacementStrategy,
    reserve: bool,
) -> Scheduler {
    let mut s = Scheduler::new(c, PolicyConfig::new(kind), strategy, PreemptMode::InPlace);
    if reserve {
        assert!(s.reserve_node_resources());
    }
    s
}

/// The jobs a pass starts, with the node of each.
fn starts(s: &mut Scheduler, jobs: &mut [SchedJob], now: f64) -> Vec<(u64, u32)> {
    s.pass(jobs, now)
        .decisions
        .into_iter()
        .filter_map(|d| match d {
            Decision::Start { job, placement, .. } => Some((job.0, placement.parts[0].0.get())),
            Decision::Preempt { .. } => None,
        })
        .collect()
}

fn enqueue(s: &mut Scheduler, jobs: &mut [SchedJob]) {
    for j in jobs {
        s.enqueue(j);
    }
}

#[test]
fn memory_taken_on_a_node_keeps_the_next_job_off_it_until_the_first_ends() {
    let c = cluster(1);
    let mut s = scheduler(&c, PolicyKind::Fifo, PlacementStrategy::BestFit, true);
    let mut jobs = vec![job(1, 1, 1, 12, &[]), job(2, 1, 1, 12, &[])];
    enqueue(&mut s, &mut jobs);
    // Three GPUs stay free, but 4 of 16 GiB are left: job 2 waits, on memory.
    assert_eq!(starts(&mut s, &mut jobs, 1.0), [(1, 0)]);
    assert_eq!(s.free_gpus(), 3);
    let wait = s.room_wait(&jobs[1].spec).expect("it waits on room");
    assert_eq!(wait.node, NodeId(0));
    assert_eq!(
        wait.lacks,
        [Lack::Memory {
            asked_mib: 12 * GIB,
            free_mib: 4 * GIB
        }]
    );
    assert!(starts(&mut s, &mut jobs, 2.0).is_empty());
    // Job 1 ends: its memory comes back and job 2 starts.
    let mut done = jobs.remove(0);
    s.finish(&mut done);
    assert_eq!(starts(&mut s, &mut jobs, 3.0), [(2, 0)]);
    assert_eq!(s.room().unwrap().free(NodeId(0)).unwrap().mem_mib, 4 * GIB);
}

#[test]
fn cpus_and_generic_resources_send_a_job_to_the_node_that_has_them() {
    let c = cluster(2);
    let mut s = scheduler(&c, PolicyKind::Fifo, PlacementStrategy::BestFit, true);
    // Job 1 takes 6 of node 0's 8 CPUs; job 2 (4 CPUs) goes to node 1 although best-fit
    // would pick node 0 for its GPUs; job 3 needs the FPGA only node 0 has; job 4 a
    // second FPGA and waits for job 3's.
    let mut jobs = vec![
        job(1, 1, 6, 0, &[]),
        job(2, 1, 4, 0, &[]),
        job(3, 1, 0, 0, &[("fpga", 1)]),
        job(4, 1, 0, 0, &[("fpga", 1)]),
    ];
    enqueue(&mut s, &mut jobs);
    let mut sched = scheduler(&c, PolicyKind::Backfill, PlacementStrategy::BestFit, true);
    let mut copy = jobs.clone();
    enqueue(&mut sched, &mut copy);
    for (s, jobs) in [(&mut s, &mut jobs), (&mut sched, &mut copy)] {
        let got = starts(s, &mut jobs[..3], 1.0);
        assert_eq!(got, [(1, 0), (2, 1), (3, 0)]);
        assert!(starts(s, jobs, 2.0).is_empty(), "one FPGA, held by job 3");
        let wait = s.room_wait(&jobs[3].spec).unwrap();
        assert_eq!(
            (wait.node, wait.nodes, wait.lacks.clone()),
            (
                NodeId(0),
                2,
                vec![Lack::Generic {
                    name: "fpga".into(),
                    asked: 1,
                    free: 0
                }]
            )
        );
        let mut done = jobs.remove(2);
        s.finish(&mut done);
        assert_eq!(starts(s, jobs, 3.0), [(4, 0)]);
    }
}

#[test]
fn a_job_without_gpus_runs_beside_gpu_jobs_on_a_full_cluster() {
    let c = cluster(2);
    let mut s = scheduler(&c, PolicyKind::Fifo, PlacementStrategy::BestFit, true);
    let mut jobs = vec![
        job(1, 4, 0, 0, &[]),
        job(2, 3, 0, 0, &[]),
        job(3, 0, 4, 8, &[]),
    ];
    enqueue(&mut s, &mut jobs);
    // Best-fit puts the CPU-only job on the node with the fewest free GPUs (node 0,
    // full), keeping node 1's free GPU for a GPU job.
    assert_eq!(starts(&mut s, &mut jobs, 1.0), [(1, 0), (2, 1), (3, 0)]);
    assert!(s.check_fits(&jobs[2].spec).is_ok());
    // Every GPU taken: a pass still starts a CPU-only job.
    let mut more = vec![job(4, 1, 0, 0, &[]), job(5, 0, 1, 1, &[])];
    s.occupy(&Placement {
        parts: vec![(NodeId(1), 1)],
    });
    assert_eq!(s.free_gpus(), 0);
    enqueue(&mut s, &mut more);
    // fifo is strict: job 4 (1 GPU) blocks job 5.
    assert!(starts(&mut s, &mut more, 2.0).is_empty());
    let mut more = vec![more.remove(1)];
    assert_eq!(starts(&mut s, &mut more, 3.0), [(5, 0)]);
    // Without reservation a job without GPUs could never run.
    let mut plain = scheduler(&c, PolicyKind::Fifo, PlacementStrategy::BestFit, false);
    assert!(plain.check_fits(&jobs[2].spec).is_err());
}

#[test]
fn room_that_no_node_has_never_fits_and_preemptive_policies_do_not_reserve() {
    let c = cluster(2);
    let mut s = scheduler(&c, PolicyKind::Fifo, PlacementStrategy::BestFit, true);
    assert!(
        s.check_fits(&job(1, 1, 9, 0, &[]).spec).is_err(),
        "8 CPUs a node"
    );
    assert!(s.check_fits(&job(1, 1, 0, 0, &[("fpga", 2)]).spec).is_err());
    assert!(s
        .check_fits(&job(1, 1, 0, 0, &[("gpu_x", 1)]).spec)
        .is_err());
    assert!(s.check_fits(&job(1, 4, 8, 16, &[("fpga", 1)]).spec).is_ok());
    let mut p = Scheduler::new(
        &c,
        PolicyConfig::new(PolicyKind::Srtf),
        PlacementStrategy::BestFit,
        PreemptMode::Repack,
    );
    assert!(!p.reserve_node_resources());
    assert!(p.room().is_none());
}

/// Jobs that ask for GPUs only are placed by the free map's queries exactly as without
/// reservation, for every strategy, on a busy mixed workload.
#[test]
fn jobs_asking_only_gpus_are_placed_as_without_reservation() {
    let c = Cluster::parse_shape("2x4x8", "A100").unwrap();
    for strategy in PlacementStrategy::ALL {
        for kind in [PolicyKind::Fifo, PolicyKind::Backfill, PolicyKind::Drf] {
            let mut runs = Vec::new();
            for reserve in [false, true] {
                let mut s = scheduler(&c, kind, strategy, reserve);
                let mut jobs: Vec<SchedJob> = (0..60u64)
                    .map(|i| job(i, [1, 2, 3, 4, 8, 12][(i * 7 % 6) as usize], 0, 0, &[]))
                    .collect();
                enqueue(&mut s, &mut jobs);
                let mut log = Vec::new();
                for step in 0..40 {
                    let now = step as f64;
                    let out = s.pass(&mut jobs, now);
                    for d in out.decisions {
                        if let Decision::Start { job, placement, .. } = d {
                            log.push((step, job.0, placement.parts));
                        }
                    }
                    // End the oldest running job each step.
                    if let Some(i) = jobs.iter().position(|j| j.running) {
                        let mut done = jobs.remove(i);
                        s.finish(&mut done);
                    }
                }
                runs.push(log);
            }
            assert!(!runs[0].is_empty());
            assert_eq!(runs[0], runs[1], "{strategy:?} {kind:?}");
        }
    }
}

#[test]
fn estimates_count_room_and_a_job_without_gpus_does_not_end_them() {
    let c = cluster(1);
    let mut s = scheduler(&c, PolicyKind::Fifo, PlacementStrategy::BestFit, true);
    let mut jobs = vec![
        job(1, 1, 0, 12, &[]),
        job(2, 0, 0, 12, &[]),
        job(3, 1, 0, 0, &[]),
    ];
    enqueue(&mut s, &mut jobs);
    assert_eq!(starts(&mut s, &mut jobs[..1], 0.0), [(1, 0)]);
    let est = s.estimate_starts(&jobs, 0.0);
    // Job 2 waits for job 1's memory (its estimate: 100 s); job 3 needs one GPU.
    assert_eq!(est.get(&JobId(2)), Some(&100.0));
    assert_eq!(est.get(&JobId(3)), Some(&100.0));
    let by_id: BTreeMap<u64, f64> = est.into_iter().map(|(k, v)| (k.0, v)).collect();
    assert_eq!(by_id.len(), 2);
}

/// The live server's restart and node-change path: a restored job holds its room again,
/// a placement whose room is gone is refused, and a new cluster starts with all room free.
#[test]
fn restored_jobs_hold_their_room_and_a_new_cluster_is_rebuilt() {
    let c = cluster(1);
    let mut s = scheduler(&c, PolicyKind::Fifo, PlacementStrategy::BestFit, true);
    let mut jobs = vec![job(1, 1, 6, 0, &[("fpga", 1)]), job(2, 1, 6, 0, &[])];
    enqueue(&mut s, &mut jobs);
    let on0 = |k| Placement {
        parts: vec![(NodeId(0), k)],
    };
    assert!(s.start_at(&mut jobs[0], on0(1), 0.0));
    let free = s.room().unwrap().free(NodeId(0)).unwrap().clone();
    assert_eq!((free.cpu_milli, free.generic["fpga"]), (2_000, 0));
    // Job 2's 6 CPUs are not there: refused, and nothing is taken.
    assert!(!s.start_at(&mut jobs[1], on0(1), 0.0));
    assert_eq!(s.free_gpus(), 3);
    // Nodes changed: every room is free again until running jobs are occupied anew.
    s.set_cluster(&c);
    assert_eq!(s.room().unwrap().free(NodeId(0)).unwrap().cpu_milli, 8_000);
    assert!(s.occupy_job(&jobs[0].spec, &on0(1)));
    assert!(!s.occupy_job(&jobs[1].spec, &on0(1)));
    assert_eq!(s.room().unwrap().free(NodeId(0)).unwrap().cpu_milli, 2_000);
}
