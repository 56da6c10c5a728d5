//! Who holds what on one node: each GPU held whole (by index), its shares, its MIG
//! instances. This is the live cluster's one record of occupancy; the whole-GPU
//! scheduler's free map counts the same GPUs (see `cluster.rs` for how both move
//! together).
//!
//! A GPU in MIG mode serves only MIG jobs. A GPU that holds shares is taken from
//! whole-GPU jobs while it does ([`NodeSlices::apply`] says when a GPU was opened,
//! [`NodeSlices::release`] when one was closed). On a node running MPS, a GPU's shares
//! all belong to one Unix user: NVIDIA's MPS control daemon runs one MPS server per user
//! at a time, so a second user's job would wait inside CUDA for the first user's jobs.

use std::collections::{BTreeMap, BTreeSet};

use super::node::LiveNode;
use super::slice::SliceAt;
use crate::slices::{span_mask, MigGpu, MigSlot};

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
    pub(crate) fn same_user(&self, user: &str) -> bool {
        self.shares.iter().all(|s| s.user == user)
    }

    pub(crate) fn share_free(&self) -> (u32, u64) {
        let milli: u32 = self.shares.iter().map(|s| s.milli).sum();
        let mem: u64 = self.shares.iter().map(|s| s.mem_mib).sum();
        (
            1000u32.saturating_sub(milli),
            self.mem_mib.saturating_sub(mem),
        )
    }
}

/// How a job holds one GPU ([`NodeSlices::holders`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// All of it.
    Whole,
    /// A share of `milli` thousandths of its compute.
    Share { milli: u32 },
    /// A MIG instance on it (its part of the GPU is the job's placement's, `SliceAt::milli`).
    Mig,
}

/// One node's GPUs and who holds them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSlices {
    pub model: String,
    pub cpus: u32,
    pub mem_mib: u64,
    /// The node runs MPS: one user's shares per GPU.
    pub mps: bool,
    pub gpus: Vec<GpuSlices>,
    /// GPU index → the whole-GPU job holding it.
    pub whole: BTreeMap<u32, u64>,
    /// Jobs placed here that hold no GPU (`--gpus 0`): they hold CPUs, memory or
    /// generic resources only, and are still the node's to run.
    pub gpuless: BTreeSet<u64>,
    /// GPU indices out of placement: unhealthy ones, or every GPU of a drained node.
    /// What a job already holds there stays its own; nothing new goes there.
    pub out: BTreeSet<u32>,
    /// The node is drained: nothing new is placed here, not even a GPU-less job.
    pub drained: bool,
    /// Its agent runs jobs in container images.
    pub images: bool,
    /// The node's features (slice jobs' node rules read them).
    pub features: Vec<String>,
}

impl NodeSlices {
    /// The node's registered layout, nobody holding anything.
    pub fn from_node(node: &LiveNode) -> Self {
        NodeSlices {
            model: node.model.clone(),
            cpus: node.cpus,
            mem_mib: node.mem_mib,
            mps: node.mps,
            gpus: node
                .gpus
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
            whole: BTreeMap::new(),
            gpuless: BTreeSet::new(),
            out: node
                .gpus
                .iter()
                .filter(|g| node.closed() || g.unhealthy.is_some())
                .map(|g| g.index)
                .collect(),
            drained: node.closed(),
            images: node.runs_images(),
            features: node.features.clone(),
        }
    }

    /// This node as new placements may see it: its GPUs out of placement left out, or
    /// `None` when it is drained (slice placement looks at this copy only).
    pub fn placeable(&self) -> Option<NodeSlices> {
        if self.drained {
            return None;
        }
        let mut view = self.clone();
        if !self.out.is_empty() {
            view.gpus.retain(|g| !self.out.contains(&g.index));
        }
        Some(view)
    }

    /// GPUs out of placement that no job holds and that whole-GPU jobs could otherwise
    /// take: the count the whole-GPU scheduler must be kept off during a pass.
    pub fn out_free(&self) -> u32 {
        self.any_free().filter(|g| self.out.contains(g)).count() as u32
    }

    /// GPU indices whole jobs may not use: in MIG mode, or holding shares.
    pub fn not_whole(&self) -> BTreeSet<u32> {
        self.gpus
            .iter()
            .filter(|g| g.mig.is_some() || !g.shares.is_empty())
            .map(|g| g.index)
            .collect()
    }

