//! The serving tier in the round: a waiting replica takes a node from the cheapest
//! training jobs, once at a time, and starts there first; replicas are never victims of
//! any preemption; nothing is preempted when a node has room.

use super::round_tests::{in_queue as job, round, started};
use super::tests::{node, whole};
use super::*;
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind, QueueId};
use std::collections::BTreeMap;

fn replica(id: u64, gpus: u32) -> LiveJob {
    LiveJob {
        serving: true,
        ..job(id, gpus, 2, 0)
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

// Serving jobs go first in every pass, before the policy's order for everything else.

#[test]
fn a_training_job_at_the_head_does_not_block_a_replica_under_fifo() {
    // One GPU free: the 2-GPU job at the head cannot start, the replica behind it can.
    let mut c = cluster(PolicyKind::Fifo, &[("a", 2)]);
    c.add(&job(1, 1, 0, 0));
    assert_eq!(round(&mut c, 0).starts.len(), 1);
    started(&mut c, 0);
    c.add(&job(2, 2, 0, 0));
    c.add(&replica(10, 1));
    let r = round(&mut c, 1_000);
    let ids: Vec<u64> = r.starts.iter().map(|p| p.job).collect();
    assert_eq!(ids, vec![10]);
    assert!(r.serving.is_none() && r.policy_victims.is_empty());
    // The training job keeps its place, first among the rest.
    assert_eq!(c.waiting_order(), vec![2]);
}

#[test]
fn a_replica_behind_training_jobs_takes_the_first_gpu_that_frees() {
    let mut c = cluster(PolicyKind::Fifo, &[("a", 2)]);
    c.add(&job(1, 1, 0, 0));
    c.add(&job(2, 1, 0, 0));
    c.add(&job(3, 1, 0, 0));
    c.add(&job(4, 1, 1, 0));
    assert_eq!(round(&mut c, 0).starts.len(), 2);
    started(&mut c, 0);
    c.add(&replica(10, 1));
    c.add(&replica(11, 1));
    // Nothing free, the runs are young: everyone waits.
    assert!(round(&mut c, 1_000).starts.is_empty());
    // Waiting reasons: the replicas count only each other ahead, training jobs every
    // replica besides the training jobs ahead of them.
    let ctx = c.wait_context();
    assert_eq!(ctx.ahead.get(&10), Some(&0));
    assert_eq!(ctx.ahead.get(&11), Some(&1));
    assert_eq!(ctx.ahead.get(&3), Some(&2));
    assert_eq!(ctx.ahead.get(&4), Some(&3));
    c.remove(1, 2.0);
    let r = round(&mut c, 2_000);
    let ids: Vec<u64> = r.starts.iter().map(|p| p.job).collect();
    assert_eq!(ids, vec![10]);
    c.remove(2, 3.0);
    let ids: Vec<u64> = round(&mut c, 3_000).starts.iter().map(|p| p.job).collect();
    assert_eq!(ids, vec![11]);
    assert_eq!(c.waiting_order(), vec![3, 4]);
}

#[test]
fn a_replica_goes_first_within_its_queue_cap_and_user_cap() {
    // The replicas' queue may hold one GPU: the second replica waits although a GPU is
    // free.
    let mut c = cluster(PolicyKind::Fifo, &[("a", 4)]);
    c.set_queues(BTreeMap::from([(QueueId(2), 1)]), BTreeMap::new());
    c.add(&job(1, 2, 0, 0));
    round(&mut c, 0);
    started(&mut c, 0);
    c.add(&job(2, 2, 0, 0));
    c.add(&replica(10, 1));
    c.add(&replica(11, 1));
    let ids: Vec<u64> = round(&mut c, 1_000).starts.iter().map(|p| p.job).collect();
    assert_eq!(ids, vec![10]);
    // Job 2 wants 2 GPUs, 1 is left: it waits, as does 11 (its queue at its cap).
    assert_eq!(c.waiting_order(), vec![2, 11]);
    // A user cap of one GPU in the replicas' queue keeps the second replica out too.
    let mut c = cluster(PolicyKind::Fifo, &[("a", 4)]);
    c.set_user_caps(BTreeMap::from([(QueueId(2), 1)]));
    c.add(&job(1, 3, 0, 0));
    c.add(&replica(10, 1));
    c.add(&replica(11, 1));
    let ids: Vec<u64> = round(&mut c, 0).starts.iter().map(|p| p.job).collect();
    assert_eq!(ids, vec![10, 1]);
    assert_eq!(c.waiting_order(), vec![11]);
}

#[test]
fn the_serving_part_of_the_pass_preempts_nobody() {
    // srtf: the short 2-GPU job would preempt the long one to get the node, and the
    // replica (no estimate: last in srtf's order) would wait. Serving first, the replica
    // takes the free GPU, and the short job, which no longer fits once the long one
    // stops, preempts nobody.
    let mut c = cluster(PolicyKind::Srtf, &[("a", 2)]);
    c.add(&LiveJob {
        walltime: Some(10_000.0),
        ..job(1, 1, 0, 0)
    });
    round(&mut c, 0);
    started(&mut c, 0);
    c.add(&LiveJob {
        walltime: Some(5.0),
        ..job(2, 2, 0, 0)
    });
    c.add(&replica(10, 1));
    let r = round(&mut c, 120_000);
    let ids: Vec<u64> = r.starts.iter().map(|p| p.job).collect();
    assert_eq!(ids, vec![10]);
    assert!(r.policy_victims.is_empty() && r.serving.is_none());
    started(&mut c, 120_000);
    // A second replica finds no room: the pass asks nobody to stop on its behalf (it is
    // last in srtf's order); the serving tier takes the training job's node instead.
    c.add(&replica(11, 1));
    let r = round(&mut c, 240_000);
    assert!(r.starts.is_empty() && r.policy_victims.is_empty());
    let s = r.serving.expect("the serving tier takes the node");
    assert_eq!((s.job, s.victims), (11, vec![1]));
}

#[test]
fn a_replica_the_policy_ranks_first_costs_the_victims_it_did_before() {
    // srtf with a replica that has an estimate shorter than the running training job's:
    // the normal pass wants the replica and asks the training job to stop, once, as it
    // did before serving went first; the serving part of the pass adds nothing.
    let mut c = cluster(PolicyKind::Srtf, &[("a", 2)]);
    c.add(&LiveJob {
        walltime: Some(10_000.0),
        ..job(1, 1, 0, 0)
    });
    c.add(&replica(10, 1));
    round(&mut c, 0);
    started(&mut c, 0);
    c.add(&LiveJob {
        walltime: Some(10.0),
        ..replica(11, 1)
    });
    let r = round(&mut c, 120_000);
    assert!(r.starts.is_empty());
    assert_eq!(r.policy_victims, vec![1]);
    assert!(r.serving.is_none());
}

#[test]
fn serving_slices_and_whole_replicas_go_before_training_slices() {
    // One GPU: a training share asked first would open it for shares; the whole-GPU
    // replica behind it takes it instead, and the share waits.
    let mut c = cluster(PolicyKind::Fifo, &[("a", 1)]);
    c.add(&LiveJob {
        slice: Some(crate::live::SliceAsk::Share { milli: 500 }),
        gpus: 0,
        ..job(1, 0, 0, 0)
    });
    c.add(&replica(10, 1));
    let ids: Vec<u64> = round(&mut c, 0).starts.iter().map(|p| p.job).collect();
    assert_eq!(ids, vec![10]);
    // 0.4 of the GPU taken by a training share: a serving share of 0.6 asked after a
    // training share of 0.6 gets what is left; the training one waits.
    let mut c = cluster(PolicyKind::Fifo, &[("a", 1)]);
    let share = |id: u64, milli: u32, serving: bool| LiveJob {
        slice: Some(crate::live::SliceAsk::Share { milli }),
        gpus: 0,
        serving,
        ..job(id, 0, 0, 0)
    };
    c.add(&share(1, 400, false));
    round(&mut c, 0);
    c.add(&share(2, 600, false));
    c.add(&share(3, 600, true));
    let ids: Vec<u64> = round(&mut c, 1_000).starts.iter().map(|p| p.job).collect();
    assert_eq!(ids, vec![3]);
}

#[test]
fn a_replica_that_cannot_start_leaves_the_rest_of_the_pass_as_it_was() {
    // The serving part of the pass starts nothing here (no node has the replica's
    // model): every policy then decides the training jobs' starts, victims and order as
    // it does when the same job is not a replica (ranks, tiresias' queues and drf's
    // history untouched by the serving part).
    let gpus = [2, 3, 1, 4, 2, 1, 3, 2];
    let walltimes = [600.0, 3000.0, 100.0, 5000.0, 900.0, 50.0, 2000.0, 400.0];
    for policy in PolicyKind::ALL {
        let run = |serving: bool| {
            let mut c = cluster(policy, &[("a", 4), ("b", 4)]);
            for (k, (&g, &w)) in gpus.iter().zip(&walltimes).enumerate() {
                let id = k as u64 + 1;
                c.add(&LiveJob {
                    walltime: Some(w),
                    priority: (id % 3) as i32,
                    ..job(id, g, (id % 2) as u32, 0)
                });
            }
            c.add(&LiveJob {
                model: Some("H100".into()),
                submit: 4.5,
                serving,
                ..job(99, 1, 0, 0)
            });
            let mut seen = Vec::new();
            let mut victims: Vec<u64> = Vec::new();
            for k in 0..20u64 {
                let now_ms = k * 300_000;
                let now = now_ms as f64 / 1000.0;
                for id in victims.drain(..) {
                    c.requeue(id, now);
                }
                for id in c.placed() {
                    let w = walltimes[id as usize - 1];
                    if c.attained(id).is_some_and(|a| a >= w) {
                        c.remove(id, now);
                    }
                }
                let r = round(&mut c, now_ms);
                started(&mut c, now_ms);
                victims.clone_from(&r.policy_victims);
                seen.push((r.starts, r.policy_victims, c.waiting_order()));
            }
            seen
        };
        assert_eq!(run(true), run(false), "{policy:?}");
    }
}
