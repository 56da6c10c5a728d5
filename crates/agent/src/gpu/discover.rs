//! Choosing where the node's GPU list comes from: NVML, the operator's declaration, or
//! the fake library.
//!
//! Rules, in short:
//! - NVML, when it works, is the truth: a declaration given as well is ignored with a
//!   note (saying so when it disagrees), because the declaration can only be wrong.
//! - `Auto` falls back to the declaration only when NVML says there is no driver here
//!   (library absent, or present with the kernel driver not loaded). With the library
//!   absent and nothing declared the node has no GPUs; with the library present but the
//!   driver not loaded and nothing declared it is an error, since that host evidently
//!   should have GPUs. Other NVML failures (permissions, a failing call) are errors.
//! - Declared GPUs have no UUID, indices `0..n`, model `unknown` and 0 MiB ("not known")
//!   unless given.

use gpusched_wire::{GpuInfo, GpuSource};

use super::fake::{FakeNvml, FakeTopology};
use super::nvml::NvmlLibrary;
use std::sync::Arc;

use super::{gpus_from_library, model_name, GpuControl, GpuError, GpuLibrary};

/// The model of declared GPUs when none is given. Jobs that name no model run on them;
/// jobs that ask for a model never match it.
pub const UNKNOWN_MODEL: &str = "unknown";

/// Memory of each fake GPU: an 80 GB part, like the A100s and H100s it usually stands for.
pub const FAKE_MEM_MIB: u64 = 81920;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum GpuBackend {
    /// NVML where it works, else the declaration, else no GPUs.
    #[default]
    Auto,
    /// NVML or an error.
    Nvml,
    /// Only the declared GPUs; NVML is not touched.
    Declared,
    /// `count` fake GPUs of `model` (with or without the `NVIDIA ` prefix).
    Fake { count: u32, model: String },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GpuOptions {
    pub backend: GpuBackend,
    pub declared_count: Option<u32>,
    pub declared_model: Option<String>,
    pub declared_mem_mib: Option<u64>,
    /// The agent may create and destroy MIG instances on GPUs in MIG mode.
    pub mig_dynamic: bool,
    /// Fake backend only: GPUs in MIG mode and their starting layout (see
    /// [`FakeNvml::with_mig_spec`]).
    pub fake_mig: Option<String>,
    /// Fake backend only: how the fake GPUs are linked (a DGX-like or a PCIe-only box).
    pub fake_topology: Option<FakeTopology>,
    /// Fake backend only: the fault file read at every telemetry pass (the agent's
    /// `STATE_DIR/fake-faults.toml`); ignored by the other backends.
    pub fake_faults: Option<std::path::PathBuf>,
    /// Fake backend only: the node's name, from which its fake GPUs' UUIDs are made, so
    /// two fake nodes never report the same GPU (as no two real GPUs do).
    pub fake_node: Option<String>,
}

/// The node's GPUs and what the operator should know about how they were found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Discovery {
    pub gpus: Vec<GpuInfo>,
    pub notes: Vec<String>,
    /// The library, for MIG changes (none for declared GPUs).
    pub control: GpuControl,
}

