//! Checks a submission before it is accepted. Every message names the field, what was
//! wrong and what is allowed.

use gpusched_core::admission::{self, Unfit};
use gpusched_core::resources::{gpu_request_from_fields, GpuRequest, ResourceRequest};
use gpusched_core::{Gpu, GpuIndex};
use gpusched_wire::{parse_mib, GpuInfo, JobSubmit, SliceAsk};

use super::shape;

/// The most GPUs one job may ask for; far above any node, it only catches typos.
pub const MAX_GPUS: u32 = 1024;
/// Walltime above a year is a mistake (a unit mix-up), not a plan.
pub const MAX_WALLTIME_S: u64 = 366 * 24 * 3600;

/// A walltime as submit and `update` accept it: above 0, at most a year.
pub fn check_walltime(walltime_s: Option<u64>) -> Result<(), String> {
    match walltime_s {
        Some(0) => Err("`walltime_s` must be above 0 (seconds); leave it out for no limit".into()),
        Some(w) if w > MAX_WALLTIME_S => Err(format!(
            "`walltime_s` = {w} is over a year; give the limit in seconds (at most {MAX_WALLTIME_S})"
        )),
        _ => Ok(()),
    }
}
pub const MAX_RETRIES: u32 = 100;
/// The most nodes one job may run on at once.
pub const MAX_NODES: u32 = 1024;

/// The GPUs of one known node, for the "could any node ever hold it" check.
#[derive(Clone, Copy)]
pub struct KnownNode<'a> {
    pub name: &'a str,
    pub gpus: &'a [GpuInfo],
    pub cpus: u32,
    pub mem_mib: u64,
    /// Generic counted resources its agent declared.
    pub resources: &'a std::collections::BTreeMap<String, u64>,
}

impl admission::KnownNode for KnownNode<'_> {
    fn name(&self) -> &str {
        self.name
    }
    fn cpus(&self) -> u32 {
        self.cpus
    }
    fn mem_mib(&self) -> u64 {
        self.mem_mib
    }
    fn resources(&self) -> &std::collections::BTreeMap<String, u64> {
        self.resources
    }
    fn gpus(&self) -> impl Iterator<Item = (&str, bool)> {
        self.gpus
            .iter()
            .map(|g| (g.model.as_str(), g.mig.is_some()))
    }
}

