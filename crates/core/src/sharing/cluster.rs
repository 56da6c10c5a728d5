//! Nodes and pods of the sharing model, the fit test, and carrying out a placement.

use std::collections::BTreeMap;

use super::MILLI;

/// One node as the trace describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareNode {
    pub name: String,
    pub cpu_milli: u32,
    pub mem_mib: u64,
    pub gpus: u32,
    /// GPU model, e.g. `V100M32`; empty for a CPU-only node.
    pub model: String,
}

/// One pod (job) as the trace describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharePod {
    pub name: String,
    pub cpu_milli: u32,
    pub mem_mib: u64,
    /// Whole GPUs, or 1 with `gpu_milli < 1000` for a share of one GPU; 0 for CPU only.
    pub num_gpu: u32,
    /// Thousandths of each GPU (1000 for whole GPUs, 0 for CPU-only pods).
    pub gpu_milli: u32,
    /// Acceptable GPU models as written (`V100M16|V100M32` split); empty accepts any.
    pub models: Vec<String>,
}

/// A pod that the sharing model cannot express.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShareError {
    #[error("pod `{0}`: gpu_milli {1} is above 1000; ask for whole GPUs (num_gpu) instead")]
    MilliAbove(String, u32),
    #[error(
        "pod `{0}`: asks for {1} GPUs with gpu_milli 0; a GPU request needs gpu_milli 1..=1000"
    )]
    ZeroMilli(String, u32),
    #[error("pod `{name}`: a share ({milli}/1000) is of one GPU only, got num_gpu = {num}; ask for num_gpu = 1, or whole GPUs with gpu_milli = 1000")]
    ShareOfMany { name: String, num: u32, milli: u32 },
    #[error("the cluster has {0} GPU models; the sharing model handles at most 64")]
    TooManyModels(usize),
    #[error("node `{0}` has {1} GPUs; the sharing model handles at most 16 per node")]
    TooManyGpus(String, u32),
}

/// A pod compiled against one cluster: model names became a bitmask over its models.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodReq {
    pub cpu: u32,
    pub mem: u64,
    pub num: u32,
    pub milli: u32,
    /// `None` accepts any model; `Some(mask)` only the models whose bit is set.
    pub models: Option<u64>,
}

impl PodReq {
    /// A share of one GPU (as opposed to whole GPUs or no GPU).
    pub fn is_share(&self) -> bool {
        self.num == 1 && self.milli < MILLI
    }

    pub fn needs_gpu(&self) -> bool {
        self.num > 0 && self.milli > 0
    }

    /// GPU thousandths the pod takes in all.
    pub fn total_milli(&self) -> u64 {
        u64::from(self.num) * u64::from(self.milli)
    }

    pub fn accepts(&self, model: u8) -> bool {
        self.models.is_none_or(|m| m >> model & 1 == 1)
    }
}

/// What is free on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeState {
    pub cpu_left: u32,
    pub mem_left: u64,
    /// Index into [`ShareCluster::models`].
    pub model: u8,
    /// Free thousandths of each GPU, by device index.
    pub gpu_free: Vec<u32>,
    /// Tie-break among equally scored nodes: the lowest rank wins.
    pub rank: u32,
}

impl NodeState {
    pub fn idle_milli(&self) -> u64 {
        self.gpu_free.iter().map(|&f| u64::from(f)).sum()
    }
}

/// Where a pod goes: a node, and a bitmask of the GPUs it takes `milli` of each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub node: usize,
    pub gpus: u16,
}

/// The cluster's free state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareCluster {
    pub nodes: Vec<NodeState>,
    /// GPU model names; a node's `model` indexes this.
    pub models: Vec<String>,
    pub total_gpu_milli: u64,
    /// GPU thousandths handed out so far (kept, so sampling it after every arrival is free).
    allocated: u64,
}

