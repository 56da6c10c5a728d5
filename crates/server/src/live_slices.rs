//! Jobs on part of a GPU (shares and MIG instances) on the live cluster: each node's
//! slices, and the pass that places waiting slice jobs with the core's `slices` code.
//!
//! A GPU in MIG mode serves only MIG jobs; the whole-GPU scheduler never counts it. A
//! GPU that holds shares is taken out of the whole-GPU scheduler's free map while it
//! does (the caller occupies it there when [`SliceBook::place`] says a GPU was opened,
//! and releases it when [`SliceBook::release`] says one was closed).
//!
//! On a node running MPS, a GPU's shares all belong to one Unix user: NVIDIA's MPS control
//! daemon runs one MPS server per user at a time, so a second user's job would wait
//! inside CUDA for the first user's jobs to end.
//!
//! Slice jobs are placed in priority order, then submission order, before the
//! whole-GPU pass; one that does not fit does not hold up the others. A queue's cap
//! counts its slices by their fraction of a GPU, rounded up over the queue (two halves
//! hold one GPU of the cap); fair share (`drf`) and quota reclaim count whole GPUs only.

use std::collections::{BTreeMap, BTreeSet};

use gpusched_core::resources::mig_compute_milli;
use gpusched_core::sharing::{SharePod, ShareStrategy};
use gpusched_core::slices::{choose_share, span_mask, MigGpu, MigSlot, ShareGpu, ShareHost};
use gpusched_wire::{GpuInfo, MigAt, SliceAsk, SliceAt};

/// One GPU's slices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuSlices {
    pub index: u32,
    pub mem_mib: u64,
    /// `Some` in MIG mode.
    pub mig: Option<MigGpu>,
    /// The shares on a GPU not in MIG mode.
    pub shares: Vec<ShareHold>,
}

/// One share of a GPU and its job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareHold {
    pub job: u64,
    pub user: String,
    pub milli: u32,
    pub mem_mib: u64,
}

impl GpuSlices {
    /// Whether every share on the GPU is `user`'s.
    fn same_user(&self, user: &str) -> bool {
        self.shares.iter().all(|s| s.user == user)
    }

    fn share_free(&self) -> (u32, u64) {
        let milli: u32 = self.shares.iter().map(|s| s.milli).sum();
        let mem: u64 = self.shares.iter().map(|s| s.mem_mib).sum();
        (
            1000u32.saturating_sub(milli),
            self.mem_mib.saturating_sub(mem),
        )
    }
}

/// One node's GPUs, as slices see them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSlices {
    pub model: String,
    pub cpus: u32,
    pub mem_mib: u64,
    /// The node runs MPS: one user's shares per GPU.
    pub mps: bool,
    pub gpus: Vec<GpuSlices>,
}

impl NodeSlices {
    /// The node's registered layout, nobody holding anything.
    pub fn from_gpus(gpus: &[GpuInfo], cpus: u32, mem_mib: u64, mps: bool) -> Self {
        NodeSlices {
            model: gpus.first().map(|g| g.model.clone()).unwrap_or_default(),
            cpus,
            mem_mib,
            mps,
            gpus: gpus
                .iter()
                .map(|g| GpuSlices {
                    index: g.index,
                    mem_mib: g.mem_mib,
                    mig: g.mig.as_ref().map(|m| MigGpu {
                        model: g.model.clone(),
                        dynamic: m.dynamic,
                        slots: m
                            .instances
                            .iter()
                            .map(|i| MigSlot {
                                profile: i.profile.clone(),
                                start: i.start,
                                size: i.size,
                                uuid: i.uuid.clone(),
                                holder: None,
                                created_for: None,
                            })
                            .collect(),
                    }),
                    shares: Vec::new(),
                })
                .collect(),
        }
    }

    /// GPU indices whole jobs may not use: in MIG mode, or holding shares.
    pub fn not_whole(&self) -> BTreeSet<u32> {
        self.gpus
            .iter()
            .filter(|g| g.mig.is_some() || !g.shares.is_empty())
            .map(|g| g.index)
            .collect()
    }

    fn gpu_mut(&mut self, index: u32) -> Option<&mut GpuSlices> {
        self.gpus.iter_mut().find(|g| g.index == index)
    }

