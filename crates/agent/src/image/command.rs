//! The container runtime's command line for one process of an image job: pure, so every
//! rule below is unit-tested without a runtime.
//!
//! What a container gets, and nothing more: its image's files, the job's working
//! directory, checkpoint directory and hostfile (same paths as on the host), the
//! mounts the node's administrator allowed (`--image-mount`), the job's environment by
//! name (the runtime reads each value from its own environment, so values never appear
//! on a command line), the host's network (gang ranks reach each other as host jobs
//! do), its GPUs and the GPU control devices, and the submitter's uid, gid and groups.
//! No `--privileged`, no added capabilities.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{Kind, Mount};

/// One process of an image job, as the launcher knows it.
pub struct ContainerRun<'a> {
    pub image: &'a str,
    /// A name unique on the node (`gpusched-<job>-<attempt>-<rank>`), so leftovers can
    /// be removed by name.
    pub name: String,
    /// The job's command: program and arguments, run inside the image.
    pub command: &'a [String],
    /// uid, gid and supplementary gids it runs as (`None`: the agent's own user, a
    /// rootless agent or a root job that was allowed).
    pub user: Option<(u32, u32, Vec<u32>)>,
    pub cwd: &'a Path,
    /// Host paths mounted at the same path, read-write (checkpoint directory) or
    /// read-only (hostfile).
    pub binds: Vec<(PathBuf, bool)>,
    /// Names of the variables the container gets, their values taken from the
    /// runtime's own environment.
    pub env_names: Vec<String>,
    /// What the container is given of the GPUs.
    pub gpus: GpuAccess,
}

/// How GPUs reach a container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuAccess {
    /// CDI device names (`nvidia.com/gpu=0`): the runtime adds the device nodes and,
    /// for NVIDIA's spec, the driver's libraries.
    Cdi(Vec<String>),
    /// Device nodes, host path and path in the container (`/dev/nvidia0`).
    Devices(Vec<(PathBuf, PathBuf)>),
}

/// The runtime's settings that are the same for every job of the node.
pub struct RuntimeArgs<'a> {
    pub kind: Kind,
    /// podman's OCI runtime (`runc` where crun refuses the host's cgroup layout).
    pub oci_runtime: Option<&'a str>,
    /// `--ulimit` values (`nofile=20000:20000`): a rootful podman otherwise asks for
    /// limits above the agent's own, which fails without CAP_SYS_RESOURCE.
    pub ulimits: &'a [String],
    pub mounts: &'a [Mount],
    /// Images may be pulled at run time (`--image-pull missing`), else only images
    /// already on the node run.
    pub pull: bool,
}

/// The arguments after the runtime's program.
pub fn args(rt: &RuntimeArgs<'_>, run: &ContainerRun<'_>) -> Vec<OsString> {
    match rt.kind {
        Kind::Podman | Kind::Docker => oci_args(rt, run),
        Kind::Apptainer => apptainer_args(rt, run),
    }
}

fn oci_args(rt: &RuntimeArgs<'_>, run: &ContainerRun<'_>) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |s: &str| a.push(s.into());
    if rt.kind == Kind::Podman {
        // The cgroup rules below are cgroupfs's, whatever the host's default manager.
        push("--cgroup-manager");
        push("cgroupfs");
        if let Some(oci) = rt.oci_runtime {
            push("--runtime");
            push(oci);
        }
    }
    push("run");
    // Removed when it ends; the init process forwards signals to the job's process
    // and reaps its children (a job's command is not written to be pid 1, which
    // ignores SIGTERM without a handler).
    push("--rm");
    push("--init");
    push("--sig-proxy=true");
    push("--name");
    push(&run.name);
    push("--network");
    push("host");
    push("--pull");
    push(if rt.pull { "missing" } else { "never" });
    push("--security-opt");
    push("no-new-privileges");
    if rt.kind == Kind::Podman {
        // The job's own output capture is enough; podman's log driver would store it
        // twice.
        push("--log-driver");
        push("none");
    }
    for u in rt.ulimits {
        push("--ulimit");
        push(u);
    }
    if rt.kind == Kind::Podman {
        // Contained in the job's cgroup, which the runtime is started in: conmon stays
        // there, and the container's cgroup is made inside it (a relative parent is
        // the starting process's own cgroup, in every hierarchy), so the job's limits,
        // accounting and kill cover the container.
        push("--cgroups=no-conmon");
        push("--cgroup-parent");
        push(".");
    }
    if let Some((uid, gid, groups)) = &run.user {
        push("--user");
        push(&format!("{uid}:{gid}"));
        for g in groups.iter().filter(|g| *g != gid) {
            push("--group-add");
            push(&g.to_string());
        }
    }
    let cwd = run.cwd.display().to_string();
    push("--volume");
    push(&format!("{cwd}:{cwd}"));
    push("--workdir");
    push(&cwd);
    for (path, rw) in &run.binds {
        let p = path.display().to_string();
        push("--volume");
        push(&format!("{p}:{p}{}", if *rw { "" } else { ":ro" }));
    }
    for m in rt.mounts {
        push("--volume");
        push(&m.volume_arg());
    }
    match &run.gpus {
        GpuAccess::Cdi(names) => {
            for n in names {
                push("--device");
                push(n);
            }
        }
        GpuAccess::Devices(devs) => {
            for (host, inside) in devs {
                push("--device");
                push(&format!("{}:{}", host.display(), inside.display()));
            }
        }
    }
    for name in &run.env_names {
        push("--env");
        push(name);
    }
    push("--");
    push(run.image);
    a.extend(run.command.iter().map(OsString::from));
    a
}

