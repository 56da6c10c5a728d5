//! Stopping: every job stopped and its end delivered, then the server told the node is
//! leaving; ends the server did not acknowledge in time go with the next life's
//! registration.

use super::run;
use super::Cond::*;
use super::Order::*;
use super::Step::*;

#[test]
fn a_stopping_agent_that_runs_nothing_says_it_leaves() {
    run(
        "leave",
        vec![Start, Until(vec![Polls("a", 1)]), Stop],
        "
            the agent starts
            until a answers 1 more poll
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
            the agent stops
              n0 leaves (i1)
        ",
    );
}

#[test]
fn a_stopped_job_whose_end_the_server_missed_is_reported_by_the_next_life() {
    run(
        "next life",
        vec![
            Want("a", vec![Run(1, "sleep 30")]),
            Start,
            Until(vec![Started(1)]),
            // The server is cut off while the agent stops: the end waits in the journal
            // (the agent waits 10 s for it to be acknowledged), and no leave is said.
            Down("a"),
            Stop,
            Up("a"),
            Start,
            Until(vec![Registered("a", 2)]),
            // The server took 1's end from the registration: nothing more of it.
            Until(vec![Polls("a", 3)]),
            Stop,
        ],
        "
            a wants: run 1 `sleep 30`
            the agent starts
            until 1#1 started
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1: started
            a is down
            the agent stops
            a is up
            the agent starts
            until a has 2 registrations
              a registers n0 (i2): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports 1#1 ended stopped: the agent was stopped (SIGTERM or SIGINT); the job goes back in the queue
            until a answers 3 more polls
            the agent stops
              n0 leaves (i2)
        ",
    );
}
