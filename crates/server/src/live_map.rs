//! Wire types ↔ the core's live cluster types, in one place: the core owns nodes, who
//! holds what and the pass (`gpusched_core::live`); the server speaks JSON.

use gpusched_core::gang::{Gang, GangShape};
use gpusched_core::live::{
    Link, LiveGpu, LiveJob, LiveNode, MigAt as CoreMigAt, MigInstance, MigLayout, NodePart,
    NodeTopology, SliceAsk as CoreAsk, SliceAt as CoreAt,
};
use gpusched_core::QueueId;
use gpusched_store::NodeRecord;
use gpusched_wire::{
    GpuHealth, GpuInfo, JobView, LinkKind, MigAt, NodeLocation, SliceAsk, SliceAt,
};

/// A registered node as the core sees it, where it sits taken from `topology` (the
/// server's `--topology` file) before its agent's `--switch`/`--rack`.
pub fn node(record: &NodeRecord, topology: &Topology) -> LiveNode {
    let r = &record.register;
    let at = topology.get(&r.node).map_or(&r.location, |p| &p.location);
    let mut node = LiveNode {
        name: r.node.clone(),
        model: r.gpus.first().map(|g| g.model.clone()).unwrap_or_default(),
        cpus: r.cpus,
        mem_mib: r.mem_mib,
        mps: r.mps,
        gpus: r
            .gpus
            .iter()
            .map(|g| gpu(g, record.gpu_health.get(&g.index)))
            .collect(),
        resources: r.resources.clone(),
        topology: NodeTopology {
            switch: at.switch.clone().or_else(|| r.location.switch.clone()),
            rack: at.rack.clone().or_else(|| r.location.rack.clone()),
            links: r
                .gpu_links
                .iter()
                .filter(|l| l.a != l.b)
                .map(|l| ((l.a.min(l.b), l.a.max(l.b)), link(l.kind)))
                .collect(),
        },
        drained: record.drain.as_ref().map(|d| d.reason.clone()),
        // Whether its agent is heard from is the server's to say (`Liveness`).
        unreachable: None,
        // What its agent can do is known from its registration (`NodeEntry::follows`).
        follows: false,
        features: features(r, topology),
    };
    // An agent of an older protocol says nothing of images, and runs none.
    node.set_runs_images(
        r.containment
            .as_ref()
            .is_some_and(|c| c.image_runtime.is_some()),
    );
    node
}

/// Node name → what the server's topology file says of it.
pub type Topology = std::collections::BTreeMap<String, NodePlace>;

/// One node's table in the topology file: where it sits and the features the operator
/// gives it (beside those its agent declares with `--feature`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePlace {
    pub location: NodeLocation,
    pub features: Vec<String>,
}

/// Node `r`'s features as placement, partitions, reservations and `nodes` see them: its
/// agent's and the topology file's, sorted, each once. The one place they are joined.
pub fn features(r: &gpusched_wire::Register, topology: &Topology) -> Vec<String> {
    let mut all = r.features.clone();
    if let Some(p) = topology.get(&r.node) {
        all.extend(p.features.iter().cloned());
    }
    all.sort();
    all.dedup();
    all
}

pub fn link(k: LinkKind) -> Link {
    match k {
        LinkKind::NvSwitch => Link::NvSwitch,
        LinkKind::NvLink => Link::NvLink,
        LinkKind::PcieSwitch => Link::PcieSwitch,
        LinkKind::PcieMulti => Link::PcieMulti,
        LinkKind::HostBridge => Link::HostBridge,
        LinkKind::Numa => Link::Numa,
        LinkKind::System => Link::System,
    }
}

/// A GPU as the core sees it; `health` is the server's verdict on it (absent: healthy).
fn gpu(g: &GpuInfo, health: Option<&GpuHealth>) -> LiveGpu {
    LiveGpu {
        index: g.index,
        model: g.model.clone(),
        mem_mib: g.mem_mib,
        mig: g.mig.as_ref().map(|m| MigLayout {
            dynamic: m.dynamic,
            instances: m
                .instances
                .iter()
                .map(|i| MigInstance {
                    profile: i.profile.clone(),
                    start: i.start,
                    size: i.size,
                    uuid: i.uuid.clone(),
                })
                .collect(),
        }),
        unhealthy: match health {
            Some(GpuHealth::Unhealthy { reason, .. }) => Some(reason.clone()),
            _ => None,
        },
    }
}

/// The node resource that stands for "its agent serves replicas" (agent protocol 5: a
/// port in `$PORT`, probes): a node of such an agent offers it without limit and a
/// replica asks one, so no replica goes to an older agent, which would refuse its launch.
/// No user's resource name can be this one (it has spaces).
pub const SERVES: &str = "service replicas";

/// What a serving node offers of [`SERVES`]: more than ever run at once.
const SERVE_SLOTS: u64 = 1 << 40;

/// Marks a node as one whose agent serves replicas, or not.
pub fn offer_serving(node: &mut gpusched_core::live::LiveNode, yes: bool) {
    if yes {
        node.resources.insert(SERVES.to_string(), SERVE_SLOTS);
    } else {
        node.resources.remove(SERVES);
    }
}