/// A node name's 32-bit FNV-1a hash: the fake UUIDs' salt, the same on every run.
fn uuid_salt(node: &str) -> u32 {
    node.bytes().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// Discovers the node's GPUs with the real NVML.
pub fn discover(opts: &GpuOptions) -> Result<Discovery, GpuError> {
    discover_with(opts, || {
        NvmlLibrary::init().map(|lib| Box::new(lib) as Box<dyn GpuLibrary>)
    })
}

/// [`discover`] with the NVML loader supplied, so the rules can be tested without a driver.
/// The loader is called only for the backends that use NVML.
pub fn discover_with(
    opts: &GpuOptions,
    load_nvml: impl FnOnce() -> Result<Box<dyn GpuLibrary>, GpuError>,
) -> Result<Discovery, GpuError> {
    let declared = Declaration::from_options(opts)?;
    let mut notes = Vec::new();
    let mut control = GpuControl::default();
    if opts.fake_mig.is_some() && !matches!(opts.backend, GpuBackend::Fake { .. }) {
        return Err(GpuError::Call {
            call: "--fake-mig",
            message: "a fake MIG layout needs --gpu-backend fake".into(),
        });
    }
    if opts.fake_topology.is_some() && !matches!(opts.backend, GpuBackend::Fake { .. }) {
        return Err(GpuError::Call {
            call: "--fake-topology",
            message: "a fake GPU topology needs --gpu-backend fake (real GPUs report theirs \
                      through NVML)"
                .into(),
        });
    }
    let mut gpus = match &opts.backend {
        GpuBackend::Auto => match load_nvml() {
            Ok(lib) => {
                let lib: Arc<dyn GpuLibrary> = Arc::from(lib);
                control = GpuControl(Some(lib.clone()));
                from_nvml(lib.as_ref(), declared.as_ref(), &mut notes)?
            }
            Err(e @ (GpuError::LibraryNotFound | GpuError::DriverNotLoaded)) => {
                notes.push(format!("{e}."));
                match declared {
                    Some(d) => {
                        notes.push(d.describe());
                        d.gpus()
                    }
                    None if e == GpuError::LibraryNotFound => {
                        notes.push(
                            "This node offers no GPUs. If it has some, pass --gpus N --gpu-model \
                             MODEL to declare them."
                                .to_string(),
                        );
                        Vec::new()
                    }
                    None => return Err(GpuError::UnusableAndUndeclared(Box::new(e))),
                }
            }
            Err(e) => return Err(e),
        },
        GpuBackend::Nvml => {
            let lib: Arc<dyn GpuLibrary> = Arc::from(load_nvml()?);
            control = GpuControl(Some(lib.clone()));
            from_nvml(lib.as_ref(), declared.as_ref(), &mut notes)?
        }
        GpuBackend::Declared => {
            let d = declared.ok_or(GpuError::DeclaredBackendWithoutCount)?;
            notes.push(d.describe());
            d.gpus()
        }
        GpuBackend::Fake { count, model } => {
            if model.trim().is_empty() {
                return Err(GpuError::EmptyModel);
            }
            // --gpus and --gpu-model make the fake GPUs; only a declared memory size has
            // no effect (fake GPUs have NVML's size of their model).
            if opts.declared_mem_mib.is_some() {
                notes.push(format!(
                    "The declared GPU memory was ignored: fake GPUs have {FAKE_MEM_MIB} MiB."
                ));
            }
            let mut lib = FakeNvml::uniform(*count, &nvml_style_name(model), FAKE_MEM_MIB)
                .with_uuid_salt(opts.fake_node.as_deref().map_or(0, uuid_salt));
            if let Some(spec) = &opts.fake_mig {
                lib = lib.with_mig_spec(spec)?;
            }
            if let Some(t) = opts.fake_topology {
                lib = lib.with_topology(t);
            }
            if let Some(path) = &opts.fake_faults {
                lib = lib.with_faults_file(path.clone());
            }
            notes.push(format!(
                "Using {count} fake GPU(s) of model {}: nothing here is a real GPU.",
                model_name(model)
            ));
            let gpus = gpus_from_library(&lib, GpuSource::Fake)?;
            control = GpuControl(Some(Arc::new(lib)));
            gpus
        }
    };
    let mig_gpus = gpus.iter().filter(|g| g.mig.is_some()).count();
    for g in &mut gpus {
        if let Some(m) = &mut g.mig {
            m.dynamic = opts.mig_dynamic;
        }
    }
    if mig_gpus > 0 {
        notes.push(format!(
            "{mig_gpus} GPU(s) in MIG mode serve MIG jobs only; {}.",
            if opts.mig_dynamic {
                "instances are created and destroyed to fit the queue (--mig-dynamic)"
            } else {
                "their instances are used as they are (pass --mig-dynamic to re-layout them)"
            }
        ));
    } else if opts.mig_dynamic {
        notes.push("--mig-dynamic has no effect: no GPU here is in MIG mode.".into());
    }
    Ok(Discovery {
        gpus,
        notes,
        control,
    })
}

fn from_nvml(
    lib: &dyn GpuLibrary,
    declared: Option<&Declaration>,
    notes: &mut Vec<String>,
) -> Result<Vec<GpuInfo>, GpuError> {
    let gpus = gpus_from_library(lib, GpuSource::Nvml)?;
    if gpus.is_empty() {
        notes.push("NVML works but reports no GPUs on this node.".into());
    }
    if let Some(d) = declared {
        let found = gpus.len();
        let disagreement = if u32::try_from(found).ok() == Some(d.count) {
            String::new()
        } else {
            format!(" (declared {}, NVML found {found})", d.count)
        };
        notes.push(format!(
            "The declared GPUs were ignored: NVML reports this node's GPUs{disagreement}."
        ));
    }
    Ok(gpus)
}

/// GPUs the operator stated exist, validated.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Declaration {
    count: u32,
    model: String,
    mem_mib: u64,
}

