//! `rr` on the live cluster: turns of `--quantum`, kept at least `--quantum-floor` times
//! the slowest checkpoint measured (`state/checkpoint_cost.rs`).

use super::Step::*;
use super::*;
use gpusched_core::PolicyKind;

fn rr(cfg: &mut ServerConfig) {
    cfg.policy = PolicyKind::Rr;
    cfg.rr_quantum = 100.0;
    cfg.rr_quantum_floor = 10.0;
    cfg.min_runtime = Duration::ZERO;
    cfg.heartbeat_timeout = Duration::from_secs(3600);
}

/// A turn of 100 s asked, and a checkpoint that takes 30 s to save: from then on a turn
/// lasts 300 s, so the next job is not stopped at 100 s, and is at 300 s.
#[test]
fn a_turn_lasts_at_least_the_floor_times_the_slowest_checkpoint_measured() {
    run_with(
        "rr: the quantum follows the checkpoints measured",
        rr,
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 batch=2"),
            Round,
            Started("n1", 1),
            Round,
            Quantum,
            // Job 1 has had its turn while job 2 waits: it is asked to stop.
            Wait(101),
            Tick,
            Round,
            Poll("n1"),
            // It saves for 30 s: a turn now lasts 10 x 30 s.
            Wait(30),
            Preempted("n1", 1),
            Quantum,
            Round,
            Started("n1", 2),
            Round,
            Wait(101),
            Tick,
            Round,
            Poll("n1"),
            Wait(200),
            Tick,
            Round,
            Poll("n1"),
        ],
        "
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 batch=2: ok 1 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 pending #1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            rr's turn 100 s; slowest checkpoint measured none
            101s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: being requeued: preempted by policy `rr` taking turns: it has run its turn of 100 s and a waiting job takes its GPUs
            n1 polls: run -; cancel -; preempt 1#1
            30s pass
            n1 reports 1 preempted: ok
            rr's turn 300 s; slowest checkpoint measured 30 s
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued without using a retry: preempted by policy `rr` taking turns: it has run its turn of 100 s and a waiting job takes its GPUs
              job 2 starting on n1 [0] #1: sent to n1
            n1 reports 2 started: ok
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 running on n1 [0] #1: running on n1
            101s pass
            tick
            round: wrote jobs - nodes - tokens -; woke -; ended -
            n1 polls: run 2#1 [0]; cancel -; preempt -
            200s pass
            tick
            round: wrote jobs 2 nodes - tokens -; woke n1; ended -
              job 2 running on n1 [0] #1: being requeued: preempted by policy `rr` taking turns: it has run its turn of 300 s and a waiting job takes its GPUs
            n1 polls: run -; cancel -; preempt 2#1
        ",
    );
}

/// `priority` taking turns of 100 s: job 1 runs; jobs 2 and 3 wait, 3 with a higher
/// priority. When job 1's turn ends it is stopped through the checkpoint contract and
/// job 3 takes the GPU (the policy's order), not job 2 (the longest waiting, as `rr`
/// would pick); without slicing nothing would stop job 1. When job 3's turn ends, job 2
/// goes next: it has had no turn, job 1 has had one (though `priority` alone would
/// put job 1, submitted first, ahead).
#[test]
fn a_policy_with_time_slicing_takes_turns_in_its_own_order() {
    run_with(
        "priority --time-slice: turns in the policy's order",
        |cfg| {
            rr(cfg);
            cfg.policy = PolicyKind::Priority;
            cfg.time_slice = true;
        },
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Submit("bob", "gpus=1 priority=5"),
            Round,
            Quantum,
            Wait(101),
            Tick,
            Round,
            Poll("n1"),
            Wait(5),
            Preempted("n1", 1),
            Round,
            Started("n1", 3),
            Round,
            Wait(101),
            Tick,
            Round,
            Poll("n1"),
            Wait(5),
            Preempted("n1", 3),
            Round,
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
            bob submits gpus=1 priority=5: ok 3
            round: wrote jobs 2 3 nodes - tokens -; woke -; ended -
              job 2 pending #1
              job 3 pending #1
            rr's turn 100 s; slowest checkpoint measured none
            101s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: being requeued: preempted by policy `priority` taking turns: it has run its turn of 100 s and a waiting job takes its GPUs
            n1 polls: run -; cancel -; preempt 1#1
            5s pass
            n1 reports 1 preempted: ok
            round: wrote jobs 1 3 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued without using a retry: preempted by policy `priority` taking turns: it has run its turn of 100 s and a waiting job takes its GPUs
              job 3 starting on n1 [0] #1: sent to n1
            n1 reports 3 started: ok
            round: wrote jobs 3 nodes - tokens -; woke -; ended -
              job 3 running on n1 [0] #1: running on n1
            101s pass
            tick
            round: wrote jobs 3 nodes - tokens -; woke n1; ended -
              job 3 running on n1 [0] #1: being requeued: preempted by policy `priority` taking turns: it has run its turn of 100 s and a waiting job takes its GPUs
            n1 polls: run -; cancel -; preempt 3#1
            5s pass
            n1 reports 3 preempted: ok
            round: wrote jobs 2 3 nodes - tokens -; woke n1; ended -
              job 2 starting on n1 [0] #1: sent to n1
              job 3 pending #2: requeued without using a retry: preempted by policy `priority` taking turns: it has run its turn of 100 s and a waiting job takes its GPUs
        ",
    );
}