/// The checks that need nothing but the submission: a failure is a malformed request
/// (400), and the OpenAPI document states each of them as a schema constraint.
pub fn check_submit(job: &JobSubmit) -> Result<(), String> {
    if job.command.is_empty() || job.command[0].is_empty() {
        return Err("`command` is empty: give the program to run and its arguments, e.g. [\"python\", \"train.py\"]".into());
    }
    if job.command.len() > 4096 {
        return Err(format!(
            "`command` has {} arguments; at most 4096",
            job.command.len()
        ));
    }
    let nul = |s: &str| s.contains('\0');
    if job.command.iter().any(|a| nul(a)) {
        return Err("`command` contains a NUL byte, which no program can receive".into());
    }
    if let Some(name) = &job.name {
        if name.is_empty() {
            return Err(
                "`name` is empty: give the job a name, or leave `name` out to name the job \
                 after its program"
                    .into(),
            );
        }
        // Names are printed on terminals (`queue`, `show`, `top`): an escape sequence
        // could retitle or redraw an operator's terminal, a newline break a table.
        if name.chars().count() > 256 || name.chars().any(gpusched_wire::text::is_terminal_control)
        {
            return Err(format!(
                "`name` {name:?} must be 1-256 characters without control characters \
                 (newlines, escapes, bidirectional overrides)"
            ));
        }
    }
    if let Some(image) = &job.image {
        gpusched_wire::image::check_reference(image).map_err(|e| format!("`image`: {e}"))?;
    }
    if job.pids_max == Some(0) {
        return Err(
            "`pids_max` is 0: a job needs at least 1 process; leave it out for the node's default"
                .into(),
        );
    }
    if let Some(cwd) = &job.cwd {
        if !cwd.starts_with('/') || nul(cwd) {
            return Err(format!(
                "`cwd` must be an absolute path on the node, got {cwd:?}"
            ));
        }
    }
    for (k, v) in &job.env {
        if k.is_empty() || k.contains('=') || nul(k) || nul(v) {
            return Err(format!(
                "`env` key {k:?} is not a valid variable name (non-empty, no '=' or NUL)"
            ));
        }
    }
    if let Some(c) = job.cpus {
        if !(c.is_finite() && c > 0.0 && c <= 100_000.0) {
            return Err(format!("`cpus` = {c} must be above 0 and at most 100000"));
        }
    }
    if job.mem_mib.is_some_and(|m| m == 0 || m > 1 << 36) {
        return Err("`mem_mib` must be above 0 and at most 64 TiB".into());
    }
    gpusched_wire::resource::check_map(&job.resources).map_err(|e| format!("`resources`: {e}"))?;
    if job.nodes.is_some_and(|n| n == 0 || n > MAX_NODES) {
        return Err(format!(
            "`nodes` must be between 1 and {MAX_NODES} (the nodes the job runs on at once)"
        ));
    }
    if job.gpus_per_node.is_some_and(|g| g > MAX_GPUS) {
        return Err(format!("`gpus_per_node` must be at most {MAX_GPUS}"));
    }
    if job.tasks_per_node.is_some_and(|k| k == 0 || k > MAX_GPUS) {
        return Err(format!(
            "`tasks_per_node` must be between 1 and {MAX_GPUS} (processes started on each node)"
        ));
    }
    let request = gpu_request(job)?;
    let slice = ask_of(&request);
    let gpus = whole_gpus(job, slice.as_ref());
    if slice.is_some() && !job.resources.is_empty() {
        return Err(
            "`resources` go with whole GPUs or none (`gpus`), not with part of a GPU \
             (`gpu_share`, `gpu_mem`, `mig`); ask for `gpus` instead"
                .into(),
        );
    }
    if job.gpus.is_some_and(|g| g > MAX_GPUS) || gpus > MAX_GPUS {
        return Err(format!(
            "`gpus` = {gpus} is absurd; one job may ask for at most {MAX_GPUS}"
        ));
    }
    check_walltime(job.walltime_s)?;
    if job.max_retries.is_some_and(|r| r > MAX_RETRIES) {
        return Err(format!("`max_retries` must be at most {MAX_RETRIES}"));
    }
    if let Some(user) = &job.user {
        check_user_name(user).map_err(|e| format!("`user`: {e}"))?;
    }
    if job
        .client_token
        .as_ref()
        .is_some_and(|t| t.is_empty() || t.chars().count() > 128)
    {
        return Err("`client_token` must be 1-128 characters".into());
    }
    Ok(())
}

/// Whether any node of the cluster as it is now could ever hold a well-formed
/// submission (checked by [`check_submit`] first): a failure is a conflict with the
/// cluster's state (409), since the same request succeeds once a fitting node joins.
/// The fields of a gang must also agree with each other (`shape.rs`), a conflict too.
pub fn check_fits(job: &JobSubmit, nodes: &[KnownNode]) -> Result<(), String> {
    let request = gpu_request(job)?;
    let slice = ask_of(&request);
    let shape = shape::shape(job, slice.is_some())?;
    match slice {
        Some(_) => slice_could_fit(job, request, nodes),
        None if shape.nodes != 1 => {
            // A gang: CPUs, memory and resources are asked on each node.
            could_ever_fit(job, 0, nodes)?;
            shape::gang_could_fit(job, shape, nodes)
        }
        None => could_ever_fit(job, shape.gpus, nodes),
    }
}

/// The part of one GPU a submission asks for (`gpu_share`, `gpu_mem` or `mig`), if any;
/// more than one form, or `gpus` with one of them, is an error that says what is
/// allowed. The core's request language decides.
pub fn slice_of(job: &JobSubmit) -> Result<Option<SliceAsk>, String> {
    gpu_request(job).map(|r| ask_of(&r))
}