impl Declaration {
    fn from_options(opts: &GpuOptions) -> Result<Option<Declaration>, GpuError> {
        let Some(count) = opts.declared_count else {
            if opts.declared_model.is_some() || opts.declared_mem_mib.is_some() {
                return Err(GpuError::DeclarationWithoutCount);
            }
            return Ok(None);
        };
        let model = match &opts.declared_model {
            Some(m) if m.trim().is_empty() => return Err(GpuError::EmptyModel),
            // Declared names are normalised like NVML's, so `NVIDIA A100` and `A100` agree.
            Some(m) => model_name(m),
            None => UNKNOWN_MODEL.to_string(),
        };
        Ok(Some(Declaration {
            count,
            model,
            mem_mib: opts.declared_mem_mib.unwrap_or(0),
        }))
    }

    fn gpus(&self) -> Vec<GpuInfo> {
        (0..self.count)
            .map(|index| GpuInfo {
                index,
                uuid: None,
                model: self.model.clone(),
                mem_mib: self.mem_mib,
                source: GpuSource::Declared,
                mig: None,
            })
            .collect()
    }

    fn describe(&self) -> String {
        let mut note = format!(
            "Using {} declared GPU(s) of model {}; nothing checks that they exist.",
            self.count, self.model
        );
        if self.model == UNKNOWN_MODEL && self.count > 0 {
            note.push_str(
                " No model was declared, so jobs that ask for a model will not run here.",
            );
        }
        note
    }
}