impl ShareCluster {
    /// An idle cluster; ranks are the node order.
    pub fn new(nodes: &[ShareNode]) -> Result<Self, ShareError> {
        let mut index: BTreeMap<&str, u8> = BTreeMap::new();
        for n in nodes {
            index.entry(n.model.as_str()).or_insert(0);
        }
        if index.len() > 64 {
            return Err(ShareError::TooManyModels(index.len()));
        }
        let models: Vec<String> = index.keys().map(|m| m.to_string()).collect();
        for (i, v) in index.values_mut().enumerate() {
            *v = i as u8;
        }
        let mut states = Vec::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            if n.gpus > 16 {
                return Err(ShareError::TooManyGpus(n.name.clone(), n.gpus));
            }
            states.push(NodeState {
                cpu_left: n.cpu_milli,
                mem_left: n.mem_mib,
                model: index[n.model.as_str()],
                gpu_free: vec![MILLI; n.gpus as usize],
                rank: i as u32,
            });
        }
        let total_gpu_milli = nodes.iter().map(|n| u64::from(n.gpus) * 1000).sum();
        Ok(ShareCluster {
            nodes: states,
            models,
            total_gpu_milli,
            allocated: 0,
        })
    }

    /// Checks a pod and turns its model names into this cluster's bitmask. A model the
    /// cluster lacks matches no node (the pod will not fit), as in the trace's simulator.
    pub fn compile(&self, pod: &SharePod) -> Result<PodReq, ShareError> {
        if pod.gpu_milli > MILLI {
            return Err(ShareError::MilliAbove(pod.name.clone(), pod.gpu_milli));
        }
        if pod.num_gpu > 0 && pod.gpu_milli == 0 {
            return Err(ShareError::ZeroMilli(pod.name.clone(), pod.num_gpu));
        }
        if pod.num_gpu > 1 && pod.gpu_milli < MILLI {
            return Err(ShareError::ShareOfMany {
                name: pod.name.clone(),
                num: pod.num_gpu,
                milli: pod.gpu_milli,
            });
        }
        let named: Vec<&String> = pod.models.iter().filter(|m| !m.is_empty()).collect();
        let models = (!named.is_empty()).then(|| {
            named.iter().fold(0u64, |mask, m| {
                match self.models.iter().position(|x| x == *m) {
                    Some(i) => mask | 1 << i,
                    None => mask,
                }
            })
        });
        Ok(PodReq {
            cpu: pod.cpu_milli,
            mem: pod.mem_mib,
            num: pod.num_gpu,
            milli: pod.gpu_milli,
            models,
        })
    }

    /// Whether node `i` can take `pod` (CPU, memory, GPU model, and GPUs with enough free).
    pub fn fits(&self, i: usize, pod: &PodReq) -> bool {
        let n = &self.nodes[i];
        if n.cpu_left < pod.cpu || n.mem_left < pod.mem {
            return false;
        }
        if !pod.needs_gpu() {
            return true;
        }
        if n.gpu_free.is_empty() || !pod.accepts(n.model) {
            return false;
        }
        if pod.num == 1 {
            return n.gpu_free.iter().any(|&f| f >= pod.milli);
        }
        n.gpu_free.iter().filter(|&&f| f >= pod.milli).count() as u32 >= pod.num
    }

    /// The first `pod.num` wholly free GPUs of node `i`, by index (how whole GPUs are
    /// handed out in the trace's simulator).
    pub fn first_free_gpus(&self, i: usize, pod: &PodReq) -> u16 {
        let mut mask = 0u16;
        let mut left = pod.num;
        for (g, &f) in self.nodes[i].gpu_free.iter().enumerate() {
            if left == 0 {
                break;
            }
            if f == MILLI {
                mask |= 1 << g;
                left -= 1;
            }
        }
        mask
    }

    /// Carries out a placement that [`ShareCluster::fits`] allowed.
    pub fn apply(&mut self, pod: &PodReq, choice: Choice) {
        let n = &mut self.nodes[choice.node];
        n.cpu_left -= pod.cpu;
        n.mem_left -= pod.mem;
        for (g, f) in n.gpu_free.iter_mut().enumerate() {
            if choice.gpus >> g & 1 == 1 {
                *f -= pod.milli;
                self.allocated += u64::from(pod.milli);
            }
        }
    }

    pub fn idle_milli(&self) -> u64 {
        self.nodes.iter().map(NodeState::idle_milli).sum()
    }

    pub fn allocated_milli(&self) -> u64 {
        self.allocated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn node(name: &str, gpus: u32, model: &str) -> ShareNode {
        ShareNode {
            name: name.into(),
            cpu_milli: 32_000,
            mem_mib: 65_536,
            gpus,
            model: model.into(),
        }
    }

    pub(crate) fn pod(num: u32, milli: u32, models: &[&str]) -> SharePod {
        SharePod {
            name: "p".into(),
            cpu_milli: 1000,
            mem_mib: 1024,
            num_gpu: num,
            gpu_milli: milli,
            models: models.iter().map(|m| m.to_string()).collect(),
        }
    }

    #[test]
    fn bad_pods_say_what_is_allowed() {
        let c = ShareCluster::new(&[node("a", 2, "T4")]).unwrap();
        let e = c.compile(&pod(2, 500, &[])).unwrap_err();
        assert!(e.to_string().contains("one GPU only"), "{e}");
        assert!(matches!(
            c.compile(&pod(1, 1500, &[])),
            Err(ShareError::MilliAbove(..))
        ));
        assert!(matches!(
            c.compile(&pod(1, 0, &[])),
            Err(ShareError::ZeroMilli(..))
        ));
    }

    #[test]
    fn fit_checks_model_cpu_and_free_gpus() {
        let mut c = ShareCluster::new(&[node("a", 2, "T4"), node("b", 1, "V100M32")]).unwrap();
        let t4_half = c.compile(&pod(1, 500, &["T4"])).unwrap();
        assert!(c.fits(0, &t4_half) && !c.fits(1, &t4_half));
        let two = c.compile(&pod(2, 1000, &[])).unwrap();
        assert!(c.fits(0, &two) && !c.fits(1, &two));
        c.apply(
            &t4_half,
            Choice {
                node: 0,
                gpus: 0b01,
            },
        );
        assert!(!c.fits(0, &two));
        assert_eq!(c.nodes[0].gpu_free, vec![500, 1000]);
        assert_eq!(
            c.first_free_gpus(0, &c.compile(&pod(1, 1000, &[])).unwrap()),
            0b10
        );
        assert_eq!(c.allocated_milli(), 500);
        let absent = c.compile(&pod(1, 100, &["H100"])).unwrap();
        assert!(!c.fits(0, &absent) && !c.fits(1, &absent));
    }
}
