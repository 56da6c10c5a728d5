//! Gangs on the live cluster: all-or-nothing placement on N whole parts, never
//! double-booked, one GPU model, restore, orphans, caps, backfill and wait reasons.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::gang::{Gang, GangShape};
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind, QueueId};

fn node(name: &str, n: u32, model: &str) -> LiveNode {
    LiveNode {
        name: name.into(),
        model: model.into(),
        cpus: 8,
        mem_mib: 1 << 20,
        mps: false,
        gpus: (0..n)
            .map(|index| LiveGpu {
                index,
                model: model.into(),
                mem_mib: 81920,
                mig: None,
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

fn a100(name: &str, n: u32) -> LiveNode {
    node(name, n, "A100")
}

fn whole(id: u64, gpus: u32) -> LiveJob {
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

fn gang(id: u64, nodes: u32, per_node: u32) -> LiveJob {
    LiveJob {
        gang: Some(Gang {
            shape: GangShape::Nodes { nodes, per_node },
            mixed_models: false,
        }),
        ..whole(id, nodes * per_node)
    }
}

fn split(id: u64, gpus: u32, tasks_per_node: Option<u32>) -> LiveJob {
    LiveJob {
        gang: Some(Gang {
            shape: GangShape::Split { tasks_per_node },
            mixed_models: false,
        }),
        ..whole(id, gpus)
    }
}

fn cluster(kind: PolicyKind) -> LiveCluster {
    let mut policy = PolicyConfig::new(kind);
    policy.backfill_nodes = kind == PolicyKind::Backfill;
    LiveCluster::new(policy, ShareStrategy::BestFit)
}

/// (node, GPU index) of every whole GPU held, asserting none is held twice.
fn held(c: &LiveCluster) -> BTreeSet<(String, u32)> {
    let mut out = BTreeSet::new();
    for n in c.nodes() {
        let b = c.slices(&n.name).unwrap();
        for &g in b.whole.keys() {
            assert!(out.insert((n.name.clone(), g)), "{} GPU {g} twice", n.name);
        }
    }
    out
}

fn nodes_of(p: &LivePlacement) -> Vec<&str> {
    p.parts.iter().map(|x| x.node.as_str()).collect()
}

#[test]
fn a_gang_starts_on_n_whole_parts_or_not_at_all() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 4), a100("b", 4), a100("c", 4)]);
    c.add(&whole(1, 2));
    c.add(&gang(2, 3, 4));
    let s = c.pass(1.0, &[]);
    // Job 1 takes 2 GPUs of a; no 3 nodes with 4 free: the gang waits, whole.
    assert_eq!(s.iter().map(|p| p.job).collect::<Vec<_>>(), [1]);
    assert_eq!(held(&c).len(), 2);
    assert!(c.jobs_on("b").is_empty() && c.jobs_on("c").is_empty());
    c.remove(1, 0.0);
    let s = c.pass(2.0, &[]);
    assert_eq!(s.len(), 1);
    let p = &s[0];
    assert_eq!(p.job, 2);
    assert_eq!(nodes_of(p), ["a", "b", "c"], "rank order: node name");
    assert!(p.parts.iter().all(|x| x.gpus == [0, 1, 2, 3]));
    assert_eq!(held(&c).len(), 12);
    for n in ["a", "b", "c"] {
        assert_eq!(c.jobs_on(n), BTreeSet::from([2]));
    }
    assert_eq!(c.placed(), [2], "a gang is placed once");
    c.remove(2, 0.0);
    assert!(held(&c).is_empty(), "every part freed");
}

#[test]
fn gang_parts_are_never_double_booked_with_other_jobs() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 8), a100("b", 8), a100("c", 8)]);
    for id in 1..=3 {
        c.add(&whole(id, 3));
    }
    c.add(&gang(4, 2, 5));
    c.add(&gang(5, 2, 4));
    c.add(&whole(6, 2));
    let s = c.pass(1.0, &[]);
    let started: Vec<u64> = s.iter().map(|p| p.job).collect();
    // 3+3+3 on a, b, c (best fit), then the 2 x 5 gang on two nodes with 5 left; the
    // 2 x 4 gang does not fit anymore and blocks (fifo).
    assert_eq!(started, [1, 2, 3, 4], "{s:?}");
    let all = held(&c);
    let from_starts: usize = s.iter().flat_map(|p| &p.parts).map(|x| x.gpus.len()).sum();
    assert_eq!(all.len(), from_starts);
    let g = s.iter().find(|p| p.job == 4).unwrap();
    assert_eq!(g.parts.len(), 2);
    assert!(g.parts[0].node != g.parts[1].node);
}

