//! Turning a [`Launch`] into the process to start: program and arguments without a
//! shell, working directory, logs, environment, its own process group, and death with
//! the agent. A job with an image runs its command in a container: the program is then
//! the node's runtime (see [`crate::image`]), with the same environment and directory.

use std::path::Path;

use gpusched_wire::{GpuInfo, Launch};

use super::identity::RunAs;
use super::spawn::JobCommand;
use nix::unistd::getpid;

/// What differs between the processes of one part (see [`super::dist`]).
pub struct ProcSetup<'a> {
    /// The node-local GPU indices this process sees.
    pub gpus: &'a [u32],
    /// gpusched's variables for it: the part's, then its own (ranks).
    pub env: Vec<(String, String)>,
}

/// What the command of an image job needs besides the launch.
pub struct ImageSetup<'a> {
    /// The node's runtime (`None`: this node runs no images).
    pub runtime: Option<&'a crate::image::Runtime>,
    /// Mounted into the container at the same path.
    pub checkpoint_dir: &'a Path,
    /// The process's rank, for its container's name.
    pub rank: Option<u32>,
}

/// Set by the launcher after [`build`]; passed into a container by name.
const LATER_VARS: [&str; 3] = [
    "GPUSCHED_CHECKPOINT_DIR",
    "GPUSCHED_RESTART_COUNT",
    "GPUSCHED_PREEMPT_DEADLINE_FILE",
];

/// The command for one process of `launch`, or why it cannot be built (for a
/// `SpawnFailed` outcome). `node_gpus` must hold at least the GPUs the launch names.
pub fn build(
    launch: &Launch,
    proc: &ProcSetup<'_>,
    node_gpus: &[GpuInfo],
    run_as: Option<&RunAs>,
    image: &ImageSetup<'_>,
) -> Result<JobCommand, String> {
    if launch.command.is_empty() {
        return Err("the job has no command to run".to_string());
    }
    let gpus = select_gpus(proc.gpus, node_gpus)?;
    // A MIG job sees only its instance; everything else sees its whole GPUs.
    let mig = launch.slice.as_ref().and_then(|s| s.mig.as_ref());
    let visible = match mig {
        Some(m) => m
            .uuid
            .clone()
            .ok_or("the job's MIG instance has no UUID yet; it cannot be made visible")?,
        None => cuda_visible_devices(&gpus),
    };
    // The job's own settings first and gpusched's last, so a job cannot escape its GPU
    // assignment by accident.
    let mut vars: Vec<(String, String)> = launch
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    vars.push(("CUDA_VISIBLE_DEVICES".into(), visible));
    // Makes CUDA number devices in PCI bus order like NVML, so indices agree.
    vars.push(("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into()));
    vars.push(("GPUSCHED_JOB_ID".into(), launch.job.to_string()));
    vars.push(("GPUSCHED_ATTEMPT".into(), launch.attempt.to_string()));
    vars.push(("GPUSCHED_JOB_NAME".into(), launch.name.clone()));
    // MASTER_ADDR, ranks, the hostfile: after the job's own, like the GPUs.
    vars.extend(proc.env.iter().cloned());
    // What it was given of the node's generic resources (`GPUSCHED_RESOURCE_FPGA=1`).
    vars.extend(
        launch
            .resources
            .iter()
            .map(|(k, v)| (gpusched_wire::resource::env_name(k), v.to_string())),
    );
    if let Some(who) = run_as {
        vars.push(("USER".into(), who.name.clone()));
        vars.push(("LOGNAME".into(), who.name.clone()));
        if launch.image.is_none() {
            vars.push(("HOME".into(), who.home.clone()));
        }
    }
    // stdin is /dev/null and the output goes to pipes (see the forker).
    let (mut cmd, switch_user) = match &launch.image {
        None => {
            let mut cmd = JobCommand::new(&launch.command[0]);
            cmd.args(&launch.command[1..]);
            (cmd, true)
        }
        Some(reference) => container(launch, proc, &gpus, run_as, image, reference, &vars)?,
    };
    cmd.current_dir(&launch.cwd)
        // The agent's environment is inherited, minus its secrets.
        .env_remove("GPUSCHED_JOIN_TOKEN")
        .env_remove("GPUSCHED_TOKEN")
        .envs(vars)
        // Its own group, so stopping the job reaches everything it started (the
        // launcher puts a part's other processes in the first one's group).
        .process_group(0);
    if let Some(who) = run_as.filter(|_| switch_user) {
        // Supplementary groups, then gid, then uid, in the child before exec.
        cmd.run_as(who);
    }
    // Makes the kernel SIGKILL the job when the thread that started it ends, which
    // happens when the agent dies: otherwise a killed agent's jobs would keep their
    // GPUs busy while the server runs the same attempts elsewhere. Set after the
    // identity switch (which clears it). Only the group leader gets this (the kernel
    // clears it in the leader's children); recovery kills the rest.
    cmd.die_with_parent(getpid());
    Ok(cmd)
}

/// The runtime's command for an image job's process, and whether it is started as the
/// submitter (apptainer, rootless podman) rather than given the submitter as `--user`.
fn container(
    launch: &Launch,
    proc: &ProcSetup<'_>,
    gpus: &[&GpuInfo],
    run_as: Option<&RunAs>,
    image: &ImageSetup<'_>,
    reference: &str,
    vars: &[(String, String)],
) -> Result<(JobCommand, bool), String> {
    let rt = image.runtime.ok_or_else(|| {
        format!(
            "the job runs in image {reference}, but this node's agent has no container runtime \
             (start it with --image-runtime podman, apptainer or docker)"
        )
    })?;
    gpusched_wire::image::check_reference(reference)?;
    rt.check_allowed(reference)?;
    rt.check_present(reference)?;
    let hostfile = proc
        .env
        .iter()
        .find(|(k, _)| k == "GPUSCHED_HOSTFILE")
        .map(|(_, v)| (std::path::PathBuf::from(v), false));
    let mut binds = vec![(image.checkpoint_dir.to_path_buf(), true)];
    binds.extend(hostfile);
    let mut env_names: Vec<String> = vars.iter().map(|(k, _)| k.clone()).collect();
    env_names.extend(LATER_VARS.iter().map(|s| s.to_string()));
    env_names.sort();
    env_names.dedup();
    let as_submitter = rt.runs_as_submitter();
    let user = match run_as {
        Some(who) if !as_submitter => Some((
            who.uid.as_raw(),
            who.gid.as_raw(),
            who.groups.iter().map(|g| g.as_raw()).collect(),
        )),
        _ => None,
    };
    let indices: Vec<u32> = gpus.iter().map(|g| g.index).collect();
    let run = crate::image::ContainerRun {
        image: reference,
        name: rt.container_name(launch.attempt_ref(), image.rank),
        command: &launch.command,
        user,
        cwd: Path::new(&launch.cwd),
        binds,
        env_names,
        gpus: rt.gpu_access(&indices),
    };
    let mut cmd = JobCommand::new(rt.program());
    cmd.args(rt.args(&run));
    Ok((cmd, as_submitter))
}

/// The node's GPUs the launch names, in the launch's order.
fn select_gpus<'a>(wanted: &[u32], node_gpus: &'a [GpuInfo]) -> Result<Vec<&'a GpuInfo>, String> {
    wanted
        .iter()
        .map(|&index| {
            node_gpus.iter().find(|g| g.index == index).ok_or_else(|| {
                let have: Vec<String> = node_gpus.iter().map(|g| g.index.to_string()).collect();
                format!(
                    "the job was given GPU {index}, which this node does not have (its GPUs: [{}]); \
                     the server's view of the node is out of date",
                    have.join(", ")
                )
            })
        })
        .collect()
}