    /// Puts `job` where `at` says (a placement just decided, or one restored after a
    /// restart). Returns whether a GPU without shares got its first one (`Some(true)`),
    /// or `None` when `at` does not fit this node's state.
    pub fn apply(&mut self, job: u64, user: &str, at: &SliceAt) -> Option<bool> {
        let mps = self.mps;
        let gpu = self.gpu_mut(at.gpu)?;
        match (&at.mig, &mut gpu.mig) {
            (Some(m), Some(mig)) => {
                let existing = mig
                    .slots
                    .iter()
                    .position(|s| s.start == m.start && s.profile == m.profile);
                match existing {
                    Some(i) if mig.slots[i].holder.is_none_or(|h| h == job) => {
                        let s = &mut mig.slots[i];
                        s.holder = Some(job);
                        if m.create {
                            s.created_for = Some(job);
                        }
                        if s.uuid.is_none() {
                            s.uuid = m.uuid.clone();
                        }
                    }
                    Some(_) => return None,
                    None => {
                        let want = span_mask(m.start, m.size);
                        mig.slots
                            .retain(|s| !(m.destroy.contains(&s.start) && s.holder.is_none()));
                        if mig.used_mask() & want != 0 {
                            return None;
                        }
                        mig.slots.push(MigSlot {
                            profile: m.profile.clone(),
                            start: m.start,
                            size: m.size,
                            uuid: m.uuid.clone(),
                            holder: Some(job),
                            created_for: m.create.then_some(job),
                        });
                        mig.slots.sort_by_key(|s| s.start);
                    }
                }
                Some(false)
            }
            (None, None) => {
                let (milli, mem) = gpu.share_free();
                if milli < at.milli || mem < at.mem_mib || (mps && !gpu.same_user(user)) {
                    return None;
                }
                let opened = gpu.shares.is_empty();
                gpu.shares.push(ShareHold {
                    job,
                    user: user.to_string(),
                    milli: at.milli,
                    mem_mib: at.mem_mib,
                });
                Some(opened)
            }
            _ => None,
        }
    }

    /// Takes `job` off this node's slices; returns whether a GPU lost its last share
    /// (it goes back to the whole-GPU scheduler).
    pub fn release(&mut self, job: u64) -> bool {
        let mut closed = false;
        for g in &mut self.gpus {
            if let Some(mig) = &mut g.mig {
                mig.release(job);
            }
            let before = g.shares.len();
            g.shares.retain(|s| s.job != job);
            closed |= before > 0 && g.shares.is_empty();
        }
        closed
    }

    /// Records the UUID of a job's MIG instance once its agent reports it.
    pub fn set_mig_uuid(&mut self, job: u64, uuid: &str) {
        for g in &mut self.gpus {
            if let Some(mig) = &mut g.mig {
                for s in &mut mig.slots {
                    if s.holder == Some(job) {
                        s.uuid = Some(uuid.to_string());
                    }
                }
            }
        }
    }
}

/// A waiting (or placed) job on part of a GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceJob {
    pub id: u64,
    pub user: String,
    pub queue: gpusched_core::QueueId,
    pub priority: i32,
    pub model: Option<String>,
    pub ask: SliceAsk,
    /// The node and slice while it runs.
    pub at: Option<(String, SliceAt)>,
}

/// Where one waiting slice job goes: the node (by position in `nodes`) and its slice.
pub fn place(
    job: &SliceJob,
    nodes: &[(String, NodeSlices, BTreeSet<u32>)],
    target: &[SharePod],
    strategy: ShareStrategy,
) -> Option<(usize, SliceAt)> {
    let model = job.model.as_deref();
    let fits_model = |n: &NodeSlices| model.is_none_or(|m| n.model.starts_with(m));
    match &job.ask {
        SliceAsk::Mig { profile } => {
            let mut best: Option<(u32, usize, u32, gpusched_core::slices::MigOption)> = None;
            for (k, (_, n, _)) in nodes.iter().enumerate() {
                if !fits_model(n) {
                    continue;
                }
                for g in &n.gpus {
                    let Some(mig) = &g.mig else { continue };
                    let Ok(options) = mig.options(profile) else {
                        continue;
                    };
                    if let Some(o) = options.into_iter().next() {
                        if best.as_ref().is_none_or(|b| o.cost < b.0) {
                            best = Some((o.cost, k, g.index, o));
                        }
                    }
                }
            }
            let (_, k, gpu, o) = best?;
            let g = nodes[k].1.gpus.iter().find(|x| x.index == gpu)?;
            let uuid = if o.reuse {
                g.mig
                    .as_ref()
                    .and_then(|m| m.slots.iter().find(|s| s.start == o.start))
                    .and_then(|s| s.uuid.clone())
            } else {
                None
            };
            Some((
                k,
                SliceAt {
                    gpu,
                    milli: mig_compute_milli(profile),
                    mem_mib: g.mem_mib * u64::from(o.size) / 8,
                    mig: Some(MigAt {
                        profile: profile.clone(),
                        start: o.start,
                        size: o.size,
                        create: !o.reuse,
                        destroy: o.destroy,
                        uuid,
                    }),
                },
            ))
        }
        SliceAsk::Share { .. } | SliceAsk::Memory { .. } => {
            let (milli, mem) = share_size(&job.ask, nodes.iter().map(|n| &n.1), model)?;
            let hosts: Vec<ShareHost> = nodes
                .iter()
                .map(|(_, n, whole)| ShareHost {
                    model: n.model.clone(),
                    cpu_milli: u64::from(n.cpus) * 1000,
                    mem_mib: n.mem_mib,
                    gpus: n
                        .gpus
                        .iter()
                        .map(|g| {
                            // An MPS GPU holding another user's shares is full to this job.
                            let other_user = n.mps && !g.same_user(&job.user);
                            let (free, free_mem) =
                                if g.mig.is_some() || whole.contains(&g.index) || other_user {
                                    (0, 0)
                                } else {
                                    g.share_free()
                                };
                            ShareGpu {
                                index: g.index,
                                free_milli: free,
                                free_mem_mib: free_mem,
                            }
                        })
                        .collect(),
                })
                .collect();
            let mem_floor = mem.unwrap_or(0);
            let (k, gpu) = choose_share(&hosts, milli, mem_floor, model, target, strategy)?;
            let g = nodes[k].1.gpus.iter().find(|x| x.index == gpu)?;
            let mem_mib = mem.unwrap_or(g.mem_mib * u64::from(milli) / 1000);
            Some((
                k,
                SliceAt {
                    gpu,
                    milli,
                    mem_mib,
                    mig: None,
                },
            ))
        }
    }
}

