//! The cluster: switches contain nodes, nodes contain GPUs.
//!
//! Nodes are numbered densely across the whole cluster and grouped by switch in order, so
//! "the first node" is well defined and placement is deterministic.

use std::collections::BTreeMap;

use crate::ids::{GpuIndex, NodeId, SwitchId};
use crate::resources::{GpuRequest, ResourceRequest};

/// One GPU as the scheduler sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gpu {
    pub index: GpuIndex,
    /// Marketing model name as NVML reports it, e.g. `A100-SXM4-80GB`.
    pub model: String,
    pub mem_mib: u64,
    /// Whether MIG mode is enabled on this GPU.
    pub mig_enabled: bool,
}

/// One host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub id: NodeId,
    pub switch: SwitchId,
    pub gpus: Vec<Gpu>,
    pub cpu_milli: u64,
    pub mem_mib: u64,
    pub generic: BTreeMap<String, u64>,
}

/// The whole cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    pub nodes: Vec<Node>,
    pub switches: u32,
}

/// A cluster description that cannot be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ClusterError {
    #[error("cluster `{0}` is not NODESxGPUS (e.g. `8x8`) or SWITCHESxNODESxGPUS (e.g. `2x4x8`)")]
    BadShape(String),
    #[error("cluster `{0}` has no GPUs; every count must be at least 1")]
    Empty(String),
    #[error("cluster `{shape}` has {gpus} GPUs; at most {MAX_GPUS} GPUs in all and {MAX_GPUS_PER_NODE} per node are simulated (check for a typo)")]
    TooLarge { shape: String, gpus: u64 },
}

/// The largest cluster a shape or spec may describe: far above any real one, it keeps a
/// typo (`100000x100000`) from allocating the machine's memory away.
pub const MAX_GPUS: u64 = 1 << 20;
pub const MAX_GPUS_PER_NODE: u32 = 1024;

impl Cluster {
    /// `switches` x `nodes_per_switch` identical nodes with `gpus_per_node` GPUs each.
    pub fn uniform(switches: u32, nodes_per_switch: u32, gpus_per_node: u32, model: &str) -> Self {
        let mut nodes = Vec::new();
        for s in 0..switches {
            for _ in 0..nodes_per_switch {
                let id = NodeId(nodes.len() as u32);
                nodes.push(Node {
                    id,
                    switch: SwitchId(s),
                    gpus: (0..gpus_per_node)
                        .map(|i| Gpu {
                            index: GpuIndex(i),
                            model: model.to_string(),
                            mem_mib: 80 * 1024,
                            mig_enabled: false,
                        })
                        .collect(),
                    cpu_milli: 96_000,
                    mem_mib: 1024 * 1024,
                    generic: BTreeMap::new(),
                });
            }
        }
        Cluster { nodes, switches }
    }

    /// [`Cluster::uniform`], refused when a count is 0 or the whole is above
    /// [`MAX_GPUS`] (or [`MAX_GPUS_PER_NODE`] on a node); `shape` names it in errors.
    pub fn sized(
        switches: u32,
        nodes_per_switch: u32,
        gpus_per_node: u32,
        model: &str,
        shape: &str,
    ) -> Result<Self, ClusterError> {
        if switches == 0 || nodes_per_switch == 0 || gpus_per_node == 0 {
            return Err(ClusterError::Empty(shape.to_string()));
        }
        let gpus = u64::from(switches) * u64::from(nodes_per_switch) * u64::from(gpus_per_node);
        if gpus > MAX_GPUS || gpus_per_node > MAX_GPUS_PER_NODE {
            return Err(ClusterError::TooLarge {
                shape: shape.to_string(),
                gpus,
            });
        }
        Ok(Self::uniform(
            switches,
            nodes_per_switch,
            gpus_per_node,
            model,
        ))
    }

