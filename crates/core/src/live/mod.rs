//! The live cluster, owned by the core: online nodes and their GPUs (whole, shares, MIG
//! instances), who holds what, the pass that decides starts with their GPU indices, queue
//! and per-user caps, and why a waiting job waits. The server maps its wire types onto
//! these, applies the placements and formats the reasons; it keeps no occupancy of its
//! own.
//!
//! - [`node`]: a node as registered (GPUs with index, model, memory and MIG layout).
//! - [`slice`]: what a job on part of a GPU asks for, and where it was put.
//! - [`gpus`]: which free GPUs of a node a job gets: the best-linked ones, then the
//!   coolest, least loaded.
//! - [`book`]: who holds what on one node (the one record of occupancy).
//! - [`occupancy`]: what the book answers the server: who holds a GPU, what it is cut
//!   into and who holds each piece, and how many tasks of one shape (an array's) could
//!   start now.
//! - [`place`]: where a slice job goes (MIG re-layout costs, share strategies).
//! - [`cluster`]: [`LiveCluster`], the jobs, the nodes, and the pass.
//! - [`job_list`]: its jobs by id, one slice that an end near the front does not shift.
//! - [`caps`]: queue caps with slices rounded up, and per-user caps.
//! - [`claims`]: jobs that reclaimed quota start first on their node.
//! - [`group`]: jobs that run as one group (an array's `%K`): at most K hold GPUs.
//! - [`follow`]: short jobs queued behind running ones of their kind, started by the
//!   agent the moment those end.
//! - [`reason`]: why a waiting job waits ([`WaitReason`]; the server words it).
//! - [`preempt`]: preemptive policies' victims, protection, attained service, and
//!   predicted estimates.
//! - [`runs`]: what the server told of each placed job's run (started, saved, being
//!   stopped): protection and the work a preemption would lose.
//! - [`serving`]: the serving tier: replicas of inference services are never victims,
//!   and a waiting one may take a node from training jobs.
//! - [`power`]: the power budget at the nodes' caps (jobs held back, GPUs over a
//!   node's budget and nodes the power hook took down held out of placement).
//! - [`round`]: one round decided whole: protection, the pass, follows, the policy's
//!   victims, the serving tier, quota reclaim and priority tiers
//!   ([`LiveCluster::round`]).

mod accounts;
pub mod book;
pub mod caps;
pub mod claims;
pub mod cluster;
pub mod elastic;
pub mod follow;
pub mod gpus;
pub mod group;
mod job_list;
pub mod node;
pub mod occupancy;
pub mod place;
pub mod power;
pub mod preempt;
pub mod reason;
pub mod round;
pub mod runs;
pub mod serving;
pub mod slice;
pub mod windows;

#[cfg(test)]
mod tests;

pub use book::{GpuSlices, Hold, NodeSlices, ShareHold};
pub use cluster::{Left, LiveCluster, LiveJob, LivePlacement, NodePart};
pub use elastic::ElasticResize;
pub use follow::{Follow, FollowConfig};
pub use gpus::{GpuLoad, Loads};
pub use group::JobGroup;
pub use node::{Link, LiveGpu, LiveNode, MigInstance, MigLayout, NodeTopology};
pub use occupancy::{GpuOccupancy, GpuSlice, MigSlice, TaskShape, PER_NODE_WITHOUT_GPUS};
pub use place::SliceJob;
pub use power::{nodes_to_power_down, PowerSetup, PowerView};
pub use reason::{After, Blocked, WaitContext, WaitReason};
pub use round::{QueueRules, QuotaReclaim, Round, RoundInput, TierPreemption};
pub use runs::RunFacts;
pub use serving::ServingPreemption;
pub use slice::{MigAt, SliceAsk, SliceAt};
pub use windows::{keeping_out, next_boundary, outside, Window};

#[cfg(test)]
mod elastic_tests;
#[cfg(test)]
mod gang_tests;
#[cfg(test)]
mod image_tests;
#[cfg(test)]
mod power_tests;
#[cfg(test)]
mod round_tests;
#[cfg(test)]
mod rules_tests;
#[cfg(test)]
mod serving_tests;
#[cfg(test)]
mod speed_tests;
