//! A step task's environment: its job's, as the launcher gives a job's process
//! (`launcher/command.rs`), plus the step's own variables. Pure.

use gpusched_wire::step::StepLaunch;
use gpusched_wire::GpuInfo;

use crate::launcher::command::cuda_visible_devices;

/// The variables of task `rank` of step `s` on a node with `node_gpus`, after the
/// agent's own environment (less its secrets); `None` for `CUDA_VISIBLE_DEVICES` when
/// a GPU of the job is not on this node (the server's view is out of date).
pub fn task_env(
    s: &StepLaunch,
    rank: u32,
    node_gpus: &[GpuInfo],
    home: Option<(&str, &str)>,
) -> Result<Vec<(String, String)>, String> {
    let l = &s.launch;
    let gpus: Vec<&GpuInfo> = l
        .gpus
        .iter()
        .map(|i| {
            node_gpus
                .iter()
                .find(|g| g.index == *i)
                .ok_or_else(|| format!("the job holds GPU {i}, which this node does not have"))
        })
        .collect::<Result<_, _>>()?;
    let visible = match l.slice.as_ref().and_then(|s| s.mig.as_ref()) {
        Some(m) => m
            .uuid
            .clone()
            .ok_or("the job's MIG instance has no UUID yet; it cannot be made visible")?,
        None => cuda_visible_devices(&gpus),
    };
    let mut vars: Vec<(String, String)> =
        l.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    vars.push(("CUDA_VISIBLE_DEVICES".into(), visible));
    vars.push(("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into()));
    vars.push(("GPUSCHED_JOB_ID".into(), l.job.to_string()));
    vars.push(("GPUSCHED_ATTEMPT".into(), l.attempt.to_string()));
    vars.push(("GPUSCHED_JOB_NAME".into(), l.name.clone()));
    vars.push(("GPUSCHED_STEP_ID".into(), s.step.to_string()));
    // Slurm's names for a step's task, which MPI launchers and PyTorch read.
    vars.push(("GPUSCHED_STEP_TASK".into(), rank.to_string()));
    vars.push(("GPUSCHED_STEP_TASKS".into(), s.ntasks.to_string()));
    vars.push((
        "GPUSCHED_STEP_LOCAL_TASK".into(),
        (rank - s.first_rank).to_string(),
    ));
    vars.extend(
        l.resources
            .iter()
            .map(|(k, v)| (gpusched_wire::resource::env_name(k), v.to_string())),
    );
    if let Some((user, home)) = home {
        vars.push(("USER".into(), user.to_string()));
        vars.push(("LOGNAME".into(), user.to_string()));
        vars.push(("HOME".into(), home.to_string()));
    }
    if s.pty {
        let term = s.term.clone().unwrap_or_else(|| "xterm".into());
        vars.push(("TERM".into(), term));
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> StepLaunch {
        let mut env = std::collections::BTreeMap::new();
        env.insert("MINE".to_string(), "1".to_string());
        env.insert("CUDA_VISIBLE_DEVICES".to_string(), "bogus".to_string());
        StepLaunch {
            step: 2,
            launch: gpusched_wire::Launch {
                job: 7,
                attempt: 1,
                name: "n".into(),
                user: "alice".into(),
                command: vec!["sleep".into()],
                cwd: "/".into(),
                env,
                gpus: vec![1],
                walltime_s: None,
                grace_s: 0,
                slice: None,
                resources: Default::default(),
                dist: None,
                cpu_milli: 0,
                mem_mib: 0,
                pids_max: None,
                image: None,
                hold: false,
                serve: None,
            },
            command: vec!["nvidia-smi".into()],
            pty: false,
            tasks: 2,
            first_rank: 2,
            ntasks: 4,
            cols: 0,
            rows: 0,
            term: None,
        }
    }

    fn gpu(index: u32) -> GpuInfo {
        GpuInfo {
            index,
            model: "T".into(),
            mem_mib: 1,
            uuid: None,
            mig: None,
            source: gpusched_wire::GpuSource::Fake,
        }
    }

    #[test]
    fn a_task_sees_its_jobs_gpus_after_the_jobs_own_settings_and_its_step() {
        let env = task_env(&launch(), 3, &[gpu(0), gpu(1)], None).unwrap();
        let last = |k: &str| {
            env.iter()
                .rev()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(last("CUDA_VISIBLE_DEVICES"), Some("1"));
        assert_eq!(last("MINE"), Some("1"));
        assert_eq!(last("GPUSCHED_STEP_ID"), Some("2"));
        assert_eq!(last("GPUSCHED_STEP_TASK"), Some("3"));
        assert_eq!(last("GPUSCHED_STEP_LOCAL_TASK"), Some("1"));
        assert_eq!(last("GPUSCHED_JOB_ID"), Some("7"));
        assert!(task_env(&launch(), 3, &[gpu(0)], None).is_err());
    }
}
