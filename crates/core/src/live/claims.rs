//! Jobs that reclaimed their queue's quota (the server's reclaim preempted borrowers on
//! one node for them): each starts first on that node as soon as it has room, and until
//! then the node's free GPUs are held out of the pass so nobody else takes them.

use super::cluster::{LiveCluster, LivePlacement};
use crate::{Placement, Seconds};

impl LiveCluster {
    /// `job` reclaimed GPUs on `node`: it goes first there.
    pub fn claim(&mut self, job: u64, node: &str) {
        self.claims.insert(job, node.to_string());
    }

    /// The claims still open: job → node.
    pub fn claims(&self) -> impl Iterator<Item = (u64, &str)> {
        self.claims.iter().map(|(&j, n)| (j, n.as_str()))
    }

    /// The node `job` reclaimed GPUs on, while it waits there.
    pub fn claim_of(&self, job: u64) -> Option<&str> {
        self.claims.get(&job).map(String::as_str)
    }

    /// Starts the claims whose node has room now and holds the free GPUs of the others
    /// (lift the holds after the pass). A claim ends when its job started, left the
    /// queue, or its node left or can no longer hold it.
    pub(super) fn serve_claims(&mut self, now: Seconds) -> (Vec<LivePlacement>, Vec<Placement>) {
        let claims = std::mem::take(&mut self.claims);
        let mut starts = Vec::new();
        let mut holds = Vec::new();
        for (id, node) in claims {
            let Some(i) = self.find(id) else { continue };
            let gpus = self.jobs[i].spec.gpus;
            if self.jobs[i].running || self.whole_capacity(&node) < gpus {
                continue;
            }
            let free = self.whole_free(&node);
            if free >= gpus {
                match self.start_on(id, &node, now) {
                    Some(p) => starts.push(p),
                    None => {
                        self.claims.insert(id, node);
                    }
                }
                continue;
            }
            if free > 0 {
                holds.extend(self.hold(&node, free));
            }
            self.claims.insert(id, node);
        }
        (starts, holds)
    }
}
