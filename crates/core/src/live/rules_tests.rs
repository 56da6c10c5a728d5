//! Node rules in the live cluster: constraints, node lists, partitions in order, gangs
//! per part, slices, and the reasons a job with rules waits.

use std::sync::Arc;

use super::round::RoundInput;
use super::tests::{node, whole};
use super::*;
use crate::eligible::{Constraint, NodeRules, NodeSelector, PartitionNodes, Refusal};
use crate::gang::{Gang, GangShape};
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind};

fn with(name: &str, gpus: u32, features: &[&str]) -> LiveNode {
    LiveNode {
        features: features.iter().map(|f| f.to_string()).collect(),
        ..node(name, gpus, false)
    }
}

fn cluster(nodes: Vec<LiveNode>) -> LiveCluster {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_nodes(nodes);
    c
}

fn ruled(id: u64, gpus: u32, rules: NodeRules) -> LiveJob {
    LiveJob {
        rules: Some(Arc::new(rules)),
        ..whole(id, gpus)
    }
}

fn constraint(text: &str) -> NodeRules {
    NodeRules {
        constraint: Some(Constraint::parse(text).unwrap()),
        ..NodeRules::default()
    }
}

fn partition(name: &str, nodes: &[&str], span: bool) -> Arc<PartitionNodes> {
    Arc::new(PartitionNodes {
        name: name.into(),
        nodes: NodeSelector {
            names: nodes.iter().map(|n| n.to_string()).collect(),
            features: None,
        },
        span,
    })
}

fn placed_on(starts: &[LivePlacement], job: u64) -> Vec<String> {
    starts
        .iter()
        .filter(|p| p.job == job)
        .flat_map(|p| p.parts.iter().map(|x| x.node.clone()))
        .collect()
}

#[test]
fn a_constraint_keeps_a_job_to_the_nodes_with_its_features() {
    let mut c = cluster(vec![
        with("n0", 4, &["a100"]),
        with("n1", 4, &["a100", "ib"]),
        with("n2", 4, &["h100", "ib"]),
    ]);
    c.add(&ruled(1, 2, constraint("ib&!h100")));
    c.add(&ruled(2, 4, constraint("h100|v100")));
    let starts = c.pass(1.0, &[]);
    assert_eq!(placed_on(&starts, 1), ["n1"]);
    assert_eq!(placed_on(&starts, 2), ["n2"]);
    // The next job of the first kind fits n1's two GPUs left, never n0's four.
    c.add(&ruled(3, 4, constraint("ib&!h100")));
    assert!(c.pass(2.0, &[]).is_empty());
    let ctx = c.wait_context();
    let why = c.wait_reason(
        &ruled(3, 4, constraint("ib&!h100")),
        &Blocked::default(),
        &ctx,
    );
    assert_eq!(
        why,
        WaitReason::EligibleBusy {
            eligible: 1,
            gpus: 4,
            free_max: 2
        }
    );
}

#[test]
fn nodelist_and_exclude_are_honoured_and_named_when_nothing_is_left() {
    let mut c = cluster(vec![
        with("n0", 2, &[]),
        with("n1", 2, &[]),
        with("n2", 2, &[]),
    ]);
    let rules = NodeRules {
        nodelist: vec!["n0".into(), "n2".into()],
        exclude: vec!["n0".into()],
        ..NodeRules::default()
    };
    c.add(&ruled(1, 1, rules));
    assert_eq!(placed_on(&c.pass(1.0, &[]), 1), ["n2"]);
    let nowhere = NodeRules {
        nodelist: vec!["n1".into()],
        constraint: Some(Constraint::parse("a100").unwrap()),
        ..NodeRules::default()
    };
    let ctx = c.wait_context();
    let why = c.wait_reason(&ruled(2, 1, nowhere), &Blocked::default(), &ctx);
    assert_eq!(
        why,
        WaitReason::NoEligibleNode {
            refusals: vec![
                ("n0".into(), Refusal::NotListed),
                ("n1".into(), Refusal::Constraint),
                ("n2".into(), Refusal::NotListed),
            ],
            more: 0
        }
    );
}