/// The node resource that stands for "its agent holds interactive allocations"
/// ([`gpusched_wire::agent::HOLD_PROTOCOL`]), offered and asked as [`SERVES`] is.
pub const HOLDS: &str = "interactive allocations";

/// Marks a node as one whose agent holds interactive allocations, or not.
pub fn offer_holding(node: &mut gpusched_core::live::LiveNode, yes: bool) {
    if yes {
        node.resources.insert(HOLDS.to_string(), SERVE_SLOTS);
    } else {
        node.resources.remove(HOLDS);
    }
}

/// A job as the core's live cluster needs it.
pub fn job(v: &JobView, queue: QueueId) -> LiveJob {
    let mut job = LiveJob {
        id: v.id,
        user: v.user.clone(),
        queue,
        priority: v.priority,
        submit: v.submit_ms as f64 / 1000.0,
        walltime: v.walltime_s.map(|w| w as f64),
        gpus: v.gpus,
        model: v.gpu_model.clone(),
        cpu_milli: v.cpu_milli,
        mem_mib: v.mem_mib,
        resources: v.resources.clone(),
        slice: v.slice.as_deref().map(ask),
        gang: gang(v),
        group: None,
        serving: false,
        rules: None,
        prefer: Vec::new(),
        deadline: v.deadline.as_ref().map(|d| d.at_ms as f64 / 1000.0),
        elastic: crate::state::elastic::range(v),
    };
    job.set_in_image(v.image.is_some());
    if v.service.is_some() {
        job.resources.insert(SERVES.to_string(), 1);
        job.serving = true;
    }
    if v.interactive {
        job.resources.insert(HOLDS.to_string(), 1);
    }
    job
}

/// A job's gang shape: `split` lets the scheduler choose the nodes (even after a run
/// recorded its last shape), `nodes >= 2` is a fixed N x G gang, anything else runs on
/// one node exactly as before gangs existed.
pub fn gang(v: &JobView) -> Option<Gang> {
    let shape = if v.split {
        GangShape::Split {
            tasks_per_node: v.tasks_per_node,
        }
    } else if v.nodes >= 2 {
        let per_node = if v.gpus_per_node > 0 {
            v.gpus_per_node
        } else {
            v.gpus / v.nodes
        };
        GangShape::Nodes {
            nodes: v.nodes,
            per_node,
        }
    } else {
        return None;
    };
    Some(Gang {
        shape,
        mixed_models: v.mixed_models,
    })
}

/// The parts of a job's current attempt in rank order, as the core restores them
/// ([`gpusched_core::live::LiveCluster::restore_parts`]).
pub fn parts(v: &JobView) -> Vec<NodePart> {
    let mut parts: Vec<&gpusched_wire::JobPart> = v.parts.iter().collect();
    parts.sort_by_key(|p| p.rank);
    parts
        .into_iter()
        .map(|p| NodePart {
            node: p.node.clone(),
            gpus: p.gpu_indices.clone(),
            slice: None,
        })
        .collect()
}

pub fn ask(a: &SliceAsk) -> CoreAsk {
    match a {
        SliceAsk::Share { milli } => CoreAsk::Share { milli: *milli },
        SliceAsk::Memory { mib } => CoreAsk::Memory { mib: *mib },
        SliceAsk::Mig { profile } => CoreAsk::Mig {
            profile: profile.clone(),
        },
    }
}

pub fn slice_to_core(at: &SliceAt) -> CoreAt {
    CoreAt {
        gpu: at.gpu,
        milli: at.milli,
        mem_mib: at.mem_mib,
        mig: at.mig.as_ref().map(|m| CoreMigAt {
            profile: m.profile.clone(),
            start: m.start,
            size: m.size,
            create: m.create,
            destroy: m.destroy.clone(),
            uuid: m.uuid.clone(),
        }),
    }
}

