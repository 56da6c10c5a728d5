//! Gangs (issue 12): jobs of several parts, one per node, that start together once the
//! first node reserved `MASTER_PORT`, and end (or requeue) as one.

use super::run;
use super::Step::*;

#[test]
fn a_job_of_one_node_has_one_part_and_its_own_launch_environment() {
    run(
        "one node: part 0, logs by rank",
        &[
            Node("n1", 4),
            Round,
            Submit("alice", "gpus=4 tasks=2"),
            Round,
            Poll("n1"),
            Started("n1", 1),
            Round,
            Logs(1, None, Some(1)),
            Logs(1, None, Some(2)),
            Logs(1, Some("n1"), None),
            Exit("n1", 1, 3),
            Round,
        ],
        r#"
            node n1 (4 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=4 tasks=2: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0, 1, 2, 3] #1: sent to n1
            n1 polls: run 1#1 [0, 1, 2, 3] tasks 2; cancel -; preempt -
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0, 1, 2, 3] #1: running on n1
            logs of 1 node None rank Some(1): http://n1.test:7000 rank Some(1)
            logs of 1 node None rank Some(2): NotFound("job 1 has no rank 2; its ranks are 0 to 1 (1 node x 2 per node)")
            logs of 1 node Some("n1") rank None: http://n1.test:7000 rank None
            n1 reports 1 exited 3: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 failed on n1 [0, 1, 2, 3] #1: exited with code 3
        "#,
    );
}
#[test]
fn a_gangs_fields_must_agree_with_each_other_and_the_cluster() {
    run(
        "gang: submissions",
        &[
            Node("n1", 2),
            Node("n2", 2),
            Round,
            Submit("alice", "nodes=3 gpus=4"),
            Submit("alice", "nodes=3 gpn=2"),
            Submit("alice", "nodes=2 gpn=2 tasks=3"),
            Submit("alice", "split=1 gpus=4 nodes=2"),
            Submit("alice", "split=1"),
            Submit("alice", "nodes=2 gpn=1 share=0.5"),
            Round,
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            node n2 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=3 gpus=4: Conflict("`nodes` = 3 needs `gpus_per_node` (whole GPUs on each node), or `gpus` divisible by 3; `gpus` = 4 is not (or use `split` to let the scheduler choose the nodes)")
            alice submits nodes=3 gpn=2: Conflict("the job asks for 3 nodes with 2 GPUs each, but the cluster has 2 such node(s) of one GPU model (`mixed_models` allows several); ask for fewer nodes or fewer GPUs per node")
            alice submits nodes=2 gpn=2 tasks=3: Conflict("`tasks_per_node` = 3 must divide the GPUs on each node, 2, so each process gets the same number of GPUs; use a divisor of 2")
            alice submits split=1 gpus=4 nodes=2: Conflict("`split` lets the scheduler choose the nodes and the GPUs on each; leave out `nodes` and `gpus_per_node`, or drop `split` and choose them yourself")
            alice submits split=1: Conflict("`split` needs `gpus`, the number of GPUs to split over nodes (e.g. gpus = 16 may run as 2 x 8 or 4 x 4)")
            alice submits nodes=2 gpn=1 share=0.5: Conflict("`nodes`, `gpus_per_node`, `split` and `tasks_per_node` go with whole GPUs (`gpus`), not with part of a GPU (`gpu_share`, `gpu_mem`, `mig`): a distributed job holds whole GPUs on every node")
            round: wrote jobs - nodes - tokens -; woke -; ended -
        "#,
    );
}

#[test]
fn a_job_of_one_node_ignores_a_port_and_ends_by_cancel_or_walltime() {
    run(
        "one node: port ignored, cancel, walltime",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1"),
            Round,
            // Its agent picks its own port: a report of one changes nothing.
            Port("n1", 1, 5000),
            Round,
            Started("n1", 1),
            Started("n1", 2),
            Round,
            Cancel("alice", 1),
            Round,
            Cancelled("n1", 1),
            TimedOut("n1", 2),
            Round,
        ],
        "
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            alice submits gpus=1: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n1 [1] #1: sent to n1
            n1 reports 1 port 5000: ok
            round: wrote jobs - nodes - tokens -; woke -; ended -
            n1 reports 1 started: ok
            n1 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
              job 2 running on n1 [1] #1: running on n1
            alice cancels 1: cancelling (running)
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: cancel requested; n1 is stopping it
            n1 reports 1 cancelled: ok
            n1 reports 2 timed out: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended 1 2
              job 1 cancelled on n1 [0] #1: cancelled while running
              job 2 timed_out on n1 [1] #1: stopped after passing its walltime of 60 s
        ",
    );
}