#[test]
fn partitions_are_tried_in_order_and_a_job_never_leaves_them() {
    let mut c = cluster(vec![
        with("d0", 2, &[]),
        with("g0", 4, &[]),
        with("g1", 4, &[]),
    ]);
    let both = || NodeRules {
        partitions: vec![
            partition("debug", &["d0"], false),
            partition("gpu", &["g0", "g1"], false),
        ],
        ..NodeRules::default()
    };
    // The first partition that holds it: debug for 2 GPUs, gpu for 4.
    c.add(&ruled(1, 2, both()));
    c.add(&ruled(2, 4, both()));
    let starts = c.pass(1.0, &[]);
    assert_eq!(placed_on(&starts, 1), ["d0"]);
    assert_eq!(placed_on(&starts, 2), ["g0"]);
    // debug is full: the next goes to gpu; a debug-only job waits.
    c.add(&ruled(3, 2, both()));
    let debug_only = NodeRules {
        partitions: vec![partition("debug", &["d0"], false)],
        ..NodeRules::default()
    };
    c.add(&ruled(4, 1, debug_only.clone()));
    let starts = c.pass(2.0, &[]);
    assert_eq!(placed_on(&starts, 3), ["g1"]);
    assert!(placed_on(&starts, 4).is_empty());
}

#[test]
fn a_gang_spans_partitions_only_when_every_one_allows_it() {
    let gang = |id: u64, span: bool| LiveJob {
        gang: Some(Gang {
            shape: GangShape::Nodes {
                nodes: 2,
                per_node: 2,
            },
            mixed_models: false,
        }),
        ..ruled(
            id,
            4,
            NodeRules {
                partitions: vec![partition("a", &["a0"], span), partition("b", &["b0"], span)],
                ..NodeRules::default()
            },
        )
    };
    let mut c = cluster(vec![
        with("a0", 2, &[]),
        with("b0", 2, &[]),
        with("x0", 2, &[]),
    ]);
    c.add(&gang(1, false));
    assert!(c.pass(1.0, &[]).is_empty(), "no partition has two nodes");
    let mut c = cluster(vec![
        with("a0", 2, &[]),
        with("b0", 2, &[]),
        with("x0", 2, &[]),
    ]);
    c.add(&gang(1, true));
    let mut on = placed_on(&c.pass(1.0, &[]), 1);
    on.sort();
    assert_eq!(on, ["a0", "b0"], "never x0, outside both");
}

#[test]
fn a_node_that_registers_later_is_read_against_waiting_jobs_rules() {
    let mut c = cluster(vec![with("n0", 2, &[])]);
    c.add(&ruled(1, 1, constraint("ib")));
    assert!(c.pass(1.0, &[]).is_empty());
    c.set_nodes(vec![with("n0", 2, &[]), with("n1", 2, &["ib"])]);
    assert_eq!(placed_on(&c.pass(2.0, &[]), 1), ["n1"]);
}

#[test]
fn a_slice_job_goes_only_where_its_rules_admit() {
    let mut c = cluster(vec![with("n0", 1, &[]), with("n1", 1, &["ib"])]);
    let share = LiveJob {
        slice: Some(SliceAsk::Share { milli: 250 }),
        gpus: 0,
        ..ruled(1, 0, constraint("ib"))
    };
    c.add(&share);
    assert_eq!(placed_on(&c.pass(1.0, &[]), 1), ["n1"]);
}

fn round_at(c: &mut LiveCluster, now_s: u64) -> Vec<LivePlacement> {
    c.round(RoundInput {
        now_ms: now_s * 1000,
        share_target: &[],
        guess: &|_| None,
    })
    .starts
}

fn window(name: &str, nodes: &[&str], start: f64, end: f64, maintenance: bool) -> Window {
    Window {
        name: name.into(),
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        start,
        end,
        maintenance,
    }
}

fn timed(id: u64, gpus: u32, walltime: Option<f64>) -> LiveJob {
    LiveJob {
        walltime,
        ..whole(id, gpus)
    }
}

fn member(id: u64, gpus: u32, reservation: &str) -> LiveJob {
    ruled(
        id,
        gpus,
        NodeRules {
            reservation: Some(reservation.into()),
            ..NodeRules::default()
        },
    )
}

