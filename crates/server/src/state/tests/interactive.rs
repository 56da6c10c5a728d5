//! Interactive allocations (`gpusched alloc`): held by their agent with no process,
//! refused in combinations that make no sense, placed only on agents that hold, and
//! their idle GPUs warned and ended by their queue's idle policy (`idle.rs`).

use super::run;
use super::Step::*;

const END_AFTER_60S: &str = "
[idle]
after = \"60s\"
action = \"end\"
grace = \"30s\"

[queues.default]

[queues.lab]
idle_action = \"warn\"
";

#[test]
fn an_idle_allocation_is_warned_then_ended_and_its_idle_time_counted() {
    run(
        "an allocation idle past its queue's policy: warned, ended after the grace",
        &[
            Queues(END_AFTER_60S),
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 interactive=1"),
            Round,
            Poll("n1"),
            Started("n1", 1),
            Round,
            // Busy at first: nothing counted, no spell.
            Sample("n1", 0, "util=50"),
            Round,
            Wait(20),
            Sample("n1", 0, "util=0"),
            Round,
            Wait(30),
            Sample("n1", 0, "util=3"),
            Round,
            Idle(1),
            Wait(30),
            // Idle 60 s: the warning.
            Sample("n1", 0, "util=0"),
            Round,
            Wait(30),
            // 30 s after the warning, still idle: ended.
            Sample("n1", 0, "util=1"),
            Round,
            Show("alice", 1),
            Poll("n1"),
            Cancelled("n1", 1),
            Round,
            Events("alice", 1),
            Idle(1),
            UsageIdle,
            // Stored with the job's row: a restart counts it the same.
            Restart,
            UsageIdle,
        ],
        "
            queues reload: Ok(())
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 interactive=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 polls: run 1#1 [0] hold; cancel -; preempt -
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            n1 reports GPU 0 util=50: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            20s pass
            n1 reports GPU 0 util=0: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            30s pass
            n1 reports GPU 0 util=3: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            idle of job 1: 50 GPU-s
            30s pass
            n1 reports GPU 0 util=0: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            30s pass
            n1 reports GPU 0 util=1: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: ending (idle policy); n1 releasing it
            alice shows 1: 1 running: ending (idle policy); n1 releasing it
            n1 polls: run -; cancel 1#1; preempt -
            n1 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 cancelled on n1 [0] #1: ended by the idle policy of queue `default`: its GPUs were below 5% utilisation for 1m30s
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0
            - 0s started #1 [n1]
            - 80s idle_warning #1 [n1] its GPUs have been below 5% utilisation for 1m (the idle policy of queue `default`); it will be ended in 30s unless they are used
            - 110s cancel_requested #1 [n1] by the idle policy of queue `default`
            - 110s ended #1 [n1] cancelled: ended by the idle policy of queue `default`: its GPUs were below 5% utilisation for 1m30s
            idle of job 1: 110 GPU-s
            usage: alice 0.0306 idle GPU-hours
            server restarts
            ended, in the store only: 1
            usage: alice 0.0306 idle GPU-hours
        ",
    );
}

#[test]
fn use_after_the_warning_saves_an_allocation_and_warn_only_queues_never_end_one() {
    run(
        "an allocation used in its grace; one in a queue that only warns",
        &[
            Queues(END_AFTER_60S),
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1 interactive=1"),
            Submit("bob", "gpus=1 interactive=1 queue=lab"),
            Round,
            Started("n1", 1),
            Started("n1", 2),
            Round,
            Sample("n1", 0, "util=0"),
            Sample("n1", 1, "util=0"),
            Round,
            Wait(61),
            Sample("n1", 0, "util=0"),
            Sample("n1", 1, "util=0"),
            Round,
            Wait(20),
            // Someone used one of them in the grace.
            Sample("n1", 0, "util=80"),
            Sample("n1", 1, "util=80"),
            Round,
            Wait(20),
            Sample("n1", 0, "util=0"),
            Sample("n1", 1, "util=0"),
            Round,
            Wait(40),
            Sample("n1", 0, "util=0"),
            Sample("n1", 1, "util=0"),
            Round,
            Wait(600),
            Sample("n1", 0, "util=0"),
            Sample("n1", 1, "util=0"),
            Round,
            Show("alice", 1),
            Show("bob", 2),
            Events("alice", 1),
            Events("bob", 2),
        ],
        "
            queues reload: Ok(())
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 interactive=1: ok 1
            bob submits gpus=1 interactive=1 queue=lab: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n1 [1] #1: sent to n1
            n1 reports 1 started: ok
            n1 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
              job 2 running on n1 [1] #1: running on n1
            n1 reports GPU 0 util=0: ok
            n1 reports GPU 1 util=0: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            61s pass
            n1 reports GPU 0 util=0: ok
            n1 reports GPU 1 util=0: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            20s pass
            n1 reports GPU 0 util=80: ok
            n1 reports GPU 1 util=80: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            20s pass
            n1 reports GPU 0 util=0: ok
            n1 reports GPU 1 util=0: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            40s pass
            n1 reports GPU 0 util=0: ok
            n1 reports GPU 1 util=0: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            600s pass
            n1 reports GPU 0 util=0: ok
            n1 reports GPU 1 util=0: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            alice shows 1: 1 running: running on n1
            bob shows 2: 2 running: running on n1
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0
            - 0s started #1 [n1]
            - 61s idle_warning #1 [n1] its GPUs have been below 5% utilisation for 1m01s (the idle policy of queue `default`); it will be ended in 30s unless they are used
            - 741s idle_warning #1 [n1] its GPUs have been below 5% utilisation for 10m40s (the idle policy of queue `default`); it will be ended in 30s unless they are used
            bob reads events of 2:
            - 0s submitted #0 [] queue lab
            - 0s placed #1 [n1] n1: GPU 1
            - 0s started #1 [n1]
            - 61s idle_warning #1 [n1] its GPUs have been below 5% utilisation for 1m01s (the idle policy of queue `lab`); release them (leave the shell) if you no longer need them
            - 741s idle_warning #1 [n1] its GPUs have been below 5% utilisation for 10m40s (the idle policy of queue `lab`); release them (leave the shell) if you no longer need them
        ",
    );
}

