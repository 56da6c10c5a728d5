//! One run of the FGD experiment: pods arrive in the drawn order onto the idle cluster,
//! none leaves; a pod that fits nowhere fails and the run goes on. After every arrival
//! (placed or failed) one sample: GPU thousandths requested so far (failed pods
//! included), allocated, and the cluster's fragmentation.

use gpusched_core::sharing::{
    Placer, ShareCluster, ShareError, ShareNode, SharePod, ShareStrategy, TypicalPods,
};

use super::arrivals::draw;

/// Nodes and pods of one trace.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareWorkload {
    pub nodes: Vec<ShareNode>,
    pub pods: Vec<SharePod>,
    pub source: String,
}

/// The state after one arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub arrived_milli: u64,
    pub allocated_milli: u64,
    /// Cluster fragmentation (sum of `F_n`), GPU thousandths.
    pub frag_milli: f64,
}

/// One run.
#[derive(Clone, Debug, PartialEq)]
pub struct ShareRun {
    pub strategy: ShareStrategy,
    pub seed: i64,
    pub total_gpu_milli: u64,
    pub pods: usize,
    pub failed: usize,
    pub samples: Vec<Sample>,
}

/// The FGD authors' settings: 1.3x inflation, typical pods covering 95%.
pub const TUNE_RATIO: f64 = 1.3;
pub const TYPICAL_THRESHOLD_PCT: f64 = 95.0;

pub fn run(w: &ShareWorkload, strategy: ShareStrategy, seed: i64) -> Result<ShareRun, ShareError> {
    let mut cluster = ShareCluster::new(&w.nodes)?;
    let reqs = w
        .pods
        .iter()
        .map(|p| cluster.compile(p))
        .collect::<Result<Vec<_>, _>>()?;
    let d = draw(&w.pods, &w.nodes, seed, TUNE_RATIO);
    for (n, &rank) in cluster.nodes.iter_mut().zip(&d.node_rank) {
        n.rank = rank;
    }

    let typical = TypicalPods::from_pods(&w.pods, TYPICAL_THRESHOLD_PCT);
    let mut placer = Placer::new(strategy, &typical, &cluster);
    let mut samples = Vec::with_capacity(d.order.len());
    let (mut arrived, mut failed) = (0u64, 0usize);
    for &i in &d.order {
        let pod = &reqs[i];
        arrived += pod.total_milli();
        if placer.place(&mut cluster, pod).is_none() {
            failed += 1;
        }
        samples.push(Sample {
            arrived_milli: arrived,
            allocated_milli: cluster.allocated_milli(),
            frag_milli: placer.cluster_frag(&cluster),
        });
    }
    Ok(ShareRun {
        strategy,
        seed,
        total_gpu_milli: cluster.total_gpu_milli,
        pods: d.order.len(),
        failed,
        samples,
    })
}
