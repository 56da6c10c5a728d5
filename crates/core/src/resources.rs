//! The request language: what one job asks of the cluster.
//!
//! This scheduler places whole GPUs, but the model already expresses everything a
//! GPU cluster is asked for, so that sharing, MIG and gangs arrive without a redesign:
//!
//! - whole GPUs, spread over as few nodes as placement allows ([`GpuRequest::Whole`]);
//! - an explicit gang: `nodes` nodes with `per_node` GPUs each, all or nothing
//!   ([`GpuRequest::Gang`]);
//! - a share of one GPU's compute in thousandths ([`GpuRequest::Share`]) or of its
//!   memory ([`GpuRequest::Memory`]);
//! - one MIG instance of a named profile ([`GpuRequest::Mig`], see [`MigProfile`]);
//! - CPUs (in milli-CPUs), host memory and generic counted resources (`fpga = 1`) per node.
//!
//! [`crate::cluster::NodeCapacity::can_hold`] answers whether one node can hold the
//! per-node part of a request; the unit tests below show each form.

use std::collections::BTreeMap;

/// How a job uses GPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuRequest {
    /// No GPU at all (a CPU-only step of a pipeline).
    None,
    /// `count` whole GPUs; placement decides how many nodes they span.
    Whole { count: u32 },
    /// Exactly `nodes` nodes with `per_node` whole GPUs on each (gang, all or nothing).
    Gang { nodes: u32, per_node: u32 },
    /// A share of one GPU's compute, in thousandths (1..=999).
    Share { milli: u32 },
    /// A share of one GPU by memory, in MiB.
    Memory { mib: u64 },
    /// One MIG instance.
    Mig { profile: MigProfile },
}

/// A MIG profile such as `1g.10gb`: `compute` GPU slices and `memory_slices` of the
/// GPU's eight memory slices, placeable only at the listed start slices (NVIDIA's MIG
/// user guide, "supported profiles").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigProfile {
    pub name: String,
    pub compute: u8,
    pub memory_slices: u8,
    pub starts: Vec<u8>,
}

/// A request for one job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRequest {
    pub gpu: GpuRequest,
    /// Accepted GPU models, as glob-free prefixes (`"A100"` matches `"A100-80GB"`); empty
    /// accepts any model.
    pub gpu_models: Vec<String>,
    /// Milli-CPUs per node.
    pub cpu_milli: u64,
    /// Host memory per node, MiB.
    pub mem_mib: u64,
    /// Generic counted resources per node (`fpga = 1`), ordered for determinism.
    pub generic: BTreeMap<String, u64>,
}

/// What is wrong with a request, phrased for the user who wrote it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    #[error(
        "a job must ask for at least one GPU (or `gpus = 0` with CPUs); got 0 GPUs and 0 CPUs"
    )]
    Empty,
    #[error("gpu share must be above 0 and below 1 (in thousandths: between 1 and 999); got {0}/1000 — ask for whole GPUs instead of a share of 1 or more")]
    ShareOutOfRange(u32),
    #[error(
        "a gang needs at least one node and one GPU per node; got {nodes} nodes x {per_node} GPUs"
    )]
    EmptyGang { nodes: u32, per_node: u32 },
    #[error("gpu memory share must be above 0 MiB")]
    ZeroMemory,
    #[error("unknown MIG profile `{0}`; known profiles: {1}")]
    UnknownMig(String, String),
    #[error("MIG profile `{profile}` does not exist on {model}; allowed there: {allowed}")]
    UnknownMigForModel {
        profile: String,
        model: String,
        allowed: String,
    },
    #[error("gpu share must be above 0 and at most 1 GPU; got {0} — ask for whole GPUs (`gpus = N`) for more than one")]
    ShareFraction(String),
    #[error("gpu memory share of {mib} MiB is larger than any acceptable GPU (the largest has {largest} MiB)")]
    MemoryTooLarge { mib: u64, largest: u64 },
    #[error("MIG profile `{profile}` asked for, but no acceptable GPU supports MIG (models here: {models}); MIG exists on: {mig_models}")]
    MigUnsupported {
        profile: String,
        models: String,
        mig_models: String,
    },
    #[error("a request takes one form of GPU: `{0}` and `{1}` were both given; use whole GPUs, a share, a memory share or a MIG profile")]
    Conflict(&'static str, &'static str),
}

