//! The request language: what one job asks of the cluster.
//!
//! This scheduler places whole GPUs, but the model already expresses everything a
//! GPU cluster is asked for, so that sharing, MIG and gangs arrive without a redesign:
//!
//! - whole GPUs, spread over as few nodes as placement allows ([`GpuRequest::Whole`]);
//! - an explicit gang: `nodes` nodes with `per_node` GPUs each, all or nothing
//!   ([`GpuRequest::Gang`]);
//! - a share of one GPU's compute in thousandths ([`GpuRequest::Share`]) or of its
//!   memory ([`GpuRequest::Memory`]);
//! - one MIG instance of a named profile ([`GpuRequest::Mig`], see [`MigProfile`]);
//! - CPUs (in milli-CPUs), host memory and generic counted resources (`fpga = 1`) per node.
//!
//! [`crate::cluster::NodeCapacity::can_hold`] answers whether one node can hold the
//! per-node part of a request; the unit tests below show each form.

use std::collections::BTreeMap;

/// How a job uses GPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuRequest {
    /// No GPU at all (a CPU-only step of a pipeline).
    None,
    /// `count` whole GPUs; placement decides how many nodes they span.
    Whole { count: u32 },
    /// Exactly `nodes` nodes with `per_node` whole GPUs on each (gang, all or nothing).
    Gang { nodes: u32, per_node: u32 },
    /// A share of one GPU's compute, in thousandths (1..=999).
    Share { milli: u32 },
    /// A share of one GPU by memory, in MiB.
    Memory { mib: u64 },
    /// One MIG instance.
    Mig { profile: MigProfile },
}

/// A MIG profile such as `1g.10gb`: `compute` GPU slices and `memory_slices` of the
/// GPU's eight memory slices, placeable only at the listed start slices (NVIDIA's MIG
/// user guide, "supported profiles").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigProfile {
    pub name: String,
    pub compute: u8,
    pub memory_slices: u8,
    pub starts: Vec<u8>,
}

/// A request for one job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRequest {
    pub gpu: GpuRequest,
    /// Accepted GPU models, as glob-free prefixes (`"A100"` matches `"A100-80GB"`); empty
    /// accepts any model.
    pub gpu_models: Vec<String>,
    /// Milli-CPUs per node.
    pub cpu_milli: u64,
    /// Host memory per node, MiB.
    pub mem_mib: u64,
    /// Generic counted resources per node (`fpga = 1`), ordered for determinism.
    pub generic: BTreeMap<String, u64>,
}

/// What is wrong with a request, phrased for the user who wrote it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    #[error(
        "a job must ask for at least one GPU (or `gpus = 0` with CPUs); got 0 GPUs and 0 CPUs"
    )]
    Empty,
    #[error("gpu share must be above 0 and below 1 (in thousandths: 1..=999); got {0}/1000 — ask for whole GPUs instead of a share of 1 or more")]
    ShareOutOfRange(u32),
    #[error(
        "a gang needs at least one node and one GPU per node; got {nodes} nodes x {per_node} GPUs"
    )]
    EmptyGang { nodes: u32, per_node: u32 },
    #[error("gpu memory share must be above 0 MiB")]
    ZeroMemory,
    #[error("unknown MIG profile `{0}`; known profiles: {1}")]
    UnknownMig(String, String),
}

impl ResourceRequest {
    /// `count` whole GPUs and nothing else: the common case of a training job.
    pub fn whole_gpus(count: u32) -> Self {
        ResourceRequest {
            gpu: GpuRequest::Whole { count },
            gpu_models: Vec::new(),
            cpu_milli: 0,
            mem_mib: 0,
            generic: BTreeMap::new(),
        }
    }

    /// Total whole GPUs the request occupies (0 for shares and MIG slices, which use
    /// part of one GPU).
    pub fn whole_gpu_count(&self) -> u32 {
        match self.gpu {
            GpuRequest::Whole { count } => count,
            GpuRequest::Gang { nodes, per_node } => nodes * per_node,
            _ => 0,
        }
    }