/// The submission's GPU fields as the core's request.
fn gpu_request(job: &JobSubmit) -> Result<GpuRequest, String> {
    let mem = match &job.gpu_mem {
        Some(m) => Some(parse_mib(m).map_err(|e| format!("`gpu_mem` {e}"))?),
        None => None,
    };
    gpu_request_from_fields(job.gpus, job.gpu_share, mem, job.mig.as_deref())
        .map_err(|e| e.to_string())
}

/// The part of one GPU a request is, on the wire (none for whole GPUs).
fn ask_of(req: &GpuRequest) -> Option<SliceAsk> {
    match req {
        GpuRequest::Share { milli } => Some(SliceAsk::Share { milli: *milli }),
        GpuRequest::Memory { mib } => Some(SliceAsk::Memory { mib: *mib }),
        GpuRequest::Mig { profile } => Some(SliceAsk::Mig {
            profile: profile.name.clone(),
        }),
        _ => None,
    }
}

/// Whole GPUs a submission asks for over all its nodes: `gpus` (or `nodes` x
/// `gpus_per_node`), 1 by default, 0 for a slice.
pub fn whole_gpus(job: &JobSubmit, slice: Option<&SliceAsk>) -> u32 {
    match slice {
        Some(_) => 0,
        None => shape::shape(job, false).map_or(job.gpus.unwrap_or(1), |s| s.gpus),
    }
}

/// A share must fit some GPU's memory and a MIG profile must exist on some MIG GPU of
/// the cluster (the core's checks, against every known node's GPUs).
fn slice_could_fit(job: &JobSubmit, gpu: GpuRequest, nodes: &[KnownNode]) -> Result<(), String> {
    if nodes.is_empty() {
        return could_ever_fit(job, 1, nodes);
    }
    // MIG requests need a GPU in MIG mode; shares one that is not.
    let mig = matches!(gpu, GpuRequest::Mig { .. });
    let req = ResourceRequest {
        gpu,
        gpu_models: job.gpu_model.iter().cloned().collect(),
        ..ResourceRequest::whole_gpus(0)
    };
    let gpus: Vec<Gpu> = nodes
        .iter()
        .flat_map(|n| n.gpus.iter())
        .filter(|g| g.mig.is_some() == mig)
        .map(|g| Gpu {
            index: GpuIndex(g.index),
            model: g.model.clone(),
            mem_mib: g.mem_mib,
            mig_enabled: g.mig.is_some(),
        })
        .collect();
    if gpus.is_empty() {
        return Err(if mig {
            "no GPU in this cluster is in MIG mode, so no MIG instance can be given; ask for \
             whole GPUs or a share (`gpu_share`), or enable MIG on a node (nvidia-smi -mig 1) \
             and restart its agent"
                .to_string()
        } else {
            "every GPU in this cluster is in MIG mode, so shares cannot be placed; ask for a \
             MIG profile (`mig`)"
                .to_string()
        });
    }
    if !gpus.iter().any(|g| req.accepts_model(&g.model)) {
        return could_ever_fit(job, 1, nodes);
    }
    req.validate_on(&gpus).map_err(|e| e.to_string())
}

/// A node's name as an agent registers it: what `nodes`, `queue` and `top` print and
/// what `drain NODE` is given, so 1-253 characters with no spaces or '/' and no control
/// characters (an escape sequence would reach every operator's terminal).
pub fn check_node_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 253
        || name
            .chars()
            .any(|c| c.is_whitespace() || c == '/' || gpusched_wire::text::is_terminal_control(c))
    {
        return Err(format!(
            "node name {name:?} must be 1-253 characters without spaces, '/' or control \
             characters; start the agent with another --name (the default is the host name)"
        ));
    }
    Ok(())
}

/// User names as Unix knows them (and a few extra characters for e-mail-like names).
pub fn check_user_name(user: &str) -> Result<(), String> {
    let ok = !user.is_empty()
        && user.len() <= 64
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "user {user:?} must be 1-64 characters of letters, digits, '.', '_', '-', '@'"
        ))
    }
}