#[test]
fn an_allocation_is_one_job_on_an_agent_that_holds_and_survives_a_server_restart() {
    run(
        "conflicting fields refused; an old agent gets none; a restart keeps one running",
        &[
            OldNode("old", 1),
            Round,
            Submit("alice", "gpus=1 interactive=1 array=4"),
            Submit("alice", "gpus=1 interactive=1 retries=2"),
            Submit("alice", "gpus=1 interactive=1"),
            Round,
            Show("alice", 1),
            Node("n1", 1),
            Round,
            Poll("n1"),
            Started("n1", 1),
            Round,
            Restart,
            Rejoin("n1", 1, &[1]),
            Round,
            Show("alice", 1),
            Poll("n1"),
        ],
        "
            node old (1 GPUs, agent protocol 2) registers: ok
            round: wrote jobs - nodes old tokens -; woke old; ended -
            alice submits gpus=1 interactive=1 array=4: Conflict(\"`interactive` and `array` conflict: an allocation is one job; run an array as a batch job (`gpusched submit --array`), or steps inside the allocation\")
            alice submits gpus=1 interactive=1 retries=2: Conflict(\"`interactive` and `max_retries` conflict: an allocation is never requeued (its shell was told its nodes); leave `max_retries` out\")
            alice submits gpus=1 interactive=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 pending #1
            alice shows 1: 1 pending: no online node whose agent holds interactive allocations has 1 GPU together; waiting for such a node to come back; only agents of protocol 6 or later hold interactive allocations (upgrade older ones)
            node n1 (1 GPUs) registers: ok
            round: wrote jobs 1 nodes n1 tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 polls: run 1#1 [0] hold; cancel -; preempt -
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            server restarts
              job 1 running on n1 [0] #1: running on n1
            node n1 registers again running [1]: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice shows 1: 1 running: running on n1
            n1 polls: run 1#1 [0] hold; cancel -; preempt -
        ",
    );
}

const DEBUG_PARTITION_ENDS: &str = "
[idle]
after = \"1h\"
action = \"warn\"

[queues.default]

[partition.debug]
nodes = [\"n1\"]
idle_after = \"30s\"
idle_action = \"end\"
idle_grace = \"20s\"
";

#[test]
fn a_partitions_idle_keys_rule_its_allocations_over_the_queues() {
    run(
        "an allocation in a partition that ends idle ones: warned and ended by its keys",
        &[
            Queues(DEBUG_PARTITION_ENDS),
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1 interactive=1 partition=debug"),
            Round,
            Poll("n1"),
            Started("n1", 1),
            Round,
            Sample("n1", 0, "util=0"),
            Round,
            Wait(30),
            Sample("n1", 0, "util=0"),
            Round,
            Wait(20),
            Sample("n1", 0, "util=0"),
            Round,
            Poll("n1"),
            Cancelled("n1", 1),
            Round,
            Events("alice", 1),
        ],
        "
            queues reload: Ok(())
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 interactive=1 partition=debug: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 polls: run 1#1 [0] hold; cancel -; preempt -
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            n1 reports GPU 0 util=0: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            30s pass
            n1 reports GPU 0 util=0: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            20s pass
            n1 reports GPU 0 util=0: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: ending (idle policy); n1 releasing it
            n1 polls: run -; cancel 1#1; preempt -
            n1 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 cancelled on n1 [0] #1: ended by the idle policy of partition `debug`: its GPUs were below 5% utilisation for 50s
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0
            - 0s started #1 [n1]
            - 30s idle_warning #1 [n1] its GPUs have been below 5% utilisation for 30s (the idle policy of partition `debug`); it will be ended in 20s unless they are used
            - 50s cancel_requested #1 [n1] by the idle policy of partition `debug`
            - 50s ended #1 [n1] cancelled: ended by the idle policy of partition `debug`: its GPUs were below 5% utilisation for 50s
        ",
    );
}
