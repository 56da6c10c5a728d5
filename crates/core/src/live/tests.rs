//! The live cluster: GPU indices are never double-booked, slices, caps, restore after a
//! restart, orphans when a node goes.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind, QueueId};

pub(super) fn node(name: &str, n: u32, mig: bool) -> LiveNode {
    LiveNode {
        name: name.into(),
        model: "A100-SXM4-80GB".into(),
        cpus: 8,
        mem_mib: 1 << 20,
        mps: false,
        gpus: (0..n)
            .map(|index| LiveGpu {
                index,
                model: "A100-SXM4-80GB".into(),
                mem_mib: 81920,
                mig: mig.then(|| MigLayout {
                    dynamic: true,
                    instances: vec![MigInstance {
                        profile: "3g.40gb".into(),
                        start: 4,
                        size: 4,
                        uuid: Some("MIG-x".into()),
                    }],
                }),
                unhealthy: None,
            })
            .collect(),
        resources: BTreeMap::new(),
        topology: Default::default(),
        drained: None,
        unreachable: None,
        follows: false,
        features: Vec::new(),
    }
}

pub(super) fn whole(id: u64, gpus: u32) -> LiveJob {
    LiveJob {
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
        resources: BTreeMap::new(),
        slice: None,
        gang: None,
        group: None,
        serving: false,
        rules: None,
        prefer: Vec::new(),
        deadline: None,
        elastic: None,
    }
}

fn sliced(id: u64, ask: SliceAsk) -> LiveJob {
    LiveJob {
        slice: Some(ask),
        gpus: 0,
        ..whole(id, 0)
    }
}

fn cluster(policy: PolicyKind) -> LiveCluster {
    LiveCluster::new(PolicyConfig::new(policy), ShareStrategy::BestFit)
}

fn slice_job(id: u64, ask: SliceAsk) -> SliceJob {
    SliceJob {
        id,
        user: "u".into(),
        queue: QueueId(0),
        priority: 0,
        submit: 0.0,
        estimate: None,
        model: None,
        ask,
        image: false,
        at: None,
        rules: None,
    }
}

/// Every GPU index a placement gives out, checked against what is already out.
fn check_disjoint(out: &mut BTreeSet<(String, u32)>, starts: &[LivePlacement]) {
    for p in starts {
        for part in &p.parts {
            if part.slice.is_some() {
                continue;
            }
            for &g in &part.gpus {
                assert!(
                    out.insert((part.node.clone(), g)),
                    "GPU {g} of {} given twice",
                    part.node
                );
            }
        }
    }
}

#[test]
fn placements_name_node_and_indices_and_never_double_book() {
    let mut c = cluster(PolicyKind::Fifo);
    assert!(c
        .set_nodes(vec![node("a", 4, false), node("b", 2, false)])
        .is_empty());
    for (id, g) in [(1, 2), (2, 1), (3, 2), (4, 1)] {
        c.add(&whole(id, g));
    }
    let mut out = BTreeSet::new();
    let starts = c.pass(10.0, &[]);
    check_disjoint(&mut out, &starts);
    let total: usize = starts.iter().map(|p| p.parts[0].gpus.len()).sum();
    assert_eq!(total, 6, "all six GPUs are given out: {starts:?}");
    assert_eq!(c.whole_free("a") + c.whole_free("b"), 0);
    // Job 3 ends; a new job takes exactly its GPUs.
    let p3 = starts.iter().find(|p| p.job == 3).unwrap().parts[0].clone();
    c.remove(3, 0.0);
    for g in &p3.gpus {
        out.remove(&(p3.node.clone(), *g));
    }
    c.add(&whole(6, 2));
    let again = c.pass(11.0, &[]);
    check_disjoint(&mut out, &again);
    assert_eq!(again.len(), 1, "{starts:?} {again:?}");
    assert_eq!(
        again[0].parts[0].gpus, p3.gpus,
        "the freed indices: {starts:?} {again:?}"
    );
    assert_eq!(c.slices(&p3.node).unwrap().whole_of(6), p3.gpus);
    assert_eq!(c.placed().len(), 4);
}

