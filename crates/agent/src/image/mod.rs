//! Jobs in container images (`submit --image REF`): which runtime this node runs them
//! with (`--image-runtime auto|podman|apptainer|docker|none`), which images and mounts
//! its administrator allows (`--image-allow`, `--image-mount`), the command line of one
//! container (`command.rs`) and the removal of containers a stopped job left.
//!
//! The runtime is started by the launcher in place of the job's command, in the job's
//! process group (and cgroup), so stopping the job stops the runtime, which forwards
//! the signal to the container (`--init`, `--sig-proxy`); the runtime's exit status is
//! the job's. A rootful podman or docker is started as root and given the submitter's
//! uid and groups (`--user`); apptainer is started as the submitter. docs/containers.md.

pub mod command;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use gpusched_wire::AttemptRef;

pub use command::{ContainerRun, GpuAccess};

/// A container runtime gpusched can drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Podman,
    Apptainer,
    Docker,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Podman => "podman",
            Kind::Apptainer => "apptainer",
            Kind::Docker => "docker",
        }
    }

    /// Whether the runtime itself runs as root and takes the job's identity as an
    /// argument (podman and docker started by a root agent), rather than running as
    /// the user who starts it (apptainer, rootless podman).
    fn takes_user_argument(self, agent_is_root: bool) -> bool {
        match self {
            Kind::Podman => agent_is_root,
            Kind::Docker => true,
            Kind::Apptainer => false,
        }
    }
}

/// `--image-runtime`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The first of podman, apptainer (or singularity), docker that works here (docker
    /// only when its daemon answers).
    Auto,
    Only(Kind),
    /// This node runs no image jobs.
    None,
}

/// An administrator's mount (`--image-mount SRC:DST[:ro]`), given to every image job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    pub src: PathBuf,
    pub dst: PathBuf,
    pub read_only: bool,
}

impl Mount {
    /// `SRC:DST` or `SRC:DST:ro`, both absolute.
    pub fn parse(s: &str) -> Result<Mount, String> {
        let parts: Vec<&str> = s.split(':').collect();
        let (src, dst, read_only) = match parts.as_slice() {
            [src, dst] => (*src, *dst, false),
            [src, dst, "ro"] => (*src, *dst, true),
            [src, dst, "rw"] => (*src, *dst, false),
            _ => {
                return Err(format!(
                    "`{s}` is not SRC:DST or SRC:DST:ro (absolute paths, no `:` in them)"
                ))
            }
        };
        for p in [src, dst] {
            if !p.starts_with('/') || p.chars().any(|c| c == ',' || c.is_control()) {
                return Err(format!(
                    "`{s}`: mount paths must be absolute, without commas or control characters"
                ));
            }
        }
        Ok(Mount {
            src: src.into(),
            dst: dst.into(),
            read_only,
        })
    }

    fn volume_arg(&self) -> String {
        format!(
            "{}:{}{}",
            self.src.display(),
            self.dst.display(),
            if self.read_only { ":ro" } else { "" }
        )
    }
}

/// What the agent's flags say about images.
#[derive(Clone, Debug)]
pub struct ImageOptions {
    pub runtime: Choice,
    /// Image reference prefixes allowed here (`registry.example.com/ml/`); empty: any.
    pub allow: Vec<String>,
    pub mounts: Vec<Mount>,
    /// Images missing on the node are pulled at run time (else they must be there).
    pub pull: bool,
    /// Where GPU `i`'s device node is (`<dir>/nvidia<i>`), when no CDI spec names the
    /// node's GPUs: `/dev` on a real node, a test's directory of made device nodes with
    /// the fake backend.
    pub gpu_dev_dir: PathBuf,
}

impl Default for ImageOptions {
    fn default() -> Self {
        ImageOptions {
            runtime: Choice::None,
            allow: Vec::new(),
            mounts: Vec::new(),
            pull: false,
            gpu_dev_dir: PathBuf::from("/dev"),
        }
    }
}