#[test]
fn a_gang_uses_one_gpu_model_unless_mixed_and_honours_the_prefix() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![
        a100("a", 4),
        node("h1", 4, "H100"),
        node("h2", 4, "H100"),
    ]);
    // 2 x 4 of one model: the H100 pair, the only two nodes of one model.
    c.add(&gang(1, 2, 4));
    let s = c.pass(1.0, &[]);
    assert_eq!(nodes_of(&s[0]), ["h1", "h2"]);
    c.remove(1, 0.0);
    // 3 x 4 of one model: never; mixed: a, h1, h2.
    c.add(&gang(2, 3, 4));
    assert!(c.pass(2.0, &[]).is_empty());
    let ctx = c.wait_context();
    let why = c.wait_reason(&gang(2, 3, 4), &Blocked::default(), &ctx);
    assert_eq!(
        why,
        WaitReason::GangNeverFits {
            nodes: 3,
            per_node: 4,
            model: None,
            mixed: false,
            room: false,
            have: 2
        }
    );
    c.remove(2, 0.0);
    let mixed = LiveJob {
        gang: Some(Gang {
            shape: GangShape::Nodes {
                nodes: 3,
                per_node: 4,
            },
            mixed_models: true,
        }),
        ..gang(3, 3, 4)
    };
    c.add(&mixed);
    let s = c.pass(3.0, &[]);
    assert_eq!(nodes_of(&s[0]), ["a", "h1", "h2"]);
    c.remove(3, 0.0);
    // A model prefix: only the H100s.
    let picky = LiveJob {
        model: Some("H1".into()),
        ..gang(4, 2, 2)
    };
    c.add(&picky);
    let s = c.pass(4.0, &[]);
    assert_eq!(nodes_of(&s[0]), ["h1", "h2"]);
}

#[test]
fn a_gang_needs_its_cpus_and_memory_on_every_node() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 2), a100("b", 2)]);
    let cpu = |id| LiveJob {
        cpu_milli: 6000,
        ..gang(id, 2, 1)
    };
    c.add(&cpu(1));
    let s = c.pass(1.0, &[]);
    assert_eq!(nodes_of(&s[0]), ["a", "b"]);
    // Each node has 2 of 8 CPUs left: a second gang of 6 CPUs per node waits.
    c.add(&cpu(2));
    assert!(c.pass(2.0, &[]).is_empty());
    let ctx = c.wait_context();
    assert!(matches!(
        c.wait_reason(&cpu(2), &Blocked::default(), &ctx),
        WaitReason::WaitingForNodes {
            nodes: 2,
            per_node: 1,
            free_nodes: 0,
            ..
        }
    ));
    c.remove(1, 0.0);
    assert_eq!(c.pass(3.0, &[]).len(), 1, "both nodes' CPUs came back");
}

