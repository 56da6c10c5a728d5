//! The power budget (`--power-budget`, docs/power.md): a job that would take the nodes'
//! draw at their caps over the budget waits, saying so, and starts once power frees;
//! consolidation takes an idle node down and brings it up for work.

use std::time::Duration;

use super::Step::*;
use super::{run, run_with};

#[test]
fn a_budget_holds_a_job_back_until_power_frees() {
    run_with(
        "A100s capped at 300 W, 60 W idle; 1,000 W over two 2-GPU nodes",
        |cfg| {
            cfg.power.budget_w = Some(1000);
            cfg.power.gpu_cap_w = Some(300);
        },
        &[
            Node("n1", 2),
            Node("n2", 2),
            Round,
            // Idle: 4 x 60 = 240 W. Job 1 adds 2 x 240 = 480 W (720 W); job 2 would
            // take 1,200 W; job 3's one GPU fits (960 W).
            Submit("alice", "gpus=2"),
            Submit("bob", "gpus=2"),
            Submit("carol", "gpus=1"),
            Round,
            Reason(
                2,
                "power budget 1 kW: starting this job would draw 1.2 kW at the nodes' caps",
            ),
            Poll("n1"),
            Poll("n2"),
            Started("n1", 1),
            Started("n2", 3),
            Round,
            Exit("n1", 1, 0),
            Round,
            Poll("n1"),
        ],
        "
            node n1 (2 GPUs) registers: ok
            node n2 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits gpus=2: ok 1
            bob submits gpus=2: ok 2
            carol submits gpus=1: ok 3
            round: wrote jobs 1 2 3 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0, 1] #1: sent to n1
              job 2 pending #1
              job 3 starting on n2 [0] #1: sent to n2
            n1 polls: run 1#1 [0, 1]; cancel -; preempt -; power caps 0:300 W 1:300 W
            n2 polls: run 3#1 [0]; cancel -; preempt -; power caps 0:300 W 1:300 W
            n1 reports 1 started: ok
            n2 reports 3 started: ok
            round: wrote jobs 1 3 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0, 1] #1: running on n1
              job 3 running on n2 [0] #1: running on n2
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0, 1] #1: exited with code 0
              job 2 starting on n1 [0, 1] #1: sent to n1
            n1 polls: run 2#1 [0, 1]; cancel -; preempt -; power caps 0:300 W 1:300 W
        ",
    );
}

#[test]
fn without_power_flags_desired_states_carry_no_caps() {
    run(
        "no power settings",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=2"),
            Round,
            Poll("n1"),
        ],
        "
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=2: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0, 1] #1: sent to n1
            n1 polls: run 1#1 [0, 1]; cancel -; preempt -
        ",
    );
}

#[test]
fn consolidation_takes_an_idle_node_down_and_brings_it_up_for_work() {
    run_with(
        "two nodes; a node idle for a minute goes down, and comes up when work needs it",
        |cfg| cfg.power.consolidate_after = Some(Duration::from_secs(60)),
        &[
            Node("n1", 2),
            Node("n2", 2),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Power,
            // The agents keep polling (the heartbeat) while time passes.
            Wait(25),
            Poll("n1"),
            Poll("n2"),
            Round,
            Wait(25),
            Poll("n1"),
            Poll("n2"),
            Round,
            Wait(15),
            Poll("n1"),
            Poll("n2"),
            Round,
            Power,
            // One GPU free on n1: the job goes there, n2 stays down.
            Submit("bob", "gpus=1"),
            Round,
            Power,
            // Two GPUs: only n2 could hold it, so n2 comes up and takes it.
            Submit("carol", "gpus=2"),
            Round,
            Power,
        ],
        "
            node n1 (2 GPUs) registers: ok
            node n2 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            power: 580 W drawn at caps, 0 held; idle nodes 1, down 0; idle node-s 0, down node-s 0, idle J 0
            25s pass
            n1 polls: run 1#1 [0]; cancel -; preempt -
            n2 polls: run -; cancel -; preempt -
            round: wrote jobs - nodes - tokens -; woke -; ended -
            25s pass
            n1 polls: run 1#1 [0]; cancel -; preempt -
            n2 polls: run -; cancel -; preempt -
            round: wrote jobs - nodes - tokens -; woke -; ended -
            15s pass
            n1 polls: run 1#1 [0]; cancel -; preempt -
            n2 polls: run -; cancel -; preempt -
            round: wrote jobs - nodes - tokens -; woke -; ended -
            power: 580 W drawn at caps, 0 held; idle nodes 1, down 1; idle node-s 65, down node-s 0, idle J 7800
            bob submits gpus=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke n1; ended -
              job 2 starting on n1 [1] #1: sent to n1
            power: 920 W drawn at caps, 0 held; idle nodes 1, down 1; idle node-s 65, down node-s 0, idle J 7800
            carol submits gpus=2: ok 3
            round: wrote jobs 3 nodes - tokens -; woke n2; ended -
              job 3 starting on n2 [0, 1] #1: sent to n2
            power: 1600 W drawn at caps, 0 held; idle nodes 0, down 0; idle node-s 65, down node-s 0, idle J 7800
        ",
    );
}