#[test]
fn restore_takes_the_stored_indices_and_refuses_a_taken_gpu() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 4, false)]);
    c.add(&whole(1, 2));
    c.add(&whole(2, 2));
    c.add(&whole(3, 2));
    assert!(c.restore(1, "a", &[1, 3], None, 0.0));
    assert!(!c.restore(2, "a", &[3, 0], None, 0.0), "GPU 3 is job 1's");
    assert!(!c.restore(2, "a", &[0], None, 0.0), "job 2 holds two GPUs");
    assert!(!c.restore(2, "b", &[0, 2], None, 0.0), "no node b");
    assert_eq!(c.slices("a").unwrap().holder(3), Some(1));
    let starts = c.pass(1.0, &[]);
    assert_eq!(starts.len(), 1);
    assert_eq!(
        (starts[0].job, starts[0].parts[0].gpus.clone()),
        (2, vec![0, 2])
    );
    assert_eq!(c.jobs_on("a"), BTreeSet::from([1, 2]));
}

#[test]
fn a_node_that_leaves_orphans_its_jobs_and_the_others_keep_their_indices() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 2, false), node("b", 2, false)]);
    c.add(&whole(1, 2));
    c.add(&whole(2, 1));
    c.add(&sliced(3, SliceAsk::Share { milli: 500 }));
    assert!(c.restore(1, "a", &[0, 1], None, 0.0));
    assert!(c.restore(2, "b", &[1], None, 0.0));
    let starts = c.pass(1.0, &[]);
    assert_eq!(starts.len(), 1, "the share: {starts:?}");
    assert_eq!(starts[0].parts[0].node, "b");
    assert_eq!(starts[0].parts[0].gpus, vec![0], "the one GPU left");
    let orphans = c.set_nodes(vec![node("b", 2, false)]);
    assert_eq!(orphans, vec![1]);
    assert_eq!(c.slices("b").unwrap().holder(1), Some(2), "kept its index");
    assert_eq!(c.jobs_on("b"), BTreeSet::from([2, 3]));
    // b shrinks to one GPU: job 2's GPU 1 is gone.
    let orphans = c.set_nodes(vec![node("b", 1, false)]);
    assert_eq!(orphans, vec![2]);
    c.requeue(2, 2.0);
    assert!(c.pass(2.0, &[]).is_empty(), "GPU 0 holds the share");
}

#[test]
fn shares_fill_a_gpu_then_open_the_next_and_keep_whole_jobs_off_it() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 2, false)]);
    c.add(&sliced(1, SliceAsk::Share { milli: 500 }));
    c.add(&sliced(2, SliceAsk::Share { milli: 500 }));
    let s = c.pass(1.0, &[]);
    let gpus: Vec<u32> = s.iter().map(|p| p.parts[0].gpus[0]).collect();
    assert_eq!(gpus, [0, 0], "the second half joins the first");
    assert_eq!(c.whole_free("a"), 1);
    c.add(&whole(3, 2));
    c.add(&whole(4, 1));
    let s = c.pass(2.0, &[]);
    assert!(s.is_empty(), "fifo: the 2-GPU job blocks: {s:?}");
    c.remove(1, 0.0);
    c.remove(2, 0.0);
    let s = c.pass(3.0, &[]);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].parts[0].gpus, vec![0, 1]);
}

#[test]
fn slice_jobs_follow_the_policy_order() {
    // Under fifo the older job goes first even with a lower priority; under priority the
    // higher one does.
    for (policy, first) in [(PolicyKind::Fifo, 1), (PolicyKind::Priority, 2)] {
        let mut c = cluster(policy);
        c.set_nodes(vec![node("a", 1, false)]);
        c.add(&sliced(1, SliceAsk::Share { milli: 600 }));
        c.add(&LiveJob {
            priority: 5,
            ..sliced(2, SliceAsk::Share { milli: 600 })
        });
        let s = c.pass(10.0, &[]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].job, first, "{policy:?}");
    }
}