#[test]
fn a_split_job_takes_the_fewest_nodes_with_tasks_dividing_the_part() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 8), a100("b", 8), a100("c", 8), a100("d", 8)]);
    c.add(&split(1, 16, None));
    let s = c.pass(1.0, &[]);
    assert_eq!(s[0].parts.len(), 2, "16 on 8-GPU nodes: 2 x 8");
    assert!(s[0].parts.iter().all(|p| p.gpus.len() == 8));
    c.remove(1, 0.0);
    // Half of each node busy: 16 goes as 4 x 4; with 3 tasks per node it cannot.
    for (id, n) in [(2, "a"), (3, "b"), (4, "c"), (5, "d")] {
        c.add(&whole(id, 4));
        assert!(c.restore(id, n, &[0, 1, 2, 3], None, 1.0));
    }
    c.add(&split(6, 12, Some(3)));
    c.add(&split(7, 16, None));
    let s = c.pass(2.0, &[]);
    assert_eq!(s.len(), 1, "{s:?}");
    // 12 with 3 tasks per node: parts of 12, 6 or 3 GPUs; 4 nodes with 4 free hold
    // 4 x 3.
    assert_eq!(s[0].job, 6);
    assert_eq!(s[0].parts.len(), 4);
    assert!(s[0].parts.iter().all(|p| p.gpus.len() == 3));
    // What is left: 1 GPU per node: 16 waits for 2 nodes with 8 free (no node has 16).
    let ctx = c.wait_context();
    assert!(matches!(
        c.wait_reason(&split(7, 16, None), &Blocked::default(), &ctx),
        WaitReason::WaitingForNodes {
            nodes: 2,
            per_node: 8,
            free_nodes: 0,
            ..
        }
    ));
    // A split no node set can hold: 3 tasks per node on 2-GPU nodes.
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 2), a100("b", 2)]);
    c.add(&split(1, 6, Some(3)));
    assert!(c.pass(1.0, &[]).is_empty());
    let ctx = c.wait_context();
    assert!(matches!(
        c.wait_reason(&split(1, 6, Some(3)), &Blocked::default(), &ctx),
        WaitReason::GangNeverFits { have: 0, .. }
    ));
}

#[test]
fn restore_parts_is_all_or_nothing() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 2), a100("b", 2)]);
    c.add(&whole(1, 1));
    assert!(c.restore(1, "b", &[1], None, 0.0));
    c.add(&gang(2, 2, 2));
    let part = |n: &str, g: &[u32]| NodePart {
        node: n.into(),
        gpus: g.to_vec(),
        slice: None,
    };
    // b's GPU 1 is job 1's: nothing of the gang is taken.
    assert!(!c.restore_parts(2, &[part("a", &[0, 1]), part("b", &[0, 1])], 0.0));
    assert_eq!(held(&c).len(), 1);
    assert_eq!(c.whole_free("a"), 2);
    // An unknown node, a node twice, parts that do not add up: refused.
    assert!(!c.restore_parts(2, &[part("a", &[0, 1]), part("z", &[0, 1])], 0.0));
    assert!(!c.restore_parts(2, &[part("a", &[0]), part("a", &[1])], 0.0));
    assert!(!c.restore_parts(2, &[part("a", &[0, 1])], 0.0));
    c.remove(1, 0.0);
    assert!(c.restore_parts(2, &[part("b", &[0, 1]), part("a", &[0, 1])], 0.0));
    assert_eq!(held(&c).len(), 4);
    assert!(c.pass(1.0, &[]).is_empty(), "it runs: nothing to start");
    // A plain job cannot be restored on two nodes.
    c.add(&whole(3, 2));
    assert!(!c.restore_parts(3, &[part("a", &[0]), part("b", &[0])], 0.0));
}

#[test]
fn a_gang_that_loses_a_node_keeps_its_other_parts_until_it_is_requeued() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 2), a100("b", 2), a100("c", 2)]);
    c.add(&gang(1, 2, 2));
    c.add(&whole(2, 2));
    let s = c.pass(1.0, &[]);
    assert_eq!(s.len(), 2);
    let g = s.iter().find(|p| p.job == 1).unwrap();
    let (stays, gone) = (g.parts[0].node.clone(), g.parts[1].node.clone());
    let kept: Vec<LiveNode> = c
        .nodes()
        .iter()
        .filter(|n| n.name != gone)
        .cloned()
        .collect();
    let orphans = c.set_nodes(kept.clone());
    assert!(
        orphans.is_empty(),
        "a gang with a node left is not orphaned"
    );
    assert_eq!(c.take_lost_parts(), [(1, gone.clone())]);
    assert!(c.take_lost_parts().is_empty(), "said once");
    // The part that stayed may still be stopping: its GPUs stay held, so nothing starts
    // on them.
    assert_eq!(c.jobs_on(&stays), BTreeSet::from([1]));
    c.add(&whole(3, 2));
    assert!(
        c.pass(2.0, &[]).is_empty(),
        "job 3 waits for the gang's GPUs"
    );
    // Requeued once its other part ended, the gang frees them.
    c.requeue(1, 3.0);
    assert!(c.jobs_on(&stays).is_empty());
    assert_eq!(c.whole_free(&stays), 2);
    // A gang that loses every node is orphaned whole.
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 2), a100("b", 2), a100("c", 2)]);
    c.add(&gang(1, 2, 2));
    let s = c.pass(1.0, &[]);
    let on: Vec<String> = s[0].parts.iter().map(|p| p.node.clone()).collect();
    let kept: Vec<LiveNode> = c
        .nodes()
        .iter()
        .filter(|n| !on.contains(&n.name))
        .cloned()
        .collect();
    assert_eq!(c.set_nodes(kept), [1]);
    assert!(c.take_lost_parts().is_empty());
    assert!(held(&c).is_empty());
    // A gang whose nodes all stay keeps its indices.
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 2), a100("b", 2)]);
    c.add(&gang(1, 2, 2));
    c.pass(1.0, &[]);
    let mut more = c.nodes().to_vec();
    more.push(a100("c", 2));
    assert!(c.set_nodes(more).is_empty());
    assert_eq!(c.jobs_on("a"), BTreeSet::from([1]));
    assert_eq!(c.jobs_on("b"), BTreeSet::from([1]));
    assert_eq!(c.whole_free("c"), 2);
}