/// What NVML would call a GPU of this model.
fn nvml_style_name(model: &str) -> String {
    let model = model.trim();
    if model.starts_with("NVIDIA ") {
        model.to_string()
    } else {
        format!("NVIDIA {model}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::FakeFailure;
    use super::*;

    fn nvml_with(count: u32) -> impl FnOnce() -> Result<Box<dyn GpuLibrary>, GpuError> {
        move || Ok(Box::new(FakeNvml::uniform(count, "NVIDIA H100 80GB HBM3", 81559)) as _)
    }

    fn no_library() -> Result<Box<dyn GpuLibrary>, GpuError> {
        Err(GpuError::LibraryNotFound)
    }

    fn no_driver() -> Result<Box<dyn GpuLibrary>, GpuError> {
        Err(GpuError::DriverNotLoaded)
    }

    fn unused() -> Result<Box<dyn GpuLibrary>, GpuError> {
        panic!("NVML must not be loaded for this backend")
    }

    fn declared(count: u32, model: Option<&str>) -> GpuOptions {
        GpuOptions {
            declared_count: Some(count),
            declared_model: model.map(str::to_string),
            ..GpuOptions::default()
        }
    }

    #[test]
    fn auto_uses_nvml_when_it_works() {
        let found = discover_with(&GpuOptions::default(), nvml_with(2)).unwrap();
        assert_eq!(found.gpus.len(), 2);
        assert!(found.gpus.iter().all(|g| g.source == GpuSource::Nvml));
        assert_eq!(found.gpus[0].model, "H100 80GB HBM3");
        assert!(found.gpus[0].uuid.is_some());
        assert!(found.notes.is_empty(), "{:?}", found.notes);
    }

    #[test]
    fn nvml_wins_over_a_declaration_with_a_note() {
        let found = discover_with(&declared(8, Some("A100")), nvml_with(2)).unwrap();
        assert_eq!(found.gpus.len(), 2);
        assert_eq!(found.gpus[1].source, GpuSource::Nvml);
        assert!(
            found.notes[0].contains("ignored")
                && found.notes[0].contains("declared 8, NVML found 2"),
            "{:?}",
            found.notes
        );
        let agreeing = discover_with(&declared(2, None), nvml_with(2)).unwrap();
        assert!(agreeing.notes[0].contains("ignored"));
        assert!(!agreeing.notes[0].contains("NVML found"));
    }

    #[test]
    fn auto_without_library_uses_the_declaration() {
        let found = discover_with(&declared(3, Some("NVIDIA A100-SXM4-80GB")), no_library).unwrap();
        assert_eq!(found.gpus.len(), 3);
        for (i, gpu) in found.gpus.iter().enumerate() {
            assert_eq!(gpu.index, i as u32);
            assert_eq!(gpu.uuid, None);
            assert_eq!(gpu.model, "A100-SXM4-80GB");
            assert_eq!(gpu.source, GpuSource::Declared);
        }
        assert!(
            found.notes[0].contains("libnvidia-ml.so.1"),
            "{:?}",
            found.notes
        );
    }

    #[test]
    fn declared_model_and_memory_default_to_unknown() {
        let found = discover_with(&declared(1, None), no_library).unwrap();
        assert_eq!(found.gpus[0].model, UNKNOWN_MODEL);
        assert_eq!(found.gpus[0].mem_mib, 0);
        assert!(found
            .notes
            .iter()
            .any(|n| n.contains("No model was declared")));
        let opts = GpuOptions {
            declared_mem_mib: Some(40960),
            ..declared(1, Some("A100"))
        };
        assert_eq!(
            discover_with(&opts, no_library).unwrap().gpus[0].mem_mib,
            40960
        );
    }

    #[test]
    fn auto_without_library_or_declaration_has_no_gpus_and_says_how_to_declare() {
        let found = discover_with(&GpuOptions::default(), no_library).unwrap();
        assert!(found.gpus.is_empty());
        assert!(found
            .notes
            .iter()
            .any(|n| n.contains("--gpus N --gpu-model MODEL")));
    }

    #[test]
    fn auto_with_library_but_no_driver_needs_a_declaration() {
        let err = discover_with(&GpuOptions::default(), no_driver).unwrap_err();
        assert!(matches!(err, GpuError::UnusableAndUndeclared(_)));
        assert!(err.to_string().contains("--gpus N"), "{err}");
        let found = discover_with(&declared(2, Some("L4")), no_driver).unwrap();
        assert_eq!(found.gpus.len(), 2);
        assert_eq!(found.gpus[0].source, GpuSource::Declared);
    }

    #[test]
    fn auto_reports_other_nvml_failures() {
        let err = discover_with(&declared(2, None), || Err(GpuError::NoPermission)).unwrap_err();
        assert_eq!(err, GpuError::NoPermission);
        let failing = || Ok(Box::new(FakeNvml::failing(FakeFailure::NotInitialized)) as _);
        let err = discover_with(&GpuOptions::default(), failing).unwrap_err();
        assert_eq!(err, GpuError::NotInitialized);
    }

    #[test]
    fn nvml_backend_requires_nvml() {
        let opts = GpuOptions {
            backend: GpuBackend::Nvml,
            ..declared(2, None)
        };
        assert_eq!(
            discover_with(&opts, no_library).unwrap_err(),
            GpuError::LibraryNotFound
        );
        let found = discover_with(&opts, nvml_with(4)).unwrap();
        assert_eq!(found.gpus.len(), 4);
        assert!(found.notes[0].contains("ignored"));
    }

    #[test]
    fn declared_backend_uses_only_the_declaration() {
        let opts = GpuOptions {
            backend: GpuBackend::Declared,
            ..declared(2, Some("A100"))
        };
        let found = discover_with(&opts, unused).unwrap();
        assert_eq!(found.gpus.len(), 2);
        assert_eq!(found.gpus[0].source, GpuSource::Declared);
        let zero = GpuOptions {
            backend: GpuBackend::Declared,
            ..declared(0, None)
        };
        assert!(discover_with(&zero, unused).unwrap().gpus.is_empty());
        let missing = GpuOptions {
            backend: GpuBackend::Declared,
            ..GpuOptions::default()
        };
        assert_eq!(
            discover_with(&missing, unused).unwrap_err(),
            GpuError::DeclaredBackendWithoutCount
        );
    }

    #[test]
    fn fake_backend_makes_fake_gpus() {
        let opts = GpuOptions {
            backend: GpuBackend::Fake {
                count: 2,
                model: "A100-SXM4-80GB".into(),
            },
            ..GpuOptions::default()
        };
        let found = discover_with(&opts, unused).unwrap();
        assert_eq!(found.gpus.len(), 2);
        assert_eq!(found.gpus[0].source, GpuSource::Fake);
        assert_eq!(found.gpus[0].model, "A100-SXM4-80GB");
        assert_eq!(found.gpus[0].mem_mib, FAKE_MEM_MIB);
        assert!(found.gpus[0].uuid.as_deref().unwrap().starts_with("GPU-"));
        assert_ne!(found.gpus[0].uuid, found.gpus[1].uuid);
        let prefixed = GpuOptions {
            backend: GpuBackend::Fake {
                count: 1,
                model: "NVIDIA L4".into(),
            },
            ..GpuOptions::default()
        };
        assert_eq!(
            discover_with(&prefixed, unused).unwrap().gpus[0].model,
            "L4"
        );
    }

    #[test]
    fn fake_gpus_take_their_count_from_gpus_and_their_uuids_from_the_node() {
        let fake = |node: &str| GpuOptions {
            backend: GpuBackend::Fake {
                count: 2,
                model: "A100-SXM4-80GB".into(),
            },
            fake_node: Some(node.into()),
            ..declared(2, Some("A100-SXM4-80GB"))
        };
        let a = discover_with(&fake("n1"), unused).unwrap();
        // --gpus 2 is the fake count, not a declaration the fake backend ignored.
        assert!(
            a.notes.iter().all(|n| !n.contains("ignored")),
            "{:?}",
            a.notes
        );
        let uuids = |d: &Discovery| -> Vec<String> {
            d.gpus.iter().map(|g| g.uuid.clone().unwrap()).collect()
        };
        let b = discover_with(&fake("n2"), unused).unwrap();
        assert!(
            uuids(&a).iter().all(|u| !uuids(&b).contains(u)),
            "{:?} {:?}",
            uuids(&a),
            uuids(&b)
        );
        assert_eq!(
            uuids(&a),
            uuids(&discover_with(&fake("n1"), unused).unwrap())
        );
        let sized = GpuOptions {
            declared_mem_mib: Some(1024),
            ..fake("n1")
        };
        let notes = discover_with(&sized, unused).unwrap().notes;
        assert!(
            notes.iter().any(|n| n.contains("memory was ignored")),
            "{notes:?}"
        );
    }

    #[test]
    fn incomplete_or_empty_declarations_are_refused() {
        let model_only = GpuOptions {
            declared_model: Some("A100".into()),
            ..GpuOptions::default()
        };
        assert_eq!(
            discover_with(&model_only, no_library).unwrap_err(),
            GpuError::DeclarationWithoutCount
        );
        assert_eq!(
            discover_with(&declared(1, Some("  ")), no_library).unwrap_err(),
            GpuError::EmptyModel
        );
        let empty_fake = GpuOptions {
            backend: GpuBackend::Fake {
                count: 1,
                model: String::new(),
            },
            ..GpuOptions::default()
        };
        assert_eq!(
            discover_with(&empty_fake, unused).unwrap_err(),
            GpuError::EmptyModel
        );
    }
}
