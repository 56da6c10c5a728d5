//! gpusched reproduces the Muri simulator (SIGCOMM'22; adapted from Tiresias) on the
//! Philly-derived trace3: avg JCT, makespan and p99 JCT for SRTF, SRSF and Tiresias.
//!
//! The 8-node figures are the ones published in ../shared/traces/muri/README.md. The
//! other cluster shapes are the peer's output for the same trace, produced by running
//! its `run_sim.py --scheme=yarn` with a cluster spec of that shape and its `calc.py`
//! (see docs/simulator.md); no constant here is tuned to any of them.

mod common;

use gpusched_core::{Cluster, PlacementStrategy, PolicyConfig, PolicyKind};
use gpusched_sim::overhead::PassOverhead;
use gpusched_sim::{simulate, trace, SimOptions, Summary};

/// (avg JCT, makespan, p99 JCT) as the peer prints them (six decimals).
type Expected = (f64, f64, f64);

fn run(cluster: &Cluster, kind: PolicyKind) -> Summary {
    let w = trace::read(&common::shared_trace("muri/trace3.csv"), None).expect("trace3 reads");
    assert_eq!(w.jobs.len(), 992);
    let mut opts = SimOptions::new(PolicyConfig::new(kind));
    opts.overhead = PassOverhead::Muri;
    // The peer's dlas-gpu counts free GPUs cluster-wide and ignores its placement scheme.
    opts.placement = if kind == PolicyKind::Tiresias {
        PlacementStrategy::Pool
    } else {
        PlacementStrategy::Consolidated
    };
    let r = simulate(&w, cluster, &opts, &mut |_, _| {}).expect("simulation runs");
    Summary::of(&r, kind.name(), opts.placement.name(), false)
}

fn check(cluster: &Cluster, kind: PolicyKind, want: Expected) {
    let s = run(cluster, kind);
    let got = (s.avg_jct, s.makespan, s.p99_jct);
    for (name, g, w) in [
        ("avg JCT", got.0, want.0),
        ("makespan", got.1, want.1),
        ("p99 JCT", got.2, want.2),
    ] {
        // The peer prints six decimals; gpusched must agree to that precision, far
        // inside the 0.5% the issue allows.
        assert!(
            (g - w).abs() < 1e-5 + w.abs() * 1e-12,
            "{} {name}: gpusched {g:.6}, peer {w:.6} ({:+.4}%)",
            kind.name(),
            (g - w) / w * 100.0
        );
    }
}

fn n8g8() -> Cluster {
    Cluster::parse_shape("8x8", "V100").unwrap()
}

#[test]
fn srtf_matches_the_peer_on_8x8() {
    check(
        &n8g8(),
        PolicyKind::Srtf,
        (193081.796024, 8174135.280030, 4538890.607380),
    );
}

#[test]
fn srsf_matches_the_peer_on_8x8() {
    check(
        &n8g8(),
        PolicyKind::Srsf,
        (185021.880164, 8174135.280030, 4189699.176840),
    );
}

#[test]
fn tiresias_matches_the_peer_on_8x8() {
    check(
        &n8g8(),
        PolicyKind::Tiresias,
        (347213.248119, 8174226.280030, 4983397.254010),
    );
}

/// The peer run here on other cluster shapes (same trace): 4 nodes x 8 GPUs, 16 x 8,
/// 8 x 4, and two switches of 4 x 8 (`num_switch,num_node_p_switch,num_gpu_p_node`).
#[test]
fn all_three_policies_match_the_peer_on_other_cluster_shapes() {
    let cases: [(&str, [Expected; 3]); 4] = [
        (
            "4x8",
            [
                (857190.865210, 14086706.023150, 10638523.836410),
                (890002.325967, 14251426.088490, 11230075.017645),
                (2303623.588926, 14012478.255840, 10706077.972925),
            ],
        ),
        (
            "16x8",
            [
                (52423.285953, 8174135.280030, 486601.615455),
                (51811.123860, 8174135.280030, 452891.273450),
                (53557.848095, 8174226.280030, 407989.647150),
            ],
        ),
        (
            "8x4",
            [
                (857190.865210, 14086706.023150, 10638523.836410),
                (890002.325967, 14251426.088490, 11230075.017645),
                (2303623.588926, 14012478.255840, 10706077.972925),
            ],
        ),
        (
            "2x4x8",
            [
                (193081.796024, 8174135.280030, 4538890.607380),
                (185021.880164, 8174135.280030, 4189699.176840),
                (347213.248119, 8174226.280030, 4983397.254010),
            ],
        ),
    ];
    for (shape, want) in cases {
        let cluster = Cluster::parse_shape(shape, "V100").unwrap();
        for (kind, w) in [PolicyKind::Srtf, PolicyKind::Srsf, PolicyKind::Tiresias]
            .into_iter()
            .zip(want)
        {
            check(&cluster, kind, w);
        }
    }
}