#[test]
fn requeue_frees_every_part_and_the_gang_starts_again_whole() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 2), a100("b", 2)]);
    c.add(&gang(1, 2, 2));
    assert_eq!(c.pass(1.0, &[]).len(), 1);
    c.requeue(1, 2.0);
    assert!(held(&c).is_empty());
    let s = c.pass(3.0, &[]);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].parts.len(), 2);
}

#[test]
fn queue_and_user_caps_count_the_gangs_total() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 4), a100("b", 4)]);
    c.set_queues(BTreeMap::from([(QueueId(0), 6)]), BTreeMap::new());
    c.add(&gang(1, 2, 4));
    assert!(c.pass(1.0, &[]).is_empty(), "8 GPUs pass the queue's 6");
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&gang(1, 2, 4), &Blocked::default(), &ctx),
        WaitReason::LargerThanQueue { max: 6, gpus: 8 }
    );
    c.remove(1, 0.0);
    c.add(&gang(2, 2, 3));
    assert_eq!(c.pass(2.0, &[]).len(), 1);
    c.add(&whole(3, 1));
    assert!(c.pass(3.0, &[]).is_empty(), "the gang holds all 6");
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&whole(3, 1), &Blocked::default(), &ctx),
        WaitReason::QueueAtCap { held: 6, max: 6 }
    );

    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 4), a100("b", 4)]);
    c.set_user_caps(BTreeMap::from([(QueueId(0), 4)]));
    c.add(&gang(1, 2, 2));
    c.add(&whole(2, 1));
    let s = c.pass(1.0, &[]);
    assert_eq!(s.iter().map(|p| p.job).collect::<Vec<_>>(), [1]);
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&whole(2, 1), &Blocked::default(), &ctx),
        WaitReason::UserAtCap { held: 4, cap: 4 }
    );
}

