//! Node rules in the live cluster: constraints, node lists, partitions in order, gangs
//! per part, slices, and the reasons a job with rules waits.

use std::sync::Arc;

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
