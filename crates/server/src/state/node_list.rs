//! `nodes`: every node with its GPUs, shares and MIG instances and who holds them.

use gpusched_core::live::GpuSlice;
use gpusched_wire::{GpuView, NodeList, NodeState, NodeView, SliceView};

use super::{State, Who};

impl State {
    /// The nodes; under `--private-jobs` GPUs held by jobs hidden from `who` show an
    /// anonymous holder instead of the job.
    pub fn node_list(&self, who: &Who) -> NodeList {
        let now = self.now.instant;
        let nodes = self
            .nodes
            .values()
            .map(|n| {
                (
                    n,
                    crate::live_map::features(&n.record.register, &self.cfg.topology),
                )
            })
            .map(|(n, features)| NodeView {
                name: n.record.register.node.clone(),
                state: match n.liveness {
                    super::Liveness::Online => NodeState::Online,
                    super::Liveness::Unreachable => NodeState::Unreachable,
                    super::Liveness::Offline => NodeState::Offline,
                },
                gpus: n
                    .record
                    .register
                    .gpus
                    .iter()
                    .map(|g| {
                        let held = self.cluster.gpu_occupancy(&n.record.register.node, g.index);
                        // An unreachable or offline node's whole GPUs show no holder.
                        let whole = held.whole.filter(|_| n.present());
                        GpuView {
                            info: g.clone(),
                            job: whole.and_then(|j| self.holder_id(j, who)),
                            user: whole.and_then(|j| self.holder_name(j, who)),
                            slices: self.slice_views(held.slices, who),
                        }
                    })
                    .collect(),
                cpus: n.record.register.cpus,
                mem_mib: n.record.register.mem_mib,
                resources: n.record.register.resources.clone(),
                partitions: self
                    .queues
                    .partitions
                    .of_node(&n.record.register.node, &features),
                features,
                // Offline nodes hold nothing; online ones what the core has left.
                free_cpu_milli: self
                    .cluster
                    .room(&n.record.register.node)
                    .map_or(0, |r| r.cpu_milli),
                free_mem_mib: self
                    .cluster
                    .room(&n.record.register.node)
                    .map_or(0, |r| r.mem_mib),
                free_resources: self
                    .cluster
                    .room(&n.record.register.node)
                    .map(|r| r.generic.clone())
                    .unwrap_or_default(),
                mps: n.record.register.mps,
                addr: n.record.register.advertise_addr.clone(),
                // The server's topology file over what the agent said, as placement sees it.
                location: self
                    .cfg
                    .topology
                    .get(&n.record.register.node)
                    .map_or(&n.record.register.location, |p| &p.location)
                    .clone(),
                gpu_links: n.record.register.gpu_links.clone(),
                drain: n.record.drain.clone(),
                gpu_health: n.record.gpu_health.clone(),
                telemetry: n.telemetry.clone(),
                last_seen_ms_ago: now.duration_since(n.last_seen).as_millis() as u64,
                agent_version: n.record.register.agent_version.clone(),
                containment: Some(n.record.register.containment.clone().unwrap_or_else(|| {
                    gpusched_wire::contain::Containment::accounting_only(
                        "its agent is older than agent protocol 4 and enforces nothing; \
                         upgrade it to contain jobs",
                    )
                })),
            })
            .collect();
        NodeList { nodes }
    }

    /// The shares and MIG instances of one GPU, with who holds them.
    fn slice_views(&self, slices: Vec<GpuSlice>, who: &Who) -> Vec<SliceView> {
        let user = |job: Option<u64>| job.and_then(|j| self.holder_name(j, who));
        let id = |job: Option<u64>| job.and_then(|j| self.holder_id(j, who));
        slices
            .into_iter()
            .map(|s| match s.mig {
                None => SliceView {
                    kind: "share".into(),
                    profile: None,
                    start: None,
                    uuid: None,
                    milli: s.milli,
                    mem_mib: s.mem_mib,
                    job: id(s.job),
                    user: user(s.job)
                        .or_else(|| (!self.cfg.private_jobs).then_some(s.user).flatten()),
                },
                Some(m) => SliceView {
                    kind: "mig".into(),
                    profile: Some(m.profile),
                    start: Some(m.start),
                    uuid: m.uuid,
                    milli: s.milli,
                    mem_mib: s.mem_mib,
                    job: id(s.job),
                    user: user(s.job),
                },
            })
            .collect()
    }
}
