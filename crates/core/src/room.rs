//! CPUs, memory and generic counted resources (`fpga = 2`) free on each node, for a
//! scheduler that reserves them ([`crate::Scheduler::reserve_node_resources`]).
//!
//! Whole GPUs stay in the [`crate::freemap::FreeMap`]; this is the rest of a node. A job
//! holds what it asked for on its node from its start to its end. A job that asks for
//! none of it (no CPUs, no memory, no generic resource) takes nothing here and is placed
//! by the free map's queries alone, as before reservation existed.

use std::collections::BTreeMap;

use crate::cluster::Cluster;
use crate::ids::NodeId;
use crate::job::JobSpec;

/// What one node has free (or in all).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeRoom {
    pub cpu_milli: u64,
    pub mem_mib: u64,
    pub generic: BTreeMap<String, u64>,
}

/// CPUs, memory and generic resources, borrowed: what a node has (free, or in all) or
/// what a job asks. One rule, [`Amount::holds`], says whether the one holds the other,
/// for the scheduler's free room, the core's wait reasons and the server's submit checks.
#[derive(Clone, Copy, Debug)]
pub struct Amount<'a> {
    pub cpu_milli: u64,
    pub mem_mib: u64,
    pub generic: &'a BTreeMap<String, u64>,
}

impl Amount<'_> {
    /// Whether this much holds all of `ask` together.
    pub fn holds(&self, ask: Amount<'_>) -> bool {
        self.cpu_milli >= ask.cpu_milli
            && self.mem_mib >= ask.mem_mib
            && ask
                .generic
                .iter()
                .all(|(k, v)| self.generic.get(k).copied().unwrap_or(0) >= *v)
    }
}

impl NodeRoom {
    pub fn amount(&self) -> Amount<'_> {
        Amount {
            cpu_milli: self.cpu_milli,
            mem_mib: self.mem_mib,
            generic: &self.generic,
        }
    }
}

/// What a job asks of its node besides GPUs.
pub fn asked(spec: &JobSpec) -> Amount<'_> {
    Amount {
        cpu_milli: spec.cpu_milli,
        mem_mib: spec.mem_mib,
        generic: &spec.generic,
    }
}

/// One thing a job lacks on a node.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lack {
    Cpus { asked_milli: u64, free_milli: u64 },
    Memory { asked_mib: u64, free_mib: u64 },
    Generic { name: String, asked: u64, free: u64 },
}

/// Why a job waits on room rather than on GPUs: a node that has its GPUs free but not
/// the rest, and what it lacks there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoomWait {
    /// The node that lacks the least (the first such node on a tie).
    pub node: NodeId,
    pub lacks: Vec<Lack>,
    /// How many nodes have the job's GPUs free but lack its CPUs, memory or resources.
    pub nodes: usize,
}

/// Free room per node.
#[derive(Clone, Debug, Default)]
pub struct Room {
    free: Vec<NodeRoom>,
    /// Nodes closed to new placements (drained): what runs there keeps its room, but a
    /// GPU-less job, which no held GPU keeps away, is not placed there.
    closed: std::collections::BTreeSet<NodeId>,
}

/// Whether `spec` asks for anything this module reserves.
pub fn asks(spec: &JobSpec) -> bool {
    spec.cpu_milli > 0 || spec.mem_mib > 0 || !spec.generic.is_empty()
}

impl Room {
    /// Every node idle.
    pub fn new(cluster: &Cluster) -> Self {
        Room {
            free: cluster
                .nodes
                .iter()
                .map(|n| NodeRoom {
                    cpu_milli: n.cpu_milli,
                    mem_mib: n.mem_mib,
                    generic: n.generic.clone(),
                })
                .collect(),
            closed: Default::default(),
        }
    }

    /// Closes `node` to new placements, or opens it again.
    pub fn set_closed(&mut self, node: NodeId, closed: bool) {
        if closed {
            self.closed.insert(node);
        } else {
            self.closed.remove(&node);
        }
    }

    /// Whether new jobs may be placed on `node` (it is not closed).
    pub fn open(&self, node: NodeId) -> bool {
        !self.closed.contains(&node)
    }

    pub fn free(&self, node: NodeId) -> Option<&NodeRoom> {
        self.free.get(node.index())
    }

    /// What `spec` lacks on `node` (empty: it fits).
    pub fn lacks(&self, node: NodeId, spec: &JobSpec) -> Vec<Lack> {
        let Some(f) = self.free.get(node.index()) else {
            return vec![Lack::Cpus {
                asked_milli: spec.cpu_milli,
                free_milli: 0,
            }];
        };
        let mut out = Vec::new();
        if f.cpu_milli < spec.cpu_milli {
            out.push(Lack::Cpus {
                asked_milli: spec.cpu_milli,
                free_milli: f.cpu_milli,
            });
        }
        if f.mem_mib < spec.mem_mib {
            out.push(Lack::Memory {
                asked_mib: spec.mem_mib,
                free_mib: f.mem_mib,
            });
        }
        for (name, &asked) in &spec.generic {
            let free = f.generic.get(name).copied().unwrap_or(0);
            if free < asked {
                out.push(Lack::Generic {
                    name: name.clone(),
                    asked,
                    free,
                });
            }
        }
        out
    }

    /// Whether `node` has room for `spec` now.
    pub fn fits(&self, node: NodeId, spec: &JobSpec) -> bool {
        self.free
            .get(node.index())
            .is_some_and(|f| f.amount().holds(asked(spec)))
    }

    /// Takes what `spec` asks on `node`; the caller checked [`Room::fits`].
    pub fn take(&mut self, node: NodeId, spec: &JobSpec) {
        let Some(f) = self.free.get_mut(node.index()) else {
            return;
        };
        f.cpu_milli = f.cpu_milli.saturating_sub(spec.cpu_milli);
        f.mem_mib = f.mem_mib.saturating_sub(spec.mem_mib);
        for (k, v) in &spec.generic {
            if let Some(have) = f.generic.get_mut(k) {
                *have = have.saturating_sub(*v);
            }
        }
    }

    /// Gives back what `spec` held on `node`.
    pub fn give(&mut self, node: NodeId, spec: &JobSpec) {
        let Some(f) = self.free.get_mut(node.index()) else {
            return;
        };
        f.cpu_milli += spec.cpu_milli;
        f.mem_mib += spec.mem_mib;
        for (k, v) in &spec.generic {
            *f.generic.entry(k.clone()).or_insert(0) += v;
        }
    }
}

#[cfg(test)]
#[path = "room_tests.rs"]
mod tests;