#[test]
fn queue_caps_count_slices_rounded_up_and_user_caps_hold_a_users_next_job() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 4, false)]);
    c.set_queues(BTreeMap::from([(QueueId(0), 2)]), BTreeMap::new());
    c.add(&sliced(1, SliceAsk::Share { milli: 500 }));
    c.add(&whole(2, 2));
    c.add(&whole(3, 1));
    let s = c.pass(1.0, &[]);
    let ids: Vec<u64> = s.iter().map(|p| p.job).collect();
    assert_eq!(
        ids,
        [1, 3],
        "half a GPU rounds up: 2 more would pass the cap of 2"
    );
    assert_eq!(c.queue_milli()[&QueueId(0)], 1500);
    assert!(caps::slice_fits(1, 500, 500, 2));
    assert!(!caps::slice_fits(1, 500, 501, 2));

    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 4, false)]);
    c.set_user_caps(BTreeMap::from([(QueueId(0), 2)]));
    c.add(&whole(1, 1));
    c.add(&whole(2, 2));
    c.add(&LiveJob {
        user: "v".into(),
        ..whole(3, 2)
    });
    let s = c.pass(1.0, &[]);
    assert_eq!(c.over_user_caps(), BTreeSet::from([2]));
    let ids: Vec<u64> = s.iter().map(|p| p.job).collect();
    assert_eq!(ids, [1, 3], "u's second job would hold 3 of 2");
}

#[test]
fn memory_shares_are_charged_on_the_smallest_gpu_and_mig_gpus_serve_only_mig() {
    let mut a = node("a", 1, false);
    let mut m = node("a", 1, true);
    m.gpus[0].index = 1;
    a.gpus.extend(m.gpus);
    let mut n = NodeSlices::from_node(&a);
    assert_eq!(n.not_whole(), BTreeSet::from([1]), "the MIG GPU");
    let snap = |n: &NodeSlices| vec![("a".to_string(), n.clone())];
    let mem = slice_job(1, SliceAsk::Memory { mib: 20480 });
    let (_, at) = place::place(&mem, &snap(&n), &[], ShareStrategy::Fgd).unwrap();
    assert_eq!((at.gpu, at.milli, at.mem_mib), (0, 250, 20480));
    let mig = |id| {
        slice_job(
            id,
            SliceAsk::Mig {
                profile: "3g.40gb".into(),
            },
        )
    };
    let (_, at) = place::place(&mig(2), &snap(&n), &[], ShareStrategy::Fgd).unwrap();
    let m = at.mig.clone().unwrap();
    assert_eq!(
        (at.gpu, m.start, m.create),
        (1, 4, false),
        "the idle instance"
    );
    assert_eq!(m.uuid.as_deref(), Some("MIG-x"));
    assert_eq!(n.apply(2, "u", &at), Some(false));
    let (_, at) = place::place(&mig(3), &snap(&n), &[], ShareStrategy::Fgd).unwrap();
    let m = at.mig.clone().unwrap();
    assert_eq!((m.start, m.create), (0, true), "created in the free half");
    n.apply(3, "u", &at).unwrap();
    let small = slice_job(
        4,
        SliceAsk::Mig {
            profile: "1g.10gb".into(),
        },
    );
    assert!(place::place(&small, &snap(&n), &[], ShareStrategy::Fgd).is_none());
    n.release(3);
    assert_eq!(
        n.gpus[1].mig.as_ref().unwrap().slots.len(),
        1,
        "created instance gone"
    );
    // A whole-held GPU takes no share.
    assert!(n.take_whole(9, &[0]));
    assert!(place::place(&mem, &snap(&n), &[], ShareStrategy::BestFit).is_none());
    assert!(!n.take_whole(8, &[0]), "held");
    assert!(!n.take_whole(8, &[1]), "MIG");
}