pub fn slice_to_wire(at: CoreAt) -> SliceAt {
    SliceAt {
        gpu: at.gpu,
        milli: at.milli,
        mem_mib: at.mem_mib,
        mig: at.mig.map(|m| MigAt {
            profile: m.profile,
            start: m.start,
            size: m.size,
            create: m.create,
            destroy: m.destroy,
            uuid: m.uuid,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_survives_the_round_trip() {
        let at = SliceAt {
            gpu: 3,
            milli: 375,
            mem_mib: 30720,
            mig: Some(MigAt {
                profile: "3g.40gb".into(),
                start: 4,
                size: 4,
                create: true,
                destroy: vec![0, 2],
                uuid: Some("MIG-1".into()),
            }),
        };
        assert_eq!(slice_to_wire(slice_to_core(&at)), at);
    }

    #[test]
    fn a_node_sits_where_the_topology_file_says_and_keeps_its_links() {
        let reg: gpusched_wire::Register = serde_json::from_value(serde_json::json!({
            "node": "g1", "agent_version": "x", "cpus": 8, "mem_mib": 1024,
            "gpus": [], "log_url": null, "running": [], "events": [],
            "location": {"switch": "agent-s", "rack": "agent-r"},
            "gpu_links": [{"a": 1, "b": 0, "kind": "pcie_switch"}]
        }))
        .unwrap_or_else(|e| panic!("a register: {e}"));
        let record = NodeRecord::new(reg);
        let n = node(&record, &Topology::new());
        assert_eq!(n.topology.switch.as_deref(), Some("agent-s"));
        assert_eq!(n.topology.link(0, 1), Link::PcieSwitch);
        assert_eq!(
            n.topology.link(0, 2),
            Link::System,
            "unreported: across sockets"
        );
        let file = Topology::from([(
            "g1".to_string(),
            NodePlace {
                location: NodeLocation {
                    switch: Some("file-s".into()),
                    rack: None,
                },
                features: vec!["ib".into(), "a100".into()],
            },
        )]);
        let n = node(&record, &file);
        assert_eq!(n.features, ["a100", "ib"], "the file's features");
        assert_eq!(n.topology.switch.as_deref(), Some("file-s"));
        assert_eq!(
            n.topology.rack.as_deref(),
            Some("agent-r"),
            "the agent's where the file is silent"
        );
    }

    #[test]
    fn a_drain_and_unhealthy_gpus_reach_the_core() {
        let reg: gpusched_wire::Register = serde_json::from_value(serde_json::json!({
            "node": "g1", "agent_version": "x", "cpus": 8, "mem_mib": 1024,
            "gpus": [
                {"index": 0, "uuid": null, "model": "A100", "mem_mib": 1, "source": "fake"},
                {"index": 1, "uuid": null, "model": "A100", "mem_mib": 1, "source": "fake"}
            ],
            "log_url": null, "running": [], "events": []
        }))
        .unwrap_or_else(|e| panic!("a register: {e}"));
        let mut record = NodeRecord::new(reg);
        let n = node(&record, &Topology::new());
        assert_eq!((n.drained.as_deref(), n.usable_whole_gpus()), (None, 2));
        record.drain = Some(gpusched_wire::Drain {
            reason: "psu".into(),
            since_ms: 1,
            by: "root".into(),
            now: false,
        });
        record.gpu_health.insert(
            1,
            GpuHealth::Unhealthy {
                reason: "Xid 79".into(),
                since_ms: 2,
            },
        );
        let n = node(&record, &Topology::new());
        assert_eq!(n.drained.as_deref(), Some("psu"));
        assert_eq!(n.gpus[0].unhealthy, None);
        assert_eq!(n.gpus[1].unhealthy.as_deref(), Some("Xid 79"));
        // The stored row carries both, and a row written before them still reads.
        let row = serde_json::to_value(&record).unwrap_or_default();
        assert_eq!(row["drain"]["reason"], "psu");
        assert_eq!(row["gpu_health"]["1"]["state"], "unhealthy");
        let mut old = row.clone();
        if let Some(m) = old.as_object_mut() {
            m.remove("drain");
            m.remove("gpu_health");
        }
        let back: NodeRecord =
            serde_json::from_value(old).unwrap_or_else(|e| panic!("an old row: {e}"));
        assert_eq!((back.drain, back.gpu_health.len()), (None, 0));
    }

    fn view(extra: serde_json::Value) -> JobView {
        let mut v = serde_json::json!({
            "id": 7, "user": "ann", "queue": "batch", "gpus": 8, "state": "pending",
            "submit_ms": 0, "command": ["true"], "priority": 0, "reason": "",
            "attempt": 1, "max_retries": 0, "name": "", "cwd": "/", "gpu_indices": [],
            "cancel_requested": false
        });
        if let (Some(m), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            m.extend(e.clone());
        }
        serde_json::from_value(v).unwrap_or_else(|e| panic!("a view: {e}"))
    }

    #[test]
    fn gang_shapes_map_from_the_view() {
        assert_eq!(gang(&view(serde_json::json!({}))), None, "a plain job");
        assert_eq!(
            gang(&view(serde_json::json!({"nodes": 2, "gpus_per_node": 4}))),
            Some(Gang {
                shape: GangShape::Nodes {
                    nodes: 2,
                    per_node: 4
                },
                mixed_models: false
            })
        );
        // A split job keeps splitting after a run recorded its shape.
        let v = view(
            serde_json::json!({"split": true, "nodes": 2, "gpus_per_node": 4,
            "tasks_per_node": 2, "mixed_models": true}),
        );
        assert_eq!(
            gang(&v),
            Some(Gang {
                shape: GangShape::Split {
                    tasks_per_node: Some(2)
                },
                mixed_models: true
            })
        );
        let v = view(
            serde_json::json!({"nodes": 2, "gpus_per_node": 4, "parts": [
                {"rank": 1, "node": "b", "gpu_indices": [0, 1, 2, 3], "state": "running"},
                {"rank": 0, "node": "a", "gpu_indices": [4, 5, 6, 7], "state": "running"}
            ]}),
        );
        let p = parts(&v);
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].node.as_str(), p[0].gpus.as_slice()),
            ("a", &[4, 5, 6, 7][..])
        );
        assert_eq!(p[1].node, "b");
    }
}
