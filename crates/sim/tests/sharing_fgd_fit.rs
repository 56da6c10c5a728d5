//! The claim of docs/sharing.md that `fgd-fit` leaves fewer GPUs unallocated than FGD at
//! 100% arrived, pinned on the default Alibaba v2023 list with two of the experiment's
//! seeds (a debug run of the full experiment would take minutes; the 10-seed tables of
//! every list come from `cargo run --release -p gpusched-sim --example share_lists`).
//! Measured 2026-11-30: seed 42 fgd 4.62 / fgd-fit 4.24, seed 43 4.87 / 4.29 (without the
//! `sqrt(GPUs / room)` factor of the weights: 4.25 / 4.27; the first
//! fgd-fit, without the demand-heavy groups and with shares on the limited measure: 4.38
//! / 4.35). FGD itself is pinned to the peer's published values by sharing_peer.rs.

mod common;

use gpusched_core::sharing::ShareStrategy;
use gpusched_sim::sharing::{bin_by_arrived, run, ShareWorkload};
use gpusched_sim::trace::openb;

#[test]
fn fgd_fit_leaves_fewer_gpus_unallocated_than_fgd_on_the_default_list() {
    let dir = common::shared_trace("alibaba-v2023");
    let w = ShareWorkload {
        nodes: openb::read_nodes(&dir.join("openb_node_list_gpu_node.csv")).unwrap(),
        pods: openb::read_pods(&dir.join("openb_pod_list_default.csv")).unwrap(),
        source: "default".into(),
    };
    let w = &w;
    let unallocated = move |s: ShareStrategy, seed: i64| {
        bin_by_arrived(&run(w, s, seed).unwrap())
            .unallocated_at(100)
            .unwrap()
    };
    // The four runs on their own threads: about 6 s each in a debug build.
    let results: Vec<(i64, f64, f64)> = std::thread::scope(|s| {
        let handles: Vec<_> = [42, 43]
            .into_iter()
            .map(|seed| {
                let f = s.spawn(move || unallocated(ShareStrategy::Fgd, seed));
                let o = s.spawn(move || unallocated(ShareStrategy::FgdFit, seed));
                (seed, f, o)
            })
            .collect();
        handles
            .into_iter()
            .map(|(seed, f, o)| (seed, f.join().unwrap(), o.join().unwrap()))
            .collect()
    });
    let (mut fgd, mut ours) = (0.0, 0.0);
    for (seed, f, o) in results {
        println!("seed {seed}: unallocated at 100% arrived: fgd {f:.2}, fgd-fit {o:.2}");
        assert!(o < f, "seed {seed}: fgd-fit {o:.2} is not below fgd {f:.2}");
        fgd += f / 2.0;
        ours += o / 2.0;
    }
    // By more than a rounding step: the two-seed mean at least 0.4 points lower (it is
    // about 0.48; the first fgd-fit, 0.38 lower, would fail this).
    assert!(ours <= fgd - 0.4, "mean: fgd-fit {ours:.3}, fgd {fgd:.3}");
}
