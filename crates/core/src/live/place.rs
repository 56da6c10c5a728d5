//! Where a waiting slice job goes: a MIG instance by the cheapest re-layout, a share by
//! the configured sharing strategy (`crate::slices::choose_share`) against FGD's target
//! workload (the recent demand, `crate::sharing::demand`, gathered by the caller).

use super::book::NodeSlices;
use super::slice::{MigAt, SliceAsk, SliceAt};
use crate::resources::mig_compute_milli;
use crate::sharing::SharePod;
use crate::sharing::ShareStrategy;
use crate::slices::{choose_share, MigOption, ShareGpu, ShareHost};
use crate::QueueId;

/// A waiting (or placed) job on part of a GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct SliceJob {
    pub id: u64,
    pub user: String,
    pub queue: QueueId,
    pub priority: i32,
    /// Submission time (the policy's order keys).
    pub submit: f64,
    pub estimate: Option<f64>,
    pub model: Option<String>,
    pub ask: SliceAsk,
    /// It runs in a container image: only on nodes that run images.
    pub image: bool,
    /// The node and slice while it runs.
    pub at: Option<(String, SliceAt)>,
    /// Where it may run (`crate::eligible`); `None`: any node.
    pub rules: Option<std::sync::Arc<crate::eligible::NodeRules>>,
}

impl SliceJob {
    /// Whether its node rules let it on the node `name` (of `n`).
    fn may_use(&self, name: &str, n: &NodeSlices) -> bool {
        self.rules.as_ref().is_none_or(|r| {
            r.admits(crate::eligible::NodeFacts {
                name,
                features: &n.features,
            })
        })
    }
}

/// Where one waiting slice job goes: the node (by position in `nodes`) and its slice.
pub fn place(
    job: &SliceJob,
    nodes: &[(String, NodeSlices)],
    target: &[SharePod],
    strategy: ShareStrategy,
) -> Option<(usize, SliceAt)> {
    let model = job.model.as_deref();
    let fits_model = |name: &str, n: &NodeSlices| {
        crate::resources::model_matches(&n.model, model)
            && (n.images || !job.image)
            && job.may_use(name, n)
    };
    match &job.ask {
        SliceAsk::Mig { profile } => {
            let mut best: Option<(u32, usize, u32, MigOption)> = None;
            for (k, (name, n)) in nodes.iter().enumerate() {
                if !fits_model(name, n) {
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
                .map(|(name, n)| ShareHost {
                    model: n.model.clone(),
                    cpu_milli: u64::from(n.cpus) * 1000,
                    mem_mib: n.mem_mib,
                    gpus: n
                        .gpus
                        .iter()
                        .map(|g| {
                            // An MPS GPU holding another user's shares is full to this job,
                            // as is every GPU of a node that runs no images to an image job.
                            let other_user = n.mps && !g.same_user(&job.user);
                            let (free, free_mem) = if g.mig.is_some()
                                || n.whole.contains_key(&g.index)
                                || other_user
                                || (job.image && !n.images)
                                || !job.may_use(name, n)
                            {
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
                .filter(|n| crate::resources::model_matches(&n.model, model))
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

/// Thousandths of a GPU a slice ask counts for against a queue cap before it is placed:
/// a share its fraction, a MIG profile its compute; a memory share's fraction depends on
/// the GPU, so any room at all may do.
pub fn ask_milli(ask: &SliceAsk) -> u64 {
    match ask {
        SliceAsk::Share { milli } => u64::from(*milli),
        SliceAsk::Mig { profile } => u64::from(mig_compute_milli(profile)),
        SliceAsk::Memory { .. } => 1,
    }
}