#[test]
fn on_an_mps_node_a_gpu_holds_one_users_shares() {
    let mut a = node("a", 2, false);
    a.mps = true;
    let mut n = NodeSlices::from_node(&a);
    let ask = |id: u64, user: &str| SliceJob {
        user: user.into(),
        ..slice_job(id, SliceAsk::Share { milli: 250 })
    };
    let snap = |n: &NodeSlices| vec![("a".to_string(), n.clone())];
    let (_, at) = place::place(&ask(1, "alice"), &snap(&n), &[], ShareStrategy::BestFit).unwrap();
    n.apply(1, "alice", &at).unwrap();
    let (_, same) = place::place(&ask(2, "alice"), &snap(&n), &[], ShareStrategy::BestFit).unwrap();
    assert_eq!(same.gpu, at.gpu, "alice's shares pack together");
    let (_, other) = place::place(&ask(3, "bob"), &snap(&n), &[], ShareStrategy::BestFit).unwrap();
    assert_ne!(other.gpu, at.gpu, "bob gets the other GPU");
    assert_eq!(n.apply(3, "bob", &at), None, "and never alice's");
}

#[test]
fn wait_reasons_name_what_holds_each_job() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 2, false)]);
    c.set_queues(BTreeMap::from([(QueueId(1), 1)]), BTreeMap::new());
    c.set_user_caps(BTreeMap::from([(QueueId(2), 1)]));
    c.add(&whole(1, 1));
    c.add(&LiveJob {
        queue: QueueId(1),
        ..whole(2, 1)
    });
    assert_eq!(c.pass(1.0, &[]).len(), 2);
    let ctx = c.wait_context();
    let why = |c: &LiveCluster, j: &LiveJob, ctx: &WaitContext| {
        c.wait_reason(j, &Blocked::default(), ctx)
    };
    let unmet = vec![(After::Ok, 4), (After::Any, 5)];
    let deps = Blocked {
        held: false,
        unmet: unmet.clone(),
    };
    assert_eq!(
        c.wait_reason(&whole(9, 1), &deps, &ctx),
        WaitReason::Dependency {
            unmet: unmet.clone()
        }
    );
    // A hold comes first, and says what the job waits for once released.
    let held = Blocked { held: true, ..deps };
    assert_eq!(
        c.wait_reason(&whole(9, 1), &held, &ctx),
        WaitReason::Held { unmet }
    );
    let q1 = |id, gpus| LiveJob {
        queue: QueueId(1),
        ..whole(id, gpus)
    };
    assert_eq!(
        why(&c, &q1(3, 2), &ctx),
        WaitReason::LargerThanQueue { max: 1, gpus: 2 }
    );
    assert_eq!(
        why(&c, &q1(3, 1), &ctx),
        WaitReason::QueueAtCap { held: 1, max: 1 }
    );
    let share = LiveJob {
        queue: QueueId(1),
        ..sliced(4, SliceAsk::Share { milli: 100 })
    };
    assert_eq!(
        why(&c, &share, &ctx),
        WaitReason::SliceQueueAtCap {
            held_milli: 1000,
            max: 1
        }
    );
    assert_eq!(
        why(&c, &whole(5, 3), &ctx),
        WaitReason::NoNodeCanHold {
            gpus: 3,
            model: None
        }
    );
    let h100 = LiveJob {
        model: Some("H100".into()),
        ..whole(5, 1)
    };
    assert!(matches!(
        why(&c, &h100, &ctx),
        WaitReason::NoNodeCanHold { .. }
    ));
    c.add(&whole(6, 1));
    c.add(&whole(7, 1));
    let ctx = c.wait_context();
    assert_eq!(
        why(&c, &whole(6, 1), &ctx),
        WaitReason::WaitingForGpus {
            gpus: 1,
            model: None,
            free_max: 0,
            waiting: 2
        }
    );
    c.remove(1, 0.0);
    let ctx = c.wait_context();
    assert_eq!(why(&c, &whole(6, 1), &ctx), WaitReason::Next);
    assert_eq!(why(&c, &whole(7, 1), &ctx), WaitReason::Behind { ahead: 1 });
    // The user cap: u's job in queue 2 runs; u's next one there waits, v's does not.
    let q2 = |id, user: &str| LiveJob {
        queue: QueueId(2),
        user: user.into(),
        ..whole(id, 1)
    };
    c.remove(6, 0.0);
    c.remove(7, 0.0);
    c.add(&q2(8, "u"));
    assert_eq!(c.pass(2.0, &[]).len(), 1);
    let ctx = c.wait_context();
    assert_eq!(
        why(&c, &q2(10, "u"), &ctx),
        WaitReason::UserAtCap { held: 1, cap: 1 }
    );
    assert!(
        matches!(
            why(&c, &q2(11, "v"), &ctx),
            WaitReason::WaitingForGpus { .. }
        ),
        "v is under the cap; the GPUs are what v waits for"
    );
}

