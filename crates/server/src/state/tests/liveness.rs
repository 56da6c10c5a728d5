//! Scenarios of the node lease (`liveness.rs`): a restart or an outage kills nothing,
//! and nothing is placed on a node whose agent is not heard from.

use super::Step::*;
use super::*;

/// The default lease (5 minutes) over the heartbeat timeout (30 s).
fn lease(cfg: &mut ServerConfig) {
    cfg.node_lease = crate::config::DEFAULT_NODE_LEASE;
}

#[test]
fn a_restart_keeps_the_jobs_of_agents_that_come_back_and_places_nothing_on_the_others() {
    run_with(
        "lease: restart",
        lease,
        &[
            Node("n2", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            // n1 keeps GPUs free: nothing may go there while its agent is not heard from.
            Node("n1", 4),
            Round,
            Submit("alice", "gpus=2 retries=1"),
            Round,
            Started("n2", 1),
            Started("n1", 2),
            Round,
            // The server is down for 20 s (longer than the agents' old 15 s), then starts.
            Wait(20),
            Restart,
            NodeIs("n1"),
            NodeIs("n2"),
            // n2's agent registers again with its job; n1's never comes back.
            Rejoin("n2", 1, &[1]),
            NodeIs("n2"),
            Submit("alice", "gpus=1"),
            Round,
            // Past the heartbeat timeout, within the lease: n1's job is kept.
            Wait(40),
            Poll("n2"),
            Tick,
            Round,
            NodeIs("n1"),
            // The lease ends 300 s after the server's start: n1's job is lost, requeued.
            Wait(250),
            Poll("n2"),
            Tick,
            Round,
            Wait(11),
            Poll("n2"),
            Tick,
            Round,
            NodeIs("n1"),
            Exit("n2", 1, 0),
            Round,
        ],
        "
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n2 tokens -; woke n2; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n2; ended -
              job 1 starting on n2 [0] #1: sent to n2
            node n1 (4 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=2 retries=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke n1; ended -
              job 2 starting on n1 [0, 1] #1: sent to n1
            n2 reports 1 started: ok
            n1 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n2 [0] #1: running on n2
              job 2 running on n1 [0, 1] #1: running on n1
            20s pass
            server restarts
              job 1 running on n2 [0] #1: running on n2
              job 2 running on n1 [0, 1] #1: running on n1
            n1 is Unreachable
            n2 is Unreachable
            node n2 registers again running [1]: ok
            n2 is Online
            alice submits gpus=1: ok 3
            round: wrote jobs 3 nodes n2 tokens -; woke n2; ended -
              job 3 pending #1
            40s pass
            n2 polls: run 1#1 [0]; cancel -; preempt -
            tick
            round: wrote jobs - nodes - tokens -; woke -; ended -
            n1 is Unreachable
            250s pass
            n2 polls: run 1#1 [0]; cancel -; preempt -
            tick
            round: wrote jobs - nodes - tokens -; woke -; ended -
            11s pass
            n2 polls: run 1#1 [0]; cancel -; preempt -
            tick
            round: wrote jobs 2 nodes - tokens -; woke n1; ended -
              job 2 pending #2: requeued after attempt 1 on n1 was lost: no heartbeat from n1 for 300s
            n1 is Offline
            n2 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n2; ended 1
              job 1 succeeded on n2 [0] #1: exited with code 0
        ",
    );
}

#[test]
fn a_silent_node_takes_nothing_new_and_keeps_its_job_until_its_agent_is_heard_again() {
    run_with(
        "lease: silence shorter than the lease",
        lease,
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Wait(31),
            Tick,
            NodeIs("n1"),
            Submit("alice", "gpus=1"),
            Round,
            Reason(2, "unreachable"),
            // Its poll is refused (it must register again), and the registration keeps
            // the job it still runs.
            Poll("n1"),
            Rejoin("n1", 2, &[1]),
            NodeIs("n1"),
            Round,
            Exit("n1", 1, 0),
            Round,
        ],
        "
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            31s pass
            tick
            n1 is Unreachable
            alice submits gpus=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            n1 polls: Conflict(\"node n1 must register (again) with this server before polling or reporting\")
            node n1 registers again running [1]: ok
            n1 is Online
            round: wrote jobs 2 nodes n1 tokens -; woke n1; ended -
              job 2 starting on n1 [1] #1: sent to n1
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
        ",
    );
}

#[test]
fn a_stopped_agent_takes_its_node_out_at_once() {
    run_with(
        "lease: an agent leaves",
        lease,
        &[
            Node("n1", 1),
            Node("n2", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            // n1 holds job 1: a leave while it holds a job changes nothing.
            Leave("n1"),
            NodeIs("n1"),
            Leave("n2"),
            NodeIs("n2"),
            Submit("alice", "gpus=1"),
            Round,
            Reason(2, "waiting for 1 free GPU"),
            // It comes back: placed on again.
            Rejoin("n2", 1, &[]),
            Round,
        ],
        "
            node n1 (1 GPUs) registers: ok
            node n2 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits gpus=1: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 leaves: ok
            n1 is Online
            n2 leaves: ok
            n2 is Offline
            alice submits gpus=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            node n2 registers again running []: ok
            round: wrote jobs 2 nodes - tokens -; woke n2; ended -
              job 2 starting on n2 [0] #1: sent to n2
        ",
    );
}
