//! The round decides whole: quota reclaim at most once per round and never while a
//! preemption is under way, priority tiers likewise, protection from the runs' facts.

use super::tests::{node, whole};
use super::*;
use crate::sharing::ShareStrategy;
use crate::{PolicyConfig, PolicyKind, QueueId};

fn rules(queue: u32, quota: u32) -> QueueRules {
    QueueRules {
        queue: QueueId(queue),
        quota,
        preemptible: true,
        ..Default::default()
    }
}

pub(super) fn in_queue(id: u64, gpus: u32, queue: u32, priority: i32) -> LiveJob {
    LiveJob {
        queue: QueueId(queue),
        priority,
        ..whole(id, gpus)
    }
}

pub(super) fn round(c: &mut LiveCluster, now_ms: u64) -> Round {
    c.round(RoundInput {
        now_ms,
        share_target: &[],
        guess: &|_| None,
    })
}

/// Tells the core every placed job started at `start_ms` and runs.
pub(super) fn started(c: &mut LiveCluster, start_ms: u64) {
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

/// Two 4-GPU nodes filled by queue 1 (quota 0) while queue 0 (quota 4) had nothing.
fn borrowed() -> LiveCluster {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_nodes(vec![node("a", 4, false), node("b", 4, false)]);
    c.set_queue_rules(vec![rules(0, 4), rules(1, 0)]);
    c.set_min_runtime_ms(60_000);
    for id in 1..=4 {
        c.add(&in_queue(id, 2, 1, 0));
    }
    let r = round(&mut c, 0);
    assert_eq!(r.starts.len(), 4);
    assert!(r.reclaim.is_none(), "nothing to claim for");
    started(&mut c, 0);
    c
}

#[test]
fn a_quota_queue_reclaims_once_per_round_and_not_while_its_victims_stop() {
    let mut c = borrowed();
    c.add(&in_queue(10, 2, 0, 0));
    c.add(&in_queue(11, 2, 0, 0));
    // Young runs are protected: nothing is taken back before the minimum run time.
    let r = round(&mut c, 30_000);
    assert!(r.reclaim.is_none() && r.starts.is_empty());
    // Then one claim, for the queue's first job, with the victim that loses least.
    let r = round(&mut c, 120_000);
    let rec = r.reclaim.expect("the quota job reclaims");
    assert_eq!(rec.job, 10);
    assert_eq!(rec.victims.len(), 1);
    let victim = rec.victims[0];
    assert!(c.run(victim).is_some_and(|f| f.stopping));
    assert!(c.preempting());
    // While that victim stops, no second reclaim (job 11 waits its turn).
    let r = round(&mut c, 121_000);
    assert!(r.reclaim.is_none());
    // The victim leaves: the claimant starts first on the node it claimed.
    c.requeue(victim, 122.0);
    assert!(!c.preempting());
    let r = round(&mut c, 122_000);
    let first = &r.starts[0];
    assert_eq!(first.job, 10);
    assert_eq!(first.parts[0].node, rec.nodes[0]);
}

#[test]
fn a_cancelled_run_is_never_a_victim() {
    let mut c = borrowed();
    for id in c.placed() {
        c.set_run(
            id,
            RunFacts {
                running: true,
                start_ms: Some(0),
                cancelling: true,
                ..Default::default()
            },
        );
    }
    c.add(&in_queue(10, 2, 0, 0));
    assert!(round(&mut c, 600_000).reclaim.is_none());
}

#[test]
fn a_higher_tier_preempts_a_lower_one_of_its_queue_once_at_a_time() {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit);
    c.set_nodes(vec![node("a", 4, false)]);
    c.set_queue_rules(vec![QueueRules {
        queue: QueueId(0),
        preempt_lower_priority: true,
        priority_tiers: vec![100],
        ..Default::default()
    }]);
    c.add(&in_queue(1, 2, 0, 0));
    c.add(&in_queue(2, 2, 0, 0));
    round(&mut c, 0);
    started(&mut c, 0);
    c.add(&in_queue(3, 2, 0, 100));
    c.add(&in_queue(4, 2, 0, 100));
    let t = round(&mut c, 10_000).tier.expect("tier 1 preempts tier 0");
    assert_eq!((t.job, t.tier, t.node.as_str()), (3, 1, "a"));
    assert_eq!(t.victims.len(), 1);
    // Job 4 waits while that preemption is under way.
    assert!(round(&mut c, 11_000).tier.is_none());
}

#[test]
fn the_policys_victims_are_asked_once_and_young_runs_are_protected() {
    let mut c = LiveCluster::new(PolicyConfig::new(PolicyKind::Srtf), ShareStrategy::BestFit);
    c.set_nodes(vec![node("a", 2, false)]);
    c.set_min_runtime_ms(60_000);
    let long = LiveJob {
        walltime: Some(10_000.0),
        ..whole(1, 2)
    };
    c.add(&long);
    round(&mut c, 0);
    started(&mut c, 0);
    let short = LiveJob {
        walltime: Some(10.0),
        submit: 5.0,
        ..whole(2, 2)
    };
    c.add(&short);
    assert!(
        round(&mut c, 5_000).policy_victims.is_empty(),
        "job 1 is young"
    );
    let r = round(&mut c, 70_000);
    assert_eq!(r.policy_victims, vec![1]);
    assert!(
        round(&mut c, 71_000).policy_victims.is_empty(),
        "asked once"
    );
}