#[test]
fn a_gang_starts_together_after_the_port_and_succeeds_when_every_part_exited_0() {
    run(
        "gang: port, start, parts end 0",
        &[
            Node("n1", 2),
            Node("n2", 2),
            Round,
            Submit("alice", "nodes=2 gpn=2 tasks=2"),
            Round,
            Poll("n1"),
            Poll("n2"),
            // Only the first node's port counts.
            Port("n2", 1, 5000),
            Port("n1", 1, 29500),
            Round,
            Poll("n1"),
            Poll("n2"),
            Started("n1", 1),
            Round,
            Started("n2", 1),
            Round,
            Logs(1, Some("n2"), None),
            Logs(1, None, Some(3)),
            Logs(1, None, Some(4)),
            Logs(1, Some("n3"), None),
            Logs(1, Some("n1"), Some(3)),
            Wait(5),
            Exit("n2", 1, 0),
            Round,
            Poll("n2"),
            Poll("n1"),
            Exit("n1", 1, 0),
            Round,
        ],
        r#"
            node n1 (2 GPUs) registers: ok
            node n2 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=2 tasks=2: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0, 1] #1 parts n1[0, 1]:starting n2[0, 1]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 polls: run -; cancel -; preempt -; reserve port 1#1
            n2 polls: run -; cancel -; preempt -
            n2 reports 1 port 5000: ok
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0, 1] #1 parts n1[0, 1]:starting n2[0, 1]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 polls: run 1#1 [0, 1] rank 0/2 master 10.0.0.1:29500 hosts 10.0.0.1*2 10.0.0.2*2 tasks 2; cancel -; preempt -
            n2 polls: run 1#1 [0, 1] rank 1/2 master 10.0.0.1:29500 hosts 10.0.0.1*2 10.0.0.2*2 tasks 2; cancel -; preempt -
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 starting on n1 [0, 1] #1 parts n1[0, 1]:running n2[0, 1]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0, 1] #1 parts n1[0, 1]:running n2[0, 1]:running port 29500: running on n1, n2
            logs of 1 node Some("n2") rank None: http://n2.test:7000 rank None
            logs of 1 node None rank Some(3): http://n2.test:7000 rank Some(3)
            logs of 1 node None rank Some(4): NotFound("job 1 has no rank 4; its ranks are 0 to 3 (2 nodes x 2 per node)")
            logs of 1 node Some("n3") rank None: NotFound("job 1 has no part on n3; its attempt 1 runs on n1, n2")
            logs of 1 node Some("n1") rank Some(3): NotFound("rank 3 of job 1 runs on n2, not on n1; give one of --node and --rank, or both naming the same node")
            5s pass
            n2 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0, 1] #1 parts n1[0, 1]:running n2[0, 1]:done(0) port 29500: part 1 on n2 exited with code 0; waiting for the other part
            n2 polls: run -; cancel -; preempt -
            n1 polls: run 1#1 [0, 1] rank 0/2 master 10.0.0.1:29500 hosts 10.0.0.1*2 10.0.0.2*2 tasks 2; cancel -; preempt -
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended 1
              job 1 succeeded on n1 [0, 1] #1 parts n1[0, 1]:done(0) n2[0, 1]:done(0) port 29500: every part (2) exited with code 0
        "#,
    );
}

