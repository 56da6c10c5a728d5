//! The ordered queue decides exactly as the sort: two schedulers, one sorting at every
//! pass and one keeping the queue, driven in lockstep through a random workload with many
//! equal keys, priorities, queue caps, jobs ending, and running jobs put back in the queue.

use std::collections::BTreeMap;

use crate::schedule::{PreemptMode, SchedJob, Scheduler};
use crate::{Cluster, Decision, JobId, JobSpec, PlacementStrategy, PolicyConfig, PolicyKind};
use crate::{QueueId, UserId};

/// A small deterministic generator (no dependency for a test).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// What a lockstep run varies beyond the policy.
#[derive(Copy, Clone, Debug, Default)]
struct Variant {
    caps: bool,
    /// Short estimates that running jobs outlive, grown at each step as the simulator
    /// grows them (`SchedJob::grow_estimate`).
    outlive: bool,
    backfill_nodes: bool,
}

fn spec(rng: &mut Lcg, id: u64, now: f64, outlive: bool) -> JobSpec {
    JobSpec {
        id: JobId(id),
        gpus: [1, 1, 2, 4, 8][rng.below(5) as usize],
        gpu_model: None,
        user: UserId(rng.below(3) as u32),
        queue: QueueId(rng.below(2) as u32),
        account: Default::default(),
        priority: rng.below(3) as i32,
        submit: now,
        estimate: if outlive {
            [None, Some(10.0), Some(20.0), Some(20.0), Some(300.0)][rng.below(5) as usize]
        } else {
            [None, Some(100.0), Some(300.0), Some(300.0)][rng.below(4) as usize]
        },
        cpu_milli: 0,
        mem_mib: 0,
        generic: Default::default(),
        gang: None,
        nodes: Vec::new(),
        prefer: Vec::new(),
        // Half the jobs are due, some at times already shared by others.
        deadline: [None, None, Some(now + 200.0), Some(now + 600.0)][rng.below(4) as usize],
    }
}

/// Runs `kind` both ways and asserts every pass decides the same.
fn lockstep(kind: PolicyKind, caps: bool, seed: u64) {
    lockstep_variant(
        kind,
        Variant {
            caps,
            ..Variant::default()
        },
        seed,
    );
}

fn lockstep_variant(kind: PolicyKind, v: Variant, seed: u64) {
    let caps = v.caps;
    let cluster = Cluster::uniform(2, 2, 4, "V100");
    let mut policy = PolicyConfig::new(kind);
    policy.backfill_nodes = v.backfill_nodes;
    // EDF keeps a fixed order only without demotion (crate::deadline).
    policy.deadline_demote = false;
    // One point of priority per 100 s waited: aging reorders priorities within a run.
    policy.aging_per_hour = 36.0;
    let new = || {
        let mut s = Scheduler::new(
            &cluster,
            policy.clone(),
            PlacementStrategy::Consolidated,
            PreemptMode::Repack,
        );
        if caps {
            s.set_queue_limits(BTreeMap::from([(QueueId(1), 6)]));
        }
        s
    };
    let (mut sorting, mut ordered) = (new(), new());
    assert!(
        ordered.keep_ordered_queue(),
        "{kind:?} keeps an ordered queue"
    );
    let mut a: Vec<SchedJob> = Vec::new();
    let mut b: Vec<SchedJob> = Vec::new();
    let mut rng = Lcg(seed);
    let mut id = 0;
    let mut starts = 0;
    for step in 0..400u32 {
        // Coarse times: many jobs share a submit time.
        let now = f64::from(step / 3) * 50.0;
        for _ in 0..rng.below(4) {
            id += 1;
            let s = spec(&mut rng, id, now, v.outlive);
            for (sched, jobs) in [(&mut sorting, &mut a), (&mut ordered, &mut b)] {
                let mut job = SchedJob::new(s.clone());
                sched.admit(&mut job).expect("fits");
                jobs.push(job);
            }
        }
        // Some running jobs end, one now and then goes back to the queue.
        let mut ended = vec![false; a.len()];
        for i in 0..a.len() {
            if a[i].running && rng.below(4) == 0 {
                if rng.below(5) == 0 {
                    sorting.preempt_now(&mut a[i], now);
                    ordered.preempt_now(&mut b[i], now);
                } else {
                    sorting.finish(&mut a[i]);
                    ordered.finish(&mut b[i]);
                    ended[i] = true;
                }
            }
        }
        let mut k = 0;
        a.retain(|_| (!ended[k], k += 1).0);
        let mut k = 0;
        b.retain(|_| (!ended[k], k += 1).0);
        for j in a.iter_mut().chain(b.iter_mut()) {
            j.account(now);
            if v.outlive && j.running {
                j.grow_estimate();
            }
        }
        let da = sorting.pass(&mut a, now).decisions;
        let db = ordered.pass(&mut b, now).decisions;
        assert_eq!(da, db, "{kind:?} {v:?} seed={seed} step {step} at t={now}");
        starts += da
            .iter()
            .filter(|d| matches!(d, Decision::Start { .. }))
            .count();
    }
    // The workload is contended: the queue was long and many passes started jobs.
    assert!(starts > 10, "{kind:?}: only {starts} starts");
    assert!(a.iter().filter(|j| !j.running).count() > 20);
}

#[test]
fn every_fixed_key_policy_decides_as_the_sort_does() {
    for kind in [
        PolicyKind::Fifo,
        PolicyKind::Priority,
        PolicyKind::Sjf,
        PolicyKind::Backfill,
        PolicyKind::Drf,
        PolicyKind::EdfBackfill,
    ] {
        for seed in 1..=4 {
            lockstep(kind, false, seed);
            lockstep(kind, true, seed);
        }
    }
}

#[test]
fn tiresias_and_negative_aging_keep_sorting() {
    // (srtf, srsf and blend keep their order with the ranked queue: schedule/ranked_tests.rs.)
    let cluster = Cluster::uniform(1, 1, 4, "V100");
    let mut s = Scheduler::new(
        &cluster,
        PolicyConfig::new(PolicyKind::Tiresias),
        PlacementStrategy::Consolidated,
        PreemptMode::Repack,
    );
    assert!(!s.keep_ordered_queue());
    let mut policy = PolicyConfig::new(PolicyKind::Priority);
    policy.aging_per_hour = -1.0;
    let mut s = Scheduler::new(
        &cluster,
        policy,
        PlacementStrategy::Consolidated,
        PreemptMode::Repack,
    );
    assert!(!s.keep_ordered_queue());
}

/// The backfill pass refuses waiting jobs from what the ordered queue keeps of them (GPUs,
/// estimated remaining time) without reading them: it decides as the sorting pass, which
/// reads every job, with jobs without estimates, running jobs past their estimates (the
/// reservation's ends move), queue caps, and the reservation on nodes.
#[test]
fn backfill_refusing_from_the_queue_decides_as_the_sort_does() {
    for seed in 1..=12 {
        for (caps, backfill_nodes) in [(false, false), (true, false), (false, true), (true, true)] {
            let v = Variant {
                caps,
                outlive: true,
                backfill_nodes,
            };
            lockstep_variant(PolicyKind::Backfill, v, seed);
        }
    }
}
