//! Turning a [`Launch`] into the process to start: program and arguments without a
//! shell, working directory, logs, environment, its own process group, and death with
//! the agent.

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

/// The command for one process of `launch`, or why it cannot be built (for a
/// `SpawnFailed` outcome). `node_gpus` must hold at least the GPUs the launch names.
pub fn build(
    launch: &Launch,
    proc: &ProcSetup<'_>,
    node_gpus: &[GpuInfo],
    run_as: Option<&RunAs>,
) -> Result<JobCommand, String> {
    let Some((program, args)) = launch.command.split_first() else {
        return Err("the job has no command to run".to_string());
    };
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
    // stdin is /dev/null and the output goes to pipes (see the forker).
    let mut cmd = JobCommand::new(program);
    cmd.args(args)
        .current_dir(&launch.cwd)
        // The agent's environment is inherited, minus its secrets; the job's own
        // settings come next and gpusched's last, so a job cannot escape its GPU
        // assignment by accident.
        .env_remove("GPUSCHED_JOIN_TOKEN")
        .env_remove("GPUSCHED_TOKEN")
        .envs(&launch.env)
        .env("CUDA_VISIBLE_DEVICES", visible)
        // Makes CUDA number devices in PCI bus order like NVML, so indices agree.
        .env("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
        .env("GPUSCHED_JOB_ID", launch.job.to_string())
        .env("GPUSCHED_ATTEMPT", launch.attempt.to_string())
        .env("GPUSCHED_JOB_NAME", &launch.name)
        // MASTER_ADDR, ranks, the hostfile: after the job's own, like the GPUs.
        .envs(proc.env.iter().map(|(k, v)| (k, v)))
        // What it was given of the node's generic resources (`GPUSCHED_RESOURCE_FPGA=1`).
        .envs(
            launch
                .resources
                .iter()
                .map(|(k, v)| (gpusched_wire::resource::env_name(k), v.to_string())),
        )
        // Its own group, so stopping the job reaches everything it started (the
        // launcher puts a part's other processes in the first one's group).
        .process_group(0);
    if let Some(who) = run_as {
        cmd.env("USER", &who.name)
            .env("LOGNAME", &who.name)
            .env("HOME", &who.home)
            // Supplementary groups, then gid, then uid, in the child before exec.
            .run_as(who);
    }
    // Makes the kernel SIGKILL the job when the thread that started it ends, which
    // happens when the agent dies: otherwise a killed agent's jobs would keep their
    // GPUs busy while the server runs the same attempts elsewhere. Set after the
    // identity switch (which clears it). Only the group leader gets this (the kernel
    // clears it in the leader's children); recovery kills the rest.
    cmd.die_with_parent(getpid());
    Ok(cmd)
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
