//! Speed of one full run of the FGD experiment: the default Alibaba v2023 pod list,
//! inflated to 10,866 pods (seed 42), onto its 1,213 nodes, per strategy. Run with
//! `cargo bench -p gpusched-sim --bench share_speed`; figures go to docs/sharing.md.
//! Skipped with a note if ../shared/traces/alibaba-v2023 is absent.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gpusched_core::sharing::ShareStrategy;
use gpusched_sim::sharing::{run, ShareWorkload};
use gpusched_sim::trace::openb;

fn main() {
    // `cargo test --benches` runs this with --bench absent; keep that quick.
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with `cargo bench -p gpusched-sim --bench share_speed`");
        return;
    }
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/alibaba-v2023");
    let started = Instant::now();
    let (Ok(nodes), Ok(pods)) = (
        openb::read_nodes(&dir.join("openb_node_list_gpu_node.csv")),
        openb::read_pods(&dir.join("openb_pod_list_default.csv")),
    ) else {
        println!("skipped: {} not found", dir.display());
        return;
    };
    println!(
        "reading nodes and pods: {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let w = ShareWorkload {
        nodes,
        pods,
        source: "default".into(),
    };
    for s in ShareStrategy::ALL {
        let mut times: Vec<Duration> = (0..5)
            .map(|_| {
                let t = Instant::now();
                let r = run(&w, s, 42).unwrap();
                assert_eq!(r.pods, 10_866);
                t.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "{:<9} 10,866 pods onto 1,213 nodes: {:>6.0} ms (median of 5)",
            s.name(),
            times[2].as_secs_f64() * 1e3
        );
    }
}