    /// Parses `NODESxGPUS` or `SWITCHESxNODESxGPUS` (per switch), e.g. `8x8`, `4x64x8`.
    pub fn parse_shape(shape: &str, model: &str) -> Result<Self, ClusterError> {
        let parts: Result<Vec<u32>, _> = shape.trim().split(['x', 'X']).map(str::parse).collect();
        let parts = parts.map_err(|_| ClusterError::BadShape(shape.to_string()))?;
        let (s, n, g) = match parts[..] {
            [n, g] => (1, n, g),
            [s, n, g] => (s, n, g),
            _ => return Err(ClusterError::BadShape(shape.to_string())),
        };
        Self::sized(s, n, g, model, shape)
    }

    pub fn total_gpus(&self) -> u32 {
        self.nodes.iter().map(|n| n.gpus.len() as u32).sum()
    }

    /// The most GPUs any one node has.
    pub fn max_gpus_per_node(&self) -> u32 {
        self.nodes
            .iter()
            .map(|n| n.gpus.len() as u32)
            .max()
            .unwrap_or(0)
    }

    /// GPUs reachable under one switch: the most a consolidated job can use.
    pub fn max_gpus_per_switch(&self) -> u32 {
        let mut per = vec![0u32; self.switches as usize];
        for n in &self.nodes {
            per[n.switch.index()] += n.gpus.len() as u32;
        }
        per.into_iter().max().unwrap_or(0)
    }
}

/// What is still free on one node: the state placement reasons about.
///
/// Each GPU carries the thousandths of its compute and the MiB of its memory that are
/// free, and a bitmap of its eight MIG memory slices, so whole, shared and MIG use of the
/// same node are all expressible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeCapacity {
    pub gpus: Vec<GpuFree>,
    pub cpu_milli: u64,
    pub mem_mib: u64,
    pub generic: BTreeMap<String, u64>,
}

/// The free part of one GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuFree {
    pub model: String,
    pub compute_milli: u32,
    pub mem_mib: u64,
    pub total_mem_mib: u64,
    /// `Some(bitmap of used memory slices)` when MIG is enabled.
    pub mig_used_slices: Option<u8>,
}

impl GpuFree {
    fn is_whole_free(&self) -> bool {
        self.compute_milli == 1000
            && self.mem_mib == self.total_mem_mib
            && self.mig_used_slices.is_none_or(|m| m == 0)
    }
}

impl NodeCapacity {
    /// An idle node.
    pub fn of(node: &Node) -> Self {
        NodeCapacity {
            gpus: node
                .gpus
                .iter()
                .map(|g| GpuFree {
                    model: g.model.clone(),
                    compute_milli: 1000,
                    mem_mib: g.mem_mib,
                    total_mem_mib: g.mem_mib,
                    mig_used_slices: g.mig_enabled.then_some(0),
                })
                .collect(),
            cpu_milli: node.cpu_milli,
            mem_mib: node.mem_mib,
            generic: node.generic.clone(),
        }
    }

