//! Preemptive policies and the run-time predictor in the state machine: tiresias asks a
//! demoted job to stop, the protection of `--min-runtime`, attained service and the
//! predictor over a restart, blend on the predictor's beliefs.

use std::time::Duration;

use gpusched_core::PolicyKind;
use gpusched_wire::JobState;

use super::Step::*;
use super::{run_with, Harness};

#[test]
fn tiresias_preempts_a_demoted_job_and_its_service_survives_a_restart() {
    run_with(
        "tiresias: demotion, preemption, restart keeps the service",
        |cfg| {
            cfg.policy = PolicyKind::Tiresias;
            cfg.las_limits = vec![30.0];
            cfg.min_runtime = Duration::from_secs(10);
            cfg.heartbeat_timeout = Duration::from_secs(3600);
        },
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Submit("bob", "gpus=1"),
            Round,
            // 20 s of service: still in queue 0, ahead of job 2.
            Wait(20),
            Tick,
            Round,
            // 31 s: demoted; job 2 (queue 0) goes first, so job 1 is asked to stop.
            Wait(11),
            Tick,
            Round,
            Poll("n1"),
            Preempted("n1", 1),
            Round,
            Started("n1", 2),
            Round,
            Wait(15),
            Tick,
            Round,
            // Job 1 comes back in queue 1 (31 s of service), behind job 2: nobody is
            // preempted. Had the service been lost it would be ahead of job 2 again.
            Restart,
            Round,
            Tick,
            Round,
            Poll("n1"),
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            bob submits gpus=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            20s pass
            tick
            round: wrote jobs - nodes - tokens -; woke -; ended -
            11s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: being requeued: preempted by policy `tiresias`: jobs ahead of it in the policy's order need its GPUs
            n1 polls: run -; cancel -; preempt 1#1
            n1 reports 1 preempted: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued without using a retry: preempted by policy `tiresias`: jobs ahead of it in the policy's order need its GPUs
              job 2 starting on n1 [0] #1: sent to n1
            n1 reports 2 started: ok
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 running on n1 [0] #1: running on n1
            15s pass
            tick
            round: wrote jobs - nodes - tokens -; woke -; ended -
            server restarts
              job 1 pending #2: requeued without using a retry: preempted by policy `tiresias`: jobs ahead of it in the policy's order need its GPUs
              job 2 running on n1 [0] #1: running on n1
            round: wrote jobs - nodes - tokens -; woke -; ended -
            tick
            round: wrote jobs - nodes - tokens -; woke -; ended -
            n1 polls: Conflict(\"node n1 must register (again) with this server before polling or reporting\")
        ",
    );
}

#[test]
fn srtf_waits_for_min_runtime_before_preempting_and_a_restarted_job_is_protected_again() {
    run_with(
        "srtf: min-runtime protects a (re)started job",
        |cfg| {
            cfg.policy = PolicyKind::Srtf;
            cfg.min_runtime = Duration::from_secs(10);
        },
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 walltime=100"),
            Round,
            Started("n1", 1),
            Round,
            Wait(5),
            Submit("bob", "gpus=1 walltime=10"),
            Tick,
            Round,
            // Job 1 has run 5 s of its 10 s minimum: protected.
            Reason(2, "waiting"),
            Wait(6),
            Tick,
            Round,
            Poll("n1"),
            Preempted("n1", 1),
            Round,
            Started("n1", 2),
            Round,
            Wait(9),
            Exit("n1", 2, 0),
            Round,
            Started("n1", 1),
            Round,
            // A shorter job arrives as job 1 restarts: it waits out the minimum.
            Submit("carol", "gpus=1 walltime=5"),
            Wait(9),
            Tick,
            Round,
            Wait(2),
            Tick,
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 walltime=100: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            5s pass
            bob submits gpus=1 walltime=10: ok 2
            tick
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            6s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: being requeued: preempted by policy `srtf`: jobs ahead of it in the policy's order need its GPUs
            n1 polls: run -; cancel -; preempt 1#1
            n1 reports 1 preempted: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued without using a retry: preempted by policy `srtf`: jobs ahead of it in the policy's order need its GPUs
              job 2 starting on n1 [0] #1: sent to n1
            n1 reports 2 started: ok
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 running on n1 [0] #1: running on n1
            9s pass
            n1 reports 2 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 2
              job 1 starting on n1 [0] #2: sent to n1
              job 2 succeeded on n1 [0] #1: exited with code 0
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #2: running on n1
            carol submits gpus=1 walltime=5: ok 3
            9s pass
            tick
            round: wrote jobs 3 nodes - tokens -; woke -; ended -
              job 3 pending #1
            2s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #2: being requeued: preempted by policy `srtf`: jobs ahead of it in the policy's order need its GPUs
        ",
    );
}

#[test]
fn a_job_without_walltime_gets_a_predicted_estimate_that_survives_a_restart() {
    run_with(
        "predictor: learns from an end, predicts, survives a restart",
        |cfg| cfg.policy = PolicyKind::Sjf,
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            // Nothing has ended yet: no prediction.
            Show("alice", 2),
            Wait(90),
            Exit("n1", 1, 0),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1 walltime=600"),
            Round,
            Show("alice", 3),
            Show("alice", 4),
            Restart,
            Rejoin("n1", 1, &[]),
            Round,
            Show("alice", 3),
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            alice submits gpus=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            alice shows 2: 2 pending: waiting for 1 free GPU on one node (at most 0 free on a node now; 1 job waiting)
            90s pass
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
              job 2 starting on n1 [0] #1: sent to n1
            alice submits gpus=1: ok 3
            alice submits gpus=1 walltime=600: ok 4
            round: wrote jobs 3 4 nodes - tokens -; woke -; ended -
              job 3 pending #1
              job 4 pending #1
            alice shows 3: 3 pending: waiting for 1 free GPU on one node (at most 0 free on a node now; 2 jobs waiting); run time predicted 83s from every past job (too few of its kind yet)
            alice shows 4: 4 pending: waiting for 1 free GPU on one node (at most 0 free on a node now; 2 jobs waiting)
            server restarts
              job 2 starting on n1 [0] #1: sent to n1
              job 3 pending #1
              job 4 pending #1
            ended, in the store only: 1
            node n1 registers again running []: ok
            round: wrote jobs - nodes - tokens -; woke n1; ended -
            alice shows 3: 3 pending: waiting for 1 free GPU on one node (at most 0 free on a node now; 2 jobs waiting); run time predicted 83s from every past job (too few of its kind yet)
        ",
    );
}

#[test]
fn the_predictor_is_written_at_most_every_five_seconds() {
    let mut h = Harness::with(|_| {});
    for step in [
        Node("n1", 2),
        Round,
        Submit("a", "gpus=1"),
        Submit("a", "gpus=1"),
    ] {
        h.step(step);
    }
    h.step(Round);
    h.step(Started("n1", 1));
    h.step(Started("n1", 2));
    h.step(Round);
    h.step(Exit("n1", 1, 0));
    h.step(Round);
    let first = h.store.meta.get("predictor").cloned().expect("written");
    h.step(Exit("n1", 2, 0));
    h.step(Round);
    assert_eq!(
        h.store.meta.get("predictor"),
        Some(&first),
        "not again so soon"
    );
    h.step(Wait(4));
    h.step(Round);
    assert_eq!(
        h.store.meta.get("predictor"),
        Some(&first),
        "not within five seconds"
    );
    h.step(Wait(1));
    h.step(Round);
    assert_ne!(
        h.store.meta.get("predictor"),
        Some(&first),
        "the second end, five seconds later"
    );
}

#[test]
fn a_higher_tier_preempts_a_lower_one_of_its_queue_only_and_starts_first_there() {
    run_with(
        "priority tiers: same queue only, after min-runtime",
        |cfg| {
            cfg.min_runtime = Duration::from_secs(10);
            cfg.heartbeat_timeout = Duration::from_secs(3600);
        },
        &[
            Queues(
                "[queues.a]\npreempt_lower_priority = true\npriority_tiers = [100]\n\n[queues.b]\n",
            ),
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1 queue=a"),
            Submit("bob", "gpus=1 queue=b"),
            Round,
            Started("n1", 1),
            Started("n1", 2),
            Round,
            Submit("carol", "gpus=1 queue=a priority=100"),
            Submit("dave", "gpus=1 queue=b priority=500"),
            Round,
            // Job 1 is protected for its first 10 s.
            Wait(11),
            Tick,
            Round,
            Poll("n1"),
            Preempted("n1", 1),
            Round,
            Show("alice", 1),
        ],
        "
            queues reload: Ok(())
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 queue=a: ok 1
            bob submits gpus=1 queue=b: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n1 [1] #1: sent to n1
            n1 reports 1 started: ok
            n1 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
              job 2 running on n1 [1] #1: running on n1
            carol submits gpus=1 queue=a priority=100: ok 3
            dave submits gpus=1 queue=b priority=500: ok 4
            round: wrote jobs 3 4 nodes - tokens -; woke -; ended -
              job 3 pending #1
              job 4 pending #1
            11s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: being requeued: priority preemption in queue `a`: job 3 of priority tier 1 needs its GPUs on n1
            n1 polls: run 2#1 [1]; cancel -; preempt 1#1
            n1 reports 1 preempted: ok
            round: wrote jobs 1 3 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued without using a retry: priority preemption in queue `a`: job 3 of priority tier 1 needs its GPUs on n1
              job 3 starting on n1 [0] #1: sent to n1
            alice shows 1: 1 pending: waiting for 1 free GPU on one node (at most 0 free on a node now; 2 jobs waiting) (requeued without using a retry: priority preemption in queue `a`: job 3 of priority tier 1 needs its GPUs on n1)
        ",
    );
}

/// `blend` on the live predictor: a fresh job believed long does not preempt a running
/// one believed shorter (least attained service would: the fresh one has none), and a
/// job believed quick preempts one that has outlived everything like it, which resumes
/// with its service kept.
#[test]
fn blend_keeps_a_job_believed_shorter_and_preempts_one_that_outlived_its_belief() {
    let mut h = Harness::with(|cfg| {
        cfg.policy = PolicyKind::Blend;
        cfg.min_runtime = Duration::from_secs(10);
        cfg.heartbeat_timeout = Duration::from_secs(86_400);
    });
    h.step(Node("n1", 3));
    h.step(Round);
    // History, ten rounds of three 1-GPU jobs: carol's `quick` run 120 s, alice's `mid`
    // 600 s, bob's `long` 6000 s (beliefs need ten ended jobs; each name has ten).
    for round in 0..10u64 {
        let first = 3 * round + 1;
        h.step(Submit("carol", "gpus=1 name=quick"));
        h.step(Submit("alice", "gpus=1 name=mid"));
        h.step(Submit("bob", "gpus=1 name=long"));
        h.step(Round);
        for id in first..first + 3 {
            h.step(Started("n1", id));
        }
        h.step(Round);
        for (wait, id) in [(120, first), (480, first + 1), (5400, first + 2)] {
            h.step(Wait(wait));
            h.step(Exit("n1", id, 0));
            h.step(Round);
        }
    }
    let state = |h: &Harness, id: u64| {
        let v = &h.job(id).expect("the job exists").view;
        (v.state, v.preempt_requested)
    };
    // Alice's `mid` takes the node; bob's `long` arrives 11 s later, past the minimum
    // run time: alice's has about 590 s to go, bob's about 6000, so nobody is preempted.
    h.step(Submit("alice", "gpus=3 name=mid"));
    h.step(Round);
    h.step(Started("n1", 31));
    h.step(Round);
    h.step(Wait(11));
    h.step(Submit("bob", "gpus=3 name=long"));
    h.step(Round);
    for _ in 0..2 {
        h.step(Wait(60));
        h.step(Tick);
        h.step(Round);
        assert_eq!(state(&h, 31), (JobState::Running, false), "{}", h.log);
        assert_eq!(state(&h, 32), (JobState::Pending, false), "{}", h.log);
    }
    h.step(Wait(469));
    h.step(Exit("n1", 31, 0));
    h.step(Round);
    h.step(Started("n1", 32));
    h.step(Round);
    // Bob's job runs past every `long` before it (7,000 s); carol's `quick` arrives and
    // it is asked to stop.
    h.step(Wait(7000));
    h.step(Tick);
    h.step(Round);
    assert_eq!(state(&h, 32), (JobState::Running, false), "{}", h.log);
    h.step(Submit("carol", "gpus=3 name=quick"));
    h.step(Round);
    assert_eq!(state(&h, 32), (JobState::Running, true), "{}", h.log);
    let reason = h.job(32).unwrap().view.reason.clone();
    assert!(reason.contains("preempted by policy `blend`"), "{reason}");
    h.step(Poll("n1"));
    h.step(Preempted("n1", 32));
    h.step(Round);
    assert_eq!(state(&h, 33).0, JobState::Starting, "{}", h.log);
    assert_eq!(h.job(32).unwrap().view.state, JobState::Pending);
    // Its 7,000 s of service are kept (it is not a fresh job now).
    let kept = h.st.cluster.attained(32).expect("in the queue");
    assert!(kept >= 7000.0, "{kept}");
    h.step(Started("n1", 33));
    h.step(Round);
    h.step(Wait(120));
    h.step(Exit("n1", 33, 0));
    h.step(Round);
    assert_eq!(state(&h, 32).0, JobState::Starting, "{}", h.log);
}

/// A new cluster's first batch under `blend`: queued before any job had ended, its jobs
/// got no belief. Once ten have ended, the ones still waiting are given one (and their
/// predicted estimate), as in the simulator, instead of being ranked by attained
/// service for good.
#[test]
fn blend_gives_a_first_batch_beliefs_once_the_predictor_has_learnt() {
    let mut h = Harness::with(|cfg| {
        cfg.policy = PolicyKind::Blend;
        cfg.heartbeat_timeout = Duration::from_secs(86_400);
    });
    h.step(Node("n1", 1));
    h.step(Round);
    h.step(Submit("carol", "gpus=1 name=quick batch=12"));
    h.step(Round);
    for id in 1..=10u64 {
        assert!(
            !h.st.cluster.believed(12),
            "job 12 believed early\n{}",
            h.log
        );
        h.step(Started("n1", id));
        h.step(Round);
        h.step(Wait(60));
        h.step(Exit("n1", id, 0));
        h.step(Round);
    }
    assert!(h.st.cluster.believed(12), "{}", h.log);
    assert!(h
        .st
        .cluster
        .estimate(12)
        .is_some_and(|(_, predicted)| predicted));
}