#[test]
fn a_window_keeps_out_what_would_run_into_it_and_admits_its_own_jobs() {
    let mut c = cluster(vec![with("n1", 4, &[]), with("n2", 1, &[])]);
    c.set_windows(vec![window("workshop", &["n1"], 100.0, 200.0, false)]);
    // At t=10: 4 GPUs only on n1. One ending by t=100 starts; one that would run
    // past it, or has no walltime, does not.
    c.add(&timed(1, 4, Some(80.0)));
    c.add(&timed(2, 4, Some(200.0)));
    c.add(&timed(3, 4, None));
    c.add(&member(4, 2, "workshop"));
    let starts = round_at(&mut c, 10);
    assert_eq!(placed_on(&starts, 1), ["n1"]);
    assert!(placed_on(&starts, 2).is_empty() && placed_on(&starts, 3).is_empty());
    let ctx = c.wait_context();
    let why = c.wait_reason(&timed(3, 4, None), &Blocked::default(), &ctx);
    assert_eq!(
        why,
        WaitReason::KeptOutByReservation {
            name: "workshop".into(),
            start: 100.0,
            open: false,
            walltime: false
        }
    );
    let why = c.wait_reason(&member(4, 2, "workshop"), &Blocked::default(), &ctx);
    assert_eq!(
        why,
        WaitReason::ReservationClosed {
            name: "workshop".into(),
            start: 100.0,
            end: 200.0
        }
    );
    c.remove(1, 90.0);
    // The window opens: its job starts there; the others stay out until it closes.
    let starts = round_at(&mut c, 100);
    assert_eq!(placed_on(&starts, 4), ["n1"]);
    assert!(placed_on(&starts, 2).is_empty() && placed_on(&starts, 3).is_empty());
    c.remove(4, 150.0);
    let starts = round_at(&mut c, 200);
    assert_eq!(placed_on(&starts, 2), ["n1"], "after the window, in order");
}

#[test]
fn a_maintenance_window_admits_nobody_and_a_gone_reservation_is_named() {
    let mut c = cluster(vec![with("n1", 2, &[])]);
    c.set_windows(vec![window("fix", &["n1"], 0.0, 100.0, true)]);
    c.add(&member(1, 1, "fix"));
    c.add(&timed(2, 1, Some(10.0)));
    c.add(&member(3, 1, "nope"));
    assert!(round_at(&mut c, 5).is_empty());
    let ctx = c.wait_context();
    assert_eq!(
        c.wait_reason(&member(3, 1, "nope"), &Blocked::default(), &ctx),
        WaitReason::ReservationGone {
            name: "nope".into()
        }
    );
    // The window deleted: everything may run (the gone reservation's job still not).
    c.set_windows(Vec::new());
    let starts = round_at(&mut c, 6);
    let mut on: Vec<u64> = starts.iter().map(|p| p.job).collect();
    on.sort();
    assert_eq!(on, [2], "job 1 and 3 run in reservations that are gone");
}

#[test]
fn a_share_keeps_out_of_a_window_as_a_whole_gpu_job_does() {
    let mut c = cluster(vec![with("n1", 1, &[]), with("n2", 1, &[])]);
    c.set_windows(vec![window("w", &["n1", "n2"], 50.0, 100.0, false)]);
    let share = |id: u64, walltime: Option<f64>| LiveJob {
        slice: Some(SliceAsk::Share { milli: 250 }),
        gpus: 0,
        walltime,
        ..whole(id, 0)
    };
    c.add(&share(1, None));
    c.add(&share(2, Some(10.0)));
    c.add(&LiveJob {
        slice: Some(SliceAsk::Share { milli: 250 }),
        gpus: 0,
        ..member(3, 0, "w")
    });
    let starts = round_at(&mut c, 1);
    let on: Vec<u64> = starts.iter().map(|p| p.job).collect();
    assert_eq!(on, [2], "only the share that ends before the window starts");
    let starts = round_at(&mut c, 60);
    let on: Vec<u64> = starts.iter().map(|p| p.job).collect();
    assert_eq!(on, [3], "in the window: its own share only");
}
