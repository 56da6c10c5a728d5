//! Whether each node's agent is heard from, and the node lease.
//!
//! One lease, the same on both sides (ARCHITECTURE.md, invariants): the server declares
//! a node's jobs lost only once `node_lease` has passed since the last request it
//! received from the node's agent, or since its own start for a node not heard from in
//! this life; the agent stops its jobs once the same span (less the time a stop takes)
//! has passed since it *sent* the last request the server answered. A request is sent
//! before it is received, and a server starts after every request of its last life, so
//! the agent's jobs are gone before the server can requeue them, and a server restart
//! or outage shorter than the lease kills nothing.
//!
//! Between the heartbeat timeout and the lease a node is unreachable: nothing new is
//! placed there, its jobs keep their GPUs (they may still run).

use std::time::Duration;

use super::{NodeEntry, State};

/// Whether a node's agent is heard from, as placement and the node lease see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// Registered with this server and heard from within the heartbeat timeout.
    Online,
    /// Silent past the heartbeat timeout, or known from the store and not registered
    /// since this server started: nothing new is placed there, its jobs are kept until
    /// the lease ends or its agent registers.
    Unreachable,
    /// Its agent left (it stopped, its jobs stopped first), or the lease ended (its jobs
    /// were lost). Out of the core's cluster until its agent registers again.
    Offline,
}

/// The reason placement shows for an unreachable node.
const UNREACHABLE: &str = "its agent has not been heard from";

impl NodeEntry {
    /// Heard from: the only nodes anything new is placed on.
    pub fn online(&self) -> bool {
        self.liveness == Liveness::Online
    }

    /// In the core's cluster: its jobs hold their GPUs (online or unreachable).
    pub fn present(&self) -> bool {
        self.liveness != Liveness::Offline
    }

    /// Why nothing new goes to it while its agent is silent (`None` when online).
    pub fn unreachable_reason(&self) -> Option<String> {
        (self.liveness == Liveness::Unreachable).then(|| UNREACHABLE.to_string())
    }
}

impl State {
    /// Nodes silent past the heartbeat timeout become unreachable; those silent for the
    /// whole node lease go offline and their jobs are lost and requeued.
    /// `stalled` is how long since the state task last finished a round: if that is a
    /// large part of the timeout, the nodes' polls were waiting on us, so their clocks
    /// restart instead.
    pub fn expire_nodes(&mut self, stalled: Duration) {
        let now = self.now.instant;
        let timeout = self.cfg.heartbeat_timeout;
        let lease = self.cfg.lease();
        if stalled > timeout / 2 {
            tracing::warn!(
                "the state task was busy for {stalled:?}; not expiring nodes this round"
            );
            for (_, n) in self.nodes.iter_mut_unstored() {
                n.last_seen = now;
            }
            return;
        }
        let mut changed = false;
        let mut lost = Vec::new();
        for (name, n) in self.nodes.iter_mut_unstored() {
            let silent = now.duration_since(n.last_seen);
            if n.liveness == Liveness::Online && silent > timeout {
                tracing::warn!(
                    node = %name,
                    "no heartbeat for {timeout:?}: node unreachable, nothing new is placed \
                     there; its jobs are kept until the node lease ({lease:?}) ends"
                );
                n.liveness = Liveness::Unreachable;
                changed = true;
            }
            if n.liveness == Liveness::Unreachable && silent > lease {
                lost.push(name.clone());
            }
        }
        for name in &lost {
            // Still in the core's cluster until `refresh_nodes` below.
            let jobs = self.jobs_on(name);
            if !jobs.is_empty() {
                tracing::warn!(
                    node = %name,
                    jobs = jobs.len(),
                    "no heartbeat for the node lease ({lease:?}): node offline, its jobs requeued"
                );
            }
            if let Some(n) = self.nodes.get_mut_unstored(name) {
                n.liveness = Liveness::Offline;
            }
            for id in jobs {
                let why = format!("no heartbeat from {name} for {}s", lease.as_secs_f64());
                // A gang's part on the silent node is lost; its other parts are stopped
                // and keep their GPUs until they have (the core keeps them, see
                // `LiveCluster::take_lost_parts`), then the gang requeues as one.
                if self.jobs.get(&id).is_some_and(|j| j.view.parts.len() > 1) {
                    let outcome = gpusched_wire::Outcome::Lost { message: why };
                    self.gang_part_ended(id, name, &outcome, self.now.ms);
                } else {
                    self.lose(id, &why);
                }
            }
            changed = true;
        }
        if changed {
            self.refresh_nodes();
        }
    }

    /// The agent on `node` said it is stopping: once it holds no job (it stopped them
    /// and reported their ends) the node goes offline now, instead of taking work
    /// nobody would start until the heartbeat timeout.
    pub fn node_leaving(&mut self, node: &str) {
        if !self.cluster.jobs_on(node).is_empty() {
            return;
        }
        let Some(n) = self.nodes.get_mut_unstored(node) else {
            return;
        };
        if n.liveness != Liveness::Offline {
            tracing::info!(node = %node, "its agent stopped: node offline until it registers again");
            n.liveness = Liveness::Offline;
            self.refresh_nodes();
        }
    }
}
