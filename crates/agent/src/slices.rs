//! Getting a job's part of a GPU ready before it starts, and tidying up after it.
//!
//! - A share of a GPU: the job sees the whole GPU (`CUDA_VISIBLE_DEVICES`) and learns its
//!   share from `GPUSCHED_GPU_SHARE` and `GPUSCHED_GPU_MEM_MIB`. On a node running MPS it
//!   also gets `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` and `CUDA_MPS_PINNED_DEVICE_MEM_LIMIT`,
//!   which the MPS server enforces; without MPS nothing enforces the share (sharing by
//!   agreement).
//! - A MIG instance: an existing one is looked up; on a node with dynamic MIG the agent
//!   destroys the idle instances the server listed and creates the job's instance
//!   through NVML, and destroys it again when the job ends. The job sees only its
//!   instance (`CUDA_VISIBLE_DEVICES=MIG-…`), isolated by the hardware.

use std::collections::BTreeMap;
use std::sync::Mutex;

use gpusched_wire::{milli_text, AttemptRef, Launch};

use crate::gpu::{GpuControl, GpuError, NOT_FOUND};

/// Slice preparation for one agent.
pub struct SliceSetup {
    control: GpuControl,
    mps: bool,
    /// MIG instances given to attempts this agent life: (GPU, start, created here).
    mig: Mutex<BTreeMap<AttemptRef, (u32, u8, bool)>>,
}

impl SliceSetup {
    pub fn new(control: GpuControl, mps: bool) -> Self {
        SliceSetup {
            control,
            mps,
            mig: Mutex::new(BTreeMap::new()),
        }
    }

    /// `launch` ready to start: its slice's environment set and, for MIG, its instance
    /// found or made. An error says why the attempt cannot run here.
    pub fn prepare(&self, launch: &Launch) -> Result<Launch, String> {
        let Some(at) = &launch.slice else {
            return Ok(launch.clone());
        };
        let mut out = launch.clone();
        let env = &mut out.env;
        env.insert("GPUSCHED_GPU_SHARE".into(), milli_text(at.milli));
        env.insert("GPUSCHED_GPU_MEM_MIB".into(), at.mem_mib.to_string());
        let Some(m) = &at.mig else {
            if self.mps {
                // One device is visible, so the limit names device 0.
                env.insert(
                    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE".into(),
                    at.milli.div_ceil(10).max(1).to_string(),
                );
                env.insert(
                    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT".into(),
                    format!("0={}MB", at.mem_mib),
                );
            }
            return Ok(out);
        };
        env.insert("GPUSCHED_MIG_PROFILE".into(), m.profile.clone());
        let Some(lib) = &self.control.0 else {
            return Err(
                "the job was given a MIG instance, but this agent has no GPU library \
                        to reach it (declared GPUs)"
                    .into(),
            );
        };
        let a = launch.attempt_ref();
        let mut held = self.mig.lock().unwrap_or_else(|p| p.into_inner());
        let busy = |start: u8| held.values().any(|&(g, s, _)| g == at.gpu && s == start);
        let uuid = if m.create {
            for &start in &m.destroy {
                if busy(start) {
                    return Err(format!(
                        "the server asked to destroy the MIG instance at slice {start} of GPU {}, \
                         but a job of this node uses it",
                        at.gpu
                    ));
                }
                match lib.destroy_mig_instance(at.gpu, start) {
                    Ok(()) => {}
                    Err(GpuError::Mig { code, .. }) if code == NOT_FOUND => {}
                    Err(e) => return Err(format!("cannot make room for the job's instance: {e}")),
                }
            }
            let made = lib
                .create_mig_instance(at.gpu, &m.profile, m.start)
                .map_err(|e| format!("cannot create the job's MIG instance: {e}"))?;
            made.uuid
        } else {
            let list = lib
                .mig_instances(at.gpu)
                .map_err(|e| format!("cannot list MIG instances: {e}"))?;
            list.into_iter()
                .find(|i| i.start == m.start && i.profile == m.profile)
                .and_then(|i| i.uuid)
        };
        let Some(uuid) = uuid else {
            return Err(format!(
                "GPU {} has no {} instance with a compute instance at slice {}; the node's MIG \
                 layout changed behind the scheduler's back",
                at.gpu, m.profile, m.start
            ));
        };
        held.insert(a, (at.gpu, m.start, m.create));
        if let Some(mm) = out.slice.as_mut().and_then(|s| s.mig.as_mut()) {
            mm.uuid = Some(uuid);
        }
        Ok(out)
    }