#[test]
fn a_gang_waits_for_whole_nodes_while_small_jobs_backfill_without_delaying_it() {
    let mut c = cluster(PolicyKind::Backfill);
    c.set_nodes(vec![a100("a", 4), a100("b", 4), a100("c", 4)]);
    // a: 3 busy until t=100; b: 2 busy until t=50; c: 1 busy, no walltime.
    for (id, n, g, w) in [(1, "a", 3, 100.0), (2, "b", 2, 50.0)] {
        c.add(&LiveJob {
            walltime: Some(w),
            ..whole(id, g)
        });
        let idx: Vec<u32> = (0..g).collect();
        assert!(c.restore(id, n, &idx, None, 0.0));
    }
    c.add(&whole(3, 1));
    assert!(c.restore(3, "c", &[0], None, 0.0));
    // The head: 2 nodes x 4. It reserves b (free at 50) and a (free at 100).
    c.add(&gang(4, 2, 4));
    // Long jobs without walltime: one fits on c (3 free, not reserved), others only
    // on reserved nodes' extra GPUs (none: the gang needs all 4 of each).
    c.add(&whole(5, 2));
    c.add(&whole(6, 1));
    c.add(&whole(7, 1));
    // A short one ends by the shadow (t=100): it may use a reserved node (a, the
    // tightest).
    c.add(&LiveJob {
        walltime: Some(20.0),
        ..whole(8, 1)
    });
    let s = c.pass(1.0, &[]);
    let mut started: Vec<(u64, &str)> = s
        .iter()
        .map(|p| (p.job, p.parts[0].node.as_str()))
        .collect();
    started.sort();
    assert_eq!(started, [(5, "c"), (6, "c"), (8, "a")], "{s:?}");
    let ctx = c.wait_context();
    assert!(matches!(
        c.wait_reason(&whole(7, 1), &Blocked::default(), &ctx),
        WaitReason::Reserved { head: 4, .. }
    ));
    let WaitReason::Reserved { node, shadow, .. } =
        c.wait_reason(&whole(7, 1), &Blocked::default(), &ctx)
    else {
        unreachable!()
    };
    assert_eq!(
        (node.as_str(), shadow),
        ("b, a", Some(100.0)),
        "both nodes, the later shadow"
    );
    assert!(matches!(
        c.wait_reason(&gang(4, 2, 4), &Blocked::default(), &ctx),
        WaitReason::WaitingForNodes {
            nodes: 2,
            per_node: 4,
            free_nodes: 0,
            ..
        }
    ));
    // Jobs 1, 2, 8 end by the shadow: the gang starts on a and b, not delayed.
    c.remove(2, 0.0);
    c.remove(8, 0.0);
    c.remove(1, 0.0);
    let s = c.pass(100.0, &[]);
    assert_eq!(s[0].job, 4, "{s:?}");
    assert_eq!(nodes_of(&s[0]), ["a", "b"]);
}

#[test]
fn a_gang_claim_holds_gpus_on_every_claimed_node_and_starts_there_first() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 2), a100("b", 2), a100("c", 2)]);
    for (id, n) in [(1, "a"), (2, "b")] {
        c.add(&whole(id, 2));
        assert!(c.restore(id, n, &[0, 1], None, 0.0));
    }
    c.add(&whole(3, 1));
    assert!(c.restore(3, "c", &[0], None, 0.0));
    // The gang reclaimed a and c (their jobs are being preempted); a small job waits
    // behind it.
    c.add(&gang(4, 2, 2));
    c.claim_nodes(4, &["a".to_string(), "c".to_string()]);
    c.add(&whole(5, 1));
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&gang(4, 2, 2), &Blocked::default(), &ctx),
        WaitReason::Reclaimed { node: "a".into() }
    );
    // c's free GPU is held for the gang: job 5 does not take it.
    assert!(c.pass(1.0, &[]).is_empty());
    c.remove(1, 0.0);
    // a is free, c not yet: still held on both.
    assert!(c.pass(2.0, &[]).is_empty());
    c.remove(3, 0.0);
    let s = c.pass(3.0, &[]);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].job, 4);
    assert_eq!(
        nodes_of(&s[0]),
        ["a", "c"],
        "the claimed nodes, in claim order"
    );
    assert_eq!(c.claims().count(), 0, "served");
    assert_eq!(held(&c).len(), 6);
}

fn at(mut n: LiveNode, switch: &str, rack: &str) -> LiveNode {
    n.topology.switch = Some(switch.into());
    n.topology.rack = Some(rack.into());
    n
}

#[test]
fn a_gang_goes_under_one_switch_then_the_fewest_switches_of_one_rack() {
    let mut c = cluster(PolicyKind::Fifo);
    // s1: a, d (rack r1); s2: b, c, e (rack r1); s3: f (rack r2). Both s1 and s2 hold
    // two parts with nothing left over; s1's first node comes first.
    c.set_nodes(vec![
        at(a100("a", 4), "s1", "r1"),
        at(a100("b", 4), "s2", "r1"),
        at(a100("c", 4), "s2", "r1"),
        at(a100("d", 4), "s1", "r1"),
        at(a100("e", 8), "s2", "r1"),
        at(a100("f", 4), "s3", "r2"),
    ]);
    c.add(&gang(1, 2, 4));
    let s = c.pass(1.0, &[]);
    assert_eq!(nodes_of(&s[0]), ["a", "d"]);
    // 4 x 4: s2 has b, c, e: three; s3 (another rack) the fourth. Rank order: rack
    // r1's switch s2 by name, then r2.
    c.add(&gang(2, 4, 4));
    let s = c.pass(2.0, &[]);
    assert_eq!(s[0].job, 2);
    assert_eq!(nodes_of(&s[0]), ["b", "c", "e", "f"]);
    assert_eq!(held(&c).len(), 8 + 16);
    c.remove(1, 0.0);
    c.remove(2, 0.0);
    // 3 x 4 with all free: s2 alone holds three (b, c, e: e leaves 4 free; a, d, and
    // any s2 node would span two switches).
    c.add(&gang(3, 3, 4));
    let s = c.pass(3.0, &[]);
    assert_eq!(nodes_of(&s[0]), ["b", "c", "e"]);
}

