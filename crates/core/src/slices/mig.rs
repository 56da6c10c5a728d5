//! A MIG GPU's layout and the ways to place one more instance on it.
//!
//! NVIDIA's MIG divides an A100 or H100 into eight memory slices (and seven compute
//! slices); a GPU instance of a profile spans `size` memory slices starting at one of
//! the profile's allowed start slices (NVML's "placements", listed per model in
//! [`crate::resources`]). Two instances may not share a memory slice.

use crate::resources::{mig_profile_for, mig_profiles_for, MigProfile, RequestError};

/// One GPU instance (with its compute instance) of a MIG GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigSlot {
    pub profile: String,
    pub start: u8,
    pub size: u8,
    /// `MIG-…` UUID, once the agent has reported it.
    pub uuid: Option<String>,
    /// The job using it.
    pub holder: Option<u64>,
    /// The job it was created for (it is destroyed when that job ends); `None` for
    /// instances of the node's own layout.
    pub created_for: Option<u64>,
}

impl MigSlot {
    fn mask(&self) -> u8 {
        span_mask(self.start, self.size)
    }
}

/// A GPU in MIG mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigGpu {
    pub model: String,
    /// The agent may create and destroy instances here.
    pub dynamic: bool,
    pub slots: Vec<MigSlot>,
}

/// One way to give a job an instance of a profile on one GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigOption {
    pub start: u8,
    pub size: u8,
    /// An idle instance of the profile that exists already.
    pub reuse: bool,
    /// Idle instances (by start) to destroy first.
    pub destroy: Vec<u8>,
    /// Lower is better: 0 for reuse, [`CREATE_COST`] plus the placements the new
    /// instance takes from other profiles for a create, and [`DESTROY_COST`] more per
    /// destroyed instance.
    pub cost: u32,
}

/// What creating an instance costs over using an idle one: NVML's create and destroy
/// take tens to hundreds of milliseconds and change what other jobs can get.
pub const CREATE_COST: u32 = 100;
/// What destroying an idle instance costs on top: an instance of the operator's layout
/// is gone until someone re-creates it.
pub const DESTROY_COST: u32 = 1000;

/// The memory slices `[start, start + size)` as a bitmap over the GPU's eight.
pub fn span_mask(start: u8, size: u8) -> u8 {
    let bits = if size >= 8 {
        0xFFu16
    } else {
        (1u16 << size) - 1
    };
    ((bits << start) & 0xFF) as u8
}

impl MigGpu {
    /// Memory slices taken by instances.
    pub fn used_mask(&self) -> u8 {
        self.slots.iter().fold(0, |m, s| m | s.mask())
    }

    /// Every placement of every profile of this model that fits in `free` slices: how
    /// much choice a layout leaves to the jobs to come.
    fn placements_left(&self, table: &[MigProfile], free: u8) -> u32 {
        table
            .iter()
            .flat_map(|p| p.starts.iter().map(move |&s| span_mask(s, p.memory_slices)))
            .filter(|&m| m & !free == 0)
            .count() as u32
    }

    /// The ways to give a job an instance of `profile` here, cheapest first (ties:
    /// lowest start). Errors when the model has no such profile.
    pub fn options(&self, profile: &str) -> Result<Vec<MigOption>, RequestError> {
        let p: MigProfile = mig_profile_for(&self.model, profile)?;
        let mut out = Vec::new();
        for s in &self.slots {
            if s.holder.is_none() && s.profile == p.name {
                out.push(MigOption {
                    start: s.start,
                    size: s.size,
                    reuse: true,
                    destroy: Vec::new(),
                    cost: 0,
                });
            }
        }
        if self.dynamic {
            // The model has MIG: `mig_profile_for` above found the profile.
            let table = mig_profiles_for(&self.model).unwrap_or_default();
            let used = self.used_mask();
            let free_before = !used;
            for &start in &p.starts {
                let want = span_mask(start, p.memory_slices);
                // Instances in the way; only idle ones may go.
                let blocking: Vec<&MigSlot> =
                    self.slots.iter().filter(|s| s.mask() & want != 0).collect();
                if blocking.iter().any(|s| s.holder.is_some()) {
                    continue;
                }
                // Reusing an existing instance of the profile is the first kind already.
                if blocking.len() == 1
                    && blocking[0].profile == p.name
                    && blocking[0].start == start
                {
                    continue;
                }
                let freed = blocking.iter().fold(0u8, |m, s| m | s.mask());
                let free_after = (free_before | freed) & !want;
                let lost = self
                    .placements_left(&table, free_before | freed)
                    .saturating_sub(self.placements_left(&table, free_after));
                out.push(MigOption {
                    start,
                    size: p.memory_slices,
                    reuse: false,
                    destroy: blocking.iter().map(|s| s.start).collect(),
                    cost: CREATE_COST + DESTROY_COST * blocking.len() as u32 + lost,
                });
            }
        }
        out.sort_by_key(|o| (o.cost, o.start));
        Ok(out)
    }

