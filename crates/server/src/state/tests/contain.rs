//! Containment (issue 32): what an attempt used, summed over its parts and kept with the
//! job; what each node enforces; limits and images only for agents that take them.

use super::run;
use super::Step::*;

#[test]
fn what_a_gang_used_adds_up_over_its_parts_and_an_unmeasured_attempt_shows_nothing() {
    run(
        "a gang of two measured parts, a job its agent did not measure, a restart",
        &[
            ContainedNode("n1", 2),
            ContainedNode("n2", 2),
            Round,
            Submit("alice", "nodes=2 gpn=1 mem=4096"),
            Submit("bob", "gpus=1"),
            Round,
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Started("n2", 1),
            Started("n1", 2),
            Round,
            Wait(3600),
            Used("n1", 1, 0, "cpu=3000000 peak=3072 cpu_psi=100"),
            Round,
            // Half the gang measured so far.
            UsedBy(1),
            Used("n2", 1, 0, "cpu=1000000 peak=4000 mem_psi=20"),
            Exit("n1", 2, 0),
            Round,
            UsedBy(1),
            UsedBy(2),
            Events("alice", 1),
            UsageUsed,
            Restart,
            Round,
            UsedBy(1),
            UsedBy(2),
        ],
        r#"
            node n1 (2 GPUs, contained) registers: ok
            node n2 (2 GPUs, contained) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            alice submits nodes=2 gpn=1 mem=4096: ok 1
            bob submits gpus=1: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
              job 2 starting on n1 [1] #1: sent to n1
            n1 reports 1 port 29500: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1 parts n1[0]:starting n2[0]:starting port 29500: starting on n1, n2 (MASTER_PORT 29500 on n1)
            n1 reports 1 started: ok
            n2 reports 1 started: ok
            n1 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 parts n1[0]:running n2[0]:running port 29500: running on n1, n2
              job 2 running on n1 [1] #1: running on n1
            3600s pass
            n1 reports 1 exited 0 using cpu=3000000 peak=3072 cpu_psi=100: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1 parts n1[0]:done(0) n2[0]:running port 29500: part 0 on n1 exited with code 0; waiting for the other part
            used by job 1: CPU 50m00s, peak memory 3.0 GiB (largest part) of 4.0 GiB asked; stalled on CPU 100 ms
            n2 reports 1 exited 0 using cpu=1000000 peak=4000 mem_psi=20: ok
            n1 reports 2 exited 0: ok
            round: wrote jobs 1 2 nodes - tokens -; woke n1 n2; ended 1 2
              job 1 succeeded on n1 [0] #1 parts n1[0]:done(0) n2[0]:done(0) port 29500: every part (2) exited with code 0
              job 2 succeeded on n1 [1] #1: exited with code 0
            used by job 1: CPU 1h06m (1.1 cores avg), peak memory 3.9 GiB (largest part) of 4.0 GiB asked; stalled on CPU 100 ms, on memory 20 ms
            used by job 2: nothing measured
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1,n2] n1: GPU 0; n2: GPU 0
            - 0s started #1 [n1,n2] every part started
            - 3600s ended #1 [n1,n2] succeeded: every part (2) exited with code 0; used CPU 1h06m (1.1 cores avg), peak memory 3.9 GiB (largest part) of 4.0 GiB asked; stalled on CPU 100 ms, on memory 20 ms
            usage: alice 1.111111 CPU-h 7.812500 GiB-h, bob 0.000000 CPU-h 0.000000 GiB-h
            server restarts
            ended, in the store only: 2
            round: wrote jobs - nodes - tokens -; woke -; ended -
            used by job 1: CPU 1h06m (1.1 cores avg), peak memory 3.9 GiB (largest part) of 4.0 GiB asked; stalled on CPU 100 ms, on memory 20 ms
            used by job 2: nothing measured
        "#,
    );
}

