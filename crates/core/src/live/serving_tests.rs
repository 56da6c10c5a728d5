//! The serving tier in the round: a waiting replica takes a node from the cheapest
//! training jobs, once at a time, and starts there first; replicas are never victims of
//! any preemption; nothing is preempted when a node has room.

use super::tests::{node, whole};
use super::*;
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind, QueueId};

fn job(id: u64, gpus: u32, queue: u32, priority: i32) -> LiveJob {
    LiveJob {
        queue: QueueId(queue),
        priority,
        ..whole(id, gpus)
    }
}

fn replica(id: u64, gpus: u32) -> LiveJob {
    LiveJob {
        serving: true,
        ..job(id, gpus, 2, 0)
    }
}

fn round(c: &mut LiveCluster, now_ms: u64) -> Round {
    c.round(RoundInput {
        now_ms,
        share_target: &[],
        guess: &|_| None,
    })
}

/// Tells the core every placed job started at `start_ms` and runs.
fn started(c: &mut LiveCluster, start_ms: u64) {
    for id in c.placed() {
        c.set_run(
            id,
            RunFacts {
                running: true,
                start_ms: Some(start_ms),
                ..Default::default()
            },
        );
    }
}

fn cluster(policy: PolicyKind, nodes: &[(&str, u32)]) -> LiveCluster {
    let mut c = LiveCluster::new(PolicyConfig::new(policy), ShareStrategy::BestFit);
    c.set_nodes(nodes.iter().map(|&(n, g)| node(n, g, false)).collect());
    c.set_min_runtime_ms(60_000);
    c
}

#[test]
fn a_replica_preempts_the_lowest_priority_training_job_and_starts_on_its_node() {
    let mut c = cluster(PolicyKind::Fifo, &[("a", 4), ("b", 4)]);
    c.add(&job(1, 4, 0, 5)); // a
    c.add(&job(2, 2, 1, 0)); // b, the lowest priority (another queue)
    c.add(&job(3, 2, 1, 10)); // b
    assert_eq!(round(&mut c, 0).starts.len(), 3);
    started(&mut c, 0);
    c.add(&replica(10, 2));
    // Young runs are protected.
    assert!(round(&mut c, 30_000).serving.is_none());
    let r = round(&mut c, 120_000);
    let s = r.serving.expect("the replica takes a node");
    assert_eq!(
        (s.job, s.node.as_str(), s.victims.clone()),
        (10, "b", vec![2])
    );
    assert!(r.reclaim.is_none() && r.tier.is_none());
    assert!(c.run(2).is_some_and(|f| f.stopping));
    assert_eq!(c.claim_of(10), Some("b"));
    // Once at a time: nothing more while the victim stops.
    c.add(&replica(11, 2));
    assert!(round(&mut c, 121_000).serving.is_none());
    // The victim leaves: the replica starts first on its node, before job 2 (older).
    c.requeue(2, 122.0);
    let r = round(&mut c, 122_000);
    assert_eq!(r.starts[0].job, 10);
    assert_eq!(r.starts[0].parts[0].node, "b");
}

#[test]
fn a_gang_victim_goes_whole() {
    let mut c = cluster(PolicyKind::Fifo, &[("a", 2), ("b", 2)]);
    let gang = LiveJob {
        gang: Some(crate::gang::Gang {
            shape: crate::gang::GangShape::Nodes {
                nodes: 2,
                per_node: 2,
            },
            mixed_models: false,
        }),
        ..job(1, 4, 0, 0)
    };
    c.add(&gang);
    assert_eq!(round(&mut c, 0).starts.len(), 1);
    started(&mut c, 0);
    c.add(&replica(10, 1));
    let s = round(&mut c, 120_000).serving.expect("the gang goes");
    // Both nodes cost the same (the gang's whole GPUs): the lower one is claimed.
    assert_eq!((s.node.as_str(), s.victims.clone()), ("a", vec![1]));
    assert!(c.run(1).is_some_and(|f| f.stopping));
}

#[test]
fn a_replica_is_never_a_victim_of_another() {
    let mut c = cluster(PolicyKind::Fifo, &[("a", 4)]);
    c.add(&replica(1, 4));
    round(&mut c, 0);
    started(&mut c, 0);
    c.add(&replica(2, 2));
    assert!(round(&mut c, 600_000).serving.is_none());
}

#[test]
fn a_replica_is_never_a_victim_of_the_policy() {
    // A short job does not preempt a long replica under srtf.
    let mut c = cluster(PolicyKind::Srtf, &[("a", 2)]);
    c.add(&LiveJob {
        walltime: Some(10_000.0),
        ..replica(1, 2)
    });
    round(&mut c, 0);
    started(&mut c, 0);
    c.add(&LiveJob {
        walltime: Some(10.0),
        submit: 5.0,
        ..whole(2, 2)
    });
    assert!(round(&mut c, 70_000).policy_victims.is_empty());
    assert!(round(&mut c, 80_000).policy_victims.is_empty());
}

#[test]
fn a_replica_is_never_a_victim_of_quota_reclaim() {
    // Queue 0 (quota 4) does not take GPUs back from replicas of queue 2 (quota 0).
    let mut c = cluster(PolicyKind::Fifo, &[("a", 4)]);
    c.set_queue_rules(vec![
        QueueRules {
            queue: QueueId(0),
            quota: 4,
            preemptible: true,
            ..Default::default()
        },
        QueueRules {
            queue: QueueId(2),
            preemptible: true,
            ..Default::default()
        },
    ]);
    c.add(&replica(1, 2));
    c.add(&replica(2, 2));
    round(&mut c, 0);
    started(&mut c, 0);
    c.add(&job(10, 2, 0, 0));
    assert!(round(&mut c, 600_000).reclaim.is_none());
}

#[test]
fn a_replica_is_never_a_victim_of_priority_tiers() {
    // A higher tier of its queue does not preempt a replica.
    let mut c = cluster(PolicyKind::Fifo, &[("a", 4)]);
    c.set_queue_rules(vec![QueueRules {
        queue: QueueId(2),
        preempt_lower_priority: true,
        priority_tiers: vec![100],
        ..Default::default()
    }]);
    c.add(&replica(1, 4));
    round(&mut c, 0);
    started(&mut c, 0);
    c.add(&job(10, 2, 2, 100));
    assert!(round(&mut c, 600_000).tier.is_none());
}

#[test]
fn no_preemption_when_a_node_has_room() {
    // It fits: it starts, nobody is asked to stop.
    let mut c = cluster(PolicyKind::Fifo, &[("a", 4), ("b", 4)]);
    c.add(&job(1, 4, 0, 0));
    round(&mut c, 0);
    started(&mut c, 0);
    c.add(&replica(10, 2));
    let r = round(&mut c, 600_000);
    assert!(r.serving.is_none());
    assert_eq!(r.starts[0].job, 10);
    // GPUs free on b, but its CPUs are held: the replica waits for CPUs, which no
    // preemption of GPUs on a would give it.
    let mut c = cluster(PolicyKind::Fifo, &[("a", 4), ("b", 4)]);
    c.add(&job(1, 4, 0, 0));
    c.add(&LiveJob {
        cpu_milli: 8_000,
        ..job(2, 2, 0, 0)
    });
    assert_eq!(round(&mut c, 0).starts.len(), 2);
    started(&mut c, 0);
    c.add(&LiveJob {
        cpu_milli: 1_000,
        ..replica(10, 2)
    });
    let r = round(&mut c, 600_000);
    assert!(r.starts.is_empty());
    assert!(r.serving.is_none());
}
