//! Jobs larger than one node (gangs) and the launch environment of distributed jobs, as
//! they cross the wire: what a job's parts are and where they run (user API), how a
//! node is linked and where it sits (registration), and what each part's agent needs to
//! start its processes (agent protocol).
//!
//! A gang is one job of `nodes` parts with `gpus_per_node` whole GPUs each. It starts
//! all-or-nothing: the first node's agent picks `MASTER_PORT` (the server asks for it in
//! [`crate::Desired::reserve_ports`], the agent answers with
//! [`crate::RunEventKind::PortReserved`]), and only then does every part get its
//! [`crate::Launch`] with the same [`DistLaunch`]. The part on the node that reports an
//! event is the node's own: a gang never has two parts on one node.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The launch environment of one part of a job (every job with GPUs has one: a job on
/// one node is a gang of one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DistLaunch {
    /// Nodes the job runs on (`NNODES`).
    pub nnodes: u32,
    /// This part's position among them, 0 on the first node (`NODE_RANK`).
    pub node_rank: u32,
    /// Whole GPUs on each node (`GPUS_PER_NODE`).
    pub gpus_per_node: u32,
    /// Processes the agent starts on this node, each with `RANK`, `LOCAL_RANK`,
    /// `LOCAL_WORLD_SIZE` and its share of the GPUs; `None`: one process (a launcher such
    /// as `torchrun` that starts the ranks itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks_per_node: Option<u32>,
    /// The first node's address (`MASTER_ADDR`); `None` on a job of one node: the
    /// agent's own advertised address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_addr: Option<String>,
    /// The port the first node's agent reserved (`MASTER_PORT`); `None` on a job of one
    /// node: the agent picks a free port itself when it starts the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_port: Option<u16>,
    /// Every node in rank order with its slots, for `GPUSCHED_HOSTFILE`
    /// (`addr slots=N` lines); empty on a job of one node (the agent writes its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<DistHost>,
}

/// One line of the hostfile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DistHost {
    /// The node's advertised address.
    pub addr: String,
    /// Processes MPI may start there: `tasks_per_node`, else the node's GPUs.
    pub slots: u32,
}

/// Where a part of a running (or ended) job ran, as `show` and the API list them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct JobPart {
    /// `NODE_RANK`.
    pub rank: u32,
    pub node: String,
    /// Node-local GPU indices.
    pub gpu_indices: Vec<u32>,
    /// The node's advertised address.
    #[serde(default)]
    pub addr: Option<String>,
    pub state: PartState,
    /// The part's (first failing) process exit status, once it ended by itself.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The signal that killed it, if one did; for a part gpusched stopped, the signal it
    /// was stopped with (SIGTERM, or the checkpoint signal of a preemption).
    #[serde(default)]
    pub signal: Option<i32>,
}

/// Where one part of a job is in its run.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PartState {
    /// Its agent was told to start it (or, before that, to reserve the port).
    Starting,
    Running,
    /// Exited 0; it waits for the other parts.
    Done,
    /// Ended otherwise by itself or its node (non-zero exit, a signal gpusched did not
    /// send, spawn failure, lost, walltime passed).
    Failed,
    /// gpusched stopped it: a cancel, a preemption, a drain, or the rest of a gang
    /// stopped after one part failed. Not a failure of its own.
    Stopped,
}

/// How two GPUs of one node are linked, best first (NVML's topology levels, NVLink
/// above them). Placement prefers GPUs that share the best link.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// Through an NVSwitch fabric (every pair at full NVLink bandwidth).
    NvSwitch,
    /// One or more direct NVLink connections.
    NvLink,
    /// Behind one PCIe switch (`PIX`).
    PcieSwitch,
    /// Behind several PCIe switches, no host bridge (`PXB`).
    PcieMulti,
    /// Through a PCIe host bridge (`PHB`).
    HostBridge,
    /// Across host bridges within one NUMA node (`NODE`).
    Numa,
    /// Across NUMA nodes / the SMP interconnect (`SYS`).
    System,
}

impl LinkKind {
    pub const ALL: [LinkKind; 7] = [
        LinkKind::NvSwitch,
        LinkKind::NvLink,
        LinkKind::PcieSwitch,
        LinkKind::PcieMulti,
        LinkKind::HostBridge,
        LinkKind::Numa,
        LinkKind::System,
    ];

    /// nvidia-smi's short name (`nvidia-smi topo -m`), `NV#` shown as `NV`.
    pub fn short(self) -> &'static str {
        match self {
            LinkKind::NvSwitch => "NVS",
            LinkKind::NvLink => "NV",
            LinkKind::PcieSwitch => "PIX",
            LinkKind::PcieMulti => "PXB",
            LinkKind::HostBridge => "PHB",
            LinkKind::Numa => "NODE",
            LinkKind::System => "SYS",
        }
    }
}

/// The link between two GPUs of a node (by NVML index, `a < b`). A node reports every
/// pair it knows; a pair it does not report counts as [`LinkKind::System`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuLink {
    pub a: u32,
    pub b: u32,
    pub kind: LinkKind,
}

/// Where a node sits in the network, as its agent says (`--switch`, `--rack`) or the
/// server's topology file overrides. Nodes under one switch are one hop apart; placement
/// keeps a gang under as few switches as it can.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeLocation {
    #[serde(default)]
    pub switch: Option<String>,
    #[serde(default)]
    pub rack: Option<String>,
}