    /// Carries out `option` for `job`.
    pub fn apply(&mut self, job: u64, profile: &str, option: &MigOption) {
        if option.reuse {
            if let Some(s) = self
                .slots
                .iter_mut()
                .find(|s| s.start == option.start && s.holder.is_none())
            {
                s.holder = Some(job);
            }
            return;
        }
        self.slots
            .retain(|s| !(option.destroy.contains(&s.start) && s.holder.is_none()));
        self.slots.push(MigSlot {
            profile: profile.to_string(),
            start: option.start,
            size: option.size,
            uuid: None,
            holder: Some(job),
            created_for: Some(job),
        });
        self.slots.sort_by_key(|s| s.start);
    }

    /// Takes `job` off its instance; an instance created for it goes.
    pub fn release(&mut self, job: u64) {
        self.slots.retain(|s| s.created_for != Some(job));
        for s in &mut self.slots {
            if s.holder == Some(job) {
                s.holder = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(dynamic: bool, slots: &[(&str, u8, u8, Option<u64>)]) -> MigGpu {
        MigGpu {
            model: "A100-SXM4-80GB".into(),
            dynamic,
            slots: slots
                .iter()
                .map(|&(p, start, size, holder)| MigSlot {
                    profile: p.into(),
                    start,
                    size,
                    uuid: None,
                    holder,
                    created_for: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_static_layout_offers_only_its_idle_instances() {
        let g = gpu(
            false,
            &[("3g.40gb", 0, 4, Some(9)), ("3g.40gb", 4, 4, None)],
        );
        let o = g.options("3g.40gb").unwrap();
        assert_eq!(o.len(), 1);
        assert_eq!((o[0].start, o[0].reuse, o[0].cost), (4, true, 0));
        assert!(g.options("1g.10gb").unwrap().is_empty());
        let e = g.options("3g.20gb").unwrap_err().to_string();
        assert!(e.contains("3g.40gb"), "{e}");
    }

    #[test]
    fn dynamic_mig_creates_where_it_costs_other_profiles_least() {
        let mut g = gpu(true, &[]);
        let o = g.options("1g.10gb").unwrap();
        // Every start 0..=6 is possible; the cheapest blocks the fewest placements of
        // the model's other profiles.
        assert!(o.iter().all(|x| !x.reuse && x.destroy.is_empty()));
        let best = &o[0];
        assert!(best.cost >= CREATE_COST);
        g.apply(1, "1g.10gb", best);
        assert_eq!(g.slots.len(), 1);
        // A second 1g.10gb goes next to it, not into the middle of a free 4-slice half.
        let o2 = g.options("1g.10gb").unwrap();
        g.apply(2, "1g.10gb", &o2[0]);
        let starts: Vec<u8> = g.slots.iter().map(|s| s.start).collect();
        let half = |s: u8| s / 4;
        assert_eq!(half(starts[0]), half(starts[1]), "{starts:?}");
        // A 4-slice profile still fits in the other half.
        assert!(g
            .options("3g.40gb")
            .unwrap()
            .iter()
            .any(|x| x.destroy.is_empty()));
        g.release(1);
        g.release(2);
        assert!(g.slots.is_empty(), "created instances go with their jobs");
    }

    #[test]
    fn idle_instances_may_be_destroyed_for_a_re_layout_but_never_held_ones() {
        let g = gpu(
            true,
            &[
                ("1g.10gb", 0, 1, None),
                ("1g.10gb", 1, 1, Some(5)),
                ("3g.40gb", 4, 4, None),
            ],
        );
        let o = g.options("4g.40gb").unwrap();
        assert!(o.is_empty(), "slot 1 is held: {o:?}");
        let o = g.options("3g.40gb").unwrap();
        assert!(o[0].reuse, "the idle 3g.40gb comes first: {o:?}");
        let g2 = gpu(true, &[("3g.40gb", 0, 4, None), ("3g.40gb", 4, 4, None)]);
        let o = g2.options("7g.80gb").unwrap();
        assert_eq!(o.len(), 1);
        assert_eq!(o[0].destroy, vec![0, 4]);
        assert!(o[0].cost >= CREATE_COST + 2 * DESTROY_COST);
    }
}