    /// An attempt ended: an instance created for it is destroyed.
    pub fn ended(&self, a: AttemptRef) {
        let entry = self
            .mig
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&a);
        if let (Some((gpu, start, true)), Some(lib)) = (entry, &self.control.0) {
            if let Err(e) = lib.destroy_mig_instance(gpu, start) {
                tracing::warn!(
                    gpu,
                    start,
                    "cannot destroy the MIG instance of a finished job: {e}"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use gpusched_wire::{MigAt, SliceAt};

    use super::*;
    use crate::gpu::{FakeNvml, GpuLibrary};

    fn launch(slice: SliceAt) -> Launch {
        Launch {
            job: 1,
            attempt: 1,
            name: "j".into(),
            user: "u".into(),
            command: vec!["true".into()],
            cwd: "/".into(),
            env: BTreeMap::new(),
            gpus: vec![slice.gpu],
            walltime_s: None,
            grace_s: 1,
            slice: Some(slice),
            resources: Default::default(),
            dist: None,
            cpu_milli: 0,
            mem_mib: 0,
            pids_max: None,
            image: None,
            serve: None,
            hold: false,
        }
    }

    #[test]
    fn shares_get_mps_limits_only_on_mps_nodes() {
        let share = SliceAt {
            gpu: 0,
            milli: 250,
            mem_mib: 20480,
            mig: None,
        };
        let plain = SliceSetup::new(GpuControl::default(), false)
            .prepare(&launch(share.clone()))
            .unwrap();
        assert_eq!(plain.env["GPUSCHED_GPU_SHARE"], "0.25");
        assert!(!plain.env.contains_key("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
        let mps = SliceSetup::new(GpuControl::default(), true)
            .prepare(&launch(share))
            .unwrap();
        assert_eq!(mps.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25");
        assert_eq!(mps.env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=20480MB");
    }

    #[test]
    fn mig_instances_are_made_for_a_job_and_destroyed_after_it() {
        let fake = FakeNvml::uniform(1, "NVIDIA A100-SXM4-80GB", 81920)
            .with_mig_spec("0:1g.10gb@0")
            .unwrap();
        let lib: Arc<dyn GpuLibrary> = Arc::new(fake.clone());
        let setup = SliceSetup::new(GpuControl(Some(lib)), false);
        let mig = |create: bool, start: u8, destroy: Vec<u8>| SliceAt {
            gpu: 0,
            milli: 428,
            mem_mib: 40960,
            mig: Some(MigAt {
                profile: "3g.40gb".into(),
                start,
                size: 4,
                create,
                destroy,
                uuid: None,
            }),
        };
        // Slice 0 holds the idle 1g.10gb, which the server asked to destroy.
        let ready = setup.prepare(&launch(mig(true, 0, vec![0]))).unwrap();
        let uuid = ready.slice.unwrap().mig.unwrap().uuid.unwrap();
        assert!(uuid.starts_with("MIG-"));
        let now = fake.mig_instances(0).unwrap();
        assert_eq!(now.len(), 1);
        assert_eq!(
            (now[0].profile.as_str(), now[0].uuid.as_deref()),
            ("3g.40gb", Some(uuid.as_str()))
        );
        setup.ended(AttemptRef { job: 1, attempt: 1 });
        assert!(fake.mig_instances(0).unwrap().is_empty());
        // An existing instance that is not there: a clear refusal.
        let e = setup.prepare(&launch(mig(false, 4, vec![]))).unwrap_err();
        assert!(e.contains("layout changed"), "{e}");
        // Overlap: NVML's error comes through.
        fake.create_mig_instance(0, "4g.40gb", 0).unwrap();
        let e = setup.prepare(&launch(mig(true, 0, vec![]))).unwrap_err();
        assert!(e.contains("NVML_ERROR_INSUFFICIENT_RESOURCES"), "{e}");
    }
}
