//! GPU samples riding on reports (alone when no event goes), the reporter keeping what a
//! refusing server did not take, and the agent's metrics.

use super::Check::*;
use super::Cond::*;
use super::Order::*;
use super::Step::*;
use super::{run_with, Node};

#[test]
fn reports_carry_gpu_samples_alone_or_with_events_and_each_xid_arrives_once() {
    run_with(
        "samples",
        Node {
            telemetry_ms: 200,
            metrics: true,
            ..Node::default()
        },
        vec![
            Start,
            // With no job event to send, samples go on their own.
            Until(vec![Samples(3)]),
            See(IdleSamples),
            // Never a request per sample.
            See(OneReportAPass(10)),
            // A job: its events carry samples, and its GPU reads busy.
            Want("a", vec![Run(5, "sleep 30")]),
            Until(vec![Started(5)]),
            See(StartCarriedSamples(5)),
            Until(vec![Busy(0)]),
            // An Xid while the server refuses reports: kept, and delivered once it
            // accepts, exactly once.
            Refuse("a"),
            Faults("[gpu.1]\nxid = 79\ntemp_c = 95\n"),
            Until(vec![XidOffered(1, 2)]),
            Accept("a"),
            Until(vec![XidAcked(1)]),
            Until(vec![Samples(3)]),
            See(XidsAcked(1)),
            See(Metrics),
            // A GPU falls off the bus: reported lost at the next pass.
            Faults("[gpu.0]\nlost = true\n"),
            Until(vec![GpuLost(0)]),
            Stop,
        ],
        "
            the agent starts
            until 3 more reports of samples
              a registers n0 (i1): 2 GPUs A100-SXM4-80GB, advertises 127.0.0.1; runs -; reports -
            samples of GPUs 0 and 1 at 30-40 C and 50-70 W, energy read, no Xid, none lost; every report carried samples: yes
            over 10 passes of the sampler: reports, never more than one a pass
            a wants: run 5 `sleep 30`
            until 5#1 started
              job 5#1: started
            the report of 5#1's start carried samples: yes
            until GPU 0 busy and the others idle
            a refuses reports
            faults: [gpu.1] xid = 79 temp_c = 95
            until GPU 1's Xid refused 2 times
            a accepts reports
            until GPU 1's Xid acknowledged
            until 3 more reports of samples
            GPU 1's Xids acknowledged: 79
            metrics: GPU 1 at 95 C with Xid 79; GPU 0 busy: yes; jobs running 1; spawns 1; reports of events counted: yes
            faults: [gpu.0] lost = true
            until GPU 0 lost and the others not
            the agent stops
              job 5#1: ended stopped: the agent was stopped (SIGTERM or SIGINT); the job goes back in the queue
              n0 leaves (i1)
        ",
    );
}