impl ResourceRequest {
    /// `count` whole GPUs and nothing else: the common case of a training job.
    pub fn whole_gpus(count: u32) -> Self {
        ResourceRequest {
            gpu: GpuRequest::Whole { count },
            gpu_models: Vec::new(),
            cpu_milli: 0,
            mem_mib: 0,
            generic: BTreeMap::new(),
        }
    }

    /// Total whole GPUs the request occupies (0 for shares and MIG slices, which use
    /// part of one GPU).
    pub fn whole_gpu_count(&self) -> u32 {
        match self.gpu {
            GpuRequest::Whole { count } => count,
            GpuRequest::Gang { nodes, per_node } => nodes * per_node,
            _ => 0,
        }
    }

    /// Checks the request on its own, before it meets any cluster.
    pub fn validate(&self) -> Result<(), RequestError> {
        match &self.gpu {
            GpuRequest::None | GpuRequest::Whole { count: 0 } if self.cpu_milli == 0 => {
                Err(RequestError::Empty)
            }
            GpuRequest::Share { milli } if *milli == 0 || *milli >= 1000 => {
                Err(RequestError::ShareOutOfRange(*milli))
            }
            GpuRequest::Gang { nodes, per_node } if *nodes == 0 || *per_node == 0 => {
                Err(RequestError::EmptyGang {
                    nodes: *nodes,
                    per_node: *per_node,
                })
            }
            GpuRequest::Memory { mib: 0 } => Err(RequestError::ZeroMemory),
            _ => Ok(()),
        }
    }

    /// Whether a GPU of `model` is acceptable.
    pub fn accepts_model(&self, model: &str) -> bool {
        self.gpu_models.is_empty()
            || self
                .gpu_models
                .iter()
                .any(|m| model_matches(model, Some(m)))
    }
}

/// Whether a GPU of `model` is one a job asking for `wanted` accepts: `wanted` is a
/// prefix, as users write it (`A100` takes `A100-SXM4-80GB`), and `None` takes any. The
/// one definition of the rule: placement, reasons, reclaim, tiers, shares, validation and
/// the simulator all ask it.
pub fn model_matches(model: &str, wanted: Option<&str>) -> bool {
    wanted.is_none_or(|w| model.starts_with(w))
}

/// A MIG profile by name on an A100-40GB, for callers that do not know the model.
/// Per-model tables (A100-40GB, A100-80GB, H100-80GB) are in [`mig_profile_for`].
pub fn mig_profile(name: &str) -> Result<MigProfile, RequestError> {
    mig_profile_for("A100-40GB", name).map_err(|_| {
        let known: Vec<&str> = A100_40GB.iter().map(|r| r.0).collect();
        RequestError::UnknownMig(name.to_string(), known.join(", "))
    })
}

/// MIG profiles as `(name, compute slices, memory slices, allowed start slices)`, from
/// NVIDIA's MIG user guide ("Supported MIG profiles"): the start slices are the positions
/// of the GPU's eight memory slices where an instance of the profile may begin.
type MigRow = (&'static str, u8, u8, &'static [u8]);

const A100_40GB: [MigRow; 6] = [
    ("1g.5gb", 1, 1, &[0, 1, 2, 3, 4, 5, 6]),
    ("1g.10gb", 1, 2, &[0, 2, 4, 6]),
    ("2g.10gb", 2, 2, &[0, 2, 4]),
    ("3g.20gb", 3, 4, &[0, 4]),
    ("4g.20gb", 4, 4, &[0]),
    ("7g.40gb", 7, 8, &[0]),
];

/// A100-80GB and H100-80GB share the geometry, with 10 GB memory slices.
const GPU_80GB: [MigRow; 6] = [
    ("1g.10gb", 1, 1, &[0, 1, 2, 3, 4, 5, 6]),
    ("1g.20gb", 1, 2, &[0, 2, 4, 6]),
    ("2g.20gb", 2, 2, &[0, 2, 4]),
    ("3g.40gb", 3, 4, &[0, 4]),
    ("4g.40gb", 4, 4, &[0]),
    ("7g.80gb", 7, 8, &[0]),
];

/// The GPU models with MIG that gpusched knows, as matched against a model name.
pub const MIG_MODELS: [&str; 3] = ["A100-40GB", "A100-80GB", "H100-80GB"];