    /// Whether this node alone can hold the per-node part of `req` (for a `Whole` request,
    /// all of it on this one node).
    pub fn can_hold(&self, req: &ResourceRequest) -> bool {
        if self.cpu_milli < req.cpu_milli || self.mem_mib < req.mem_mib {
            return false;
        }
        if req
            .generic
            .iter()
            .any(|(k, v)| self.generic.get(k).copied().unwrap_or(0) < *v)
        {
            return false;
        }
        let usable = || self.gpus.iter().filter(|g| req.accepts_model(&g.model));
        match &req.gpu {
            GpuRequest::None => true,
            GpuRequest::Whole { count } => {
                usable().filter(|g| g.is_whole_free()).count() as u32 >= *count
            }
            GpuRequest::Gang { per_node, .. } => {
                usable().filter(|g| g.is_whole_free()).count() as u32 >= *per_node
            }
            GpuRequest::Share { milli } => {
                usable().any(|g| g.mig_used_slices.is_none() && g.compute_milli >= *milli)
            }
            GpuRequest::Memory { mib } => {
                usable().any(|g| g.mig_used_slices.is_none() && g.mem_mib >= *mib)
            }
            GpuRequest::Mig { profile } => usable().any(|g| {
                let Some(used) = g.mig_used_slices else {
                    return false;
                };
                let span = (1u16 << profile.memory_slices) - 1;
                profile
                    .starts
                    .iter()
                    .any(|&s| ((span << s) as u8) & used == 0 && (span << s) <= 0xff)
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::mig_profile;

    fn node(gpus: u32) -> Node {
        Cluster::uniform(1, 1, gpus, "A100-80GB").nodes.remove(0)
    }

    #[test]
    fn a_huge_shape_is_refused_before_it_is_built() {
        // Found by fuzzing the cluster spec: the product was allocated, node by node.
        let e = Cluster::parse_shape("100000x100000x8", "V").unwrap_err();
        assert!(
            matches!(
                e,
                ClusterError::TooLarge {
                    gpus: 80_000_000_000,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("typo"), "{e}");
        assert!(Cluster::parse_shape("1x2000", "V").is_err());
        assert!(Cluster::parse_shape("131073x8", "V").is_err());
        assert_eq!(
            Cluster::parse_shape("1x1024", "V").unwrap().total_gpus(),
            1024
        );
    }

    #[test]
    fn shapes_parse_and_bad_shapes_say_why() {
        let c = Cluster::parse_shape("8x8", "V100").unwrap();
        assert_eq!((c.nodes.len(), c.total_gpus(), c.switches), (8, 64, 1));
        let c = Cluster::parse_shape("2x4x8", "V100").unwrap();
        assert_eq!(
            (c.nodes.len(), c.switches, c.max_gpus_per_switch()),
            (8, 2, 32)
        );
        assert_eq!(c.nodes[4].switch, SwitchId(1));
        assert!(matches!(
            Cluster::parse_shape("8", "V"),
            Err(ClusterError::BadShape(_))
        ));
        assert!(matches!(
            Cluster::parse_shape("0x8", "V"),
            Err(ClusterError::Empty(_))
        ));
        assert!(matches!(
            Cluster::parse_shape("ax8", "V"),
            Err(ClusterError::BadShape(_))
        ));
    }

    #[test]
    fn fractional_share_fits_a_partly_used_gpu() {
        let mut cap = NodeCapacity::of(&node(1));
        cap.gpus[0].compute_milli = 500; // another job holds half the GPU
        let quarter = ResourceRequest {
            gpu: GpuRequest::Share { milli: 250 },
            ..ResourceRequest::whole_gpus(0)
        };
        assert!(cap.can_hold(&quarter));
        assert!(!cap.can_hold(&ResourceRequest::whole_gpus(1)));
        cap.gpus[0].compute_milli = 200;
        assert!(!cap.can_hold(&quarter));
    }

    #[test]
    fn mig_slice_respects_start_positions() {
        let mut n = node(1);
        n.gpus[0].mig_enabled = true;
        let mut cap = NodeCapacity::of(&n);
        let p = mig_profile("3g.20gb").unwrap();
        let req = ResourceRequest {
            gpu: GpuRequest::Mig { profile: p },
            ..ResourceRequest::whole_gpus(0)
        };
        assert!(cap.can_hold(&req));
        // A 1g slice at memory slice 1 blocks start 0; start 4 is still free.
        cap.gpus[0].mig_used_slices = Some(0b0000_0010);
        assert!(cap.can_hold(&req));
        // Slices 1 and 5 used: neither start 0 nor 4 has four free slices.
        cap.gpus[0].mig_used_slices = Some(0b0010_0010);
        assert!(!cap.can_hold(&req));
        // A MIG GPU is not a whole free GPU once a slice is used.
        assert!(!cap.can_hold(&ResourceRequest::whole_gpus(1)));
    }

    #[test]
    fn gang_needs_per_node_gpus_and_generic_resources_count() {
        let mut n = node(8);
        n.generic.insert("fpga".into(), 1);
        let cap = NodeCapacity::of(&n);
        let mut gang = ResourceRequest {
            gpu: GpuRequest::Gang {
                nodes: 4,
                per_node: 8,
            },
            ..ResourceRequest::whole_gpus(0)
        };
        assert!(cap.can_hold(&gang));
        gang.generic.insert("fpga".into(), 2);
        assert!(!cap.can_hold(&gang));
        gang.generic.insert("fpga".into(), 1);
        gang.gpu_models = vec!["H100".into()];
        assert!(!cap.can_hold(&gang));
    }
}
