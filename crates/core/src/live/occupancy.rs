//! What the live cluster answers about its occupancy, so that the server never reads the
//! book's fields: who holds a GPU (energy is charged to them, an unhealthy GPU's jobs are
//! requeued), what a GPU is cut into and who holds each piece (the node list), and how
//! many tasks of one shape the online nodes could start now (an array's offer before a
//! pass).

use std::collections::BTreeSet;

use super::book::Hold;
use super::cluster::LiveCluster;
use crate::resources::mig_compute_milli;

/// One GPU as the node list shows it ([`LiveCluster::gpu_occupancy`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuOccupancy {
    /// The job holding it whole, if one does.
    pub whole: Option<u64>,
    /// Its shares in the order they were placed, then its MIG instances (held or
    /// free) in slice order.
    pub slices: Vec<GpuSlice>,
}

/// A share of a GPU or one of its MIG instances.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuSlice {
    /// The job holding it; `None` for a free MIG instance (a share is always held).
    pub job: Option<u64>,
    /// The Unix user a share was placed for; `None` for a MIG instance.
    pub user: Option<String>,
    /// Thousandths of the GPU's compute: a share's own, a MIG instance's profile's.
    pub milli: u32,
    /// GPU memory: a share's own, a MIG instance's eighths of the GPU's.
    pub mem_mib: u64,
    /// `Some` for a MIG instance.
    pub mig: Option<MigSlice>,
}

/// Where a MIG instance sits on its GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigSlice {
    pub profile: String,
    pub start: u8,
    pub size: u8,
    /// `MIG-…` UUID, once the agent has reported it.
    pub uuid: Option<String>,
}

/// Tasks counted per online node when the shape holds no whole GPU (a share, a MIG
/// slice or CPU only), where free capacity is not one number: still bounded by the
/// cluster's size.
pub const PER_NODE_WITHOUT_GPUS: u64 = 8;

/// The shape of one task, as [`LiveCluster::start_slots`] counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskShape {
    /// `per_node` whole GPUs on each of `nodes` nodes (a split gang, whose layout is
    /// chosen at placement, is counted as one node's worth: all its GPUs on one node).
    Whole { per_node: u32, nodes: u32 },
    /// No whole GPU: a share, a MIG instance, or CPUs only.
    NoWholeGpu,
}

impl LiveCluster {
    /// The jobs holding GPU `index` of `node` and the thousandths of its compute each
    /// holds: 1000 held whole, a share's own, a MIG instance's as its placement says
    /// (`SliceAt::milli`); in [`super::NodeSlices::holders`]' order.
    pub fn gpu_holders(&self, node: &str, index: u32) -> Vec<(u64, u32)> {
        let Some(book) = self.book.get(node) else {
            return Vec::new();
        };
        book.holders(index)
            .into_iter()
            .filter_map(|(job, hold)| match hold {
                Hold::Whole => Some((job, 1000)),
                Hold::Share { milli } => Some((job, milli)),
                Hold::Mig => {
                    let (_, at) = self.slice_jobs[self.find_slice(job)?].at.as_ref()?;
                    Some((job, at.milli))
                }
            })
            .collect()
    }

    /// GPU `index` of `node`: the job holding it whole, and its shares and MIG
    /// instances with who holds them (nothing for an unknown node or GPU).
    pub fn gpu_occupancy(&self, node: &str, index: u32) -> GpuOccupancy {
        let Some(book) = self.book.get(node) else {
            return GpuOccupancy::default();
        };
        let whole = book.holder(index);
        let Some(g) = book.gpus.iter().find(|g| g.index == index) else {
            return GpuOccupancy {
                whole,
                slices: Vec::new(),
            };
        };
        let mut slices: Vec<GpuSlice> = g
            .shares
            .iter()
            .map(|s| GpuSlice {
                job: Some(s.job),
                user: Some(s.user.clone()),
                milli: s.milli,
                mem_mib: s.mem_mib,
                mig: None,
            })
            .collect();
        if let Some(mig) = &g.mig {
            slices.extend(mig.slots.iter().map(|s| GpuSlice {
                job: s.holder,
                user: None,
                milli: mig_compute_milli(&s.profile),
                mem_mib: g.mem_mib * u64::from(s.size) / 8,
                mig: Some(MigSlice {
                    profile: s.profile.clone(),
                    start: s.start,
                    size: s.size,
                    uuid: s.uuid.clone(),
                }),
            }));
        }
        GpuOccupancy { whole, slices }
    }

    /// The jobs holding GPU `index` of `node`: whole, a share or a MIG instance.
    pub fn gpu_jobs(&self, node: &str, index: u32) -> BTreeSet<u64> {
        self.book.get(node).map_or_else(BTreeSet::new, |b| {
            b.holders(index).into_iter().map(|(job, _)| job).collect()
        })
    }

