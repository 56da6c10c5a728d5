//! Elastic jobs on the live server (issue 37 item 2; docs/elastic.md): the form checked
//! at submission, a start on every idle GPU of the node, loans taken back for a waiting
//! job through the preemption path, a grow once the node frees up, and the range kept
//! across a restart of the server.

use super::Step::*;
use super::{run_with, Step};

fn steps() -> Vec<Step> {
    vec![
        Node("n1", 4),
        Round,
        // Malformed ranges: refused with what to change.
        Submit("alice", "gpus=4 max=2"),
        Submit("alice", "gpus=0 max=2"),
        Submit("alice", "nodes=2 gpn=2 gpus=4 max=8"),
        Submit("alice", "gpus=2 max=4 tasks=2"),
        Submit("alice", "gpus=1 serial=0.2"),
        Submit("alice", "gpus=1 max=4 serial=1.5"),
        // 1 to 4 GPUs, alone: it starts on all 4.
        Submit("alice", "gpus=1 max=4 walltime=36000"),
        Round,
        Poll("n1"),
        Started("n1", 1),
        Round,
        Show("alice", 1),
        // The server restarts: the job is back on its 4 GPUs, range and all.
        Restart,
        Rejoin("n1", 4, &[1]),
        Round,
        Show("alice", 1),
        List("alice", ""),
        // A rigid 2-GPU job: past the protection of a run's first minutes, job 1 is asked
        // to give 2 back and restarts on what is left once job 2 started.
        Submit("bob", "gpus=2"),
        Round,
        Wait(700),
        Tick,
        Round,
        Poll("n1"),
        Preempted("n1", 1),
        Round,
        Poll("n1"),
        Started("n1", 2),
        Started("n1", 1),
        Round,
        // Job 2 ends; after its cooldown (10 resize costs, 600 s) job 1 grows back to 4.
        Exit("n1", 2, 0),
        Round,
        Wait(700),
        Tick,
        Round,
        Poll("n1"),
        Preempted("n1", 1),
        Round,
        Poll("n1"),
        Events("alice", 1),
    ]
}

#[test]
fn an_elastic_job_starts_wide_gives_back_and_grows_through_preemptions() {
    run_with(
        "elastic: range, start, take-back, grow",
        |cfg| {
            cfg.min_runtime = std::time::Duration::from_secs(600);
            cfg.heartbeat_timeout = std::time::Duration::from_secs(36_000);
            cfg.node_lease = cfg.heartbeat_timeout;
        },
        &steps(),
        "
            node n1 (4 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=4 max=2: Conflict(\"`gpus` 4 to `gpus_max` 2: the elastic range 4-2 is upside down: the minimum must not exceed the maximum (write --gpus 2-4)\")
            alice submits gpus=0 max=2: Conflict(\"`gpus` 0 to `gpus_max` 2: an elastic job needs at least 1 GPU as its minimum (got 0-2); write --gpus 1-2 or more\")
            alice submits nodes=2 gpn=2 gpus=4 max=8: Conflict(\"`gpus_max` makes a job elastic on one node, which a gang (`nodes`, `gpus_per_node`, `split`) is not; leave `gpus_max` out, or submit it as a single-node job of whole GPUs\")
            alice submits gpus=2 max=4 tasks=2: Conflict(\"`gpus_max` makes a job elastic on one node, which a job of several processes per node (`tasks_per_node`, which must divide its GPUs) is not; leave `gpus_max` out, or submit it as a single-node job of whole GPUs\")
            alice submits gpus=1 serial=0.2: Conflict(\"`scaling_serial` is for elastic jobs: give `gpus_max` too (the CLI's --gpus MIN-MAX), or leave it out\")
            alice submits gpus=1 max=4 serial=1.5: Conflict(\"`gpus` 1 to `gpus_max` 4: the serial fraction 1.5 is outside [0, 1): it is the share of a step that does not speed up with more GPUs (0.05 by default)\")
            alice submits gpus=1 max=4 walltime=36000: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0, 1, 2, 3] #1: sent to n1
            n1 polls: run 1#1 [0, 1, 2, 3]; cancel -; preempt -
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0, 1, 2, 3] #1: running on n1
            alice shows 1: 1 running: running on n1
            server restarts
              job 1 running on n1 [0, 1, 2, 3] #1: running on n1
            node n1 registers again running [1]: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice shows 1: 1 running: running on n1
            alice lists : 1:running; next_before None
            bob submits gpus=2: ok 2
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            700s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0, 1, 2, 3] #1: being requeued: elastic resize: giving GPUs back on n1 for job 2, restarting on 2
            n1 polls: run -; cancel -; preempt 1#1
            n1 reports 1 preempted: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [2, 3] #2: sent to n1
              job 2 starting on n1 [0, 1] #1: sent to n1
            n1 polls: run 1#2 [2, 3] 2#1 [0, 1]; cancel -; preempt -
            n1 reports 2 started: ok
            n1 reports 1 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [2, 3] #2: running on n1
              job 2 running on n1 [0, 1] #1: running on n1
            n1 reports 2 exited 0: ok
            round: wrote jobs 2 nodes - tokens -; woke n1; ended 2
              job 2 succeeded on n1 [0, 1] #1: exited with code 0
            700s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [2, 3] #2: being requeued: elastic resize: growing into idle GPUs on n1, restarting on 4
            n1 polls: run -; cancel -; preempt 1#2
            n1 reports 1 preempted: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0, 1, 2, 3] #3: sent to n1
            n1 polls: run 1#3 [0, 1, 2, 3]; cancel -; preempt -
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0,1,2,3
            - 0s started #1 [n1]
            - 700s preempted #1 [n1] elastic resize: giving GPUs back on n1 for job 2, restarting on 2
            - 700s requeued #1 [n1] requeued without using a retry: elastic resize: giving GPUs back on n1 for job 2, restarting on 2
            - 700s placed #2 [n1] n1: GPU 2,3
            - 700s started #2 [n1]
            - 1400s preempted #2 [n1] elastic resize: growing into idle GPUs on n1, restarting on 4
            - 1400s requeued #2 [n1] requeued without using a retry: elastic resize: growing into idle GPUs on n1, restarting on 4
            - 1400s placed #3 [n1] n1: GPU 0,1,2,3
        ",
    );
}
