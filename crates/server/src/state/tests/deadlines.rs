//! Deadlines on the live server (issue 37; docs/deadlines.md): the answer at
//! submission, how a job stands as time passes, a queue that refuses late ones, and the
//! `edf` policy running a job due soon before best-effort ones.

use gpusched_core::policy::PolicyKind;

use super::Step::*;
use super::{run_with, Step};

const QUEUES: &str = "[queues.default]

[queues.strict]
refuse_late_deadlines = true
";

fn steps() -> Vec<Step> {
    vec![
        Queues(QUEUES),
        Node("n1", 1),
        Round,
        // A best-effort job holds the GPU for its 600 s walltime.
        Submit("alice", "gpus=1 walltime=600"),
        Round,
        Poll("n1"),
        Started("n1", 1),
        Round,
        // Another best-effort job waits behind it.
        Submit("bob", "gpus=1 walltime=600"),
        // Due in 2000 s, 300 s of work: on track; due in 2000 s, 3000 s of work: at risk.
        Submit("carol", "gpus=1 walltime=300 deadline=+2000"),
        Submit("carol", "gpus=1 walltime=3000 deadline=+2000"),
        // The strict queue refuses what would be late and takes what is on track; a
        // deadline already past is refused everywhere.
        Submit("dave", "gpus=1 walltime=3000 deadline=+2000 queue=strict"),
        Submit("dave", "gpus=1 walltime=300 deadline=+2000 queue=strict"),
        Submit("dave", "gpus=1 walltime=300 deadline=+0"),
        // Without an estimate nothing says when it finishes: at risk.
        Submit("carol", "gpus=1 deadline=+3000"),
        Deadline("carol", 3),
        Deadline("carol", 4),
        Deadline("alice", 1),
        Round,
        // Past the protection of a job's first minutes (--min-runtime), edf stops the
        // best-effort job for the jobs due.
        Wait(700),
        Tick,
        Round,
        Poll("n1"),
        Preempted("n1", 1),
        Round,
    ]
}

#[test]
fn the_answer_at_submission_and_edf_running_the_job_due_first() {
    run_with(
        "deadlines: answers, refusals, edf's order",
        |cfg| {
            cfg.policy = PolicyKind::Edf;
            cfg.heartbeat_timeout = std::time::Duration::from_secs(36_000);
            cfg.node_lease = cfg.heartbeat_timeout;
        },
        &steps(),
        "
            queues reload: Ok(())
            node n1 (1 GPUs) registers: ok
            round: wrote jobs - nodes n1 tokens -; woke n1; ended -
            alice submits gpus=1 walltime=600: ok 1
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 starting on n1 [0] #1: sent to n1
            n1 polls: run 1#1 [0]; cancel -; preempt -
            n1 reports 1 started: ok
            round: wrote jobs 1 nodes - tokens -; woke -; ended -
              job 1 running on n1 [0] #1: running on n1
            bob submits gpus=1 walltime=600: ok 2
            carol submits gpus=1 walltime=300 deadline=+2000: ok 3 (deadline on track: finish +300s, slack 1700s)
            carol submits gpus=1 walltime=3000 deadline=+2000: ok 4 (deadline at risk: finish +4500s, slack -2500s)
            dave submits gpus=1 walltime=3000 deadline=+2000 queue=strict: Conflict(\"queue `strict` refuses jobs that would miss their deadline, and its estimate says it would finish 5500 s after it; give a later --deadline, a shorter --walltime, or submit to another queue\")
            dave submits gpus=1 walltime=300 deadline=+2000 queue=strict: ok 5 (deadline on track: finish +600s, slack 1400s)
            dave submits gpus=1 walltime=300 deadline=+0: Conflict(\"deadline_ms 1700000000000 is 0 s in the past: give a time still ahead (the CLI takes --deadline +6h or 2026-12-08T06:00)\")
            carol submits gpus=1 deadline=+3000: ok 6 (deadline at risk: finish unknown, slack unknown)
            carol deadline of 3: due +2000s, on track, finish +300s, slack 1700s
            carol deadline of 4: due +2000s, at risk, finish unknown, slack unknown
            alice deadline of 1: none
            round: wrote jobs 2 3 4 5 6 nodes - tokens -; woke -; ended -
              job 2 pending #1
              job 3 pending #1
              job 4 pending #1
              job 5 pending #1
              job 6 pending #1
            700s pass
            tick
            round: wrote jobs 1 nodes - tokens -; woke n1; ended -
              job 1 running on n1 [0] #1: being requeued: preempted by policy `edf`: jobs ahead of it in the policy's order need its GPUs
            n1 polls: run -; cancel -; preempt 1#1
            n1 reports 1 preempted: ok
            round: wrote jobs 1 3 nodes - tokens -; woke n1; ended -
              job 1 pending #2: requeued without using a retry: preempted by policy `edf`: jobs ahead of it in the policy's order need its GPUs
              job 3 starting on n1 [0] #1: sent to n1
        ",
    );
}