fn backfill_nodes() -> LiveCluster {
    let mut policy = PolicyConfig::new(PolicyKind::Backfill);
    policy.backfill_nodes = true;
    LiveCluster::new(policy, ShareStrategy::BestFit)
}

fn timed(id: u64, gpus: u32, walltime: Option<f64>) -> LiveJob {
    LiveJob {
        walltime,
        ..whole(id, gpus)
    }
}

#[test]
fn node_backfill_keeps_the_reserved_nodes_gpus_for_the_head_job() {
    let mut c = backfill_nodes();
    c.set_nodes(vec![node("a", 2, false), node("b", 2, false)]);
    c.add(&timed(1, 1, Some(100.0)));
    c.add(&timed(2, 2, None));
    assert!(c.restore(1, "a", &[0], None, 0.0));
    assert!(c.restore(2, "b", &[0, 1], None, 0.0));
    c.add(&timed(3, 2, None)); // the head: fits on a when job 1 ends (t=100)
    c.add(&timed(4, 1, None)); // would hold a's free GPU past t=100
    c.add(&timed(5, 1, Some(50.0))); // ends by t=100
    let s = c.pass(10.0, &[]);
    let ids: Vec<u64> = s.iter().map(|p| p.job).collect();
    assert_eq!(ids, [5], "only the job that ends by the shadow: {s:?}");
    assert_eq!(s[0].parts[0].node, "a");
    c.remove(1, 0.0);
    assert!(c.pass(60.0, &[]).is_empty(), "job 5 still holds a GPU of a");
    c.remove(5, 0.0);
    let s = c.pass(61.0, &[]);
    let ids: Vec<u64> = s.iter().map(|p| p.job).collect();
    assert_eq!(ids, [3], "the head starts first when its node frees: {s:?}");
    assert_eq!(s[0].parts[0].gpus, vec![0, 1]);
}

#[test]
fn node_backfill_lets_long_jobs_run_on_other_nodes_and_unknown_shadows_block() {
    // The head reserves b (its job ends at t=10); a long job may use a.
    let mut c = backfill_nodes();
    c.set_nodes(vec![node("a", 2, false), node("b", 2, false)]);
    c.add(&timed(1, 1, Some(100.0)));
    c.add(&timed(2, 1, Some(10.0)));
    assert!(c.restore(1, "a", &[0], None, 0.0));
    assert!(c.restore(2, "b", &[0], None, 0.0));
    c.add(&timed(3, 2, None));
    c.add(&timed(4, 1, None));
    let s = c.pass(1.0, &[]);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!((s[0].job, s[0].parts[0].node.as_str()), (4, "a"));

    // No running job has a walltime: nothing is known to end by the shadow, so no job
    // backfills onto the reserved node, even one with a walltime.
    let mut c = backfill_nodes();
    c.set_nodes(vec![node("a", 2, false)]);
    c.add(&timed(1, 1, None));
    assert!(c.restore(1, "a", &[0], None, 0.0));
    c.add(&timed(2, 2, None));
    c.add(&timed(3, 1, Some(1.0)));
    c.add(&timed(4, 1, None));
    assert!(c.pass(1.0, &[]).is_empty());
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&timed(4, 1, None), &Blocked::default(), &ctx),
        WaitReason::Reserved {
            head: 2,
            node: "a".into(),
            shadow: None
        }
    );
    assert_eq!(
        c.wait_reason(&timed(2, 2, None), &Blocked::default(), &ctx),
        WaitReason::WaitingForGpus {
            gpus: 2,
            model: None,
            free_max: 1,
            waiting: 3
        }
    );
    // The cluster-wide reservation (the simulator's default) lets them through.
    let mut c = cluster(PolicyKind::Backfill);
    c.set_nodes(vec![node("a", 2, false)]);
    c.add(&timed(1, 1, None));
    assert!(c.restore(1, "a", &[0], None, 0.0));
    c.add(&timed(2, 2, None));
    c.add(&timed(3, 1, Some(1.0)));
    assert_eq!(c.pass(1.0, &[]).len(), 1);
}