#[test]
fn a_part_that_fails_stops_the_others_and_the_gang_fails_once_all_ended() {
    run(
        "gang: one part exits 1",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Node("n3", 1),
            Round,
            Submit("alice", "nodes=3 gpn=1"),
            Round,
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Started("n2", 1),
            Started("n3", 1),
            Round,
            Exit("n2", 1, 1),
            Round,
            Poll("n1"),
            Poll("n2"),
            // Its GPUs stay held while the other parts stop: job 2 waits.
            Submit("bob", "gpus=1"),
            Round,
            Cancelled("n1", 1),
            Round,
            Cancelled("n3", 1),
            Round,
            Poll("n2"),
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            node n3 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 n3 tokens -; woke n1 n2 n3; ended -
            alice submits nodes=3 gpn=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2 n3; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting n3[0]:starting: sent to n1, n2, n3; waiting for n1 to reserve MASTER_PORT
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2 n3; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting n3[0]:starting port 29500: starting on n1, n2, n3 (MASTER_PORT 29500 on n1)
            n1 reports 1 started: ok
            n2 reports 1 started: ok
            n3 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:running n3[0]:running port 29500: running on n1, n2, n3
            n2 reports 1 exited 1: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2 n3; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:failed(1) n3[0]:running port 29500: part 1 on n2 exited with code 1; stopping the other 2 parts
            n1 polls: run -; cancel 1#1; preempt -
            n2 polls: run -; cancel -; preempt -
            bob submits gpus=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            n1 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 parts n1[0]:stopped(sig 15) n2[0]:failed(1) n3[0]:running port 29500: part 1 on n2 exited with code 1; stopping the other 2 parts
            n3 reports 1 cancelled: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1 n2 n3; ended 1
              job 1 failed on n1 [0] #1 parts n1[0]:stopped(sig 15) n2[0]:failed(1) n3[0]:stopped(sig 15) port 29500: part 1 on n2: exited with code 1; every other part was stopped
              job 2 starting on n1 [0] #1: sent to n1
            n2 polls: run -; cancel -; preempt -
        ",
    );
}

#[test]
fn a_lost_node_requeues_the_gang_once_as_one_unit() {
    run(
        "gang: node lost, requeued, lost again",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "nodes=2 gpn=1 retries=1"),
            Round,
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Started("n2", 1),
            Round,
            // n1 keeps polling, n2 falls silent past the heartbeat timeout.
            Wait(20),
            Poll("n1"),
            Wait(15),
            Tick,
            Round,
            // n1's part is told to stop; the gang keeps n1's GPU until it has.
            Poll("n1"),
            Cancelled("n1", 1),
            Round,
            Poll("n1"),
            Node("n2", 1),
            Round,
            Poll("n1"),
            Port("n1", 1, 29501),
            Round,
            Started("n1", 1),
            Started("n2", 1),
            Round,
            // The agent on n1 lost it: the other part is stopped, then no retry is left.
            Lost("n1", 1),
            Round,
            Poll("n2"),
            Cancelled("n2", 1),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=1 retries=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 reports 1 started: ok
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:running port 29500: running on n1, n2
            20s pass
            n1 polls: run 1#1 [0] rank 0/2 master 10.0.0.1:29500 hosts 10.0.0.1*1 10.0.0.2*1; cancel -; preempt -
            15s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:failed port 29500: part 1 on n2 was lost: no heartbeat from n2 for 30s; stopping the other part
            n1 polls: run -; cancel 1#1; preempt -
            n1 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 pending #2: requeued after attempt 1 on n1, n2 was lost: no heartbeat from n2 for 30s
            n1 polls: run -; cancel -; preempt -
            node n2 (1 GPUs) registers: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #2 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 polls: run -; cancel -; preempt -; reserve port 1#2
            n1 reports 1 port 29501: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #2 parts n1[0]:starting n2[0]:starting port 29501: starting on n1, n2 (MASTER_PORT 29501 on n1)
            n1 reports 1 started: ok
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #2 parts n1[0]:running n2[0]:running port 29501: running on n1, n2
            n1 reports 1 lost: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 running on n1 [0] #2 parts n1[0]:failed n2[0]:running port 29501: part 0 on n1 was lost: the agent lost it; stopping the other part
            n2 polls: run -; cancel 1#2; preempt -
            n2 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended 1
              job 1 failed on n1 [0] #2 parts n1[0]:failed n2[0]:stopped(sig 15) port 29501: part 0 on n1: lost 2 times, the last on n1, n2: the agent lost it; no retries left (max_retries = 1); every other part was stopped
        ",
    );
}