/// The runtime this node runs image jobs with.
#[derive(Debug)]
pub struct Runtime {
    pub kind: Kind,
    program: PathBuf,
    version: String,
    oci_runtime: Option<String>,
    ulimits: Vec<String>,
    opts: ImageOptions,
    /// Whether a CDI spec on the node names `nvidia.com/gpu` devices.
    cdi_nvidia: bool,
    agent_is_root: bool,
    /// Container names start with this (`gpusched-<node>-`).
    prefix: String,
    /// The containers of attempts running now, to remove whatever a stop left.
    live: Mutex<BTreeMap<AttemptRef, Vec<String>>>,
}

/// The GPU control devices a CUDA process opens besides its GPUs.
const CONTROL_DEVICES: [&str; 4] = [
    "nvidiactl",
    "nvidia-uvm",
    "nvidia-uvm-tools",
    "nvidia-modeset",
];

/// Where CDI specs are read from by the runtimes (the CDI specification's defaults).
const CDI_DIRS: [&str; 2] = ["/etc/cdi", "/var/run/cdi"];

impl Runtime {
    /// Finds the runtime the options ask for. `Ok(None)`: none asked for, or `auto`
    /// found none (logged by the caller); `Err`: the one asked for does not work here.
    pub fn detect(opts: &ImageOptions, node: &str) -> Result<Option<Runtime>, String> {
        let kinds: Vec<Kind> = match opts.runtime {
            Choice::None => return Ok(None),
            Choice::Only(k) => vec![k],
            Choice::Auto => vec![Kind::Podman, Kind::Apptainer, Kind::Docker],
        };
        let mut why = Vec::new();
        for kind in kinds {
            match Self::probe(kind, opts, node) {
                Ok(rt) => return Ok(Some(rt)),
                Err(e) => why.push(e),
            }
        }
        match opts.runtime {
            Choice::Auto => {
                tracing::info!(
                    "no container runtime: image jobs do not run here ({})",
                    why.join("; ")
                );
                Ok(None)
            }
            _ => Err(why.join("; ")),
        }
    }

    fn probe(kind: Kind, opts: &ImageOptions, node: &str) -> Result<Runtime, String> {
        let candidates: &[&str] = match kind {
            Kind::Podman => &["podman"],
            Kind::Apptainer => &["apptainer", "singularity"],
            Kind::Docker => &["docker"],
        };
        let program = candidates
            .iter()
            .find_map(|c| find_program(c))
            .ok_or_else(|| format!("{} is not installed (not on PATH)", kind.as_str()))?;
        let version = match kind {
            // `docker version` asks the daemon: no answer, no docker.
            Kind::Docker => run_text(&program, &["version", "--format", "{{.Server.Version}}"])
                .map_err(|e| format!("docker's daemon does not answer: {e}"))?,
            _ => {
                let v = run_text(&program, &["--version"])?;
                v.rsplit(' ').next().unwrap_or(&v).to_string()
            }
        };
        let agent_is_root = nix::unistd::geteuid().is_root();
        let oci_runtime =
            if kind == Kind::Podman && hybrid_cgroups() && find_program("runc").is_some() {
                // crun refuses hosts with controllers on both hierarchies ("cgroups in
                // hybrid mode not supported"); runc runs there.
                Some("runc".to_string())
            } else {
                None
            };
        let rt = Runtime {
            kind,
            version,
            oci_runtime,
            ulimits: if kind == Kind::Apptainer {
                Vec::new()
            } else {
                own_ulimits()
            },
            cdi_nvidia: cdi_names_nvidia_gpus(),
            agent_is_root,
            prefix: format!("gpusched-{}-", container_safe(node)),
            program,
            opts: opts.clone(),
            live: Mutex::new(BTreeMap::new()),
        };
        rt.remove_leftovers_of_earlier_lives();
        Ok(rt)
    }

