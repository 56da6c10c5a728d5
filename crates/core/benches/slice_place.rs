//! Cost of placing one share of a GPU on the live cluster (`slices::choose_share`), per
//! strategy and cluster size, and of listing a MIG GPU's options. The live server calls
//! `choose_share` once per waiting share job per pass. Run with
//! `cargo bench -p gpusched-core --bench slice_place`; figures go to docs/benchmarks.md.

use std::time::Instant;

use gpusched_core::sharing::demand::live_pod;
use gpusched_core::sharing::{SharePod, ShareStrategy};
use gpusched_core::slices::{choose_share, MigGpu, MigSlot, ShareGpu, ShareHost};

/// A small deterministic generator (no dependency needed for test data).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn cluster(nodes: usize, rng: &mut Lcg) -> Vec<ShareHost> {
    (0..nodes)
        .map(|_| ShareHost {
            model: "H100-80GB".into(),
            cpu_milli: 96_000,
            mem_mib: 1 << 20,
            gpus: (0..8)
                .map(|i| {
                    // A third idle, a third held whole, a third partly shared.
                    let free = match rng.next(3) {
                        0 => 1000,
                        1 => 0,
                        _ => 250 * rng.next(4) as u32,
                    };
                    ShareGpu {
                        index: i,
                        free_milli: free,
                        free_mem_mib: u64::from(free) * 80,
                    }
                })
                .collect(),
        })
        .collect()
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("run with `cargo bench -p gpusched-core --bench slice_place`");
        return;
    }
    let mut rng = Lcg(42);
    // The jobs of the demand window: FGD's target workload.
    let workload: Vec<SharePod> = (0..500)
        .filter_map(|_| match rng.next(4) {
            0 => live_pod(1, None),
            1 => live_pod(2, None),
            2 => live_pod(0, Some(500)),
            _ => live_pod(0, Some(250)),
        })
        .collect();
    println!("| nodes x 8 GPUs | strategy | one placement (median of 50) |");
    println!("|---|---|---|");
    for nodes in [16, 128, 1024] {
        let hosts = cluster(nodes, &mut rng);
        for s in [
            ShareStrategy::BestFit,
            ShareStrategy::Fgd,
            ShareStrategy::FgdFit,
        ] {
            let mut times: Vec<f64> = (0..50)
                .map(|_| {
                    let t = Instant::now();
                    std::hint::black_box(choose_share(&hosts, 250, 0, None, &workload, s));
                    t.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            times.sort_by(f64::total_cmp);
            println!("| {nodes} | {} | {:.0} µs |", s.name(), times[25]);
        }
    }
    let gpu = MigGpu {
        model: "A100-SXM4-80GB".into(),
        dynamic: true,
        slots: vec![MigSlot {
            profile: "3g.40gb".into(),
            start: 4,
            size: 4,
            uuid: None,
            holder: Some(1),
            created_for: None,
        }],
    };
    let t = Instant::now();
    for _ in 0..10_000 {
        std::hint::black_box(gpu.options("1g.10gb").unwrap());
    }
    println!(
        "MIG options for one GPU: {:.2} µs",
        t.elapsed().as_secs_f64() * 1e6 / 10_000.0
    );
}
