//! The agent's session against fake servers on loopback, data-driven in the style of the
//! server's `state/tests/`: each scenario is a list of steps (a server wants something of
//! the node, falls silent, refuses reports or forgets the node; the agent starts, stops
//! and starts again on the same state directory; time passes) and the whole transcript
//! they produce is compared with the expected text in the scenario's source.
//!
//! The transcript is what the agent sent the servers, once they acknowledged it:
//! registrations (what the node says it has, runs and ended), each attempt's events
//! (started, its port, how it ended) and leaves. It is normalised so that it does not
//! depend on timing: it is printed only where a step waited for evidence (`Until`,
//! `Stop`), one line per attempt in job order (a port named `p1`, `p2` in the order
//! first seen, a repeated port report once, numbers in messages as `N`), so which report
//! carried what, and how many polls or retries it took, never shows. What the transcript
//! cannot show deterministically (a port held, a process alive, samples in range, how
//! many reports went) is a [`Check`], printed as its verdict.
//!
//! Each agent life runs on a runtime of its own, shut down at `Stop` as a process's tasks
//! die with it. Waits are for evidence and bounded generously ([`WAIT`]) for a busy
//! machine; `Pass` lets time pass only where what must not happen meanwhile is the point.
//!
//! The update switch (rust-analyzer's `UPDATE_EXPECT`): after a change that moves
//! transcripts on purpose, run `UPDATE_EXPECT=1 cargo test -p gpusched-agent --lib
//! session::tests` and every scenario whose transcript differs writes it into its
//! expected text instead of failing (the `gpusched-expect` crate); then read the diff as a reviewer would.
//!
//! This file holds the step language and [`run`]; `fake.rs` the fake servers (what they
//! answer, what they heard), `harness.rs` the steps played and the transcript,
//! `checks.rs` the checks. The scenarios, one file per concern: registration
//! (`register.rs`), `MASTER_PORT` reservations (`ports.rs`), making the desired state so
//! (`reconcile.rs`), samples riding on reports and the reporter's retries
//! (`telemetry.rs`), service replicas' ports and probes (`serve.rs`), the lease (`lease.rs`), stopping and the next life (`drain.rs`),
//! what the agent says when it cannot reach a server (`client.rs`).

mod checks;
mod client;
mod drain;
mod fake;
mod harness;
mod lease;
mod ports;
mod reconcile;
mod register;
mod serve;
mod telemetry;

use std::time::Duration;

use super::AgentConfig;
use harness::Harness;

/// The most a wait for evidence takes before the scenario fails.
pub(super) const WAIT: Duration = Duration::from_secs(60);
/// The most a stopping agent takes (its jobs' grace, and up to 10 s for a server that
/// does not acknowledge their ends).
pub(super) const STOP_WAIT: Duration = Duration::from_secs(120);

/// The node the agent runs on: two fake A100s, one CPU, 1 GiB.
#[derive(Clone, Copy, Default)]
pub(super) struct Node {
    /// Where the node sits (`--switch`).
    pub switch: Option<&'static str>,
    /// The GPUs are linked through a PCIe switch (the fake library's topology).
    pub pcie: bool,
    /// `--telemetry-interval` in ms (0: no sampling).
    pub telemetry_ms: u64,
    /// The agent serves Prometheus metrics (`--metrics-listen`).
    pub metrics: bool,
}