#[test]
fn cancel_and_walltime_reach_every_part() {
    run(
        "gang: cancel, walltime",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "nodes=2 gpn=1"),
            Round,
            // Cancelled while waiting for the port: both parts are told.
            Cancel("alice", 1),
            Round,
            Poll("n1"),
            Poll("n2"),
            Cancelled("n1", 1),
            Cancelled("n2", 1),
            Round,
            Submit("alice", "nodes=2 gpn=1"),
            Round,
            Port("n1", 2, 29500),
            Round,
            Started("n1", 2),
            Started("n2", 2),
            Round,
            TimedOut("n2", 2),
            Round,
            Poll("n1"),
            Cancelled("n1", 2),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            alice cancels 1: cancelling (starting)
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: cancel requested; n1, n2 are stopping it
            n1 polls: run -; cancel 1#1; preempt -
            n2 polls: run -; cancel 1#1; preempt -
            n1 reports 1 cancelled: ok
            n2 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended 1
              job 1 cancelled on n1 [0] #1 parts n1[0]:stopped(sig 15) n2[0]:stopped(sig 15): cancelled; all 2 parts stopped
            alice submits nodes=2 gpn=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke n1 n2; ended -
              job 2 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 reports 2 port 29500: ok
            round: wrote jobs 2 nodes - tokens -; woke n1 n2; ended -
              job 2 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 reports 2 started: ok
            n2 reports 2 started: ok
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 running on n1 [0] #1 parts n1[0]:running n2[0]:running port 29500: running on n1, n2
            n2 reports 2 timed out: ok
            round: wrote jobs 2 nodes - tokens -; woke n1 n2; ended -
              job 2 running on n1 [0] #1 parts n1[0]:running n2[0]:failed port 29500: part 1 on n2 passed the walltime of 60 s; stopping the other part
            n1 polls: run -; cancel 2#1; preempt -
            n1 reports 2 cancelled: ok
            round: wrote jobs 2 nodes - tokens -; woke n1 n2; ended 2
              job 2 timed_out on n1 [0] #1 parts n1[0]:stopped(sig 15) n2[0]:failed port 29500: part 1 on n2: stopped after passing its walltime of 60 s; every other part was stopped
        ",
    );
}

#[test]
fn a_restarted_server_keeps_a_running_gang() {
    run(
        "gang: server restart",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "nodes=2 gpn=1"),
            Round,
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Started("n2", 1),
            Round,
            Restart,
            Rejoin("n1", 1, &[1]),
            Rejoin("n2", 1, &[1]),
            Round,
            Poll("n1"),
            Poll("n2"),
            Exit("n1", 1, 0),
            Exit("n2", 1, 0),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 reports 1 started: ok
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:running port 29500: running on n1, n2
            server restarts
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:running port 29500: running on n1, n2
            node n1 registers again running [1]: ok
            node n2 registers again running [1]: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            n1 polls: run 1#1 [0] rank 0/2 master 10.0.0.1:29500 hosts 10.0.0.1*1 10.0.0.2*1; cancel -; preempt -
            n2 polls: run 1#1 [0] rank 1/2 master 10.0.0.1:29500 hosts 10.0.0.1*1 10.0.0.2*1; cancel -; preempt -
            n1 reports 1 exited 0: ok
            n2 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended 1
              job 1 succeeded on n1 [0] #1 parts n1[0]:done(0) n2[0]:done(0) port 29500: every part (2) exited with code 0
        ",
    );
}