/// Compute thousandths and (for a memory share) MiB of a share. A memory share is
/// charged the same fraction of compute on the smallest acceptable GPU, so that its
/// memory fits wherever its compute does.
fn share_size<'a>(
    ask: &SliceAsk,
    nodes: impl Iterator<Item = &'a NodeSlices>,
    model: Option<&str>,
) -> Option<(u32, Option<u64>)> {
    match ask {
        SliceAsk::Share { milli } => Some((*milli, None)),
        SliceAsk::Memory { mib } => {
            let smallest = nodes
                .filter(|n| model.is_none_or(|m| n.model.starts_with(m)))
                .flat_map(|n| n.gpus.iter().filter(|g| g.mig.is_none()))
                .map(|g| g.mem_mib)
                .filter(|&m| m >= *mib)
                .min()?;
            let milli = (mib * 1000).div_ceil(smallest).clamp(1, 1000) as u32;
            Some((milli, Some(*mib)))
        }
        SliceAsk::Mig { .. } => None,
    }
}

/// Node name → the node's slices, in name order.
pub type Book = BTreeMap<String, NodeSlices>;

#[cfg(test)]
mod tests {
    use super::*;
    use gpusched_wire::{GpuSource, MigInfo, MigInstanceInfo};

    fn gpus(n: u32, mig: bool) -> Vec<GpuInfo> {
        (0..n)
            .map(|index| GpuInfo {
                index,
                uuid: Some(format!("GPU-{index}")),
                model: "A100-SXM4-80GB".into(),
                mem_mib: 81920,
                source: GpuSource::Fake,
                mig: mig.then(|| MigInfo {
                    dynamic: true,
                    instances: vec![MigInstanceInfo {
                        profile: "3g.40gb".into(),
                        start: 4,
                        size: 4,
                        uuid: Some("MIG-x".into()),
                    }],
                }),
            })
            .collect()
    }

    fn job(id: u64, ask: SliceAsk) -> SliceJob {
        SliceJob {
            id,
            user: "u".into(),
            queue: gpusched_core::QueueId(0),
            priority: 0,
            model: None,
            ask,
            at: None,
        }
    }

    fn half_pod() -> SharePod {
        gpusched_core::sharing::demand::live_pod(0, Some(500)).unwrap()
    }

    #[test]
    fn shares_fill_a_gpu_then_open_the_next() {
        let mut n = NodeSlices::from_gpus(&gpus(2, false), 8, 1 << 20, false);
        let nodes = |n: &NodeSlices| vec![("a".to_string(), n.clone(), BTreeSet::new())];
        let half = job(1, SliceAsk::Share { milli: 500 });
        let (k, at) = place(&half, &nodes(&n), &[half_pod()], ShareStrategy::BestFit).unwrap();
        assert_eq!((k, at.gpu, at.milli, at.mem_mib), (0, 0, 500, 40960));
        assert_eq!(n.apply(1, "u", &at), Some(true));
        let (_, at2) = place(&half, &nodes(&n), &[half_pod()], ShareStrategy::BestFit).unwrap();
        assert_eq!(at2.gpu, 0, "the second half joins the first");
        assert_eq!(n.apply(2, "u", &at2), Some(false));
        assert_eq!(n.not_whole(), BTreeSet::from([0]));
        let (_, at3) = place(&half, &nodes(&n), &[], ShareStrategy::BestFit).unwrap();
        assert_eq!(at3.gpu, 1);
        assert!(!n.release(1));
        assert!(n.release(2), "GPU 0 lost its last share");
        assert!(n.not_whole().is_empty());
    }

