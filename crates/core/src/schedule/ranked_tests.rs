//! The ranked queue decides exactly as the sort: two schedulers, one sorting every job at
//! every pass and one keeping the order ([`crate::policy::ranked`]), driven in lockstep
//! through random contended workloads with many equal keys (no estimates, a few distinct
//! ones), running jobs whose keys move, jobs ending and put back, models, every placement
//! strategy, and labels so close that the queue relabels every job often.

use crate::policy::ranked::RankedQueue;
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

#[derive(Copy, Clone, Debug)]
struct Variant {
    kind: PolicyKind,
    placement: PlacementStrategy,
    /// Estimates: none at all (every key ties), or a few distinct ones.
    estimates: bool,
    /// Jobs carry their true remaining time (the simulator's oracle), counted down.
    truth: bool,
    /// Labels this far apart (1: relabel nearly every pass).
    spacing: Option<i64>,
    /// The starvation guard (`PolicyConfig::promote_after`; issue 37).
    aging: f64,
    /// Waiting jobs' beliefs are replaced now and then (`Scheduler::set_belief`).
    refresh: bool,
}

/// One of a few beliefs (or none), for `Variant::refresh`.
fn some_belief(rng: &mut Lcg) -> Option<std::sync::Arc<crate::predict::Belief>> {
    let bins = match rng.below(4) {
        0 => return None,
        1 => vec![(20.0, 40.0, 1.0)],
        2 => vec![(10.0, 10.0, 0.5), (200.0, 300.0, 0.5)],
        _ => vec![(100.0, 150.0, 1.0)],
    };
    crate::predict::Belief::from_bins(bins).map(std::sync::Arc::new)
}

fn spec(rng: &mut Lcg, id: u64, now: f64, v: Variant) -> JobSpec {
    JobSpec {
        id: JobId(id),
        gpus: [1, 1, 1, 2, 4, 8][rng.below(6) as usize],
        gpu_model: (rng.below(5) == 0).then(|| "V100".to_string()),
        user: UserId(rng.below(3) as u32),
        queue: QueueId(0),
        account: Default::default(),
        priority: 0,
        submit: now,
        estimate: if v.estimates {
            [None, Some(10.0), Some(20.0), Some(120.0), Some(300.0)][rng.below(5) as usize]
        } else {
            None
        },
        cpu_milli: 0,
        mem_mib: 0,
        generic: Default::default(),
        gang: None,
        nodes: Vec::new(),
        prefer: Vec::new(),
        deadline: None,
    }
}

