//! `queues`: each queue's definition, GPUs in use, and running and pending counts.

use gpusched_wire::JobState;

use super::State;

impl State {
    pub fn queue_list(&self) -> gpusched_wire::QueueList {
        let used = self.queue_usage();
        let mut counts: std::collections::BTreeMap<&str, (u32, u32)> = Default::default();
        for j in self.jobs.values() {
            let c = counts.entry(j.view.queue.as_str()).or_default();
            match j.view.state {
                JobState::Pending => c.1 += 1,
                JobState::Starting | JobState::Running => c.0 += 1,
                _ => {}
            }
        }
        let queues = self
            .queues
            .defs
            .iter()
            .map(|(name, d)| {
                let (running, pending) = counts.get(name.as_str()).copied().unwrap_or((0, 0));
                gpusched_wire::QueueView {
                    name: name.clone(),
                    quota: d.quota,
                    max: d.max,
                    weight: d.weight,
                    users: d.users.clone(),
                    groups: d.groups.clone(),
                    default_priority: d.default_priority,
                    max_priority: d.max_priority,
                    priority_tiers: d.priority_tiers.clone(),
                    preempt_lower_priority: d.preempt_lower_priority,
                    used_gpus: used.get(name.as_str()).copied().unwrap_or(0),
                    running,
                    pending,
                }
            })
            .collect();
        gpusched_wire::QueueList { queues }
    }
}
