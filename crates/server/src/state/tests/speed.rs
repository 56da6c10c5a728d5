//! Heterogeneous GPUs (issue 36): a job goes to the GPU model where it gains most while
//! that model has room (its `--speedup`, else what its kind taught, else the defaults);
//! bad declarations are refused saying the form; the learnt speeds survive a restart.

use super::run;
use super::Step::*;

const V100: &str = "Tesla V100-SXM2-16GB";
const A100: &str = "A100-SXM4-80GB";
const H100: &str = "NVIDIA H100 80GB HBM3";

#[test]
fn each_job_goes_where_it_gains_most_by_its_declaration_or_the_defaults() {
    run(
        "declared speed-ups and defaults order the models each job tries",
        &[
            ModelNode("v1", 2, V100),
            ModelNode("a1", 2, A100),
            ModelNode("h1", 2, H100),
            Round,
            // Gains most on the H100 by its own word.
            Submit("alice", "gpus=2 speedup=H100=1.3,A100=1.2,V100=1"),
            // The defaults: H100 first, taken; then the A100.
            Submit("alice", "gpus=2"),
            // Runs no faster on the new models (its own measure): the V100 for it.
            Submit("alice", "gpus=2 speedup=V100=1.1,A100=1,H100=1"),
            Submit("alice", "gpus=1 speedup=H100"),
            Submit("alice", "gpus=1 speedup=H100=-2"),
            Round,
            Speeds("alice", 2),
            Speeds("alice", 3),
        ],
        "
            node v1 (2 Tesla V100-SXM2-16GB) registers: ok
            node a1 (2 A100-SXM4-80GB) registers: ok
            node h1 (2 NVIDIA H100 80GB HBM3) registers: ok
            round: wrote jobs - nodes a1 h1 v1 tokens -; woke a1 h1 v1; ended -
            alice submits gpus=2 speedup=H100=1.3,A100=1.2,V100=1: ok 1
            alice submits gpus=2: ok 2
            alice submits gpus=2 speedup=V100=1.1,A100=1,H100=1: ok 3
            alice submits gpus=1 speedup=H100: Conflict(\"speed-up `H100` is not MODEL=FACTOR; write e.g. H100=2.8,A100=1.6\")
            alice submits gpus=1 speedup=H100=-2: Conflict(\"speed-up `H100=-2`: `-2` is not a positive number; a factor is how many times faster than the reference GPU model the job runs, e.g. 1.6\")
            round: wrote jobs 1 2 3 nodes - tokens -; woke a1 h1 v1; ended -
              job 1 starting on h1 [0, 1] #1: sent to h1
              job 2 starting on a1 [0, 1] #1: sent to a1
              job 3 starting on v1 [0, 1] #1: sent to v1
            alice speeds of 2: declared None; NVIDIA H100 80GB HBM3 4.00 default, A100-SXM4-80GB 2.00 default, Tesla V100-SXM2-16GB 1.00 default
            alice speeds of 3: declared Some(\"A100=1,H100=1,V100=1.1\"); Tesla V100-SXM2-16GB 1.00 declared, A100-SXM4-80GB 0.91 declared, NVIDIA H100 80GB HBM3 0.91 declared
        ",
    );
}

#[test]
fn a_kinds_run_times_on_each_model_teach_its_speed_and_survive_a_restart() {
    run(
        "three runs on V100 and A100 each teach bob's train: A100 5x, over the H100's default",
        &[
            ModelNode("v1", 4, V100),
            ModelNode("a1", 4, A100),
            ModelNode("h1", 4, H100),
            Round,
            Submit("bob", "gpus=1 name=train model=Tesla batch=3"),
            Submit("bob", "gpus=1 name=train model=A100 batch=3"),
            Round,
            Poll("v1"),
            Poll("a1"),
            Started("v1", 1),
            Started("v1", 2),
            Started("v1", 3),
            Started("a1", 4),
            Started("a1", 5),
            Started("a1", 6),
            Round,
            Wait(20),
            Exit("a1", 4, 0),
            Exit("a1", 5, 0),
            Exit("a1", 6, 0),
            Round,
            Wait(80),
            Exit("v1", 1, 0),
            Exit("v1", 2, 0),
            Exit("v1", 3, 0),
            Round,
            Submit("bob", "gpus=1 name=train"),
            Round,
            Speeds("bob", 7),
            Show("bob", 7),
            Poll("a1"),
            Started("a1", 7),
            Round,
            Show("bob", 7),
            // The same kind sent to a V100 is predicted its time there: 5x longer by
            // what it taught, 2x by the defaults the estimates convert with.
            Submit("bob", "gpus=1 name=train model=Tesla"),
            Show("bob", 8),
            Wait(10),
            Restart,
            Speeds("bob", 7),
        ],
        "
            node v1 (4 Tesla V100-SXM2-16GB) registers: ok
            node a1 (4 A100-SXM4-80GB) registers: ok
            node h1 (4 NVIDIA H100 80GB HBM3) registers: ok
            round: wrote jobs - nodes a1 h1 v1 tokens -; woke a1 h1 v1; ended -
            bob submits gpus=1 name=train model=Tesla batch=3: ok 1 2 3
            bob submits gpus=1 name=train model=A100 batch=3: ok 4 5 6
            round: wrote jobs 1 2 3 4 5 6 nodes - tokens -; woke a1 v1; ended -
              job 1 starting on v1 [0] #1: sent to v1
              job 2 starting on v1 [1] #1: sent to v1
              job 3 starting on v1 [2] #1: sent to v1
              job 4 starting on a1 [0] #1: sent to a1
              job 5 starting on a1 [1] #1: sent to a1
              job 6 starting on a1 [2] #1: sent to a1
            v1 polls: run 1#1 [0] 2#1 [1] 3#1 [2]; cancel -; preempt -
            a1 polls: run 4#1 [0] 5#1 [1] 6#1 [2]; cancel -; preempt -
            v1 reports 1 started: ok
            v1 reports 2 started: ok
            v1 reports 3 started: ok
            a1 reports 4 started: ok
            a1 reports 5 started: ok
            a1 reports 6 started: ok
            round: wrote jobs 1 2 3 4 5 6 nodes - tokens -; woke -; ended -
              job 1 running on v1 [0] #1: running on v1
              job 2 running on v1 [1] #1: running on v1
              job 3 running on v1 [2] #1: running on v1
              job 4 running on a1 [0] #1: running on a1
              job 5 running on a1 [1] #1: running on a1
              job 6 running on a1 [2] #1: running on a1
            20s pass
            a1 reports 4 exited 0: ok
            a1 reports 5 exited 0: ok
            a1 reports 6 exited 0: ok
            round: wrote jobs 4 5 6 nodes - tokens -; woke a1; ended 4 5 6
              job 4 succeeded on a1 [0] #1: exited with code 0
              job 5 succeeded on a1 [1] #1: exited with code 0
              job 6 succeeded on a1 [2] #1: exited with code 0
            80s pass
            v1 reports 1 exited 0: ok
            v1 reports 2 exited 0: ok
            v1 reports 3 exited 0: ok
            round: wrote jobs 1 2 3 nodes - tokens -; woke v1; ended 1 2 3
              job 1 succeeded on v1 [0] #1: exited with code 0
              job 2 succeeded on v1 [1] #1: exited with code 0
              job 3 succeeded on v1 [2] #1: exited with code 0
            bob submits gpus=1 name=train: ok 7
            round: wrote jobs 7 nodes - tokens -; woke a1; ended -
              job 7 starting on a1 [0] #1: sent to a1
            bob speeds of 7: declared None; A100-SXM4-80GB 5.00 learned, NVIDIA H100 80GB HBM3 4.00 default, Tesla V100-SXM2-16GB 1.00 learned
            bob shows 7: 7 starting: sent to a1; run time predicted 21s from past jobs of the same user+name+detail+gpus
            a1 polls: run 7#1 [0]; cancel -; preempt -
            a1 reports 7 started: ok
            round: wrote jobs 7 nodes - tokens -; woke -; ended -
              job 7 running on a1 [0] #1: running on a1
            bob shows 7: 7 running: running on a1; run time predicted 21s from past jobs of the same user+name+detail+gpus
            bob submits gpus=1 name=train model=Tesla: ok 8
            bob shows 8: 8 pending: next to start (the scheduler runs on the next change); run time predicted 41s from past jobs of the same user+name+detail+gpus
            10s pass
            server restarts
              job 7 running on a1 [0] #1: running on a1
            ended, in the store only: 6
            bob speeds of 7: declared None; A100-SXM4-80GB 5.00 learned, NVIDIA H100 80GB HBM3 4.00 default, Tesla V100-SXM2-16GB 1.00 learned
        ",
    );
}
