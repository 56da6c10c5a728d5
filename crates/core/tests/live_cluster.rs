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
        account: Default::default(),
        priority: 0,
        submit: id as f64,
        estimate: None,
        cpu_milli: 0,
        mem_mib: 0,
        generic: Default::default(),
        gang: None,
        nodes: Vec::new(),
        prefer: Vec::new(),
        deadline: None,
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

fn queued(id: u64, gpus: u32, queue: u32) -> SchedJob {
    let mut j = job(id, gpus);
    j.spec.queue = QueueId(queue);
    j.spec.user = UserId(queue);
    j
}

#[test]
fn a_queue_at_its_cap_is_skipped_without_blocking_the_others() {
    let cluster = Cluster::parse_shape("1x8", "A100").unwrap();
    for kind in [PolicyKind::Fifo, PolicyKind::Backfill, PolicyKind::Drf] {
        let mut s = Scheduler::new(
            &cluster,
            PolicyConfig::new(kind),
            PlacementStrategy::BestFit,
            PreemptMode::InPlace,
        );
        s.set_queue_limits([(QueueId(0), 4)].into_iter().collect());
        let mut jobs = vec![queued(1, 4, 0), queued(2, 2, 0), queued(3, 2, 1)];
        for j in &mut jobs {
            s.enqueue(j);
        }
        let started: Vec<u64> = s
            .pass(&mut jobs, 1.0)
            .decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Start { job, .. } => Some(job.0),
                _ => None,
            })
            .collect();
        let mut sorted = started.clone();
        sorted.sort();
        assert_eq!(sorted, [1, 3], "{kind:?}: queue 0 capped at 4 GPUs");
        assert_eq!(s.free_gpus(), 2, "{kind:?}");
    }
}

#[test]
fn start_estimates_replay_the_queue_with_walltimes() {
    let cluster = Cluster::parse_shape("1x4", "A100").unwrap();
    let mut s = Scheduler::new(
        &cluster,
        PolicyConfig::new(PolicyKind::Fifo),
        PlacementStrategy::BestFit,
        PreemptMode::InPlace,
    );
    let with = |id, gpus, est: Option<f64>| {
        let mut j = job(id, gpus);
        j.spec.estimate = est;
        j.spec.submit = 0.0;
        j
    };
    let mut jobs = vec![
        with(1, 4, Some(100.0)),
        with(2, 2, Some(50.0)),
        with(3, 4, Some(10.0)),
        with(4, 2, None),
        with(5, 1, Some(5.0)),
        with(6, 4, Some(5.0)),
    ];
    for j in &mut jobs {
        s.enqueue(j);
    }
    assert_eq!(s.pass(&mut jobs, 0.0).decisions.len(), 1, "job 1 starts");
    let est = s.estimate_starts(&jobs, 0.0);
    let got: Vec<(u64, f64)> = est.iter().map(|(k, v)| (k.0, *v)).collect();
    // 2 after 1 ends (100); 3 needs all four, so after 2 (150); 4 and 5 after 3 (160);
    // 6 needs the GPUs job 4 holds for an unknown time: no estimate.
    assert_eq!(got, [(2, 100.0), (3, 150.0), (4, 160.0), (5, 160.0)]);
}

#[test]
fn drf_with_a_half_life_remembers_who_used_the_cluster() {
    let cluster = Cluster::parse_shape("1x1", "A100").unwrap();
    let first_started = |half_life: Option<f64>| {
        let mut cfg = PolicyConfig::new(PolicyKind::Drf);
        cfg.usage_half_life = half_life;
        let mut s = Scheduler::new(
            &cluster,
            cfg,
            PlacementStrategy::BestFit,
            PreemptMode::InPlace,
        );
        // User 0 runs job 1 for 1000 s; then users 0 and 1 each wait with one job.
        let mut jobs = vec![queued(1, 1, 0), queued(2, 1, 0), queued(3, 1, 1)];
        for j in &mut jobs {
            s.enqueue(j);
        }
        let start = |d: &[Decision]| -> Vec<u64> {
            d.iter()
                .filter_map(|d| match d {
                    Decision::Start { job, .. } => Some(job.0),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(start(&s.pass(&mut jobs, 0.0).decisions), [1]);
        jobs[0].account(1000.0);
        s.pass(&mut jobs, 1000.0); // the history sees job 1 run until now
        let mut done = jobs.remove(0);
        s.finish(&mut done);
        start(&s.pass(&mut jobs, 1000.0).decisions)
    };
    // Now-only DRF: both users hold nothing, the tie goes to user 0.
    assert_eq!(first_started(None), [2]);
    // With memory, user 0's hour of use puts user 1 first.
    assert_eq!(first_started(Some(3600.0)), [3]);
}

#[test]
fn drf_weighs_the_dominant_resource_not_just_gpus() {
    let mut cluster = Cluster::parse_shape("1x4", "A100").unwrap();
    cluster.nodes[0].cpu_milli = 8000;
    let mut s = Scheduler::new(
        &cluster,
        PolicyConfig::new(PolicyKind::Drf),
        PlacementStrategy::BestFit,
        PreemptMode::InPlace,
    );
    // User 0 runs 1 GPU but all 8 CPUs; user 1 runs 2 GPUs and no CPU.
    let mut heavy = queued(1, 1, 0);
    heavy.spec.cpu_milli = 8000;
    let mut jobs = vec![heavy, queued(2, 2, 1), queued(3, 1, 0), queued(4, 1, 1)];
    for j in &mut jobs {
        s.enqueue(j);
    }
    let started: Vec<u64> = s
        .pass(&mut jobs[..2], 0.0)
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, .. } => Some(job.0),
            _ => None,
        })
        .collect();
    assert_eq!(started.len(), 2);
    // One GPU left. By GPUs user 0 (1 of 4) would go before user 1 (2 of 4); by its
    // dominant share (all the CPUs) user 0 is the larger, so user 1's job starts.
    let d = s.pass(&mut jobs, 1.0).decisions;
    let next: Vec<u64> = d
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, .. } => Some(job.0),
            _ => None,
        })
        .collect();
    assert_eq!(next, [4]);
}