/// UUIDs when every GPU has one (they stay right even if devices are renumbered),
/// else indices; empty for no GPUs, which CUDA reads as "no devices".
pub fn cuda_visible_devices(gpus: &[&GpuInfo]) -> String {
    let uuids: Option<Vec<&str>> = gpus.iter().map(|g| g.uuid.as_deref()).collect();
    match uuids {
        Some(uuids) => uuids.join(","),
        None => gpus
            .iter()
            .map(|g| g.index.to_string())
            .collect::<Vec<_>>()
            .join(","),
    }
}

#[cfg(test)]
mod tests {
    use gpusched_wire::GpuSource;

    use super::*;

    fn gpu(index: u32, uuid: Option<&str>) -> GpuInfo {
        GpuInfo {
            index,
            uuid: uuid.map(str::to_string),
            model: "A100".into(),
            mem_mib: 81920,
            source: GpuSource::Fake,
            mig: None,
        }
    }

    #[test]
    fn visible_devices_prefer_uuids() {
        let (a, b) = (gpu(0, Some("GPU-a")), gpu(1, Some("GPU-b")));
        assert_eq!(cuda_visible_devices(&[&b, &a]), "GPU-b,GPU-a");
        let c = gpu(2, None);
        assert_eq!(cuda_visible_devices(&[&a, &c]), "0,2");
        assert_eq!(cuda_visible_devices(&[]), "");
    }

    #[test]
    fn gpus_are_selected_by_index_in_launch_order() {
        let node = [gpu(0, None), gpu(1, None), gpu(2, None)];
        let picked = select_gpus(&[2, 0], &node).unwrap();
        assert_eq!(picked.iter().map(|g| g.index).collect::<Vec<_>>(), [2, 0]);
        let err = select_gpus(&[5], &node).unwrap_err();
        assert!(err.contains("GPU 5") && err.contains("[0, 1, 2]"), "{err}");
    }
}
