//! Registration again: a server that forgot the node (it restarted) hears what runs here.

use super::run;
use super::Check::*;
use super::Cond::*;
use super::Order::*;
use super::Step::*;

#[test]
fn a_server_that_forgot_the_node_hears_what_runs_and_nothing_starts_twice() {
    run(
        "forgotten",
        vec![
            Want("a", vec![Run(1, "sleep 30")]),
            Start,
            Until(vec![Started(1)]),
            // 409 to the next poll: the agent registers again, saying 1 runs here.
            Forget("a"),
            Until(vec![Registered("a", 2)]),
            // The server still lists 1: it is not started again.
            Until(vec![Polls("a", 3)]),
            See(Alive(1)),
            Stop,
        ],
        "
            a wants: run 1 `sleep 30`
            the agent starts
            until 1#1 started
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1: started
            a forgets the node
            until a has 2 registrations
              a registers n0 (i2): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs 1#1; reports -
            until a answers 3 more polls
            1#1's process: alive
            the agent stops
              job 1#1: ended stopped: the agent was stopped (SIGTERM or SIGINT); the job goes back in the queue
              n0 leaves (i2)
        ",
    );
}
