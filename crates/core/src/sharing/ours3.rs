//! `fgd-fit`, a third gpusched variant of FGD: fgd-coarse's score on a fragmentation
//! measure that also sees what CPU and memory leave usable, weighted by scarcity.
//!
//! Why: at 100% arrived FGD's unallocated GPUs are mostly whole GPUs on nodes whose CPU
//! or memory is used up (one-GPU pods that ask for 11-19 CPUs and 40-60 GiB no longer fit
//! there). FGD's measure counts a node's CPU only as a cliff (a type fits or not) and
//! ignores memory, so it cannot see a node drifting toward that state; its integer score
//! with the seeded node order as tie-break spreads pods by chance, which hides some of it
//! (exact gradients are worse, docs/sharing.md). `fgd-fit` changes the measure instead:
//!
//! 1. [`super::frag::FragModel::resource_limited`]: for the one-GPU whole types, a node's
//!    free GPUs beyond what its CPU and memory can run pods of that type count as fragment
//!    (other types as FGD);
//! 2. [`super::scarcity`]: each type weighted by how scarce the cluster's room for it has
//!    become, refreshed every [`super::scarcity::EPOCH`] placements;
//! 3. scored as `fgd-coarse` ([`super::ours2::score`]): FGD's integer score, on a grid of
//!    50 steps for whole-GPU and CPU-only pods, ties to the node order.
//!
//! Applying the CPU and memory limit to share and multi-GPU types too was measured worse on
//! the multigpu lists (docs/sharing.md).

pub use super::ours2::score;
