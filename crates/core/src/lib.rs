//! The pure, deterministic scheduling core of gpusched.
//!
//! Everything here is synchronous and free of I/O: no clock (`now` is an argument), no
//! randomness, no hash-ordered iteration that could leak into results. The trace
//! simulator and the live server drive the very same functions, so a policy measured on
//! a trace behaves the same way on the cluster.
//!
//! The map of the crate:
//! - [`ids`]: newtypes for every identifier.
//! - [`resources`]: the request language (whole GPUs, GPU shares, MIG slices, gangs,
//!   CPUs, memory, generic counted resources) and its validation.
//! - [`cluster`]: switches, nodes and GPUs, and the capacity of a node.
//! - [`job`]: what a job asks for and the lifecycle it moves through.
//! - [`freemap`]: an index of free GPUs per node that answers placement queries in
//!   time independent of the cluster size.
//! - [`gang`]: a job of N nodes x G GPUs placed all-or-nothing, the node choice by
//!   topology (one switch, else the fewest switches, then one rack, then the tightest fit).
//! - [`placement`]: where a job goes (`consolidated`, `best-fit`, `spread`, `pool`).
//! - [`room`]: CPUs, memory and generic resources free per node, for a scheduler that
//!   reserves them (the live server's).
//! - [`policy`]: which job goes first (`fifo`, `priority`, `sjf`, `srtf`, `srsf`,
//!   `tiresias`, `drf`, `backfill`, `blend`).
//! - [`schedule`]: one scheduling pass, turning policy order and placement into decisions.
//! - [`plan`]: estimated start times of waiting jobs.
//! - [`services`]: inference services: which replicas to start, drain and stop (rolling
//!   updates, scaling, back-off, nodes being left) and the autoscaler.
//! - [`reclaim`]: which borrowing jobs to preempt to give a queue its quota back.
//! - [`sharing`]: placement of GPU shares (best-fit, worst-fit, FGD and gpusched's
//!   fgd-pack, fgd-coarse and fgd-fit) as the sharing simulator measures it.
//! - [`speed`]: how fast a job runs on each GPU type against a reference type (its
//!   declaration, what the cluster learned, a default per type pair).
//! - [`hetero`]: heterogeneity-aware policies over GPU types (FIFO on the fastest free
//!   type, least attained service, Gavel's max-min fairness and round rule).
//! - [`elastic`]: elastic jobs (a GPU range): lending idle GPUs where they save most,
//!   taking them back for waiting jobs.
//! - [`power`]: the power budget at the nodes' caps, and consolidation's idle nodes.
//! - [`idle`]: when an interactive allocation's idle GPUs warn or end it.
//! - [`live`]: the live cluster: nodes, who holds which GPU, the pass with GPU indices,
//!   caps and wait reasons.
//! - [`slices`]: shares and MIG instances on the live cluster (MIG layouts, re-layout
//!   costs, share placement through [`sharing`]).

pub mod admission;
pub mod cluster;
pub mod deadline;
pub mod elastic;
pub mod eligible;
pub mod freemap;
pub mod gang;
pub mod hetero;
pub mod idle;
pub mod ids;
pub mod job;
pub mod live;
pub mod placement;
pub mod plan;
pub mod policy;
pub mod power;
pub mod predict;
pub mod reclaim;
pub mod resources;
pub mod room;
pub mod schedule;
pub mod services;
pub mod sharing;
pub mod slices;
pub mod speed;
pub mod tiers;

pub use cluster::{Cluster, ClusterError, Gpu, Node};
pub use ids::{GpuIndex, JobId, NodeId, QueueId, SwitchId, UserId};
pub use job::{JobSpec, JobState, TransitionError};
pub use placement::{Placement, PlacementStrategy};
pub use policy::{PolicyConfig, PolicyKind};
pub use schedule::{Decision, PassOutcome, SchedJob, Scheduler};

/// Time in seconds since an arbitrary origin (the trace start, or the Unix epoch on a
/// live cluster). A float so that trace arithmetic matches the peer simulators bit for
/// bit; the core never reads a clock, it is always handed `now`.
pub type Seconds = f64;
