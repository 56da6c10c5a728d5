//! Service replicas (protocol 5): the port each is given and reported, readiness as it
//! changes, liveness that stops a replica, and probes that end with the replica. The
//! replicas are python3 HTTP servers ([`Program::Http`]); without python3 each scenario
//! is skipped, saying so (a failure under CI, whose setup installs it).

use super::Check::*;
use super::Cond::*;
use super::Order::*;
use super::Step::*;
use super::{run, run_with, Node, Probes, Program};

/// Whether python3 is here to run the replicas.
fn python3() -> bool {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let why = "SKIPPED: python3 is not on PATH (apt-get install python3)";
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("{why}");
    }
    found
}

#[test]
fn a_replica_gets_a_port_and_its_readiness_is_reported_as_it_changes() {
    if !python3() {
        return;
    }
    run(
        "replica readiness",
        vec![
            Start,
            // The server answers `GET /ready` on the port it was given in `$PORT` (and
            // `$GPUSCHED_PORT`): the agent reports the port, then ready.
            Want("a", vec![Serve(1, Program::Http, Probes::Http)]),
            Until(vec![Readiness(1, 1)]),
            // Two failures in a row: not ready, saying what the probe got; served
            // again: ready again. Each change once.
            Touch(1, "no-ready"),
            Until(vec![Readiness(1, 2)]),
            Remove(1, "no-ready"),
            Until(vec![Readiness(1, 3)]),
            Want("a", vec![Cancel(1)]),
            Until(vec![Ended(1)]),
            Stop,
        ],
        "
            the agent starts
            a wants: serve 1 (Http program, Http probes)
            until 1#1's 1 readiness change
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1: listening on p1; started; ready
            1#1's checkpoint directory gets no-ready
            until 1#1's 2 readiness changes
              job 1#1: not ready: GET http://N.N.N.N:N/ready: status N
            1#1's checkpoint directory loses no-ready
            until 1#1's 3 readiness changes
              job 1#1: ready
            a wants: cancel 1
            until 1#1 ended
              job 1#1: ended cancelled
            the agent stops
              n0 leaves (i1)
        ",
    );
}

#[test]
fn a_replica_failing_its_liveness_probe_is_stopped_and_ends_unhealthy() {
    if !python3() {
        return;
    }
    run_with(
        "replica liveness",
        Node {
            metrics: true,
            ..Node::default()
        },
        vec![
            Start,
            Want("a", vec![Serve(1, Program::Http, Probes::Live)]),
            Until(vec![Readiness(1, 1)]),
            // `GET /live` fails three times in a row: the agent stops the replica as a
            // cancel would, and it ends unhealthy (readiness, a TCP probe, still passed).
            Touch(1, "no-live"),
            Until(vec![Ended(1), Gone(1)]),
            See(ProbeFailures(0, 3)),
            Stop,
        ],
        "
            the agent starts
            a wants: serve 1 (Http program, Live probes)
            until 1#1's 1 readiness change
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1: listening on p1; started; ready
            1#1's checkpoint directory gets no-live
            until 1#1 ended, 1#1's process gone
              job 1#1: ended unhealthy: liveness probe failed N times in a row: GET http://N.N.N.N:N/live: status N
            probe failures counted: at least 0 of readiness: yes; at least 3 of liveness: yes
            the agent stops
              n0 leaves (i1)
        ",
    );
}

#[test]
fn a_replica_that_never_listens_is_never_ready() {
    run(
        "replica never listening",
        vec![
            Start,
            Want("a", vec![Serve(1, Program::Sleep, Probes::Tcp)]),
            Until(vec![Started(1)]),
            // Three probes a second's apart, and more: all refused; it never was ready,
            // so there is nothing to report.
            Pass(4000),
            Want("a", vec![Cancel(1)]),
            Until(vec![Ended(1)]),
            Stop,
        ],
        "
            the agent starts
            a wants: serve 1 (Sleep program, Tcp probes)
            until 1#1 started
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1: listening on p1; started
            4000 ms pass
            a wants: cancel 1
            until 1#1 ended
              job 1#1: ended cancelled
            the agent stops
              n0 leaves (i1)
        ",
    );
}

#[test]
fn probing_ends_with_the_replica() {
    if !python3() {
        return;
    }
    run(
        "replica probes end",
        vec![
            Start,
            Want("a", vec![Serve(1, Program::Http, Probes::Http)]),
            Until(vec![Readiness(1, 1)]),
            // It exits by itself while ready. Were it still probed, two refused
            // connections would make it not ready within two seconds.
            Touch(1, "quit"),
            Until(vec![Ended(1)]),
            Pass(4000),
            Stop,
        ],
        "
            the agent starts
            a wants: serve 1 (Http program, Http probes)
            until 1#1's 1 readiness change
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
              job 1#1: listening on p1; started; ready
            1#1's checkpoint directory gets quit
            until 1#1 ended
              job 1#1: ended exited 0
            4000 ms pass
            the agent stops
              n0 leaves (i1)
        ",
    );
}
