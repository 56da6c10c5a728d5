//! Energy per job: NVML's counters charged to the jobs holding each GPU (`energy.rs`).

use super::run;
use super::Step::*;

#[test]
fn energy_goes_to_the_holders_of_each_gpu_and_a_reset_charges_nothing() {
    run(
        "a whole GPU, two shares of one, a driver reload, a gap, a restart",
        &[
            Node("n1", 2),
            Round,
            Submit("alice", "gpus=1"),
            Submit("bob", "share=0.5"),
            Submit("carol", "share=0.25"),
            Round,
            Started("n1", 1),
            Started("n1", 2),
            Started("n1", 3),
            Round,
            // First readings: nothing to compare with yet.
            Sample("n1", 1, "energy=1000000"),
            Sample("n1", 0, "energy=5000000"),
            Round,
            Energy(1),
            Wait(5),
            // GPU 1: 300 J to alice. GPU 0: 800 J, bob 1/2, carol 1/4, idle 1/4.
            Sample("n1", 1, "energy=1300000"),
            Sample("n1", 0, "energy=5800000"),
            Round,
            Energy(1),
            Energy(2),
            Energy(3),
            UsageEnergy,
            Wait(5),
            // The driver was reloaded: the counter starts again, nothing charged.
            Sample("n1", 1, "energy=1000"),
            Round,
            Energy(1),
            Wait(5),
            Sample("n1", 1, "energy=101000"),
            Round,
            Energy(1),
            // Longer than the heartbeat timeout between readings: nothing charged.
            Wait(60),
            Sample("n1", 1, "energy=999000"),
            Round,
            Energy(1),
            Exit("n1", 1, 0),
            Round,
            Restart,
            Round,
            Energy(1),
            // Job 2's row was not written since it started: a restart (or a crash) loses
            // what was measured since.
            Energy(2),
        ],
        "
        node n1 (2 GPUs) registers: ok
        round: wrote jobs - nodes n1 tokens -; woke n1; ended -
        alice submits gpus=1: ok 1
        bob submits share=0.5: ok 2
        carol submits share=0.25: ok 3
        round: wrote jobs 1 2 3 nodes - tokens -; woke n1; ended -
          job 1 starting on n1 [1] #1: sent to n1
          job 2 starting on n1 gpu 0 share 500 #1: sent to n1
          job 3 starting on n1 gpu 0 share 250 #1: sent to n1
        n1 reports 1 started: ok
        n1 reports 2 started: ok
        n1 reports 3 started: ok
        round: wrote jobs 1 2 3 nodes - tokens -; woke -; ended -
          job 1 running on n1 [1] #1: running on n1
          job 2 running on n1 gpu 0 share 500 #1: running on n1
          job 3 running on n1 gpu 0 share 250 #1: running on n1
        n1 reports GPU 1 energy=1000000: ok
        n1 reports GPU 0 energy=5000000: ok
        round: wrote jobs - nodes - tokens -; woke -; ended -
        energy of job 1: none
        5s pass
        n1 reports GPU 1 energy=1300000: ok
        n1 reports GPU 0 energy=5800000: ok
        round: wrote jobs - nodes - tokens -; woke -; ended -
        energy of job 1: 300 J
        energy of job 2: 400 J
        energy of job 3: 200 J
        usage: alice 0.000083 kWh, bob 0.000111 kWh, carol 0.000056 kWh
        5s pass
        n1 reports GPU 1 energy=1000: ok
        round: wrote jobs - nodes - tokens -; woke -; ended -
        energy of job 1: 300 J
        5s pass
        n1 reports GPU 1 energy=101000: ok
        round: wrote jobs - nodes - tokens -; woke -; ended -
        energy of job 1: 400 J
        60s pass
        n1 reports GPU 1 energy=999000: ok
        round: wrote jobs - nodes - tokens -; woke -; ended -
        energy of job 1: 400 J
        n1 reports 1 exited 0: ok
        round: wrote jobs 1 nodes - tokens -; woke n1; ended 1
          job 1 succeeded on n1 [1] #1: exited with code 0
        server restarts
          job 2 running on n1 gpu 0 share 500 #1: running on n1
          job 3 running on n1 gpu 0 share 250 #1: running on n1
        ended, in the store only: 1
        round: wrote jobs - nodes - tokens -; woke -; ended -
        energy of job 1: 400 J
        energy of job 2: none
        ",
    );
}