    /// Checks the request on its own, before it meets any cluster.
    pub fn validate(&self) -> Result<(), RequestError> {
        match &self.gpu {
            GpuRequest::None | GpuRequest::Whole { count: 0 } if self.cpu_milli == 0 => {
                Err(RequestError::Empty)
            }
            GpuRequest::Share { milli } if *milli == 0 || *milli >= 1000 => {
                Err(RequestError::ShareOutOfRange(*milli))
            }
            GpuRequest::Gang { nodes, per_node } if *nodes == 0 || *per_node == 0 => {
                Err(RequestError::EmptyGang {
                    nodes: *nodes,
                    per_node: *per_node,
                })
            }
            GpuRequest::Memory { mib: 0 } => Err(RequestError::ZeroMemory),
            _ => Ok(()),
        }
    }

    /// Whether a GPU of `model` is acceptable.
    pub fn accepts_model(&self, model: &str) -> bool {
        self.gpu_models.is_empty()
            || self
                .gpu_models
                .iter()
                .any(|m| model.starts_with(m.as_str()))
    }
}

/// The MIG profiles of the A100-40GB (NVIDIA MIG user guide, table "GPU instance
/// profiles on A100"); memory-slice geometry is the same on A100-80GB and H100-80GB with
/// doubled memory per slice. The full per-model tables arrive with GPU sharing.
pub fn mig_profile(name: &str) -> Result<MigProfile, RequestError> {
    let table: [(&str, u8, u8, &[u8]); 5] = [
        ("1g.5gb", 1, 1, &[0, 1, 2, 3, 4, 5, 6]),
        ("2g.10gb", 2, 2, &[0, 2, 4]),
        ("3g.20gb", 3, 4, &[0, 4]),
        ("4g.20gb", 4, 4, &[0]),
        ("7g.40gb", 7, 8, &[0]),
    ];
    table
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|(n, compute, memory_slices, starts)| MigProfile {
            name: (*n).to_string(),
            compute: *compute,
            memory_slices: *memory_slices,
            starts: starts.to_vec(),
        })
        .ok_or_else(|| {
            let known: Vec<&str> = table.iter().map(|(n, ..)| *n).collect();
            RequestError::UnknownMig(name.to_string(), known.join(", "))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_and_gang_count_gpus() {
        assert_eq!(ResourceRequest::whole_gpus(4).whole_gpu_count(), 4);
        let gang = ResourceRequest {
            gpu: GpuRequest::Gang {
                nodes: 2,
                per_node: 8,
            },
            ..ResourceRequest::whole_gpus(0)
        };
        assert_eq!(gang.whole_gpu_count(), 16);
        assert!(gang.validate().is_ok());
    }

    #[test]
    fn shares_must_be_strictly_between_zero_and_one() {
        for bad in [0, 1000, 1500] {
            let r = ResourceRequest {
                gpu: GpuRequest::Share { milli: bad },
                ..ResourceRequest::whole_gpus(0)
            };
            assert_eq!(r.validate(), Err(RequestError::ShareOutOfRange(bad)));
        }
        let ok = ResourceRequest {
            gpu: GpuRequest::Share { milli: 250 },
            ..ResourceRequest::whole_gpus(0)
        };
        assert!(ok.validate().is_ok());
    }

    #[test]
    fn empty_requests_are_refused() {
        assert_eq!(
            ResourceRequest::whole_gpus(0).validate(),
            Err(RequestError::Empty)
        );
        let cpu_only = ResourceRequest {
            cpu_milli: 2000,
            ..ResourceRequest::whole_gpus(0)
        };
        assert!(cpu_only.validate().is_ok());
    }

    #[test]
    fn mig_profiles_carry_their_placement_rules() {
        let p = mig_profile("3g.20gb").unwrap();
        assert_eq!((p.compute, p.memory_slices), (3, 4));
        assert_eq!(p.starts, vec![0, 4]);
        let err = mig_profile("9g.99gb").unwrap_err().to_string();
        assert!(err.contains("1g.5gb"), "{err}");
    }

    #[test]
    fn model_constraint_matches_prefixes() {
        let mut r = ResourceRequest::whole_gpus(1);
        assert!(r.accepts_model("V100"));
        r.gpu_models = vec!["A100".into(), "H100".into()];
        assert!(r.accepts_model("A100-80GB"));
        assert!(!r.accepts_model("V100-32GB"));
    }
}