/// The MIG table of a GPU model as NVML names it (`NVIDIA A100-SXM4-80GB`, `H100 80GB
/// HBM3`, ...), or `None` for a model without MIG.
fn mig_table(model: &str) -> Option<(&'static str, &'static [MigRow])> {
    let m = model.to_ascii_uppercase();
    if m.contains("H100") {
        Some(("H100-80GB", &GPU_80GB))
    } else if m.contains("A100") && m.contains("80G") {
        Some(("A100-80GB", &GPU_80GB))
    } else if m.contains("A100") {
        Some(("A100-40GB", &A100_40GB))
    } else {
        None
    }
}

/// Whether GPUs of `model` support MIG.
pub fn has_mig(model: &str) -> bool {
    mig_table(model).is_some()
}

fn profile_of(&(name, compute, memory_slices, starts): &MigRow) -> MigProfile {
    MigProfile {
        name: name.to_string(),
        compute,
        memory_slices,
        starts: starts.to_vec(),
    }
}

/// Every MIG profile of `model`, or `None` for a model without MIG.
pub fn mig_profiles_for(model: &str) -> Option<Vec<MigProfile>> {
    mig_table(model).map(|(_, table)| table.iter().map(profile_of).collect())
}

/// The thousandths of a GPU's compute a profile takes (its compute slices of seven), by
/// name on whichever known model has it; 0 for a name no model has.
pub fn mig_compute_milli(name: &str) -> u32 {
    MIG_MODELS
        .iter()
        .find_map(|m| mig_profile_for(m, name).ok())
        .map_or(0, |p| (u32::from(p.compute) * 1000 / 7).min(1000))
}

/// The profile `name` on a GPU of `model`, with its placement rules.
pub fn mig_profile_for(model: &str, name: &str) -> Result<MigProfile, RequestError> {
    let Some((family, table)) = mig_table(model) else {
        return Err(RequestError::MigUnsupported {
            profile: name.to_string(),
            models: model.to_string(),
            mig_models: MIG_MODELS.join(", "),
        });
    };
    table
        .iter()
        .find(|(n, ..)| *n == name)
        .map(profile_of)
        .ok_or_else(|| RequestError::UnknownMigForModel {
            profile: name.to_string(),
            model: family.to_string(),
            allowed: table.iter().map(|r| r.0).collect::<Vec<_>>().join(", "),
        })
}

