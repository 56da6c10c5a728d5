//! Heterogeneous GPUs in the live cluster: a job with a preference of GPU models
//! (`JobSpec::prefer`, fastest for it first) goes to the fastest type that has room, in
//! its node sets, gangs included; with no room there, any type; a job that names a
//! model keeps it.

use super::tests::{node, whole};
use super::*;
use crate::gang::{Gang, GangShape};
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind};

fn typed(name: &str, gpus: u32, model: &str) -> LiveNode {
    let mut n = node(name, gpus, false);
    n.model = model.into();
    for g in &mut n.gpus {
        g.model = model.into();
    }
    n
}

fn cluster() -> LiveCluster {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_nodes(vec![
        typed("v1", 4, "V100"),
        typed("a1", 4, "A100"),
        typed("h1", 4, "H100"),
    ]);
    c
}

fn prefers(id: u64, gpus: u32, models: &[&str]) -> LiveJob {
    LiveJob {
        prefer: models.iter().map(|m| m.to_string()).collect(),
        ..whole(id, gpus)
    }
}

fn placed(c: &mut LiveCluster, at: f64) -> Vec<(u64, Vec<String>)> {
    c.pass(at, &[])
        .iter()
        .map(|p| (p.job, p.parts.iter().map(|x| x.node.clone()).collect()))
        .collect()
}

#[test]
fn each_job_goes_to_the_type_where_it_gains_most_while_that_type_has_room() {
    let mut c = cluster();
    c.add(&prefers(1, 4, &["H100", "A100", "V100"]));
    c.add(&prefers(2, 2, &["A100", "H100", "V100"]));
    // Gains little anywhere: its preference puts V100 first.
    c.add(&prefers(3, 2, &["V100", "A100", "H100"]));
    // The H100 node is full: the next best with room.
    c.add(&prefers(4, 2, &["H100", "A100", "V100"]));
    assert_eq!(
        placed(&mut c, 1.0),
        [
            (1, vec!["h1".to_string()]),
            (2, vec!["a1".to_string()]),
            (3, vec!["v1".to_string()]),
            (4, vec!["a1".to_string()]),
        ]
    );
}

#[test]
fn a_named_model_wins_over_the_preference_and_no_preference_keeps_the_strategy() {
    let mut c = cluster();
    c.add(&LiveJob {
        model: Some("V100".into()),
        ..prefers(1, 1, &["H100"])
    });
    c.add(&prefers(2, 1, &[]));
    let got = placed(&mut c, 1.0);
    assert_eq!(got[0], (1, vec!["v1".to_string()]));
    // Without a preference, best-fit's choice among equal nodes, as before: the first.
    let mut plain = cluster();
    plain.add(&whole(2, 1));
    assert_eq!(got[1], placed(&mut plain, 1.0)[0]);
}

#[test]
fn a_gang_prefers_one_fast_type_for_all_its_parts() {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_nodes(vec![
        typed("v1", 2, "V100"),
        typed("v2", 2, "V100"),
        typed("h1", 2, "H100"),
        typed("h2", 2, "H100"),
    ]);
    c.add(&LiveJob {
        gang: Some(Gang {
            shape: GangShape::Nodes {
                nodes: 2,
                per_node: 2,
            },
            mixed_models: false,
        }),
        ..prefers(1, 4, &["H100", "V100"])
    });
    let mut nodes = placed(&mut c, 1.0)[0].1.clone();
    nodes.sort();
    assert_eq!(nodes, ["h1", "h2"]);
}
