//! Wire types ↔ the core's live cluster types, in one place: the core owns nodes, who
//! holds what and the pass (`gpusched_core::live`); the server speaks JSON.

use gpusched_core::live::{
    LiveGpu, LiveJob, LiveNode, MigAt as CoreMigAt, MigInstance, MigLayout, SliceAsk as CoreAsk,
    SliceAt as CoreAt,
};
use gpusched_core::QueueId;
use gpusched_store::NodeRecord;
use gpusched_wire::{GpuInfo, JobView, MigAt, SliceAsk, SliceAt};

/// A registered node as the core sees it.
pub fn node(record: &NodeRecord) -> LiveNode {
    let r = &record.register;
    LiveNode {
        name: r.node.clone(),
        model: r.gpus.first().map(|g| g.model.clone()).unwrap_or_default(),
        cpus: r.cpus,
        mem_mib: r.mem_mib,
        mps: r.mps,
        gpus: r.gpus.iter().map(gpu).collect(),
        resources: r.resources.clone(),
    }
}

fn gpu(g: &GpuInfo) -> LiveGpu {
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
    }
}

/// A job as the core's live cluster needs it.
pub fn job(v: &JobView, queue: QueueId) -> LiveJob {
    LiveJob {
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
        slice: v.slice.as_ref().map(ask),
    }
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
}