#[test]
fn a_claim_starts_first_on_its_node_and_holds_its_free_gpus_until_then() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 2, false), node("b", 1, false)]);
    c.add(&whole(1, 1));
    assert!(c.restore(1, "a", &[0], None, 0.0));
    c.add(&whole(2, 2)); // the claimant: a frees when job 1 (a victim) ends
    c.add(&whole(3, 1));
    c.claim(2, "a");
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&whole(2, 2), &Blocked::default(), &ctx),
        WaitReason::Reclaimed { node: "a".into() }
    );
    // Job 2 cannot start anywhere (fifo blocks), and a's free GPU is held for it.
    assert!(c.pass(1.0, &[]).is_empty());
    assert_eq!(c.whole_free("a"), 1, "the hold is lifted after the pass");
    c.remove(1, 0.0);
    let s = c.pass(2.0, &[]);
    let ids: Vec<(u64, &str)> = s
        .iter()
        .map(|p| (p.job, p.parts[0].node.as_str()))
        .collect();
    assert_eq!(ids, [(2, "a"), (3, "b")]);
    assert_eq!(c.claims().count(), 0, "served");
}

#[test]
fn a_job_without_gpus_is_on_its_node_until_it_leaves() {
    let mut c = cluster(PolicyKind::Fifo);
    assert!(c.set_nodes(vec![node("a", 1, false)]).is_empty());
    c.add(&LiveJob {
        cpu_milli: 2000,
        ..whole(1, 0)
    });
    let starts = c.pass(1.0, &[]);
    assert_eq!(starts.len(), 1, "{starts:?}");
    assert_eq!(starts[0].parts[0].node, "a");
    assert!(starts[0].parts[0].gpus.is_empty(), "{starts:?}");
    // The node runs it (its agent is told by `jobs_on`), and its GPU stays free.
    assert_eq!(c.jobs_on("a"), BTreeSet::from([1]));
    assert_eq!(c.whole_free("a"), 1);
    // A node that re-registers keeps it; leaving frees the node.
    assert!(c.set_nodes(vec![node("a", 2, false)]).is_empty());
    assert_eq!(c.jobs_on("a"), BTreeSet::from([1]));
    c.remove(1, 0.0);
    assert!(c.jobs_on("a").is_empty());
}

/// `node` with its drain reason and unhealthy GPUs (index, why).
fn out_of_service(mut n: LiveNode, drained: Option<&str>, sick: &[(u32, &str)]) -> LiveNode {
    n.drained = drained.map(str::to_string);
    for &(i, why) in sick {
        n.gpus[i as usize].unhealthy = Some(why.to_string());
    }
    n
}