    #[test]
    fn memory_shares_are_charged_on_the_smallest_gpu_and_mig_gpus_serve_only_mig() {
        let mut g = gpus(1, false);
        g.extend(gpus(1, true).into_iter().map(|mut x| {
            x.index = 1;
            x
        }));
        let mut n = NodeSlices::from_gpus(&g, 8, 1 << 20, false);
        assert_eq!(n.not_whole(), BTreeSet::from([1]), "the MIG GPU");
        let nodes = vec![("a".to_string(), n.clone(), BTreeSet::new())];
        let mem = job(1, SliceAsk::Memory { mib: 20480 });
        let (_, at) = place(&mem, &nodes, &[], ShareStrategy::Fgd).unwrap();
        assert_eq!((at.gpu, at.milli, at.mem_mib), (0, 250, 20480));
        let mig = job(
            2,
            SliceAsk::Mig {
                profile: "3g.40gb".into(),
            },
        );
        let (_, at) = place(&mig, &nodes, &[], ShareStrategy::Fgd).unwrap();
        let m = at.mig.clone().unwrap();
        assert_eq!(
            (at.gpu, m.start, m.create),
            (1, 4, false),
            "the idle instance"
        );
        assert_eq!(m.uuid.as_deref(), Some("MIG-x"));
        assert_eq!(n.apply(2, "u", &at), Some(false));
        let nodes = vec![("a".to_string(), n.clone(), BTreeSet::new())];
        let (_, at) = place(
            &job(
                3,
                SliceAsk::Mig {
                    profile: "3g.40gb".into(),
                },
            ),
            &nodes,
            &[],
            ShareStrategy::Fgd,
        )
        .unwrap();
        let m = at.mig.clone().unwrap();
        assert_eq!((m.start, m.create), (0, true), "created in the free half");
        n.apply(3, "u", &at).unwrap();
        let nodes = vec![("a".to_string(), n.clone(), BTreeSet::new())];
        assert!(place(
            &job(
                4,
                SliceAsk::Mig {
                    profile: "1g.10gb".into()
                }
            ),
            &nodes,
            &[],
            ShareStrategy::Fgd
        )
        .is_none());
        n.release(3);
        assert_eq!(
            n.gpus[1].mig.as_ref().unwrap().slots.len(),
            1,
            "created instance gone"
        );
        // A whole-held GPU takes no share.
        let nodes = vec![("a".to_string(), n.clone(), BTreeSet::from([0]))];
        assert!(place(&mem, &nodes, &[], ShareStrategy::BestFit).is_none());
    }
}

#[cfg(test)]
mod mps_tests {
    use super::*;
    use gpusched_wire::GpuSource;

    #[test]
    fn on_an_mps_node_a_gpu_holds_one_users_shares() {
        let gpus: Vec<GpuInfo> = (0..2)
            .map(|index| GpuInfo {
                index,
                uuid: None,
                model: "H100".into(),
                mem_mib: 81920,
                source: GpuSource::Fake,
                mig: None,
            })
            .collect();
        let mut n = NodeSlices::from_gpus(&gpus, 8, 1 << 20, true);
        let ask = |id: u64, user: &str| SliceJob {
            id,
            user: user.into(),
            queue: gpusched_core::QueueId(0),
            priority: 0,
            model: None,
            ask: SliceAsk::Share { milli: 250 },
            at: None,
        };
        let nodes = |n: &NodeSlices| vec![("a".to_string(), n.clone(), BTreeSet::new())];
        let (_, at) = place(&ask(1, "alice"), &nodes(&n), &[], ShareStrategy::BestFit).unwrap();
        n.apply(1, "alice", &at).unwrap();
        let (_, same) = place(&ask(2, "alice"), &nodes(&n), &[], ShareStrategy::BestFit).unwrap();
        assert_eq!(same.gpu, at.gpu, "alice's shares pack together");
        let (_, other) = place(&ask(3, "bob"), &nodes(&n), &[], ShareStrategy::BestFit).unwrap();
        assert_ne!(other.gpu, at.gpu, "bob gets the other GPU");
        assert_eq!(n.apply(3, "bob", &at), None, "and never alice's");
    }
}