#[test]
fn preemption_reaches_every_part_and_requeues_the_gang_without_a_retry() {
    run(
        "gang: preempted whole",
        &[
            Queues("[queues.a]\nquota = 2\n\n[queues.b]\n"),
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("bob", "queue=b nodes=2 gpn=1"),
            Round,
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Started("n2", 1),
            Round,
            Wait(600),
            Submit("alice", "queue=a"),
            Round,
            Poll("n1"),
            Poll("n2"),
            Preempted("n2", 1),
            Round,
            Poll("n1"),
            Preempted("n1", 1),
            Round,
        ],
        "
            queues reload: Ok(())
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            bob submits queue=b nodes=2 gpn=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 reports 1 started: ok
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:running port 29500: running on n1, n2
            600s pass
            alice submits queue=a: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1 n2; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:running port 29500: being preempted on n1 to return GPUs to queue `a` (job 2)
              job 2 pending #1
            n1 polls: run -; cancel -; preempt 1#1
            n2 polls: run -; cancel -; preempt 1#1
            n2 reports 1 preempted: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:stopped(sig 10) port 29500: being preempted on n1 to return GPUs to queue `a` (job 2)
            n1 polls: run -; cancel -; preempt 1#1
            n1 reports 1 preempted: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1 n2; ended -
              job 1 pending #2: preempted on n1, n2 to return GPUs to another queue's quota; requeued
              job 2 starting on n1 [0] #1: sent to n1
        ",
    );
}

#[test]
fn an_agent_that_rejoins_without_its_part_fails_that_part_and_the_others_stop() {
    run(
        "gang: rejoin without the part",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "nodes=2 gpn=1 retries=1"),
            Round,
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Started("n2", 1),
            Round,
            // n2's agent restarted and lost its part; n1's still runs.
            Rejoin("n2", 1, &[]),
            Round,
            Poll("n1"),
            Cancelled("n1", 1),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=1 retries=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 reports 1 started: ok
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:running port 29500: running on n1, n2
            node n2 registers again running []: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:failed port 29500: part 1 on n2 was lost: the agent on n2 restarted without it; stopping the other part
            n1 polls: run -; cancel 1#1; preempt -
            n1 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #2 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
        ",
    );
}

#[test]
fn a_running_job_stored_before_parts_existed_gets_its_part_0_at_restart() {
    run(
        "schema 2 rows: part 0 filled in",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=2"),
            Round,
            Parts(1, 1),
            Started("n1", 1),
            Round,
            Schema2Rows,
            Restart,
            Parts(1, 1),
            Rejoin("n1", 2, &[1]),
            Round,
            Poll("n1"),
            Exit("n1", 1, 0),
            Round,
        ],
        "
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=2: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0, 1] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0, 1] #1: running on n1
            the stored rows have no parts (schema 2)
            server restarts
              job 1 running on n1 [0, 1] #1: running on n1
            node n1 registers again running [1]: ok
            round: wrote jobs 1 nodes n1 tokens -; woke n1; ended -
              job 1 running on n1 [0, 1] #1: running on n1
            n1 polls: run 1#1 [0, 1]; cancel -; preempt -
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0, 1] #1: exited with code 0
        ",
    );
}