/// apptainer runs as the calling user with no daemon and no root: the agent starts it
/// as the submitter (the launcher's identity switch), so `user` is not an argument.
fn apptainer_args(rt: &RuntimeArgs<'_>, run: &ContainerRun<'_>) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |s: &str| a.push(s.into());
    push("exec");
    // No home or /tmp of the host; the environment is the job's (the launcher
    // starts apptainer with it, minus the agent's secrets, as a host job).
    push("--containall");
    push("--no-privs");
    let cwd = run.cwd.display().to_string();
    push("--bind");
    push(&format!("{cwd}:{cwd}"));
    push("--pwd");
    push(&cwd);
    for (path, rw) in &run.binds {
        let p = path.display().to_string();
        push("--bind");
        push(&format!("{p}:{p}{}", if *rw { "" } else { ":ro" }));
    }
    for m in rt.mounts {
        push("--bind");
        push(&m.volume_arg());
    }
    match &run.gpus {
        GpuAccess::Cdi(names) if !names.is_empty() => {
            push("--nv");
        }
        GpuAccess::Devices(devs) if !devs.is_empty() => {
            push("--nv");
        }
        _ => {}
    }
    // The reference is apptainer's own: a SIF file, or `docker://`, `oras://` and the
    // like.
    push(run.image);
    a.extend(run.command.iter().map(OsString::from));
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(a: &[OsString]) -> Vec<String> {
        a.iter().map(|s| s.to_string_lossy().into_owned()).collect()
    }

    fn run<'a>(cmd: &'a [String]) -> ContainerRun<'a> {
        ContainerRun {
            image: "gpusched-test/busybox:1",
            name: "gpusched-7-1-0".into(),
            command: cmd,
            user: Some((1002, 1002, vec![1002, 27])),
            cwd: Path::new("/home/alice/run"),
            binds: vec![
                (PathBuf::from("/var/lib/gpusched/jobs/checkpoints/7"), true),
                (PathBuf::from("/var/lib/gpusched/jobs/hostfiles/h1"), false),
            ],
            env_names: vec!["CUDA_VISIBLE_DEVICES".into(), "RANK".into()],
            gpus: GpuAccess::Cdi(vec!["nvidia.com/gpu=1".into()]),
        }
    }

    #[test]
    fn podman_runs_the_job_as_its_submitter_with_its_files_and_gpus_only() {
        let mounts = [Mount::parse("/data:/data:ro").unwrap()];
        let ulimits = ["nofile=1024:4096".to_string()];
        let rt = RuntimeArgs {
            kind: Kind::Podman,
            oci_runtime: Some("runc"),
            ulimits: &ulimits,
            mounts: &mounts,
            pull: false,
        };
        let cmd = ["python3".to_string(), "train.py".into()];
        let got = strs(&args(&rt, &run(&cmd))).join(" ");
        assert_eq!(
            got,
            "--cgroup-manager cgroupfs --runtime runc run --rm --init --sig-proxy=true \
             --name gpusched-7-1-0 --network host --pull never \
             --security-opt no-new-privileges --log-driver none --ulimit nofile=1024:4096 \
             --cgroups=no-conmon --cgroup-parent . \
             --user 1002:1002 --group-add 27 \
             --volume /home/alice/run:/home/alice/run --workdir /home/alice/run \
             --volume /var/lib/gpusched/jobs/checkpoints/7:/var/lib/gpusched/jobs/checkpoints/7 \
             --volume /var/lib/gpusched/jobs/hostfiles/h1:/var/lib/gpusched/jobs/hostfiles/h1:ro \
             --volume /data:/data:ro --device nvidia.com/gpu=1 \
             --env CUDA_VISIBLE_DEVICES --env RANK -- gpusched-test/busybox:1 python3 train.py"
        );
        assert!(!got.contains("privileged"));
    }

    #[test]
    fn device_nodes_are_given_by_path_where_there_is_no_cdi_spec() {
        let rt = RuntimeArgs {
            kind: Kind::Docker,
            oci_runtime: Some("runc"),
            ulimits: &[],
            mounts: &[],
            pull: true,
        };
        let cmd = ["true".to_string()];
        let mut r = run(&cmd);
        r.user = None;
        r.gpus = GpuAccess::Devices(vec![(
            PathBuf::from("/tmp/fake/nvidia1"),
            PathBuf::from("/dev/nvidia1"),
        )]);
        let got = strs(&args(&rt, &r)).join(" ");
        assert!(
            got.starts_with("run --rm"),
            "docker has no --runtime: {got}"
        );
        assert!(got.contains("--pull missing"), "{got}");
        assert!(
            got.contains("--device /tmp/fake/nvidia1:/dev/nvidia1"),
            "{got}"
        );
        assert!(!got.contains("--user"), "{got}");
        assert!(!got.contains("--log-driver"), "{got}");
        assert!(!got.contains("--cgroup"), "{got}");
    }
}