    /// How many tasks of `shape` the online nodes (those not unreachable) could start
    /// now: for whole GPUs, the parts of `per_node` free GPUs over the nodes, divided by
    /// the nodes a task takes; otherwise [`PER_NODE_WITHOUT_GPUS`] per online node.
    pub fn start_slots(&self, shape: TaskShape) -> u64 {
        let online = self.nodes.iter().filter(|n| n.unreachable.is_none());
        match shape {
            TaskShape::NoWholeGpu => online.count() as u64 * PER_NODE_WITHOUT_GPUS,
            TaskShape::Whole { per_node, nodes } => {
                let parts: u64 = online
                    .map(|n| u64::from(self.whole_free(&n.name) / per_node.max(1)))
                    .sum();
                parts / u64::from(nodes.max(1))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::book::tests::{instance, mixed, share};
    use crate::live::tests::{node, whole};
    use crate::live::{LiveJob, SliceAsk};
    use crate::sharing::ShareStrategy;
    use crate::{PolicyConfig, PolicyKind};

    fn cluster() -> LiveCluster {
        LiveCluster::new(PolicyConfig::new(PolicyKind::Fifo), ShareStrategy::BestFit)
    }

    fn sliced(id: u64, ask: SliceAsk) -> LiveJob {
        LiveJob {
            slice: Some(ask),
            gpus: 0,
            ..whole(id, 0)
        }
    }

    #[test]
    fn gpu_holders_charge_whole_share_and_mig_by_their_part() {
        let mut c = cluster();
        c.set_nodes(vec![mixed()]);
        c.add(&whole(1, 1));
        c.add(&sliced(2, SliceAsk::Share { milli: 250 }));
        c.add(&sliced(3, SliceAsk::Share { milli: 500 }));
        c.add(&sliced(
            4,
            SliceAsk::Mig {
                profile: "3g.40gb".into(),
            },
        ));
        assert!(c.restore(1, "n1", &[0], None, 0.0));
        assert!(c.restore(2, "n1", &[], Some(&share(1, 250)), 0.0));
        assert!(c.restore(3, "n1", &[], Some(&share(1, 500)), 0.0));
        assert!(c.restore(4, "n1", &[], Some(&instance(2)), 0.0));
        assert_eq!(c.gpu_holders("n1", 0), vec![(1, 1000)]);
        assert_eq!(c.gpu_holders("n1", 1), vec![(2, 250), (3, 500)]);
        assert_eq!(
            c.gpu_holders("n1", 2),
            vec![(4, 428)],
            "the placement's part"
        );
        assert_eq!(c.gpu_holders("n2", 0), vec![], "no such node");
        assert_eq!(c.gpu_jobs("n1", 1), BTreeSet::from([2, 3]));
        assert_eq!(c.gpu_jobs("n1", 2), BTreeSet::from([4]));
        assert!(c.gpu_jobs("n1", 3).is_empty());
    }

    #[test]
    fn gpu_occupancy_lists_whole_shares_and_every_mig_instance() {
        let mut c = cluster();
        c.set_nodes(vec![mixed()]);
        c.add(&whole(1, 1));
        c.add(&LiveJob {
            user: "ann".into(),
            ..sliced(2, SliceAsk::Share { milli: 250 })
        });
        c.add(&sliced(
            4,
            SliceAsk::Mig {
                profile: "3g.40gb".into(),
            },
        ));
        assert!(c.restore(1, "n1", &[0], None, 0.0));
        assert!(c.restore(2, "n1", &[], Some(&share(1, 250)), 0.0));
        assert!(c.restore(4, "n1", &[], Some(&instance(2)), 0.0));
        assert_eq!(
            c.gpu_occupancy("n1", 0),
            GpuOccupancy {
                whole: Some(1),
                slices: vec![]
            }
        );
        assert_eq!(
            c.gpu_occupancy("n1", 1),
            GpuOccupancy {
                whole: None,
                slices: vec![GpuSlice {
                    job: Some(2),
                    user: Some("ann".into()),
                    milli: 250,
                    mem_mib: 1024,
                    mig: None,
                }]
            }
        );
        assert_eq!(
            c.gpu_occupancy("n1", 2),
            GpuOccupancy {
                whole: None,
                slices: vec![GpuSlice {
                    job: Some(4),
                    user: None,
                    milli: 428,
                    mem_mib: 81920 * 4 / 8,
                    mig: Some(MigSlice {
                        profile: "3g.40gb".into(),
                        start: 4,
                        size: 4,
                        uuid: Some("MIG-x".into()),
                    }),
                }]
            },
            "the profile's compute (3 of 7) and its eighths of the memory"
        );
        c.remove(4, 0.0);
        assert_eq!(
            c.gpu_occupancy("n1", 2).slices[0].job,
            None,
            "a free instance is listed too"
        );
        assert_eq!(c.gpu_occupancy("n1", 9), GpuOccupancy::default());
        assert_eq!(c.gpu_occupancy("n2", 0), GpuOccupancy::default());
    }

    #[test]
    fn start_slots_count_free_parts_on_reachable_nodes() {
        let mut c = cluster();
        let mut away = node("c", 8, false);
        away.unreachable = Some("silent".into());
        c.set_nodes(vec![node("a", 8, false), node("b", 4, false), away]);
        c.add(&whole(1, 3));
        assert!(c.restore(1, "a", &[0, 1, 2], None, 0.0));
        // Free: a 5, b 4 (c is unreachable).
        let slots = |per_node, nodes| c.start_slots(TaskShape::Whole { per_node, nodes });
        assert_eq!(slots(1, 1), 9);
        assert_eq!(slots(2, 1), 2 + 2);
        assert_eq!(slots(4, 1), 1 + 1);
        assert_eq!(slots(4, 2), 1, "a gang of two nodes of four");
        assert_eq!(slots(5, 1), 1);
        assert_eq!(slots(6, 1), 0);
        assert_eq!(slots(0, 0), 9, "zero read as one");
        assert_eq!(
            c.start_slots(TaskShape::NoWholeGpu),
            2 * PER_NODE_WITHOUT_GPUS
        );
    }
}