#[test]
fn a_part_lost_while_the_gang_is_still_starting_stops_the_others() {
    run(
        "gang: part lost before every part started",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "nodes=2 gpn=1 retries=1"),
            Round,
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Round,
            // n1's agent restarted without its part; n2 never started its own.
            Rejoin("n1", 1, &[]),
            Round,
            Poll("n2"),
            Cancelled("n2", 1),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=1 retries=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:running n2[0]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            node n1 registers again running []: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:failed n2[0]:starting port 29500: part 0 on n1 was lost: the agent on n1 restarted without it; stopping the other part
            n2 polls: run -; cancel 1#1; preempt -
            n2 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #2 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
        ",
    );
}

/// `nodes` shows where a node sits as placement sees it: the server's topology file over
/// what its agent said, and the address it advertised.
#[test]
fn a_node_shows_the_topology_files_location_over_its_agents() {
    use gpusched_wire::NodeLocation;
    let listen = "127.0.0.1:0".parse().expect("an address");
    let mut cfg = crate::config::ServerConfig::new("/nonexistent/gpusched-test".into(), listen);
    let file = NodeLocation {
        switch: Some("s9".into()),
        rack: Some("r9".into()),
    };
    cfg.topology.insert(
        "n1".into(),
        crate::live_map::NodePlace {
            location: file.clone(),
            features: vec![],
        },
    );
    let now = crate::clock::Now::read();
    let queues = crate::queues::Queues::default();
    let mut st = crate::state::State::load(
        std::sync::Arc::new(cfg),
        vec![],
        vec![],
        vec![],
        queues,
        now,
    );
    let said = NodeLocation {
        switch: Some("s1".into()),
        rack: None,
    };
    for name in ["n1", "n2"] {
        let mut reg = super::node_register(name, 1, vec![]);
        reg.location = said.clone();
        st.register(reg).expect("registered");
    }
    let nodes = st.node_list(&super::who("root")).nodes;
    let at = |name: &str| nodes.iter().find(|n| n.name == name).expect("listed");
    assert_eq!(at("n1").location, file);
    assert_eq!(at("n2").location, said);
    assert_eq!(at("n2").addr.as_deref(), Some("10.0.0.2"));
}

#[test]
fn a_split_job_takes_the_layout_the_scheduler_chose() {
    run(
        "gang: split",
        &[
            Node("n1", 2),
            Node("n2", 2),
            Round,
            Submit("alice", "split=1 gpus=4 tasks=2"),
            Round,
            Parts(1, 2),
            Port("n1", 1, 29500),
            Round,
            Poll("n2"),
        ],
        "
            node n1 (2 GPUs) registers: ok
            node n2 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits split=1 gpus=4 tasks=2: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0, 1] #1 parts n1[0, 1]:starting n2[0, 1]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0, 1] #1 parts n1[0, 1]:starting n2[0, 1]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n2 polls: run 1#1 [0, 1] rank 1/2 master 10.0.0.1:29500 hosts 10.0.0.1*2 10.0.0.2*2 tasks 2; cancel -; preempt -
        ",
    );
}

#[test]
fn a_stopped_agent_requeues_the_gang_without_a_retry_and_its_node_leaves() {
    run(
        "gang: an agent stopped",
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "nodes=2 gpn=1"),
            Round,
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Started("n2", 1),
            Round,
            // n2's agent is stopping: its part ends `stopped`, n1's is cancelled.
            Stopped("n2", 1),
            Round,
            Poll("n1"),
            Cancelled("n1", 1),
            Round,
            Poll("n1"),
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 reports 1 started: ok
            n2 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:running port 29500: running on n1, n2
            n2 reports 1 stopped: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:stopped(sig 15) port 29500: part 1 on n2 was stopped: the agent was told to stop; stopping the other part
            n1 polls: run -; cancel 1#1; preempt -
            n1 reports 1 cancelled: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 pending #2: requeued without using a retry: attempt 1 was stopped on n2 (the agent was told to stop)
            n1 polls: run -; cancel -; preempt -
        ",
    );
}