#[test]
fn drf_shares_inside_a_queue_by_user_and_orders_by_priority() {
    let cluster = Cluster::parse_shape("1x2", "A100").unwrap();
    let mut cfg = PolicyConfig::new(PolicyKind::Drf);
    cfg.tenant = gpusched_core::policy::Tenant::Queue;
    let started = |jobs: &mut Vec<SchedJob>| {
        let mut s = Scheduler::new(
            &cluster,
            cfg.clone(),
            PlacementStrategy::BestFit,
            PreemptMode::InPlace,
        );
        for j in jobs.iter_mut() {
            s.enqueue(j);
        }
        s.pass(&mut jobs[..1], 0.0);
        let d = s.pass(jobs, 1.0).decisions;
        d.iter()
            .filter_map(|d| match d {
                Decision::Start { job, .. } => Some(job.0),
                _ => None,
            })
            .collect::<Vec<u64>>()
    };
    // One queue; user 1 already runs a job; user 1's older job and user 2's job wait
    // for the one GPU left: inside the queue, user 2 (holding nothing) goes first.
    let mut a = queued(1, 1, 0);
    a.spec.user = UserId(1);
    let mut b = queued(2, 1, 0);
    b.spec.user = UserId(1);
    let mut c = queued(3, 1, 0);
    c.spec.user = UserId(2);
    assert_eq!(started(&mut vec![a.clone(), b.clone(), c]), [3]);
    // Same user: the younger job of higher priority goes first.
    let mut d = queued(4, 1, 0);
    d.spec.user = UserId(1);
    d.spec.priority = 10;
    assert_eq!(started(&mut vec![a, b, d]), [4]);
}

/// The live cluster as the server drives it across a restart: placements from one life
/// are restored in the next on the same GPU indices, and the next pass never hands a
/// restored GPU out again.
#[test]
fn a_restarted_live_cluster_restores_placements_and_never_double_books() {
    use gpusched_core::live::{LiveCluster, LiveGpu, LiveJob, LiveNode, LivePlacement};
    use gpusched_core::sharing::ShareStrategy;

    let nodes = || {
        ["a", "b"]
            .map(|name| LiveNode {
                name: name.into(),
                model: "A100".into(),
                cpus: 8,
                mem_mib: 1 << 16,
                mps: false,
                gpus: (0..4)
                    .map(|index| LiveGpu {
                        index,
                        model: "A100".into(),
                        mem_mib: 81920,
                        mig: None,
                        unhealthy: None,
                    })
                    .collect(),
                resources: Default::default(),
                topology: Default::default(),
                drained: None,
                unreachable: None,
                follows: false,
                features: Vec::new(),
            })
            .to_vec()
    };
    let live = |id: u64, gpus: u32| LiveJob {
        id,
        user: "u".into(),
        queue: QueueId(0),
        priority: 0,
        submit: id as f64,
        walltime: None,
        gpus,
        model: None,
        cpu_milli: 0,
        mem_mib: 0,
        resources: Default::default(),
        slice: None,
        gang: None,
        group: None,
        serving: false,
        rules: None,
        prefer: Vec::new(),
        deadline: None,
        elastic: None,
    };
    let fresh = || {
        let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
        c.set_nodes(nodes());
        c
    };
    let mut first = fresh();
    for (id, g) in [(1, 3), (2, 2), (3, 1), (4, 2)] {
        first.add(&live(id, g));
    }
    let placed: Vec<LivePlacement> = first.pass(1.0, &[]);
    assert_eq!(placed.len(), 4);

    // The next life: the same jobs, restored from what the first one decided.
    let mut next = fresh();
    for (id, g) in [(1, 3), (2, 2), (3, 1), (4, 2), (5, 1)] {
        next.add(&live(id, g));
    }
    for p in &placed {
        let part = &p.parts[0];
        assert!(next.restore(p.job, &part.node, &part.gpus, None, 2.0));
    }
    assert_eq!(next.whole_free("a") + next.whole_free("b"), 0);
    assert!(next.pass(3.0, &[]).is_empty(), "every GPU is held");
    next.remove(3, 0.0);
    let s = next.pass(4.0, &[]);
    assert_eq!(s.len(), 1);
    let freed = &placed.iter().find(|p| p.job == 3).unwrap().parts[0];
    assert_eq!(
        (&s[0].parts[0].node, &s[0].parts[0].gpus),
        (&freed.node, &freed.gpus)
    );
}