#[test]
fn a_drained_node_takes_nothing_new_and_keeps_what_runs() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 2, false), node("m", 1, true)]);
    c.add(&whole(1, 1));
    assert_eq!(c.pass(1.0, &[]).len(), 1);
    // Drain both: job 1 keeps its GPU; nothing new starts, whatever its form.
    let orphans = c.set_nodes(vec![
        out_of_service(node("a", 2, false), Some("maintenance"), &[]),
        out_of_service(node("m", 1, true), Some("maintenance"), &[]),
    ]);
    assert!(orphans.is_empty(), "{orphans:?}");
    assert_eq!(c.jobs_on("a"), BTreeSet::from([1]));
    c.add(&whole(2, 1));
    c.add(&sliced(3, SliceAsk::Share { milli: 250 }));
    c.add(&sliced(
        4,
        SliceAsk::Mig {
            profile: "3g.40gb".into(),
        },
    ));
    c.add(&LiveJob {
        cpu_milli: 1000,
        ..whole(5, 0)
    });
    assert_eq!(c.pass(2.0, &[]), vec![]);
    assert_eq!(c.whole_free("a"), 0, "a drained node's GPUs are not free");
    assert_eq!((c.whole_usable("a"), c.whole_capacity("a")), (0, 2));
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&whole(2, 1), &Blocked::default(), &ctx),
        WaitReason::OutOfService {
            nodes: vec![("a".into(), "drained (maintenance)".into()),]
        }
    );
    // Job 1 ends and its GPU stays out; resuming lets everything start.
    c.remove(1, 0.0);
    assert_eq!(c.pass(3.0, &[]), vec![]);
    c.set_nodes(vec![node("a", 2, false), node("m", 1, true)]);
    let started: BTreeSet<u64> = c.pass(4.0, &[]).iter().map(|p| p.job).collect();
    assert_eq!(started, BTreeSet::from([2, 3, 4, 5]));
}

#[test]
fn an_unhealthy_gpu_is_never_placed_and_its_job_keeps_it() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 2, false)]);
    c.add(&whole(1, 1));
    let first = c.pass(1.0, &[]);
    let held = first[0].parts[0].gpus[0];
    let other = 1 - held;
    // The other GPU fails: job 1 keeps its GPU, nothing goes on the sick one.
    let sick = out_of_service(node("a", 2, false), None, &[(other, "Xid 79")]);
    assert!(c.set_nodes(vec![sick.clone()]).is_empty());
    c.add(&whole(2, 1));
    c.add(&sliced(3, SliceAsk::Share { milli: 100 }));
    assert_eq!(c.pass(2.0, &[]), vec![]);
    assert_eq!(c.whole_usable("a"), 1);
    // A 2-GPU job could never fit on the node's one healthy GPU: out of service.
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&whole(7, 2), &Blocked::default(), &ctx),
        WaitReason::OutOfService {
            nodes: vec![("a".into(), format!("GPU {other} is unhealthy (Xid 79)"))]
        }
    );
    // Job 1 ends: its healthy GPU goes to the next job (the share, slices first); the
    // sick one still to nobody.
    c.remove(1, 0.0);
    let next = c.pass(3.0, &[]);
    assert_eq!(next.len(), 1, "{next:?}");
    assert_eq!(next[0].job, 3);
    assert_eq!(next[0].parts[0].gpus, vec![held]);
    c.remove(3, 0.0);
    let next = c.pass(4.0, &[]);
    assert_eq!((next[0].job, &next[0].parts[0].gpus), (2, &vec![held]));
    // The job on the unhealthy GPU survives a restart of the cluster's view (restore).
    let mut d = cluster(PolicyKind::Fifo);
    d.set_nodes(vec![sick]);
    d.add(&whole(8, 1));
    assert!(d.restore(8, "a", &[other], None, 1.0));
    assert_eq!(d.whole_free("a"), 1);
}

#[test]
fn a_sick_gpu_left_on_a_mixed_cluster_sends_the_job_to_another_node() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![
        out_of_service(node("a", 1, false), None, &[(0, "lost")]),
        node("b", 1, false),
    ]);
    c.add(&whole(1, 1));
    c.add(&whole(2, 1));
    let starts = c.pass(1.0, &[]);
    assert_eq!(starts.len(), 1, "{starts:?}");
    assert_eq!(starts[0].parts[0].node, "b");
    // Job 2 waits for a GPU (b's), not for an out-of-service node.
    let ctx = c.wait_context();
    assert!(
        matches!(
            c.wait_reason(&whole(2, 1), &Blocked::default(), &ctx),
            WaitReason::WaitingForGpus { .. }
        ),
        "{:?}",
        c.wait_reason(&whole(2, 1), &Blocked::default(), &ctx)
    );
}

