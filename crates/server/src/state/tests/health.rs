//! Drains and GPU health: what an operator and the samples take out of placement, what
//! happens to the jobs there, and that both outlive a restart.

use super::run;
use super::Step::*;

#[test]
fn a_drained_node_runs_its_jobs_out_starts_nothing_and_resumes() {
    run(
        "drain, wait with the reason, restart, resume",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Drain("alice", "n1", "maintenance", false),
            Drain("root", "n9", "maintenance", false),
            Drain("root", "n1", "maintenance", false),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Reason(2, "no node can hold it now: n1 is drained (maintenance)"),
            Poll("n1"),
            Nodes,
            Exit("n1", 1, 0),
            Round,
            Restart,
            Rejoin("n1", 2, &[]),
            Round,
            Nodes,
            Reason(2, "n1 is drained (maintenance)"),
            Resume("alice", "n1"),
            Resume("root", "n1"),
            Round,
            Nodes,
            Poll("n1"),
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
            alice drains n1 (maintenance): Forbidden(\"only an admin may drain a node (alice is not one); ask an admin, or use an admin token\")
            root drains n9 (maintenance): NotFound(\"no node \\\"n9\\\"; the nodes are: n1\")
            root drains n1 (maintenance): ok, drained by root
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            n1 polls: run 1#1 [0]; cancel -; preempt -
            nodes: n1 drain maintenance by root now=false; unhealthy -
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
            server restarts
              job 2 pending #1
            ended, in the store only: 1
            node n1 registers again running []: ok
            round: wrote jobs - nodes - tokens -; woke n1; ended -
            nodes: n1 drain maintenance by root now=false; unhealthy -
            alice resumes n1: Forbidden(\"only an admin may resume a node (alice is not one); ask an admin, or use an admin token\")
            root resumes n1: ok
            round: wrote jobs 2 nodes n1 tokens -; woke n1; ended -
              job 2 starting on n1 [0] #1: sent to n1
            nodes: n1 drain -; unhealthy -
            n1 polls: run 2#1 [0]; cancel -; preempt -
        ",
    );
}

#[test]
fn drain_now_requeues_through_preemption_without_using_a_retry() {
    run(
        "drain --now",
        &[
            Node("n1", 1),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Drain("root", "n1", "reboot", true),
            Round,
            Poll("n1"),
            Preempted("n1", 1),
            Round,
            Poll("n1"),
            Resume("root", "n1"),
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
            root drains n1 --now (reboot): ok, drained by root
            round: wrote jobs 1 nodes n1 tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: being requeued: n1 is drained (reboot)
            n1 polls: run -; cancel -; preempt 1#1
            n1 reports 1 preempted: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued without using a retry: n1 was drained (reboot)
            n1 polls: run -; cancel -; preempt -
            root resumes n1: ok
            round: wrote jobs 1 nodes n1 tokens -; woke n1; ended -
              job 1 starting on n1 [0] #2: sent to n1
            n1 polls: run 1#2 [0]; cancel -; preempt -
        ",
    );
}

#[test]
fn hot_xid_and_lost_gpus_leave_placement_and_their_jobs_finish() {
    run(
        "health from samples, finish",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Round,
            Sample("n1", 1, "temp=95"),
            Sample("n1", 0, "xid=13"),
            Round,
            Submit("bob", "gpus=1"),
            Round,
            Reason(2, "free"),
            Node("n2", 1),
            Round,
            Sample("n2", 0, "lost"),
            Sample("n1", 0, "xid=79"),
            Round,
            Nodes,
            Poll("n1"),
            Submit("bob", "gpus=1"),
            Round,
            Reason(
                3,
                "no node can hold it now: n1's GPU 0 is unhealthy (Xid 79), GPU 1",
            ),
            Exit("n1", 1, 0),
            Round,
            Restart,
            Rejoin("n1", 2, &[]),
            Rejoin("n2", 1, &[]),
            Round,
            Nodes,
            Reason(3, "n2's GPU 0 is unhealthy (NVML lost the GPU"),
            Resume("root", "n1"),
            Round,
            Poll("n1"),
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
            n1 reports GPU 1 temp=95: ok
            n1 reports GPU 0 xid=13: ok
            round: wrote jobs - nodes n1 tokens -; woke -; ended -
            bob submits gpus=1: ok 2
            round: wrote jobs 2 nodes - tokens -; woke -; ended -
              job 2 pending #1
            node n2 (1 GPUs) registers: ok
            round: wrote jobs 2 nodes n2 tokens -; woke n2; ended -
              job 2 starting on n2 [0] #1: sent to n2
            n2 reports GPU 0 lost: ok
            n1 reports GPU 0 xid=79: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke -; ended -
            nodes: n1 drain -; unhealthy 0:Xid 79 1:95 C, above the 90 C limit
            nodes: n2 drain -; unhealthy 0:NVML lost the GPU (fallen off the bus)
            n1 polls: run 1#1 [0]; cancel -; preempt -
            bob submits gpus=1: ok 3
            round: wrote jobs 3 nodes - tokens -; woke -; ended -
              job 3 pending #1
            n1 reports 1 exited 0: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 succeeded on n1 [0] #1: exited with code 0
            server restarts
              job 2 starting on n2 [0] #1: sent to n2
              job 3 pending #1
            ended, in the store only: 1
            node n1 registers again running []: ok
            node n2 registers again running []: ok
            round: wrote jobs - nodes - tokens -; woke n1 n2; ended -
            nodes: n1 drain -; unhealthy 0:Xid 79 1:95 C, above the 90 C limit
            nodes: n2 drain -; unhealthy 0:NVML lost the GPU (fallen off the bus)
            root resumes n1: ok
            round: wrote jobs 3 nodes n1 tokens -; woke n1; ended -
              job 3 starting on n1 [0] #1: sent to n1
            n1 polls: run 3#1 [0]; cancel -; preempt -
        ",
    );
}

#[test]
fn unhealthy_jobs_requeue_preempts_the_jobs_on_the_failed_gpu() {
    run(
        "health, requeue",
        &[
            RequeueUnhealthy,
            Node("n1", 2),
            Round,
            // GPU 0 is sampled at 50 C, GPU 1 not at all: the first job takes the
            // cooler GPU 1 (the core's tie-break between GPUs linked alike).
            Sample("n1", 0, "ecc=0"),
            Submit("alice", "gpus=1"),
            Submit("alice", "gpus=1"),
            Round,
            Started("n1", 1),
            Started("n1", 2),
            Round,
            Sample("n1", 0, "ecc=1"),
            Round,
            Poll("n1"),
            Preempted("n1", 2),
            Round,
            Nodes,
        ],
        "
            the server requeues jobs on unhealthy GPUs
            node n1 (2 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            n1 reports GPU 0 ecc=0: ok
            alice submits gpus=1: ok 1
            alice submits gpus=1: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [1] #1: sent to n1
              job 2 starting on n1 [0] #1: sent to n1
            n1 reports 1 started: ok
            n1 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [1] #1: running on n1
              job 2 running on n1 [0] #1: running on n1
            n1 reports GPU 0 ecc=1: ok
            round: wrote jobs 2 nodes n1 tokens -; woke n1; ended -
              job 2 running on n1 [0] #1: being requeued: GPU 0 of n1 is unhealthy (1 uncorrectable ECC error)
            n1 polls: run 1#1 [1]; cancel -; preempt 2#1
            n1 reports 2 preempted: ok
            round: wrote jobs 2 nodes - tokens -; woke n1; ended -
              job 2 pending #2: requeued without using a retry: GPU 0 of n1 is unhealthy (1 uncorrectable ECC error)
            nodes: n1 drain -; unhealthy 0:1 uncorrectable ECC error
        ",
    );
}