/// Whether some known node could ever hold `gpus` whole GPUs of the job with its CPUs,
/// memory and resources (the core's `admission::could_ever_fit`), in words.
fn could_ever_fit(job: &JobSubmit, gpus: u32, nodes: &[KnownNode]) -> Result<(), String> {
    let ask = admission::Ask {
        gpus,
        model: job.gpu_model.as_deref(),
        cpus: job.cpus,
        mem_mib: job.mem_mib,
        resources: &job.resources,
    };
    admission::could_ever_fit(&ask, nodes).map_err(|why| unfit_words(job, why))
}

/// The words of why no node could ever run the job, with what to change.
fn unfit_words(job: &JobSubmit, why: Unfit) -> String {
    match why {
        Unfit::Cpus { asked, most } => {
            format!("`cpus` = {asked}, but the largest node has {most} CPUs")
        }
        Unfit::Memory { asked, most } => {
            format!("`mem_mib` = {asked}, but the largest node has {most} MiB")
        }
        Unfit::NoNodes => "no node has joined the cluster yet, so nothing could run this job; \
                           start an agent (`gpusched agent --server URL`) or use `gpusched up`"
            .into(),
        Unfit::NoSuchResource { name, declared } => format!(
            "no node declares resource `{name}`, so nothing could run this job; the \
             resources nodes declare are: {} (an agent declares one with \
             `gpusched agent --resource {name}=N`)",
            if declared.is_empty() {
                "none".to_string()
            } else {
                declared.join(", ")
            }
        ),
        Unfit::TooMuchResource {
            name,
            want,
            most,
            node,
        } => format!(
            "`resources`: {name}={want}, but the most any node declares is {most} \
             (on {node}); ask for at most {most}"
        ),
        Unfit::NoSuchModel { model, models } => format!(
            "no node has GPUs of model `{model}*`; the models in this cluster are: {}",
            if models.is_empty() {
                "none".to_string()
            } else {
                models.join(", ")
            }
        ),
        Unfit::TooManyGpus { gpus, most, node } => {
            let of_model = job
                .gpu_model
                .as_ref()
                .map(|m| format!(" of model `{m}*`"))
                .unwrap_or_default();
            format!(
                "the job asks for {}{of_model} on one node, but the largest node ({node}) has \
                 {most}; ask for at most {most}, or run it on several nodes: `--nodes N \
                 --gpus-per-node G` (N x G = {gpus}) or `--split` to let the scheduler choose",
                gpusched_wire::count(gpus, "GPU")
            )
        }
        Unfit::NotTogether { gpus } => format!(
            "no single node has the {} this job asks for together with its CPUs, memory and \
             resources (each exists, but on different nodes); a job runs on one node, so ask \
             for less of one of them",
            gpusched_wire::count(gpus, "GPU")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusched_wire::GpuSource;
    use std::collections::BTreeMap;

    static EMPTY_RESOURCES: BTreeMap<String, u64> = BTreeMap::new();

    fn gpus(n: u32, model: &str) -> Vec<GpuInfo> {
        (0..n)
            .map(|index| GpuInfo {
                index,
                uuid: None,
                model: model.into(),
                mem_mib: 81920,
                source: GpuSource::Declared,
                mig: None,
            })
            .collect()
    }

    fn job(g: u32) -> JobSubmit {
        JobSubmit {
            command: vec!["/bin/true".into()],
            gpus: Some(g),
            ..Default::default()
        }
    }

    fn check_submit(job: &JobSubmit, nodes: &[KnownNode]) -> Result<(), String> {
        super::check_submit(job)?;
        check_fits(job, nodes)
    }

    #[test]
    fn node_names_with_spaces_slashes_or_control_characters_are_refused() {
        for bad in [
            "",
            "my node",
            "a/b",
            "evil\x1b]0;pwned\x07",
            "n\u{202e}1",
            "del\x7f",
        ] {
            let e = check_node_name(bad).unwrap_err();
            assert!(e.contains("--name"), "{bad:?}: {e}");
        }
        assert!(check_node_name(&"n".repeat(254)).is_err());
        for ok in ["gpu-01", "node.rack3.example", "训练-1"] {
            assert_eq!(check_node_name(ok), Ok(()));
        }
    }

    #[test]
    fn names_that_are_empty_or_hold_control_characters_are_refused() {
        let named = |n: &str| JobSubmit {
            name: Some(n.into()),
            ..job(1)
        };
        let e = super::check_submit(&named("")).unwrap_err();
        assert!(e.starts_with("`name` is empty"), "{e}");
        for bad in [
            "evil\x1b]0;pwned\x07",
            "two\nlines",
            "nul\0",
            "a\u{202e}b",
            "c1\u{9b}",
        ] {
            let e = super::check_submit(&named(bad)).unwrap_err();
            assert!(e.contains("without control characters"), "{bad:?}: {e}");
        }
        assert!(super::check_submit(&named("训练 🚀 v2")).is_ok());
        assert!(super::check_submit(&named(&"x".repeat(257))).is_err());
    }

    #[test]
    fn image_references_and_process_caps_are_checked() {
        let with = |image: Option<&str>, pids_max: Option<u64>| JobSubmit {
            image: image.map(str::to_string),
            pids_max,
            ..job(1)
        };
        assert!(
            super::check_submit(&with(Some("docker.io/library/python:3.12"), Some(64))).is_ok()
        );
        for bad in ["", "two words", "tab\there", "esc\x1b[0m", "-v/:/host"] {
            let e = super::check_submit(&with(Some(bad), None)).unwrap_err();
            assert!(e.starts_with("`image`: "), "{bad:?}: {e}");
        }
        let e = super::check_submit(&with(None, Some(0))).unwrap_err();
        assert!(e.starts_with("`pids_max` is 0"), "{e}");
    }

    #[test]
    fn cpu_only_jobs_and_generic_resources_are_checked_against_the_nodes() {
        let a = gpus(2, "A100");
        let fpga: BTreeMap<String, u64> = [("fpga".to_string(), 2)].into();
        let nodes = [
            KnownNode {
                name: "gpu",
                gpus: &a,
                cpus: 16,
                mem_mib: 65536,
                resources: &EMPTY_RESOURCES,
            },
            KnownNode {
                name: "fpga",
                gpus: &[],
                cpus: 4,
                mem_mib: 8192,
                resources: &fpga,
            },
        ];
        let mut j = job(0);
        j.cpus = Some(4.0);
        j.mem_mib = Some(8192);
        j.resources.insert("fpga".into(), 2);
        assert!(check_submit(&j, &nodes).is_ok());
        j.resources.insert("fpga".into(), 3);
        let e = check_submit(&j, &nodes).unwrap_err();
        assert!(e.contains("fpga=3") && e.contains("is 2 (on fpga)"), "{e}");
        j.resources = [("tpu".to_string(), 1)].into();
        let e = check_submit(&j, &nodes).unwrap_err();
        assert!(
            e.contains("no node declares resource `tpu`")
                && e.contains("declare are: fpga")
                && e.contains("--resource tpu=N"),
            "{e}"
        );
        // Each exists, but not on one node: 1 GPU is only on `gpu`, the FPGA on `fpga`.
        let mut j = job(1);
        j.resources.insert("fpga".into(), 1);
        let e = check_submit(&j, &nodes).unwrap_err();
        assert!(e.contains("no single node"), "{e}");
        // Malformed asks are 400s from `check_submit` alone, with the field named.
        for (name, n, want) in [
            ("FPGA", 1, "lowercase"),
            ("fpga", 0, "at least 1"),
            ("9x", 1, "lowercase"),
        ] {
            let mut j = job(0);
            j.resources.insert(name.into(), n);
            let e = super::check_submit(&j).unwrap_err();
            assert!(e.starts_with("`resources`: ") && e.contains(want), "{e}");
        }
        let mut j = JobSubmit {
            command: vec!["x".into()],
            gpu_share: Some(0.5),
            ..Default::default()
        };
        j.resources.insert("fpga".into(), 1);
        let e = super::check_submit(&j).unwrap_err();
        assert!(e.contains("not with part of a GPU"), "{e}");
        for bad in [Some(0.0), Some(-1.0), Some(f64::NAN)] {
            let mut j = job(0);
            j.cpus = bad;
            assert!(super::check_submit(&j).unwrap_err().contains("`cpus`"));
        }
    }

    #[test]
    fn a_gang_needs_enough_nodes_of_one_model() {
        let (a, h, small) = (gpus(8, "A100"), gpus(8, "H100"), gpus(2, "A100"));
        let node = |name, gpus| KnownNode {
            name,
            gpus,
            cpus: 16,
            mem_mib: 65536,
            resources: &EMPTY_RESOURCES,
        };
        let nodes = [
            node("a1", &a),
            node("a2", &a),
            node("h1", &h),
            node("s1", &small),
        ];
        let gang = |n: u32, g: u32| JobSubmit {
            command: vec!["/bin/true".into()],
            nodes: Some(n),
            gpus_per_node: Some(g),
            ..Default::default()
        };
        assert!(check_submit(&gang(2, 8), &nodes).is_ok());
        let e = check_submit(&gang(3, 8), &nodes).unwrap_err();
        assert!(
            e.contains("3 nodes with 8 GPUs each")
                && e.contains("has 2 such node(s) of one GPU model"),
            "{e}"
        );
        let mut mixed = gang(3, 8);
        mixed.mixed_models = true;
        assert!(check_submit(&mixed, &nodes).is_ok());
        assert!(
            check_submit(&gang(3, 2), &nodes).is_ok(),
            "A100 nodes of 8 and 2"
        );
        assert!(
            check_submit(&gang(4, 2), &nodes).is_err(),
            "3 A100 nodes, 1 H100"
        );
        let mut split = job(26);
        split.split = true;
        assert!(check_submit(&split, &nodes).is_ok());
        split.gpus = Some(27);
        let e = check_submit(&split, &nodes).unwrap_err();
        assert!(e.contains("whole cluster has 26"), "{e}");
        // Field bounds are malformed requests (400): check_submit alone says so.
        let e = super::check_submit(&gang(0, 8)).unwrap_err();
        assert!(e.contains("`nodes` must be between 1 and 1024"), "{e}");
        let mut k = gang(2, 8);
        k.tasks_per_node = Some(0);
        let e = super::check_submit(&k).unwrap_err();
        assert!(e.contains("`tasks_per_node` must be"), "{e}");
    }

    #[test]
    fn messages_say_what_to_fix() {
        let a = gpus(8, "A100-SXM4-80GB");
        let nodes = [KnownNode {
            name: "n1",
            gpus: &a,
            cpus: 16,
            mem_mib: 65536,
            resources: &EMPTY_RESOURCES,
        }];
        assert!(check_submit(&job(8), &nodes).is_ok());
        let e = check_submit(&job(9), &nodes).unwrap_err();
        assert!(
            e.contains("largest node (n1) has 8") && e.contains("at most 8"),
            "{e}"
        );
        assert!(
            e.contains("--nodes N --gpus-per-node G") && e.contains("--split"),
            "{e}"
        );
        // A job without GPUs (a CPU-only step) is fine.
        assert!(check_submit(&job(0), &nodes).is_ok());
        let e = check_submit(&job(5000), &nodes).unwrap_err();
        assert!(e.contains("absurd"), "{e}");
        let mut j = job(1);
        j.gpu_model = Some("H100".into());
        let e = check_submit(&j, &nodes).unwrap_err();
        assert!(e.contains("H100") && e.contains("A100-SXM4-80GB"), "{e}");
        j.gpu_model = Some("A100".into());
        assert!(check_submit(&j, &nodes).is_ok());
        let e = check_submit(&job(1), &[]).unwrap_err();
        assert!(e.contains("gpusched up"), "{e}");
        let mut j = job(1);
        j.command.clear();
        assert!(check_submit(&j, &nodes).unwrap_err().contains("command"));
        let mut j = job(1);
        j.walltime_s = Some(0);
        assert!(check_submit(&j, &nodes).unwrap_err().contains("walltime_s"));
        let mut j = job(1);
        j.cwd = Some("relative/dir".into());
        assert!(check_submit(&j, &nodes).unwrap_err().contains("absolute"));
        let mut j = job(1);
        j.user = Some("bad user".into());
        assert!(check_submit(&j, &nodes).unwrap_err().contains("user"));
    }

    #[test]
    fn slices_say_what_is_allowed() {
        let plain = gpus(2, "A100-SXM4-80GB");
        let mut mig = gpus(1, "A100-SXM4-80GB");
        mig[0].mig = Some(gpusched_wire::MigInfo {
            dynamic: true,
            instances: vec![],
        });
        let both = [
            KnownNode {
                name: "n1",
                gpus: &plain,
                cpus: 16,
                mem_mib: 65536,
                resources: &EMPTY_RESOURCES,
            },
            KnownNode {
                name: "n2",
                gpus: &mig,
                cpus: 16,
                mem_mib: 65536,
                resources: &EMPTY_RESOURCES,
            },
        ];
        let ask = |f: &dyn Fn(&mut JobSubmit)| {
            let mut j = JobSubmit {
                command: vec!["/bin/true".into()],
                ..Default::default()
            };
            f(&mut j);
            check_submit(&j, &both)
        };
        assert!(ask(&|j| j.gpu_share = Some(0.25)).is_ok());
        assert!(ask(&|j| j.gpu_mem = Some("20GiB".into())).is_ok());
        assert!(ask(&|j| j.mig = Some("3g.40gb".into())).is_ok());
        let e = ask(&|j| j.mig = Some("9g.1gb".into())).unwrap_err();
        assert!(
            e.contains("unknown MIG profile") && e.contains("1g.10gb"),
            "{e}"
        );
        let e = ask(&|j| j.mig = Some("3g.20gb".into())).unwrap_err();
        assert!(e.contains("A100-80GB") && e.contains("3g.40gb"), "{e}");
        for bad in [0.0, 1.5, -1.0] {
            let e = ask(&|j| j.gpu_share = Some(bad)).unwrap_err();
            assert!(e.contains("above 0 and at most 1"), "{e}");
        }
        let e = ask(&|j| j.gpu_mem = Some("200GiB".into())).unwrap_err();
        assert!(e.contains("larger than any acceptable GPU"), "{e}");
        let e = ask(&|j| j.gpu_mem = Some("lots".into())).unwrap_err();
        assert!(e.contains("gpu_mem") && e.contains("20GiB"), "{e}");
        let e = ask(&|j| {
            j.gpus = Some(2);
            j.mig = Some("1g.10gb".into());
        })
        .unwrap_err();
        assert!(e.contains("`gpus` and `mig`"), "{e}");
        // MIG on a cluster without MIG GPUs, and a MIG model the cluster lacks.
        let e = check_submit(
            &JobSubmit {
                command: vec!["x".into()],
                mig: Some("1g.10gb".into()),
                ..Default::default()
            },
            &both[..1],
        )
        .unwrap_err();
        assert!(e.contains("no GPU in this cluster is in MIG mode"), "{e}");
        assert!(!e.contains("  "), "a message in one line: {e}");
        let l4 = gpus(1, "L4");
        let mut l4m = l4.clone();
        l4m[0].mig = Some(gpusched_wire::MigInfo {
            dynamic: false,
            instances: vec![],
        });
        let e = check_submit(
            &JobSubmit {
                command: vec!["x".into()],
                mig: Some("1g.10gb".into()),
                ..Default::default()
            },
            &[KnownNode {
                name: "l4",
                gpus: &l4m,
                cpus: 1,
                mem_mib: 1024,
                resources: &EMPTY_RESOURCES,
            }],
        )
        .unwrap_err();
        assert!(
            e.contains("no acceptable GPU supports MIG") && e.contains("L4"),
            "{e}"
        );
        // Whole GPUs do not count MIG GPUs.
        let e = check_submit(&job(3), &both).unwrap_err();
        assert!(e.contains("has 2"), "{e}");
    }
}