#[test]
fn estimates_never_count_on_gpus_out_of_placement() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 1, false), node("b", 1, false)]);
    let timed = |id, walltime| LiveJob {
        walltime: Some(walltime),
        ..whole(id, 1)
    };
    c.add(&timed(1, 100.0));
    c.add(&timed(2, 300.0));
    assert_eq!(c.pass(0.0, &[]).len(), 2);
    c.add(&timed(3, 10.0));
    // Both nodes in service: job 3 starts when job 1 ends, at 100.
    assert_eq!(c.estimate_starts(0.0).get(&3), Some(&100.0));
    // Whichever node runs job 1 is drained: job 3 waits for job 2's end at 300.
    let first = c.jobs_on("a").contains(&1);
    let drained = |n: LiveNode, on: bool| LiveNode {
        drained: on.then(|| "maintenance".into()),
        ..n
    };
    c.set_nodes(vec![
        drained(node("a", 1, false), first),
        drained(node("b", 1, false), !first),
    ]);
    assert_eq!(c.estimate_starts(0.0).get(&3), Some(&300.0));
}

/// A blocker's end is its start plus its walltime, whenever the estimate is asked: not
/// "now + walltime" from the last pass's accounting (which moved the answer on with the
/// clock between passes).
#[test]
fn an_estimated_start_stays_put_between_passes() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![node("a", 1, false)]);
    c.add(&LiveJob {
        walltime: Some(600.0),
        ..whole(1, 1)
    });
    assert_eq!(c.pass(0.0, &[]).len(), 1);
    c.add(&whole(2, 1));
    for now in [0.0, 4.0, 9.0, 35.0] {
        assert_eq!(
            c.estimate_starts(now).get(&2),
            Some(&600.0),
            "asked at {now}"
        );
    }
}

/// Under `rr` a waiting job's estimated start is when a turn ends, not when the running
/// job would end: each job holds the GPU for one quantum while others wait, and a job
/// without a walltime makes way at its turn's end all the same.
#[test]
fn under_turns_an_estimated_start_is_the_end_of_a_turn() {
    let mut c = cluster(PolicyKind::Rr);
    c.set_rr_quantum(100.0);
    c.set_nodes(vec![node("a", 1, false)]);
    c.add(&LiveJob {
        walltime: Some(1000.0),
        ..whole(1, 1)
    });
    assert_eq!(c.pass(0.0, &[]).len(), 1);
    c.add(&LiveJob {
        walltime: Some(1000.0),
        ..whole(2, 1)
    });
    c.add(&LiveJob {
        walltime: Some(30.0),
        ..whole(3, 1)
    });
    c.add(&whole(4, 1));
    let est = c.estimate_starts(10.0);
    // Job 1's turn ends at 100, job 2's at 200, job 3 ends within its turn at 230.
    assert_eq!(est.get(&2), Some(&100.0));
    assert_eq!(est.get(&3), Some(&200.0));
    assert_eq!(est.get(&4), Some(&230.0));
    // Past its turn, job 1 makes way at once.
    assert_eq!(c.estimate_starts(150.0).get(&2), Some(&150.0));

    // A running job without a walltime still makes way at its turn's end; under
    // `fifo` nobody behind it gets an estimate.
    for (policy, expect) in [(PolicyKind::Rr, Some(100.0)), (PolicyKind::Fifo, None)] {
        let mut c = cluster(policy);
        c.set_rr_quantum(100.0);
        c.set_nodes(vec![node("a", 1, false)]);
        c.add(&whole(1, 1));
        assert_eq!(c.pass(0.0, &[]).len(), 1);
        c.add(&whole(2, 1));
        assert_eq!(
            c.estimate_starts(10.0).get(&2).copied(),
            expect,
            "{policy:?}"
        );
    }
}
