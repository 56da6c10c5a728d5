//! One run of the FGD experiment: pods arrive in the drawn order onto the idle cluster,
//! none leaves; a pod that fits nowhere fails and the run goes on. After every arrival
//! (placed or failed) one sample: GPU thousandths requested so far (failed pods
//! included), allocated, and the cluster's fragmentation.

use gpusched_core::sharing::demand::{target_pods, Demand};
use gpusched_core::sharing::frag::FragModel;
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

/// Choices beyond the peer's procedure; the default is the peer's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// FGD's target workload from the last this-many arrivals (the core's
    /// `sharing::demand`: the pods of the window, one whole GPU added if none asks for
    /// whole GPUs), rebuilt every [`DEMAND_REFRESH`] arrivals, instead of the whole pod
    /// list. Pods carry no times here, so the window counts arrivals.
    pub demand_window: Option<usize>,
}

/// Arrivals between two rebuilds of the demand target (and of the placer with it).
pub const DEMAND_REFRESH: usize = 128;

/// One run as the peer runs it.
pub fn run(w: &ShareWorkload, strategy: ShareStrategy, seed: i64) -> Result<ShareRun, ShareError> {
    run_with(w, strategy, seed, RunOptions::default())
}

/// One run with `opts`.
pub fn run_with(
    w: &ShareWorkload,
    strategy: ShareStrategy,
    seed: i64,
    opts: RunOptions,
) -> Result<ShareRun, ShareError> {
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
    // With a demand window the placer's measure follows the window, so fragmentation is
    // reported on FGD's measure of the whole list instead, as every run without it is
    // for FGD (for fgd-fit those report its own measure).
    let mut report = opts
        .demand_window
        .map(|_| WholeListFrag::new(&typical, &cluster));
    let mut samples = Vec::with_capacity(d.order.len());
    let (mut arrived, mut failed) = (0u64, 0usize);
    for (k, &i) in d.order.iter().enumerate() {
        if let Some(window) = opts.demand_window {
            if k % DEMAND_REFRESH == 0 {
                let target = demand_target(&w.pods, &d.order, k, window);
                placer = Placer::new(strategy, &target, &cluster);
            }
        }
        let pod = &reqs[i];
        arrived += pod.total_milli();
        let choice = placer.place(&mut cluster, pod);
        if choice.is_none() {
            failed += 1;
        }
        let frag_milli = match &mut report {
            Some(r) => r.after(&cluster, choice.map(|c| c.node)),
            None => placer.cluster_frag(&cluster),
        };
        samples.push(Sample {
            arrived_milli: arrived,
            allocated_milli: cluster.allocated_milli(),
            frag_milli,
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

/// The typical pods of the demand window at arrival `k`: the `window` arrivals up to and
/// including `k` (arrival `j` submitted at time `j`, none still active: nothing leaves).
fn demand_target(pods: &[SharePod], order: &[usize], k: usize, window: usize) -> TypicalPods {
    let first = (k + 1).saturating_sub(window);
    let demand: Vec<Demand<SharePod>> = (first..=k)
        .map(|j| Demand {
            submitted: j as f64,
            active: false,
            ask: pods[order[j]].clone(),
        })
        .collect();
    let target = target_pods(&demand, k as f64, window as f64);
    TypicalPods::from_pods(&target, TYPICAL_THRESHOLD_PCT)
}

/// FGD's fragmentation of the whole list's typical pods, node by node, updated for the
/// node each placement changed.
struct WholeListFrag {
    frag: FragModel,
    nodes: Vec<f64>,
}

impl WholeListFrag {
    fn new(typical: &TypicalPods, cluster: &ShareCluster) -> Self {
        let mut frag = FragModel::new(typical, cluster);
        let nodes = cluster.nodes.iter().map(|n| frag.of(n)).collect();
        WholeListFrag { frag, nodes }
    }

    /// The cluster's fragmentation after a placement on `changed` (if any).
    fn after(&mut self, cluster: &ShareCluster, changed: Option<usize>) -> f64 {
        if let Some(i) = changed {
            self.nodes[i] = self.frag.of(&cluster.nodes[i]);
        }
        self.nodes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(num_gpu: u32, gpu_milli: u32) -> SharePod {
        SharePod {
            name: String::new(),
            cpu_milli: 1000,
            mem_mib: 0,
            num_gpu,
            gpu_milli,
            models: Vec::new(),
        }
    }

    #[test]
    fn the_demand_target_holds_the_last_window_arrivals_and_a_whole_gpu() {
        // Arrival order: shares of 100, 200, 300, 400 thousandths.
        let pods = vec![pod(1, 400), pod(1, 300), pod(1, 200), pod(1, 100)];
        let order = [3, 2, 1, 0];
        let t = demand_target(&pods, &order, 2, 2);
        let mut got: Vec<(u32, u32)> = t.pods.iter().map(|p| (p.num, p.milli)).collect();
        got.sort_unstable();
        // Arrivals 1 and 2 (200, 300), and the whole GPU none of them asks for.
        assert_eq!(got, vec![(1, 200), (1, 300), (1, 1000)]);
        // A window reaching before the first arrival holds what there is.
        let t = demand_target(&pods, &order, 0, 10);
        assert_eq!(t.pods.len(), 2);
    }
}
