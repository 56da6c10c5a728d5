//! Giving queues their quota back: when a queue below its guaranteed GPUs has a job
//! that cannot start because other queues borrowed the GPUs, the core's reclaim planner
//! picks the borrowers' jobs to preempt (least work lost, on one node, or one node per
//! part for a gang claimant; a gang victim goes whole); they get the checkpoint signal
//! and a grace period, end `preempted` and are requeued; the claiming job then starts
//! first on those nodes.

use std::collections::BTreeMap;

use gpusched_core::reclaim::{self, Claim, NodeRoom, QuotaQueue, RunningJob};
use gpusched_core::{JobId, NodeId, QueueId};
use gpusched_wire::JobState;

use super::State;

impl State {
    /// With quotas configured, a pass (and a reclaim check) is due on every tick: a
    /// victim's protection can run out without any other event.
    pub fn schedule_if_quotas(&mut self) {
        if self.queues.defs.values().any(|q| q.quota > 0) {
            self.sched_due = true;
        }
    }

    /// One reclaim per round at most, and none while a preemption is under way (the
    /// core's [`reclaim::one_per_round`]): each queue in name order claims for its first
    /// waiting job, unless it has a claim already.
    pub(super) fn reclaim(&mut self, now_ms: u64) {
        let names: Vec<String> = self.queues.defs.keys().cloned().collect();
        let mut queues = BTreeMap::new();
        for name in &names {
            let id = self.queue_id(name);
            let def = &self.queues.defs[name];
            queues.insert(
                id,
                QuotaQueue {
                    quota: def.quota,
                    preemptible: def.preemptible,
                },
            );
        }
        let preempting = self.placed().any(|j| j.view.preempt_requested);
        if !reclaim::round_due(&queues, preempting) {
            return;
        }
        let (online, running, rooms) = self.running_view(now_ms);
        let qid =
            |st: &State, name: &str| st.queue_ids.get(name).copied().unwrap_or(QueueId(u32::MAX));
        let claims = names.iter().filter_map(|name| {
            // One claim per queue at a time.
            if self
                .queue
                .claims()
                .any(|(id, _)| self.jobs.get(&id).is_some_and(|j| &j.view.queue == name))
            {
                return None;
            }
            // The queue's first job in the core's order (not one held by a dependency).
            let claimant = self
                .queue
                .waiting_order()
                .into_iter()
                .filter_map(|id| self.jobs.get(&id))
                .find(|j| j.view.state == JobState::Pending && &j.view.queue == name)?;
            let claimant = &claimant.view;
            // A gang needs a node per part: a split one, as many as its fewest-node shape
            // that some online node's part could hold.
            let most = rooms.iter().map(|r| r.capacity).max().unwrap_or(0);
            let parts = crate::live_map::gang(claimant).map_or(1, |g| {
                g.shapes(claimant.gpus)
                    .into_iter()
                    .find(|&(_, per_node)| per_node <= most)
                    .map_or(1, |(n, _)| n)
            });
            let claim = Claim {
                job: JobId(claimant.id),
                queue: qid(self, name),
                gpus: claimant.gpus,
                nodes: parts,
                model: claimant.gpu_model.clone(),
                priority: claimant.priority,
            };
            Some((name, claim))
        });
        let Some((name, claim, plan)) =
            reclaim::one_per_round(&queues, &running, &rooms, preempting, claims)
        else {
            return;
        };
        let name = name.clone();
        let claimant = claim.job.0;
        let claimed: Vec<String> = plan
            .nodes
            .iter()
            .map(|n| online[n.index()].clone())
            .collect();
        let node = claimed.join(", ");
        if plan.victims.is_empty() {
            // Room already, but the policy's order held the job back (a borrower's
            // big job at the head of a strict queue): its quota lets it go first.
            tracing::info!(job = claimant, queue = %name, %node, "quota job goes first");
            self.queue.claim_nodes(claimant, &claimed);
            self.sched_due = true;
            return;
        }
        for victim in &plan.victims {
            if let Some(j) = self.jobs.get_mut(&victim.0) {
                j.view.preempt_requested = true;
                j.view.reason = format!(
                    "being preempted on {node} to return GPUs to queue `{name}` (job {claimant})"
                );
            }
            let why =
                format!("quota reclaim: GPUs on {node} go back to queue `{name}` (job {claimant})");
            self.note(
                victim.0,
                gpusched_wire::history::JobEventKind::Preempted,
                why,
            );
        }
        // Every part of a gang victim is told, not only the claimed nodes.
        for victim in &plan.victims {
            self.bump_job(victim.0);
        }
        tracing::info!(job = claimant, queue = %name, %node, victims = ?plan.victims, "reclaiming quota");
        self.queue.claim_nodes(claimant, &claimed);
        for n in &claimed {
            self.bump(n);
        }
    }

    /// The online nodes (a node's id is its index here), the starting and running
    /// whole-GPU jobs as possible victims (protected when they started less than
    /// `--min-runtime` ago or are being cancelled; their unsaved work since their last
    /// checkpoint or start), and each node's room: what quota reclaim and priority
    /// preemption (`tiers.rs`) choose from.
    pub(super) fn running_view(
        &self,
        now_ms: u64,
    ) -> (Vec<String>, Vec<RunningJob>, Vec<NodeRoom>) {
        let online: Vec<String> = self
            .nodes
            .iter()
            .filter(|(_, n)| n.online())
            .map(|(k, _)| k.clone())
            .collect();
        let node_id = |name: &str| {
            online
                .iter()
                .position(|n| n == name)
                .map(|i| NodeId(i as u32))
        };
        let qid =
            |st: &State, name: &str| st.queue_ids.get(name).copied().unwrap_or(QueueId(u32::MAX));
        let min_ms = self.cfg.min_runtime.as_millis() as u64;
        let mut running = Vec::new();
        for j in self.placed() {
            let v = &j.view;
            // Slices are not reclaimed: quotas count whole GPUs.
            if v.slice.is_some() {
                continue;
            }
            // Every part of a gang; the one node of any other job.
            let parts: Vec<(NodeId, u32)> = if v.parts.len() >= 2 {
                v.parts
                    .iter()
                    .filter_map(|p| Some((node_id(&p.node)?, p.gpu_indices.len() as u32)))
                    .collect()
            } else {
                v.node
                    .as_deref()
                    .and_then(node_id)
                    .map(|n| vec![(n, v.gpus)])
                    .unwrap_or_default()
            };
            if parts.is_empty() {
                continue;
            }
            let since = v.start_ms.unwrap_or(now_ms);
            let saved = v.last_checkpoint_ms.unwrap_or(since).max(since);
            running.push(RunningJob {
                job: JobId(v.id),
                queue: qid(self, &v.queue),
                parts,
                gpus: v.gpus,
                priority: v.priority,
                unsaved: now_ms.saturating_sub(saved) as f64 / 1000.0,
                protected: v.cancel_requested || now_ms.saturating_sub(since) < min_ms,
            });
        }
        let rooms: Vec<NodeRoom> = online
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let n = &self.nodes[name];
                NodeRoom {
                    node: NodeId(i as u32),
                    free: self.queue.whole_free(name),
                    // A drained node, or one whose GPUs are unhealthy, is not worth
                    // preempting anyone on for GPUs nobody may use.
                    capacity: self.queue.whole_usable(name),
                    model: n
                        .record
                        .register
                        .gpus
                        .first()
                        .map(|g| g.model.clone())
                        .unwrap_or_default(),
                }
            })
            .collect();
        (online, running, rooms)
    }
}