#[test]
fn gpus_inside_a_node_are_the_best_linked_free_ones() {
    let mut box_ = a100("p", 8);
    // Two sockets, a PCIe switch per pair of GPUs.
    for a in 0..8u32 {
        for b in a + 1..8 {
            let kind = if a / 2 == b / 2 {
                Link::PcieSwitch
            } else if a / 4 == b / 4 {
                Link::HostBridge
            } else {
                Link::System
            };
            box_.topology.links.insert((a, b), kind);
        }
    }
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![box_]);
    c.add(&whole(1, 1));
    c.add(&whole(2, 2));
    c.add(&whole(3, 4));
    let s = c.pass(1.0, &[]);
    let gpus: BTreeMap<u64, Vec<u32>> =
        s.iter().map(|p| (p.job, p.parts[0].gpus.clone())).collect();
    // Job 1 takes GPU 0; job 2 a pair under one switch (2, 3), not 1 and 2; job 3 the
    // whole second socket.
    assert_eq!(gpus[&1], [0]);
    assert_eq!(gpus[&2], [2, 3]);
    assert_eq!(gpus[&3], [4, 5, 6, 7]);
}

#[test]
fn a_waiting_gang_gets_an_estimated_start_when_walltimes_say() {
    let mut c = cluster(PolicyKind::Fifo);
    c.set_nodes(vec![a100("a", 2), a100("b", 2)]);
    c.add(&LiveJob {
        walltime: Some(100.0),
        cpu_milli: 8000,
        ..whole(1, 1)
    });
    assert!(c.restore(1, "a", &[0], None, 0.0));
    c.add(&LiveJob {
        walltime: Some(50.0),
        cpu_milli: 8000,
        ..gang(2, 2, 2)
    });
    c.add(&LiveJob {
        cpu_milli: 8000,
        ..gang(3, 2, 1)
    });
    assert!(c.pass(0.0, &[]).is_empty());
    let est = c.estimate_starts(0.0);
    // The gang starts when job 1 ends (t=100); the next gang after it (t=150), once
    // every part's CPUs came back.
    assert_eq!(est.get(&2), Some(&100.0));
    assert_eq!(est.get(&3), Some(&150.0));
}

#[test]
fn a_gang_that_only_a_drained_node_completes_waits_on_the_drain() {
    let mut c = cluster(PolicyKind::Fifo);
    let mut b = a100("b", 4);
    b.drained = Some("maintenance".into());
    let mut d = a100("d", 4);
    d.gpus[3].unhealthy = Some("Xid 79".into());
    c.set_nodes(vec![a100("a", 4), b, d]);
    c.add(&gang(1, 2, 4));
    assert!(
        c.pass(1.0, &[]).is_empty(),
        "b is drained, d has 3 usable GPUs"
    );
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&gang(1, 2, 4), &Blocked::default(), &ctx),
        WaitReason::OutOfService {
            nodes: vec![
                ("b".into(), "drained (maintenance)".into()),
                ("d".into(), "GPU 3 is unhealthy (Xid 79)".into()),
            ]
        }
    );
    // A 2 x 3 gang fits on a and d's healthy GPUs (job 1 leaves first: FIFO is strict).
    c.remove(1, 0.0);
    c.add(&gang(2, 2, 3));
    let s = c.pass(2.0, &[]);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(nodes_of(&s[0]), ["a", "d"]);
    assert!(!s[0].parts[1].gpus.contains(&3), "{s:?}");
}
