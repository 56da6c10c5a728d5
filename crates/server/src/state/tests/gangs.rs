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
            logs of 1 node None rank Some(2): NotFound("job 1 has no rank 2; its ranks are 0..=1 (1 node x 2 per node)")
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