/// What a server wants of the node: attempt 1 of each job, on GPU 0 unless said,
/// running `sh -c SCRIPT` as the test's user with a grace of 1 s.
#[derive(Clone, Copy, Debug)]
pub(super) enum Order {
    Run(u64, &'static str),
    /// The first part of a two-node gang on GPUs 0 and 1, its `MASTER_PORT` the port the
    /// agent reported for it.
    Gang(u64, &'static str),
    /// The job queued behind the first one's attempt.
    Queued(u64, u64, &'static str),
    /// Jobs `from..=to`, each queued behind the one before; the last runs the second
    /// script.
    Chain(u64, u64, &'static str, &'static str),
    /// Preempt the job (signal 10, grace 1 s).
    Preempt(u64),
    Cancel(u64),
    /// Reserve a `MASTER_PORT` for the gang whose first part this job is.
    Reserve(u64),
    /// A service replica (protocol 5) running the program, probed as said.
    Serve(u64, Program, Probes),
}

/// What a replica runs.
#[derive(Clone, Copy, Debug)]
pub(super) enum Program {
    /// An HTTP server (python3) on `$PORT` (exit 1 unless `$GPUSCHED_PORT` is the same):
    /// `GET /NAME` answers 503 while its checkpoint directory holds `no-NAME`, else 200;
    /// it exits 0 once the directory holds `quit`.
    Http,
    /// Never listens.
    Sleep,
}

/// A replica's probes, each every second.
#[derive(Clone, Copy, Debug)]
pub(super) enum Probes {
    /// No readiness probe given: the agent's own, a TCP connection (period 1 s here).
    Tcp,
    /// Readiness: `GET /ready`, not ready after 2 failures in a row.
    Http,
    /// Readiness a TCP connection; liveness `GET /live` from 3 s after the start,
    /// stopped after 3 failures in a row.
    Live,
}

/// What a step waits for; each names the server by its letter where it matters.
#[derive(Clone, Copy, Debug)]
pub(super) enum Cond {
    /// A server acknowledged the job's start, end or reserved port.
    Started(u64),
    Ended(u64),
    Port(u64),
    /// The server answered this many more polls (counted from the step).
    Polls(&'static str, u32),
    /// The server has had this many registrations in all.
    Registered(&'static str, u32),
    /// The port reported for the job is free on this host.
    PortFree(u64),
    /// The process of the job's start is gone.
    Gone(u64),
    /// This many more acknowledged reports carrying GPU samples.
    Samples(u32),
    /// The GPU's Xid was offered in this many refused reports.
    XidOffered(u32, usize),
    /// The GPU's Xid was acknowledged.
    XidAcked(u32),
    /// The latest acknowledged samples: this GPU busy (90% or more), the others idle.
    Busy(u32),
    /// The latest acknowledged samples: this GPU lost (no temperature), the others not.
    GpuLost(u32),
    /// This many readiness changes of the job acknowledged in all.
    Readiness(u64, usize),
}

/// A check of what the transcript cannot show deterministically, printed as its verdict.
#[derive(Clone, Copy, Debug)]
pub(super) enum Check {
    /// Whether the port reported for the job is held on this host.
    PortHeld(u64),
    /// Whether the process of the job's start is alive.
    Alive(u64),
    /// Every acknowledged sample reads like the fake's idle GPUs, and every report so far
    /// carried samples.
    IdleSamples,
    /// Over this many passes of the sampler, at least one report and at most one a pass.
    OneReportAPass(u32),
    /// The report that carried the job's start carried samples too.
    StartCarriedSamples(u64),
    /// The Xid codes of the GPU the servers acknowledged, each time.
    XidsAcked(u32),
    /// The agent's metrics after the telemetry scenario's faults.
    Metrics,
    /// Each job of `from..=to` started no earlier than the one before it ended.
    FollowedInOrder(u64, u64),
    /// The events of this many attempts came in fewer reports than attempts.
    Batched(usize),
    /// No checkpoint directory left under a job's name; the spares kept are empty.
    CheckpointDirs,
    /// The job ended between these many ms after the last `Down` and this many.
    EndedWithin(u64, u64, u64),
    /// The agent's metrics count at least this many failed readiness and liveness
    /// probes.
    ProbeFailures(u64, u64),
    /// What the (compact) server saw: answers naming held launches, in MessagePack,
    /// asks for everything whole, reports in MessagePack and in JSON.
    CompactSeen(&'static str),
}

/// One thing that happens. Servers are named by a letter; `a` (epoch 0) exists unless
/// declared, and any server must be named before the agent first starts.
#[derive(Clone, Debug)]
pub(super) enum Step {
    /// A server in the agent's list (in order), with the leader epoch of its answers.
    Server(&'static str, u64),
    /// The heartbeat timeout and node lease (ms) the server announces at registration.
    Lease(&'static str, u64, Option<u64>),
    /// The server answers polls this many ms late, with the state read when they came.
    Stale(&'static str, u64),
    /// The server wants this of the node from now on (a new generation).
    Want(&'static str, Vec<Order>),
    /// The server answers registrations, polls and reports 503 (cut off, stepping down);
    /// then again as before.
    Down(&'static str),
    Up(&'static str),
    /// The server takes compact messages (`Registered::compact`), as this release's
    /// does; without it a server answers as releases before them.
    Compact(&'static str),
    /// The server's next compact answer names the job's attempt as held though it never
    /// sent it (as after a lost answer).
    Unheld(&'static str, u64),
    /// The server refuses reports (500); then accepts them again.
    Refuse(&'static str),
    Accept(&'static str),
    /// The server forgets the node (it restarted): 409 to polls and reports until the
    /// agent registers again.
    Forget(&'static str),
    /// The agent starts (again: the next life, on the same state directory).
    Start,
    /// The agent is told to stop and must, cleanly; what it sent meanwhile is printed.
    Stop,
    /// Waits until all of these hold; what the agent sent since the last print is printed.
    Until(Vec<Cond>),
    /// This many ms pass (for what must not happen meanwhile; never to synchronise).
    Pass(u64),
    /// The fake GPU library's fault file, written whole.
    Faults(&'static str),
    /// A file made (empty) in the job's checkpoint directory, or removed from it (how a
    /// test replica is told to fail its probes or to exit).
    Touch(u64, &'static str),
    Remove(u64, &'static str),
    /// A check, printed as its verdict.
    See(Check),
}

/// Runs the scenario on the default node and compares its transcript with `expected`
/// (indentation aside); with `UPDATE_EXPECT=1`, a differing transcript is written into
/// the expected text instead.
#[track_caller]
pub(super) fn run(name: &str, steps: Vec<Step>, expected: &str) {
    run_with(name, Node::default(), steps, expected);
}

/// [`run`] on `node`.
#[track_caller]
pub(super) fn run_with(name: &str, node: Node, steps: Vec<Step>, expected: &str) {
    let at = std::panic::Location::caller();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let got = rt.block_on(async move {
        let mut h = Harness::new(node);
        for step in steps {
            h.step(step).await;
        }
        h.finish();
        h.log
    });
    rt.shutdown_background();
    gpusched_expect::check(at, name, expected, &got);
}
