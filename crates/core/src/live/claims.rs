//! Jobs that reclaimed their queue's quota (the server's reclaim preempted borrowers on
//! one node for them; for a gang, on one node per part): each starts first there as soon
//! as every claimed node has room, and until then the claimed nodes' free GPUs (up to
//! what the job needs there) are held out of the pass so nobody else takes them.

use super::cluster::{LiveCluster, LivePlacement, NodePart};
use crate::{Placement, Seconds};

impl LiveCluster {
    /// `job` reclaimed GPUs on `node`: it goes first there.
    pub fn claim(&mut self, job: u64, node: &str) {
        self.claim_nodes(job, &[node.to_string()]);
    }

    /// `job` (a gang) reclaimed GPUs on `nodes`, one per part: it goes first there.
    pub fn claim_nodes(&mut self, job: u64, nodes: &[String]) {
        if !nodes.is_empty() {
            self.claims.insert(job, nodes.to_vec());
        }
    }

    /// The claims still open: job → its first node.
    pub fn claims(&self) -> impl Iterator<Item = (u64, &str)> {
        self.claims.iter().map(|(&j, n)| (j, n[0].as_str()))
    }

    /// The (first) node `job` reclaimed GPUs on, while it waits there.
    pub fn claim_of(&self, job: u64) -> Option<&str> {
        self.claims.get(&job).map(|n| n[0].as_str())
    }

    /// Starts the claims whose nodes have room now and holds the free GPUs of the others
    /// (lift the holds after the pass). A claim ends when its job started, left the
    /// queue, or a node left or can no longer hold its part.
    pub(super) fn serve_claims(&mut self, now: Seconds) -> (Vec<LivePlacement>, Vec<Placement>) {
        let claims = std::mem::take(&mut self.claims);
        let mut starts = Vec::new();
        let mut holds = Vec::new();
        for (id, nodes) in claims {
            let Some(i) = self.find(id) else { continue };
            let spec = &self.jobs[i].spec;
            let per_node = spec.gpus / nodes.len() as u32;
            if self.jobs[i].running
                || !spec.gpus.is_multiple_of(nodes.len() as u32)
                || nodes.iter().any(|n| self.whole_capacity(n) < per_node)
            {
                continue;
            }
            if nodes.iter().all(|n| self.whole_free(n) >= per_node) {
                match self.start_on_nodes(id, &nodes, now) {
                    Some(p) => starts.push(p),
                    None => {
                        self.claims.insert(id, nodes);
                    }
                }
                continue;
            }
            for n in &nodes {
                let free = self.whole_free(n).min(per_node);
                if free > 0 {
                    holds.extend(self.hold(n, free));
                }
            }
            self.claims.insert(id, nodes);
        }
        (starts, holds)
    }

    /// Starts a waiting job outside a pass on `nodes` (in rank order), `gpus / nodes`
    /// GPUs each, picked on the book; `None`, and nothing changes, when they lack them.
    pub fn start_on_nodes(
        &mut self,
        id: u64,
        nodes: &[String],
        now: Seconds,
    ) -> Option<LivePlacement> {
        let i = self.find(id)?;
        let per_node = self.jobs[i].spec.gpus / nodes.len().max(1) as u32;
        let mut parts = Vec::with_capacity(nodes.len());
        for n in nodes {
            let gpus = self.pick_free(n, per_node)?;
            parts.push(NodePart {
                node: n.clone(),
                gpus,
                slice: None,
            });
        }
        self.restore_parts(id, &parts, now)
            .then_some(LivePlacement { job: id, parts })
    }
}
