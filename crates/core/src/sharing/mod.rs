//! GPU sharing placement: which node, and which GPU of it, a pod that asks for a fraction
//! of one GPU (or for whole GPUs) should take, so that whole GPUs stay usable for the
//! requests that are still to come.
//!
//! The model is the one of the Alibaba GPU trace v2023 and of the FGD paper (USENIX
//! ATC'23, "Beware of Fragmentation"): a node has CPU, memory and GPUs of one model, each
//! GPU with free compute in thousandths (0..=1000); a pod asks for CPU, memory, and either
//! `gpu_milli < 1000` of one GPU or `num_gpu` whole GPUs, optionally only on some models.
//!
//! - [`cluster`]: nodes, pods, the fit test and carrying out a placement.
//! - [`typical`]: the workload's typical pod types and their shares (FGD's target workload).
//! - [`demand`]: the target workload from recent demand (a window of submissions, whole
//!   GPUs always asked for): the live server's, and a simulator option.
//! - [`frag`]: the fragmentation of a node measured against the typical pods.
//! - [`fit`]: `best-fit` and `worst-fit` scores.
//! - [`fgd`]: fragmentation gradient descent.
//! - [`fgd_pack`]: `fgd-pack`, gpusched's variant: FGD's score, ties broken by packing
//!   instead of by node order.
//! - [`fgd_coarse`]: `fgd-coarse`, FGD with a coarser score grid for whole-GPU pods.
//! - [`fgd_fit`]: `fgd-fit`, FGD's score on a fragmentation measure that sees CPU and
//!   memory (shares: FGD's measure), with typical types weighted by how exclusive their
//!   hosts are and by scarcity ([`scarcity`]).
//! - [`placer`]: one entry point that scores every node with the chosen strategy.
//!
//! Everything is deterministic: ties between nodes go to the lowest `rank`, ties between
//! GPUs of a node to the lowest index.

pub mod cluster;
pub mod demand;
pub mod fgd;
pub mod fgd_coarse;
pub mod fgd_fit;
pub mod fgd_pack;
pub mod fit;
pub mod frag;
pub mod placer;
pub mod scarcity;
pub mod typical;

pub use cluster::{Choice, NodeState, PodReq, ShareCluster, ShareError, ShareNode, SharePod};
pub use demand::Demand;
pub use placer::{Placer, ShareStrategy};
pub use typical::{TypicalPod, TypicalPods};

/// Compute of one GPU in thousandths.
pub const MILLI: u32 = 1000;