    /// GPUs new whole jobs may take now, in registration order: not in MIG mode, no
    /// shares, not held whole, not out of placement.
    pub fn whole_free(&self) -> impl Iterator<Item = u32> + '_ {
        self.any_free().filter(|g| !self.out.contains(g))
    }

    /// GPUs nobody holds and not in MIG mode, out of placement or not (a running job
    /// restored onto an unhealthy GPU keeps it).
    fn any_free(&self) -> impl Iterator<Item = u32> + '_ {
        self.gpus
            .iter()
            .filter(|g| {
                g.mig.is_none() && g.shares.is_empty() && !self.whole.contains_key(&g.index)
            })
            .map(|g| g.index)
    }

    /// GPUs some job holds any way (whole, a share, a MIG instance): what the power
    /// budget counts at the GPU's cap.
    pub fn busy_gpus(&self) -> u32 {
        self.gpus
            .iter()
            .filter(|g| {
                self.whole.contains_key(&g.index)
                    || !g.shares.is_empty()
                    || g.mig
                        .as_ref()
                        .is_some_and(|m| m.slots.iter().any(|s| s.holder.is_some()))
            })
            .count() as u32
    }

    /// GPUs whole jobs can ever use (not in MIG mode).
    pub fn whole_capacity(&self) -> u32 {
        self.gpus.iter().filter(|g| g.mig.is_none()).count() as u32
    }

    /// The whole-GPU job holding GPU `index`, if one does.
    pub fn holder(&self, index: u32) -> Option<u64> {
        self.whole.get(&index).copied()
    }

    /// The jobs holding GPU `index` and how: the whole-GPU job, else its shares in the
    /// order they were placed, then its MIG instances' jobs in slice order.
    pub fn holders(&self, index: u32) -> Vec<(u64, Hold)> {
        let mut out: Vec<(u64, Hold)> = self
            .holder(index)
            .map(|j| (j, Hold::Whole))
            .into_iter()
            .collect();
        let Some(g) = self.gpus.iter().find(|g| g.index == index) else {
            return out;
        };
        out.extend(
            g.shares
                .iter()
                .map(|s| (s.job, Hold::Share { milli: s.milli })),
        );
        if let Some(m) = &g.mig {
            out.extend(m.slots.iter().filter_map(|s| Some((s.holder?, Hold::Mig))));
        }
        out
    }

    /// The GPU indices `job` holds whole here, in index order.
    pub fn whole_of(&self, job: u64) -> Vec<u32> {
        self.whole
            .iter()
            .filter(|&(_, &j)| j == job)
            .map(|(&g, _)| g)
            .collect()
    }

    /// Every job holding anything here (whole GPUs, shares, MIG instances).
    pub fn jobs(&self) -> BTreeSet<u64> {
        let mut out: BTreeSet<u64> = self.whole.values().copied().collect();
        out.extend(&self.gpuless);
        for g in &self.gpus {
            out.extend(g.shares.iter().map(|s| s.job));
            if let Some(m) = &g.mig {
                out.extend(m.slots.iter().filter_map(|s| s.holder));
            }
        }
        out
    }

    /// Gives `job` the whole GPUs `indices`; false, and nothing changes, unless every
    /// one of them exists and nobody holds it. New starts choose among
    /// [`NodeSlices::whole_free`]; a job kept or restored may hold a GPU out of placement.
    pub fn take_whole(&mut self, job: u64, indices: &[u32]) -> bool {
        let free: BTreeSet<u32> = self.any_free().collect();
        let distinct: BTreeSet<u32> = indices.iter().copied().collect();
        if distinct.len() != indices.len() || !indices.iter().all(|g| free.contains(g)) {
            return false;
        }
        if indices.is_empty() {
            return self.gpuless.insert(job);
        }
        for &g in indices {
            self.whole.insert(g, job);
        }
        true
    }

    fn gpu_mut(&mut self, index: u32) -> Option<&mut GpuSlices> {
        self.gpus.iter_mut().find(|g| g.index == index)
    }

    /// Puts `job` where `at` says (a placement just decided, or one restored after a
    /// restart). Returns whether a GPU without shares got its first one (`Some(true)`),
    /// or `None` when `at` does not fit this node's state.
    pub fn apply(&mut self, job: u64, user: &str, at: &SliceAt) -> Option<bool> {
        let mps = self.mps;
        if self.whole.contains_key(&at.gpu) {
            return None;
        }
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

    /// Takes `job` off this node (whole GPUs, shares, instances); returns whether a GPU
    /// lost its last share (it goes back to whole-GPU jobs).
    pub fn release(&mut self, job: u64) -> bool {
        self.whole.retain(|_, j| *j != job);
        self.gpuless.remove(&job);
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

/// Node name → the node's book, in name order.
pub type Book = BTreeMap<String, NodeSlices>;

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::live::slice::MigAt;
    use crate::live::tests::node;

    /// Whole GPUs 0 and 1, GPU 2 in MIG mode (an idle 3g.40gb at slice 4).
    pub(in crate::live) fn mixed() -> LiveNode {
        let mut n = node("n1", 3, false);
        n.gpus[2].mig = node("m", 1, true).gpus[0].mig.clone();
        n
    }

    pub(in crate::live) fn share(gpu: u32, milli: u32) -> SliceAt {
        SliceAt {
            gpu,
            milli,
            mem_mib: 1024,
            mig: None,
        }
    }

    pub(in crate::live) fn instance(gpu: u32) -> SliceAt {
        SliceAt {
            gpu,
            milli: 428,
            mem_mib: 40_960,
            mig: Some(MigAt {
                profile: "3g.40gb".into(),
                start: 4,
                size: 4,
                create: false,
                destroy: Vec::new(),
                uuid: None,
            }),
        }
    }

    #[test]
    fn holders_name_each_job_on_a_gpu_and_how_it_holds_it() {
        let mut book = NodeSlices::from_node(&mixed());
        assert!(book.take_whole(7, &[0]));
        assert_eq!(book.apply(8, "ann", &share(1, 250)), Some(true));
        assert_eq!(book.apply(9, "bob", &share(1, 500)), Some(false));
        assert_eq!(book.apply(10, "cy", &instance(2)), Some(false));
        assert_eq!(book.holders(0), vec![(7, Hold::Whole)]);
        assert_eq!(
            book.holders(1),
            vec![
                (8, Hold::Share { milli: 250 }),
                (9, Hold::Share { milli: 500 })
            ]
        );
        assert_eq!(book.holders(2), vec![(10, Hold::Mig)]);
        assert_eq!(book.holders(3), vec![], "no such GPU");
        book.release(8);
        book.release(10);
        assert_eq!(book.holders(1), vec![(9, Hold::Share { milli: 500 })]);
        assert_eq!(book.holders(2), vec![], "an idle instance holds nobody");
    }
}