/// The GPU fields of a job as a user writes them (`gpus`, `gpu_share`, `gpu_mem`, `mig`),
/// turned into one [`GpuRequest`]; more than one form is an error.
pub fn gpu_request_from_fields(
    gpus: Option<u32>,
    gpu_share: Option<f64>,
    gpu_mem_mib: Option<u64>,
    mig: Option<&str>,
) -> Result<GpuRequest, RequestError> {
    let given: Vec<&'static str> = [
        gpus.map(|_| "gpus"),
        gpu_share.map(|_| "gpu_share"),
        gpu_mem_mib.map(|_| "gpu_mem"),
        mig.map(|_| "mig"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if given.len() > 1 {
        return Err(RequestError::Conflict(given[0], given[1]));
    }
    if let Some(share) = gpu_share {
        // A share of exactly 1 is one whole GPU; above 1 (or 0 and below) is refused.
        if !(share > 0.0 && share <= 1.0 && share.is_finite()) {
            return Err(RequestError::ShareFraction(share.to_string()));
        }
        // Any share above 0 is at least one thousandth (the API states `exclusiveMinimum: 0`).
        let milli = ((share * 1000.0).round() as u32).max(1);
        return Ok(match milli {
            1000 => GpuRequest::Whole { count: 1 },
            m => GpuRequest::Share { milli: m },
        });
    }
    if let Some(mib) = gpu_mem_mib {
        return if mib == 0 {
            Err(RequestError::ZeroMemory)
        } else {
            Ok(GpuRequest::Memory { mib })
        };
    }
    if let Some(name) = mig {
        // The profile is checked against the GPU models when the cluster is known
        // (`ResourceRequest::validate_on`); here only that it names some known profile.
        let known = MIG_MODELS
            .iter()
            .find_map(|m| mig_profile_for(m, name).ok());
        return known
            .map(|profile| GpuRequest::Mig { profile })
            .ok_or_else(|| {
                let mut all: Vec<&str> = A100_40GB
                    .iter()
                    .chain(GPU_80GB.iter())
                    .map(|r| r.0)
                    .collect();
                all.sort_unstable();
                all.dedup();
                RequestError::UnknownMig(name.to_string(), all.join(", "))
            });
    }
    Ok(GpuRequest::Whole {
        count: gpus.unwrap_or(0),
    })
}

impl ResourceRequest {
    /// Checks the request against the GPUs a cluster has: a memory share must fit some
    /// acceptable GPU, and a MIG profile must exist on some acceptable MIG-capable model.
    pub fn validate_on(&self, gpus: &[crate::cluster::Gpu]) -> Result<(), RequestError> {
        self.validate()?;
        let usable: Vec<&crate::cluster::Gpu> = gpus
            .iter()
            .filter(|g| self.accepts_model(&g.model))
            .collect();
        match &self.gpu {
            GpuRequest::Memory { mib } => {
                let largest = usable.iter().map(|g| g.mem_mib).max().unwrap_or(0);
                if *mib > largest {
                    return Err(RequestError::MemoryTooLarge { mib: *mib, largest });
                }
            }
            GpuRequest::Mig { profile } => {
                let mig: Vec<&&crate::cluster::Gpu> =
                    usable.iter().filter(|g| has_mig(&g.model)).collect();
                if mig.is_empty() {
                    let mut models: Vec<&str> = usable.iter().map(|g| g.model.as_str()).collect();
                    models.sort_unstable();
                    models.dedup();
                    return Err(RequestError::MigUnsupported {
                        profile: profile.name.clone(),
                        models: models.join(", "),
                        mig_models: MIG_MODELS.join(", "),
                    });
                }
                // The first MIG model's error names what that model allows.
                let mut first_err = None;
                for g in &mig {
                    match mig_profile_for(&g.model, &profile.name) {
                        Ok(_) => return Ok(()),
                        Err(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                if let Some(e) = first_err {
                    return Err(e);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_and_gang_count_gpus() {
        assert_eq!(ResourceRequest::whole_gpus(4).whole_gpu_count(), 4);
        let gang = ResourceRequest {
            gpu: GpuRequest::Gang {
                nodes: 2,
                per_node: 8,
            },
            ..ResourceRequest::whole_gpus(0)
        };
        assert_eq!(gang.whole_gpu_count(), 16);
        assert!(gang.validate().is_ok());
    }

    #[test]
    fn shares_must_be_strictly_between_zero_and_one() {
        for bad in [0, 1000, 1500] {
            let r = ResourceRequest {
                gpu: GpuRequest::Share { milli: bad },
                ..ResourceRequest::whole_gpus(0)
            };
            assert_eq!(r.validate(), Err(RequestError::ShareOutOfRange(bad)));
        }
        let ok = ResourceRequest {
            gpu: GpuRequest::Share { milli: 250 },
            ..ResourceRequest::whole_gpus(0)
        };
        assert!(ok.validate().is_ok());
    }

    #[test]
    fn empty_requests_are_refused() {
        assert_eq!(
            ResourceRequest::whole_gpus(0).validate(),
            Err(RequestError::Empty)
        );
        let cpu_only = ResourceRequest {
            cpu_milli: 2000,
            ..ResourceRequest::whole_gpus(0)
        };
        assert!(cpu_only.validate().is_ok());
    }

    #[test]
    fn mig_profiles_carry_their_placement_rules() {
        let p = mig_profile("3g.20gb").unwrap();
        assert_eq!((p.compute, p.memory_slices), (3, 4));
        assert_eq!(p.starts, vec![0, 4]);
        let err = mig_profile("9g.99gb").unwrap_err().to_string();
        assert!(err.contains("1g.5gb"), "{err}");
    }

    #[test]
    fn model_constraint_matches_prefixes() {
        let mut r = ResourceRequest::whole_gpus(1);
        assert!(r.accepts_model("V100"));
        r.gpu_models = vec!["A100".into(), "H100".into()];
        assert!(r.accepts_model("A100-80GB"));
        assert!(!r.accepts_model("V100-32GB"));
    }

    #[test]
    fn mig_tables_per_model_carry_their_start_slices() {
        let p = mig_profile_for("NVIDIA A100-SXM4-80GB", "1g.20gb").unwrap();
        assert_eq!(
            (p.compute, p.memory_slices, p.starts.clone()),
            (1, 2, vec![0, 2, 4, 6])
        );
        let p = mig_profile_for("NVIDIA H100 80GB HBM3", "3g.40gb").unwrap();
        assert_eq!(p.starts, vec![0, 4]);
        let p = mig_profile_for("A100-PCIE-40GB", "1g.5gb").unwrap();
        assert_eq!(p.starts.len(), 7);
        let e = mig_profile_for("A100-PCIE-40GB", "1g.10gb").unwrap();
        assert_eq!(e.memory_slices, 2);
        // A 40 GB profile name on an 80 GB GPU: the error lists what that model allows.
        let e = mig_profile_for("A100-SXM4-80GB", "3g.20gb")
            .unwrap_err()
            .to_string();
        assert!(e.contains("A100-80GB") && e.contains("3g.40gb"), "{e}");
        let e = mig_profile_for("Tesla V100", "1g.5gb")
            .unwrap_err()
            .to_string();
        assert!(e.contains("H100-80GB"), "{e}");
    }

    #[test]
    fn request_fields_take_one_form_and_say_what_is_allowed() {
        assert_eq!(
            gpu_request_from_fields(Some(2), None, None, Some("1g.10gb")),
            Err(RequestError::Conflict("gpus", "mig"))
        );
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            let e = gpu_request_from_fields(None, Some(bad), None, None).unwrap_err();
            assert!(e.to_string().contains("at most 1 GPU"), "{e}");
        }
        assert_eq!(
            gpu_request_from_fields(None, Some(0.25), None, None),
            Ok(GpuRequest::Share { milli: 250 })
        );
        assert_eq!(
            gpu_request_from_fields(None, Some(1.0), None, None),
            Ok(GpuRequest::Whole { count: 1 })
        );
        let e = gpu_request_from_fields(None, None, None, Some("9g.99gb")).unwrap_err();
        assert!(
            e.to_string().contains("1g.10gb") && e.to_string().contains("7g.80gb"),
            "{e}"
        );
        assert!(matches!(
            gpu_request_from_fields(None, None, None, Some("2g.20gb")),
            Ok(GpuRequest::Mig { .. })
        ));
    }

    #[test]
    fn cluster_checks_memory_shares_and_mig_support() {
        use crate::cluster::Gpu;
        use crate::ids::GpuIndex;
        let gpu = |model: &str, mem_mib| Gpu {
            index: GpuIndex(0),
            model: model.into(),
            mem_mib,
            mig_enabled: false,
        };
        let v100 = [gpu("Tesla V100-SXM2-32GB", 32 * 1024)];
        let mem = ResourceRequest {
            gpu: GpuRequest::Memory { mib: 40 * 1024 },
            ..ResourceRequest::whole_gpus(0)
        };
        let e = mem.validate_on(&v100).unwrap_err();
        assert_eq!(
            e,
            RequestError::MemoryTooLarge {
                mib: 40 * 1024,
                largest: 32 * 1024
            }
        );
        let mig = ResourceRequest {
            gpu: GpuRequest::Mig {
                profile: mig_profile_for("A100-80GB", "1g.10gb").unwrap(),
            },
            ..ResourceRequest::whole_gpus(0)
        };
        let e = mig.validate_on(&v100).unwrap_err().to_string();
        assert!(
            e.contains("no acceptable GPU supports MIG") && e.contains("V100"),
            "{e}"
        );
        assert!(mig
            .validate_on(&[gpu("NVIDIA H100 80GB HBM3", 80 * 1024)])
            .is_ok());
        // 1g.10gb exists on A100-40GB too (two memory slices there).
        assert!(mig.validate_on(&[gpu("A100-PCIE-40GB", 40 * 1024)]).is_ok());
        let big = ResourceRequest {
            gpu: GpuRequest::Mig {
                profile: mig_profile_for("A100-80GB", "7g.80gb").unwrap(),
            },
            ..ResourceRequest::whole_gpus(0)
        };
        let e = big
            .validate_on(&[gpu("A100-PCIE-40GB", 40 * 1024)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("A100-40GB") && e.contains("7g.40gb"), "{e}");
    }

    /// A model is a prefix as users write it; none takes any GPU.
    #[test]
    fn a_model_is_asked_for_by_its_prefix() {
        assert!(super::model_matches("A100-SXM4-80GB", Some("A100")));
        assert!(super::model_matches("A100-SXM4-80GB", None));
        assert!(!super::model_matches("A100-SXM4-80GB", Some("H100")));
        assert!(!super::model_matches("A10", Some("A100")));
    }
}
