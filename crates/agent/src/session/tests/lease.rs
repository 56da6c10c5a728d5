//! The lease on the node's jobs: a silent server's jobs run on within it and are fenced
//! before it ends.

use std::time::Duration;

use gpusched_wire::Registered;

use super::run;
use super::Check::*;
use super::Cond::*;
use super::Order::*;
use super::Step::*;

/// The node lease, as the agent keeps it: a server that announces one is given all of
/// it less the time a fenced job takes to stop; an older one half its heartbeat timeout.
#[test]
fn the_agent_fences_before_the_lease_ends_on_the_server() {
    let reg = |hb: u64, lease: Option<u64>| Registered {
        instance: "i".into(),
        poll_wait_ms: 1,
        heartbeat_timeout_ms: hb,
        lease_ms: lease,
        protocol: gpusched_wire::agent::AGENT_PROTOCOL,
        compact: true,
    };
    let fence = |r: Registered| super::super::fence_after(&r);
    // 5 minutes: the last 8 s (3 s of grace, 5 s of margin) are the fence's.
    assert_eq!(fence(reg(30_000, Some(300_000))), Duration::from_secs(292));
    // A lease too short for that margin keeps three quarters of it.
    assert_eq!(fence(reg(2_000, Some(2_000))), Duration::from_millis(1_500));
    // An older server: half its heartbeat timeout, as before.
    assert_eq!(fence(reg(30_000, None)), Duration::from_secs(15));
}

/// A server silent for longer than half its heartbeat timeout (the old fence) but
/// shorter than its lease: the job runs on; past the lease it is fenced and reported
/// lost, well before the server (counting from the poll it received) would requeue it.
#[test]
fn a_silent_server_kills_nothing_within_the_lease() {
    run(
        "lease",
        vec![
            Lease("a", 1_000, Some(6_000)),
            Want("a", vec![Run(9, "sleep 30")]),
            Start,
            Until(vec![Started(9)]),
            Down("a"),
            // Three times the old fence (half the heartbeat timeout): still running.
            Pass(1_500),
            See(Alive(9)),
            // The fence comes at three quarters of the 6 s lease (its margin), and the
            // end is reported once the server answers again.
            Until(vec![Gone(9)]),
            Up("a"),
            Until(vec![Ended(9)]),
            See(EndedWithin(9, 1_500, 8_000)),
            Stop,
        ],
        "
            a announces a heartbeat timeout of 1000 ms, lease 6000 ms
            a wants: run 9 `sleep 30`
            the agent starts
            until 9#1 started
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 9#1: started
            a is down
            1500 ms pass
            9#1's process: alive
            until 9#1's process gone
            a is up
            until 9#1 ended
              job 9#1: ended lost: the agent heard nothing from the server for N s and stopped the job so it does not run twice when the server requeues it
            9#1 ended 1500-8000 ms into the silence
            the agent stops
              n0 leaves (i1)
        ",
    );
}
