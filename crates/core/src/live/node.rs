//! A live node as an agent registered it, in the core's own terms (the server maps its
//! wire types onto these in one place).

/// One online node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveNode {
    pub name: String,
    /// The model of its GPUs (one model per node; the server refuses mixed nodes).
    pub model: String,
    pub cpus: u32,
    pub mem_mib: u64,
    /// It runs MPS: a GPU's shares all belong to one user.
    pub mps: bool,
    /// Its GPUs in registration order.
    pub gpus: Vec<LiveGpu>,
    /// Generic counted resources its agent declared (`--resource fpga=2`).
    pub resources: std::collections::BTreeMap<String, u64>,
    /// Where it sits and how its GPUs are linked (empty: unknown).
    pub topology: NodeTopology,
    /// `Some(reason)` while an operator drains it: nothing new is placed here (whole,
    /// share, MIG or GPU-less with room), its running jobs keep what they hold.
    pub drained: Option<String>,
    /// `Some(why)` while its agent is not heard from (silent past the heartbeat
    /// timeout, or not yet registered since the server started): nothing new is placed
    /// here, as on a drained node, and its running jobs keep what they hold until the
    /// server declares them lost.
    pub unreachable: Option<String>,
    /// Its agent starts a job queued behind a running one by itself when that one ends
    /// (agent protocol 3; see `follow.rs`): only such nodes get followers.
    pub follows: bool,
    /// Features its agent declared (`--feature`) and the server's topology file adds,
    /// sorted: what constraints and partitions select it by (`crate::eligible`).
    pub features: Vec<String>,
}

/// Where a node sits in the network and how its GPUs are linked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeTopology {
    /// Its switch (`--switch`, or the server's topology file); `None`: a switch of its
    /// own.
    pub switch: Option<String>,
    pub rack: Option<String>,
    /// The link of each GPU pair `(a, b)`, `a < b`, by index; a pair not listed is
    /// [`Link::System`].
    pub links: std::collections::BTreeMap<(u32, u32), Link>,
}

/// How two GPUs of a node are linked, best first (the wire's `LinkKind`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Link {
    NvSwitch,
    NvLink,
    PcieSwitch,
    PcieMulti,
    HostBridge,
    Numa,
    System,
}

impl LiveNode {
    /// The node as eligibility reads it.
    pub fn facts(&self) -> crate::eligible::NodeFacts<'_> {
        crate::eligible::NodeFacts {
            name: &self.name,
            features: &self.features,
        }
    }
}

impl NodeTopology {
    /// The link between GPUs `a` and `b` (either order).
    pub fn link(&self, a: u32, b: u32) -> Link {
        let key = if a < b { (a, b) } else { (b, a) };
        self.links.get(&key).copied().unwrap_or(Link::System)
    }
}

/// One GPU of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveGpu {
    pub index: u32,
    pub model: String,
    pub mem_mib: u64,
    /// `Some` in MIG mode: only MIG jobs may use it.
    pub mig: Option<MigLayout>,
    /// `Some(why)` when the server found it unhealthy: never placed again (whole, share
    /// or MIG) until it is healthy; a job on it keeps it until it ends or is requeued.
    pub unhealthy: Option<String>,
}

/// A MIG GPU's layout as registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigLayout {
    /// The agent may create and destroy instances.
    pub dynamic: bool,
    pub instances: Vec<MigInstance>,
}

/// One GPU instance that exists on a MIG GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigInstance {
    pub profile: String,
    pub start: u8,
    pub size: u8,
    pub uuid: Option<String>,
}

/// The node resource that stands for a container runtime: a node whose agent runs
/// `--image` jobs offers it (as many as could ever run), a job in an image asks one, so
/// every placement (whole GPUs, gangs, followers, GPU-less jobs) and every wait reason
/// treats "runs images" as it treats any resource the node lacks. Users' resource
/// names (lowercase letters, digits, `_`) can never be this one.
pub const IMAGE_RUNTIME: &str = "image runtime";

/// What a node that runs images offers of [`IMAGE_RUNTIME`]: more than ever run at once.
const IMAGE_SLOTS: u64 = 1 << 40;

impl LiveNode {
    /// Marks the node as one whose agent runs jobs in container images (its
    /// registration names a runtime), or not.
    pub fn set_runs_images(&mut self, yes: bool) {
        if yes {
            self.resources
                .insert(IMAGE_RUNTIME.to_string(), IMAGE_SLOTS);
        } else {
            self.resources.remove(IMAGE_RUNTIME);
        }
    }

    /// Whether its agent runs jobs in container images.
    pub fn runs_images(&self) -> bool {
        self.resources.contains_key(IMAGE_RUNTIME)
    }

    /// Nothing new is placed here: an operator drained it or its agent is unreachable.
    pub fn closed(&self) -> bool {
        self.drained.is_some() || self.unreachable.is_some()
    }

    /// GPUs the whole-GPU scheduler may use: those not in MIG mode.
    pub fn whole_gpus(&self) -> u32 {
        self.gpus.iter().filter(|g| g.mig.is_none()).count() as u32
    }

    /// The CPUs, memory and generic resources it offers in all.
    pub fn total_room(&self) -> crate::room::Amount<'_> {
        crate::room::Amount {
            cpu_milli: u64::from(self.cpus) * 1000,
            mem_mib: self.mem_mib,
            generic: &self.resources,
        }
    }

    /// GPUs whole-GPU jobs may be placed on now: not in MIG mode, healthy, and none
    /// while the node is drained.
    pub fn usable_whole_gpus(&self) -> u32 {
        if self.closed() {
            return 0;
        }
        self.gpus
            .iter()
            .filter(|g| g.mig.is_none() && g.unhealthy.is_none())
            .count() as u32
    }

    /// Why placement skips this node or some of its GPUs, in words the server shows
    /// ("drained (maintenance)", "GPU 1 is unhealthy (Xid 79)"); `None` when it skips
    /// nothing.
    pub fn out_of_service(&self) -> Option<String> {
        if let Some(r) = &self.unreachable {
            return Some(format!("unreachable ({r})"));
        }
        if let Some(r) = &self.drained {
            return Some(format!("drained ({r})"));
        }
        let sick: Vec<String> = self
            .gpus
            .iter()
            .filter_map(|g| {
                Some(format!(
                    "GPU {} is unhealthy ({})",
                    g.index,
                    g.unhealthy.as_ref()?
                ))
            })
            .collect();
        (!sick.is_empty()).then(|| sick.join(", "))
    }

    /// Whether the node's GPUs are of `model` (a prefix, as users write it) or any model
    /// will do.
    pub fn has_model(&self, model: Option<&str>) -> bool {
        crate::resources::model_matches(&self.model, model)
    }
}