    /// The runtime's name and version (`podman 4.3.1`), for `Containment.image_runtime`.
    pub fn describe(&self) -> String {
        format!("{} {}", self.kind.as_str(), self.version)
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Whether the launcher must start the runtime as the submitter (apptainer,
    /// rootless podman), rather than as the agent with `--user` in its arguments.
    pub fn runs_as_submitter(&self) -> bool {
        !self.kind.takes_user_argument(self.agent_is_root)
    }

    /// Why `image` may not run here (`--image-allow`), or `Ok`.
    pub fn check_allowed(&self, image: &str) -> Result<(), String> {
        if self.opts.allow.is_empty() || self.opts.allow.iter().any(|p| image.starts_with(p)) {
            return Ok(());
        }
        Err(format!(
            "image {image} is not allowed on this node (its agent allows images starting with {})",
            self.opts
                .allow
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// Without `--image-pull missing`, an image that is not on the node fails the job
    /// at once with the runtime's own words, rather than as exit status 125 with the
    /// words in its log. Costs one run of the runtime per start (~40 ms for podman).
    pub fn check_present(&self, image: &str) -> Result<(), String> {
        if self.opts.pull || self.kind == Kind::Apptainer {
            return Ok(());
        }
        match run_text(
            &self.program,
            &["image", "inspect", "--format", "{{.Id}}", image],
        ) {
            Ok(_) => Ok(()),
            Err(e) => Err(format!(
                "image {image} is not on this node ({}: {e}); pull it there (`{} pull {image}`), \
                 or start the agent with --image-pull missing",
                self.kind.as_str(),
                self.kind.as_str()
            )),
        }
    }

    /// How GPUs `indices` reach a container: CDI names where the node has NVIDIA's
    /// CDI spec, else their device nodes and the control devices that exist.
    pub fn gpu_access(&self, indices: &[u32]) -> GpuAccess {
        if self.cdi_nvidia {
            return GpuAccess::Cdi(
                indices
                    .iter()
                    .map(|i| format!("nvidia.com/gpu={i}"))
                    .collect(),
            );
        }
        let dir = &self.opts.gpu_dev_dir;
        // A GPU without a device node (declared GPUs on a machine without them) has
        // nothing to give; the runtime would refuse to start over it.
        let mut devs: Vec<(PathBuf, PathBuf)> = indices
            .iter()
            .map(|i| {
                let name = format!("nvidia{i}");
                (dir.join(&name), Path::new("/dev").join(name))
            })
            .filter(|(host, _)| host.exists())
            .collect();
        if !indices.is_empty() {
            for name in CONTROL_DEVICES {
                let host = dir.join(name);
                if host.exists() {
                    devs.push((host, Path::new("/dev").join(name)));
                }
            }
        }
        GpuAccess::Devices(devs)
    }

    /// The name of one process's container, and remembers it until the attempt ends.
    pub fn container_name(&self, a: AttemptRef, rank: Option<u32>) -> String {
        let name = format!(
            "{}{}-{}-{}",
            self.prefix,
            a.job,
            a.attempt,
            rank.unwrap_or(0)
        );
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(a)
            .or_default()
            .push(name.clone());
        name
    }

    /// The arguments of the runtime for one container.
    pub fn args(&self, run: &ContainerRun<'_>) -> Vec<std::ffi::OsString> {
        command::args(
            &command::RuntimeArgs {
                kind: self.kind,
                oci_runtime: self.oci_runtime.as_deref(),
                ulimits: &self.ulimits,
                mounts: &self.opts.mounts,
                pull: self.opts.pull,
            },
            run,
        )
    }

    /// After an attempt ended: removes its containers if any is left (a job killed
    /// after its grace kills the runtime's client, not the container; a part of several
    /// processes stops the others' when one fails, whatever its own status). Blocks for
    /// one run of the runtime (a few ms when nothing is left), only for image attempts.
    pub fn attempt_ended(&self, a: AttemptRef) {
        let names = self
            .live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&a);
        if let Some(names) = names {
            self.remove(&names);
        }
    }

    fn remove(&self, names: &[String]) {
        if names.is_empty() || self.kind == Kind::Apptainer {
            return;
        }
        let mut args = vec!["rm", "--force", "--time", "0"];
        if self.kind == Kind::Podman {
            args.push("--ignore");
        }
        args.extend(names.iter().map(String::as_str));
        if let Err(e) = run_text(&self.program, &args) {
            if !e.contains("No such container") {
                tracing::warn!("could not remove containers {names:?}: {e}");
            }
        }
    }

    /// Containers of this node's name left by an earlier agent life (killed with its
    /// jobs): their attempts are reported lost; nothing of them may run on.
    fn remove_leftovers_of_earlier_lives(&self) {
        if self.kind == Kind::Apptainer {
            return;
        }
        let filter = format!("name=^{}", self.prefix);
        let Ok(list) = run_text(
            &self.program,
            &["ps", "--all", "--filter", &filter, "--format", "{{.Names}}"],
        ) else {
            return;
        };
        let names: Vec<String> = list
            .lines()
            .filter(|n| n.starts_with(&self.prefix))
            .map(str::to_string)
            .collect();
        if !names.is_empty() {
            tracing::warn!(
                count = names.len(),
                "removing containers an earlier agent life left"
            );
            self.remove(&names);
        }
    }
}

/// A name part that the runtimes accept in container names: `[a-zA-Z0-9_.-]`.
fn container_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The program's trimmed standard output, or its standard error (or why it did not
/// run) as the error.
fn run_text(program: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        Err(if err.is_empty() {
            format!("{} exited with {}", program.display(), out.status)
        } else {
            err
        })
    }
}

/// A host with cgroup v1 controllers and a cgroup v2 hierarchy that has controllers
/// too (some hybrid container hosts).
fn hybrid_cgroups() -> bool {
    std::fs::read_to_string("/sys/fs/cgroup/unified/cgroup.controllers")
        .map(|c| !c.trim().is_empty())
        .unwrap_or(false)
}

/// The agent's own open-files and process limits, which the container keeps: a rootful
/// runtime asks for more by default, which fails where the agent lacks
/// CAP_SYS_RESOURCE (in a container, as here). podman lowers its own process limit to
/// 32768, so the job's is at most that.
fn own_ulimits() -> Vec<String> {
    use nix::sys::resource::{getrlimit, Resource};
    let mut out = Vec::new();
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        out.push(format!("nofile={soft}:{hard}"));
    }
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NPROC) {
        let cap = 32768;
        out.push(format!("nproc={}:{}", soft.min(cap), hard.min(cap)));
    }
    out
}

/// Whether a CDI spec in the runtimes' directories names NVIDIA GPUs (`nvidia-ctk cdi
/// generate`): then `--device nvidia.com/gpu=N` gives a container GPU N with its
/// driver libraries.
fn cdi_names_nvidia_gpus() -> bool {
    CDI_DIRS.iter().any(|dir| {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries.flatten().any(|e| {
                    std::fs::read_to_string(e.path())
                        .map(|t| t.contains("nvidia.com/gpu"))
                        .unwrap_or(false)
                })
            })
            .unwrap_or(false)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_read_as_written() {
        assert_eq!(
            Mount::parse("/data:/mnt/data:ro").unwrap(),
            Mount {
                src: "/data".into(),
                dst: "/mnt/data".into(),
                read_only: true
            }
        );
        assert!(!Mount::parse("/a:/b").unwrap().read_only);
        for bad in ["data:/b", "/a", "/a:/b:rx", "/a:b", "/a,b:/c"] {
            assert!(Mount::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_are_safe_for_runtimes() {
        assert_eq!(container_safe("node 1/a"), "node_1_a");
        assert_eq!(container_safe("n1.example-x"), "n1.example-x");
    }
}