fn lockstep(v: Variant, seed: u64) {
    let cluster = Cluster::uniform(2, 2, 4, "V100");
    let mut policy = PolicyConfig::new(v.kind);
    policy.promote_after = v.aging;
    let new = || Scheduler::new(&cluster, policy.clone(), v.placement, PreemptMode::Repack);
    let (mut sorting, mut ranked) = (new(), new());
    assert!(ranked.keep_ordered_queue(), "{v:?} keeps its order");
    if let Some(spacing) = v.spacing {
        ranked.ranked = Some(RankedQueue::with_spacing(spacing));
    }
    let mut a: Vec<SchedJob> = Vec::new();
    let mut b: Vec<SchedJob> = Vec::new();
    let mut rng = Lcg(seed);
    let (mut id, mut starts, mut preempts, mut longest) = (0, 0, 0, 0);
    let mut last = 0.0;
    for step in 0..300u32 {
        // Coarse times: many jobs share a submit time (and a key).
        let now = f64::from(step / 2) * 10.0;
        for _ in 0..rng.below(4) {
            id += 1;
            let s = spec(&mut rng, id, now, v);
            let truth = [30.0, 60.0, 200.0][rng.below(3) as usize];
            for (sched, jobs) in [(&mut sorting, &mut a), (&mut ranked, &mut b)] {
                let mut job = SchedJob::new(s.clone());
                sched.admit(&mut job).expect("fits");
                if v.truth {
                    job.remaining = Some(truth);
                }
                jobs.push(job);
            }
        }
        // Some running jobs end, one now and then goes back to the queue.
        let mut ended = vec![false; a.len()];
        for i in 0..a.len() {
            if a[i].running && rng.below(5) == 0 {
                if rng.below(6) == 0 {
                    sorting.preempt_now(&mut a[i], now);
                    ranked.preempt_now(&mut b[i], now);
                } else {
                    sorting.finish(&mut a[i]);
                    ranked.finish(&mut b[i]);
                    ended[i] = true;
                }
            }
        }
        let mut k = 0;
        a.retain(|_| (!ended[k], k += 1).0);
        let mut k = 0;
        b.retain(|_| (!ended[k], k += 1).0);
        // Beliefs of some waiting jobs change (the simulator's refresh).
        if v.refresh && step % 7 == 3 {
            for i in 0..a.len() {
                if !a[i].running && rng.below(3) == 0 {
                    let belief = some_belief(&mut rng);
                    sorting.set_belief(&mut a[i], belief.clone(), now);
                    ranked.set_belief(&mut b[i], belief, now);
                }
            }
        }
        // Running jobs progress as in the simulator: their keys move.
        for j in a.iter_mut().chain(b.iter_mut()) {
            if j.running {
                if let Some(r) = j.remaining {
                    j.remaining = Some((r - (now - last)).max(0.0));
                }
            }
            j.account(now);
            if j.running {
                j.grow_estimate();
            }
        }
        last = now;
        let da = sorting.pass(&mut a, now).decisions;
        let db = ranked.pass(&mut b, now).decisions;
        assert_eq!(da, db, "{v:?} seed={seed} step {step} at t={now}");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                (x.running, &x.placement),
                (y.running, &y.placement),
                "{v:?} seed={seed} step {step}: job {}",
                x.spec.id
            );
        }
        starts += da
            .iter()
            .filter(|d| matches!(d, Decision::Start { .. }))
            .count();
        preempts += da
            .iter()
            .filter(|d| matches!(d, Decision::Preempt { .. }))
            .count();
        longest = longest.max(a.iter().filter(|j| !j.running).count());
    }
    // The workload was contended: a long queue, many starts, and preemptions.
    assert!(starts > 50, "{v:?}: only {starts} starts");
    assert!(longest > 20, "{v:?}: at most {longest} waiting");
    if v.estimates || v.truth || v.kind == PolicyKind::Blend {
        assert!(preempts > 5, "{v:?}: only {preempts} preemptions");
    }
}

#[test]
fn srtf_srsf_and_blend_decide_as_the_sort_does() {
    for kind in [PolicyKind::Srtf, PolicyKind::Srsf, PolicyKind::Blend] {
        for placement in PlacementStrategy::ALL {
            for (estimates, truth) in [(false, false), (true, false), (false, true), (true, true)] {
                for spacing in [None, Some(1), Some(3)] {
                    for aging in [0.0, 2.0] {
                        let v = Variant {
                            kind,
                            placement,
                            estimates,
                            truth,
                            spacing,
                            aging,
                            refresh: false,
                        };
                        for seed in 1..=3 {
                            lockstep(v, seed);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_starvation_guard_and_refreshed_beliefs_decide_as_the_sort_does() {
    // Promotions from after a twentieth of a job's service to twenty times it; blend's
    // beliefs replaced while jobs wait (issue 37).
    for kind in [PolicyKind::Srtf, PolicyKind::Srsf, PolicyKind::Blend] {
        for aging in [0.05, 0.5, 2.0, 20.0] {
            for spacing in [None, Some(1)] {
                let v = Variant {
                    kind,
                    placement: PlacementStrategy::Consolidated,
                    estimates: true,
                    truth: false,
                    spacing,
                    aging,
                    refresh: kind == PolicyKind::Blend,
                };
                for seed in 1..=4 {
                    lockstep(v, seed);
                }
            }
        }
    }
}

#[test]
fn only_repack_passes_of_srtf_srsf_and_blend_keep_their_order() {
    let cluster = Cluster::uniform(1, 1, 4, "V100");
    for kind in PolicyKind::ALL {
        for mode in [
            PreemptMode::Repack,
            PreemptMode::InPlace,
            PreemptMode::Deferred,
        ] {
            let mut s = Scheduler::new(
                &cluster,
                PolicyConfig::new(kind),
                PlacementStrategy::Consolidated,
                mode,
            );
            let kept = s.keep_ordered_queue();
            let ranked = matches!(
                kind,
                PolicyKind::Srtf | PolicyKind::Srsf | PolicyKind::Blend
            ) && mode == PreemptMode::Repack;
            assert_eq!(s.ranked.is_some(), ranked, "{kind:?} {mode:?}");
            // edf-backfill demotes jobs as time passes (on by default): it sorts.
            let fixed = !kind.preemptive() && kind != PolicyKind::EdfBackfill;
            assert_eq!(kept, ranked || fixed, "{kind:?} {mode:?}");
        }
    }
}