#[test]
fn limits_and_images_go_only_to_agents_that_take_them_and_out_of_memory_says_its_peak() {
    run(
        "a contained node and a protocol-3 node; the kernel kills a job over its --mem",
        &[
            ContainedNode("n1", 1),
            Protocol3Node("n2", 1),
            Round,
            Enforces("n1"),
            Enforces("n2"),
            Submit("alice", "gpus=1 cpus=2 mem=64"),
            Submit("alice", "gpus=1 cpus=2 mem=64"),
            Round,
            Contain(1, "image=localhost/py pids=64"),
            Contain(2, "image=localhost/py pids=64"),
            Poll("n1"),
            Poll("n2"),
            Started("n1", 1),
            Started("n2", 2),
            Round,
            Wait(10),
            OutOfMemory("n1", 1, 64, 64),
            Round,
            UsedBy(1),
            Events("alice", 1),
        ],
        r#"
            node n1 (1 GPUs, contained) registers: ok
            node n2 (1 GPUs, agent protocol 3) registers: ok
            round: wrote jobs - nodes n1 n2 tokens -; woke n1 n2; ended -
            n1 enforces v1 [memory cpu cpuset pids devices kill] images podman 4.3.1; notes: -
            n2 enforces none [] images -; notes: its agent is older than agent protocol 4 and enforces nothing; upgrade it to contain jobs
            alice submits gpus=1 cpus=2 mem=64: ok 1
            alice submits gpus=1 cpus=2 mem=64: ok 2
            round: wrote jobs 1 2 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #1: sent to n1
              job 2 starting on n2 [0] #1: sent to n2
            to run job 1 contained: image=localhost/py pids=64
            to run job 2 contained: image=localhost/py pids=64
            n1 polls: run 1#1 [0] limits cpu 2000 mem 64 pids 64 image localhost/py; cancel -; preempt -
            n2 polls: run 2#1 [0]; cancel -; preempt -
            n1 reports 1 started: ok
            n2 reports 2 started: ok
            round: wrote jobs 1 2 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
              job 2 running on n2 [0] #1: running on n2
            10s pass
            n1 reports 1 out of memory: ok
            round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
              job 1 failed on n1 [0] #1: out of memory: peak 64 MiB of its 64 MiB limit (--mem; the kernel killed it)
            used by job 1: CPU 9.0 s (0.9 cores avg), peak memory 64 MiB of 64 MiB asked
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1] n1: GPU 0
            - 0s started #1 [n1]
            - 10s ended #1 [n1] failed: out of memory: peak 64 MiB of its 64 MiB limit (--mem; the kernel killed it); used CPU 9.0 s (0.9 cores avg), peak memory 64 MiB of 64 MiB asked
        "#,
    );
}

#[test]
fn a_requeued_attempt_starts_measuring_again() {
    run(
        "a gang part measured, the other lost: requeued, what it used in the requeue event",
        &[
            ContainedNode("n1", 1),
            ContainedNode("n2", 1),
            Round,
            Submit("alice", "nodes=2 gpn=1 retries=1"),
            Round,
            Port("n1", 1, 29500),
            Round,
            Started("n1", 1),
            Started("n2", 1),
            Round,
            Wait(60),
            Used("n1", 1, 0, "cpu=60000 peak=100"),
            Lost("n2", 1),
            Round,
            UsedBy(1),
            Events("alice", 1),
        ],
        r#"
            node n1 (1 GPUs, contained) registers: ok
            node n2 (1 GPUs, contained) registers: ok
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
            60s pass
            n1 reports 1 exited 0 using cpu=60000 peak=100: ok
            n2 reports 1 lost: ok
            round: wrote jobs 1 nodes - tokens -; woke n1 n2; ended -
              job 1 starting on n1 [0] #2 parts n1[0]:starting n2[0]:starting: sent to n1, n2; waiting for n1 to reserve MASTER_PORT
            used by job 1: nothing measured
            alice reads events of 1:
            - 0s submitted #0 [] queue default
            - 0s placed #1 [n1,n2] n1: GPU 0; n2: GPU 0
            - 0s started #1 [n1,n2] every part started
            - 60s requeued #1 [n1,n2] requeued after attempt 1 on n1, n2 was lost: the agent lost it; used CPU 1m00s (1.0 cores avg), peak memory 100 MiB (largest part)
            - 60s placed #2 [n1,n2] n1: GPU 0; n2: GPU 0
        "#,
    );
}
