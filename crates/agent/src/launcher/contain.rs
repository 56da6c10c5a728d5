//! What contains a part on this node: its limits (asked, or the node's defaults per
//! GPU), the cgroup made with them, the cores it is pinned to, and what it used.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use gpusched_wire::contain::{Containment, Usage};
use gpusched_wire::{AttemptRef, Launch, Outcome};

use crate::cgroup::cores::CorePool;
use crate::cgroup::devices::GpuDevices;
use crate::cgroup::{CgroupChoice, Cgroups, JobCgroup, PartLimits};

/// The agent's containment settings (`gpusched agent --cgroup ...`).
#[derive(Clone, Debug)]
pub struct ContainConfig {
    pub cgroup: CgroupChoice,
    /// CPUs per GPU for a part that asks for none (Slurm's DefCpuPerGPU); `None`: no
    /// CPU limit for it.
    pub default_cpus_per_gpu: Option<f64>,
    /// Memory per GPU, MiB, for a part that asks for none (DefMemPerGPU).
    pub default_mem_mib_per_gpu: Option<u64>,
    /// `pids.max` of a part that asks for none; `None`: no limit.
    pub pids_max: Option<u64>,
    /// The most a part may ask for (`--pids`); more is cut to this.
    pub pids_max_cap: Option<u64>,
    /// Where the GPUs' device files are (`/dev`; tests point it at files they made).
    pub gpu_device_dir: PathBuf,
}

impl Default for ContainConfig {
    fn default() -> Self {
        ContainConfig {
            cgroup: CgroupChoice::None,
            default_cpus_per_gpu: None,
            default_mem_mib_per_gpu: None,
            pids_max: None,
            pids_max_cap: None,
            gpu_device_dir: PathBuf::from("/dev"),
        }
    }
}

/// The node's containment, shared by the launcher and each part's supervisor.
pub struct Contain {
    cfg: ContainConfig,
    cgroups: Cgroups,
    devices: GpuDevices,
    cores: Option<CorePool>,
    /// The cgroups of running parts, by name (for the metrics).
    running: Mutex<BTreeMap<String, JobCgroup>>,
}

impl std::fmt::Debug for Contain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contain")
            .field("containment", &self.containment())
            .finish_non_exhaustive()
    }
}

/// A part's cgroup while it runs.
pub struct PartCgroup {
    pub name: String,
    pub cgroup: JobCgroup,
    pub contain: Arc<Contain>,
}

impl Contain {
    /// No cgroups: what a launcher made without settings has (tests, and agents told
    /// `--cgroup none`).
    pub fn none() -> Contain {
        Contain {
            cfg: ContainConfig::default(),
            cgroups: Cgroups::none("the agent was started with --cgroup none"),
            devices: GpuDevices::default(),
            cores: None,
            running: Mutex::default(),
        }
    }

    /// Sets up the agent's cgroups (`key`: see [`crate::cgroup::agent_key`]) for a node
    /// whose GPUs have these (index, device minor) numbers and nearby cores.
    pub fn new(
        cfg: ContainConfig,
        key: &str,
        gpu_minors: Vec<(u32, u32)>,
        near: impl FnOnce(&[u32]) -> BTreeMap<u32, Vec<u32>>,
    ) -> Contain {
        let cgroups = Cgroups::detect(cfg.cgroup, key);
        let devices = GpuDevices::in_dir(&cfg.gpu_device_dir, gpu_minors);
        let cores = cgroups.cores().map(|all| {
            let affinity = near(&all);
            CorePool::new(all, affinity)
        });
        Contain {
            cfg,
            cgroups,
            devices,
            cores,
            running: Mutex::default(),
        }
    }

    pub fn containment(&self) -> Containment {
        self.cgroups.containment().clone()
    }

    pub fn cgroups(&self) -> &Cgroups {
        &self.cgroups
    }

    /// The name of an attempt's cgroup.
    pub fn name(a: AttemptRef) -> String {
        format!("job-{}.{}", a.job, a.attempt)
    }

    /// The limits of `launch`'s part here: what it asked, else the node's defaults per
    /// GPU; cores and devices where they are enforced.
    pub fn limits(&self, launch: &Launch, name: &str) -> PartLimits {
        let gpus = launch.gpus.len() as u64;
        let per_gpu = |each: Option<u64>| each.filter(|_| gpus > 0).map(|e| e * gpus);
        let mem_mib = Some(launch.mem_mib)
            .filter(|&m| m > 0)
            .or_else(|| per_gpu(self.cfg.default_mem_mib_per_gpu));
        let cpu_milli = Some(launch.cpu_milli).filter(|&c| c > 0).or_else(|| {
            per_gpu(
                self.cfg
                    .default_cpus_per_gpu
                    .map(|c| (c * 1000.0).round() as u64),
            )
        });
        let pids_max = match (launch.pids_max, self.cfg.pids_max_cap) {
            (Some(asked), Some(cap)) => Some(asked.min(cap)),
            (Some(asked), None) => Some(asked),
            (None, _) => self.cfg.pids_max,
        };
        let cores = match (&self.cores, cpu_milli) {
            (Some(pool), Some(milli)) => {
                Some(pool.pick(name, milli.div_ceil(1000) as usize, &launch.gpus))
            }
            _ => None,
        };
        PartLimits {
            mem_bytes: mem_mib.map(|m| m.saturating_mul(1 << 20)),
            cpu_milli,
            cores,
            pids_max,
            deny_devices: if self.cgroups.enforces("devices") {
                self.devices.deny_for(&launch.gpus)
            } else {
                Vec::new()
            },
        }
    }

    /// Makes the part's cgroup; `Ok(None)` without cgroups. The caller's `Err` ends
    /// the attempt before it starts.
    pub fn create(self: &Arc<Self>, launch: &Launch) -> Result<Option<PartCgroup>, String> {
        if !self.cgroups.active() {
            return Ok(None);
        }
        let name = Self::name(launch.attempt_ref());
        let limits = self.limits(launch, &name);
        match self.cgroups.create(&name, &limits) {
            Ok(Some(cgroup)) => {
                self.running
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(name.clone(), cgroup.clone());
                Ok(Some(PartCgroup {
                    name,
                    cgroup,
                    contain: self.clone(),
                }))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.release(&name);
                Err(format!("the agent could not make the job's cgroup: {e}"))
            }
        }
    }

    fn release(&self, name: &str) {
        if let Some(pool) = &self.cores {
            pool.release(name);
        }
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name);
    }

    /// Kills and removes what an earlier life left of attempt `a` (its cgroup may hold
    /// daemons that left its process group).
    pub fn kill_leftover(&self, a: AttemptRef) {
        if let Some(cg) = self.cgroups.existing(&Self::name(a)) {
            if let Err(e) = cg.kill_all_blocking() {
                tracing::warn!("{e}");
            }
            cg.remove();
        }
    }

    /// Kills and removes every job cgroup of this agent's directory that no running
    /// part owns: after a restart, what the last life left.
    pub fn sweep(&self, running: &[AttemptRef]) {
        let keep: Vec<String> = running.iter().map(|a| Self::name(*a)).collect();
        for name in self.cgroups.job_names() {
            if keep.contains(&name) {
                continue;
            }
            if let Some(cg) = self.cgroups.existing(&name) {
                let left = cg.pids();
                if !left.is_empty() {
                    tracing::info!(
                        "killing processes {left:?} left in {name} by an earlier agent life"
                    );
                }
                if let Err(e) = cg.kill_all_blocking() {
                    tracing::warn!("{e}");
                }
                cg.remove();
            }
        }
    }

    /// What each running part has used so far, by attempt, with its memory now.
    pub fn running_usage(&self) -> Vec<(String, Usage, Option<u64>)> {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        running
            .iter()
            .map(|(name, cg)| {
                let (usage, _) = cg.usage();
                (name.clone(), usage, cg.memory_now())
            })
            .collect()
    }
}

impl PartCgroup {
    /// Kills and removes the cgroup of a part that did not start (a process failed to
    /// spawn after others had).
    pub fn abandon(self) {
        if let Err(e) = self.cgroup.kill_all_blocking() {
            tracing::warn!("{e}");
        }
        self.cgroup.remove();
        self.contain.release(&self.name);
    }

    /// SIGTERM to every process in the part's cgroup, with its group's: a daemon that
    /// left the group is asked to stop too before the kill.
    pub fn terminate(&self) {
        self.cgroup.signal_all(nix::sys::signal::Signal::SIGTERM);
    }

    /// Ends everything left in the part's cgroup, reads what it used, says whether the
    /// kernel killed it for memory (turning `outcome` into `OutOfMemory`), and removes
    /// the cgroup.
    pub async fn finish(
        self,
        outcome: Outcome,
        before_kill: Option<Box<dyn FnOnce() + Send>>,
    ) -> (Outcome, Option<Usage>) {
        // Usually nothing is left (the part's group was killed with it): then the
        // reading and the removal are a few small files, done here; a hand-off to a
        // blocking thread cost more than they do. Otherwise the kill waits for the
        // cgroup to empty, on a blocking thread.
        let cg = self.cgroup.clone();
        let name = self.name.clone();
        let read = if before_kill.is_none() && cg.own_procs_empty() {
            let read = cg.usage();
            if !cg.try_remove_now() {
                // The kernel has not let go of it yet, or it has a child cgroup with
                // processes: ended and removed off this thread.
                let cg = cg.clone();
                drop(tokio::task::spawn_blocking(move || {
                    if let Err(e) = cg.kill_all_blocking() {
                        tracing::warn!("{e}");
                    }
                    cg.remove()
                }));
            }
            Ok(read)
        } else {
            tokio::task::spawn_blocking(move || {
                if let Some(f) = before_kill {
                    f();
                }
                if let Err(e) = cg.kill_all_blocking() {
                    tracing::warn!("{e}");
                }
                let read = cg.usage();
                cg.remove();
                read
            })
            .await
        };
        self.contain.release(&self.name);
        let (usage, oom_kills) = match read {
            Ok(read) => read,
            Err(e) => {
                tracing::warn!("finishing the cgroup {name} failed: {e}");
                return (outcome, None);
            }
        };
        let failed = match outcome {
            Outcome::Signaled { .. } => true,
            Outcome::Exited { code } => code != 0,
            _ => false,
        };
        let outcome = match (failed, oom_kills, self.cgroup.mem_limit()) {
            (true, 1.., Some(limit_bytes)) => Outcome::OutOfMemory {
                peak_bytes: usage.mem_peak_bytes.unwrap_or(limit_bytes),
                limit_bytes,
            },
            _ => outcome,
        };
        (outcome, Some(usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contain(cfg: ContainConfig, cores: Option<CorePool>) -> Contain {
        Contain {
            cfg,
            cgroups: Cgroups::none("test"),
            devices: GpuDevices::default(),
            cores,
            running: Mutex::default(),
        }
    }

    fn launch(gpus: Vec<u32>, cpu_milli: u64, mem_mib: u64, pids_max: Option<u64>) -> Launch {
        Launch {
            job: 1,
            attempt: 1,
            name: "t".into(),
            user: "u".into(),
            command: vec!["true".into()],
            cwd: "/".into(),
            env: Default::default(),
            gpus,
            walltime_s: None,
            grace_s: 1,
            slice: None,
            resources: Default::default(),
            dist: None,
            cpu_milli,
            mem_mib,
            pids_max,
            image: None,
            serve: None,
            hold: false,
        }
    }

    /// What a part asks is its limit; a part that asks nothing gets the node's
    /// defaults per GPU (none for a part without GPUs); `--pids` is cut to the cap.
    #[test]
    fn asked_limits_win_and_defaults_go_per_gpu() {
        let cfg = ContainConfig {
            default_cpus_per_gpu: Some(4.0),
            default_mem_mib_per_gpu: Some(1024),
            pids_max: Some(100),
            pids_max_cap: Some(1000),
            ..ContainConfig::default()
        };
        let c = contain(cfg, None);
        let l = c.limits(&launch(vec![0, 1], 0, 0, None), "p");
        assert_eq!(l.cpu_milli, Some(8000));
        assert_eq!(l.mem_bytes, Some(2048 << 20));
        assert_eq!(l.pids_max, Some(100));
        let l = c.limits(&launch(vec![0, 1], 1500, 512, Some(5000)), "p");
        assert_eq!(l.cpu_milli, Some(1500));
        assert_eq!(l.mem_bytes, Some(512 << 20));
        assert_eq!(l.pids_max, Some(1000));
        let l = c.limits(&launch(vec![], 0, 0, Some(10)), "p");
        assert_eq!(
            (l.cpu_milli, l.mem_bytes, l.pids_max),
            (None, None, Some(10))
        );
        // No defaults: nothing but what was asked.
        let none = contain(ContainConfig::default(), None);
        let l = none.limits(&launch(vec![0], 0, 0, None), "p");
        assert_eq!(l, PartLimits::default());
    }

    /// Cores follow the CPUs asked, rounded up, near the part's GPUs, and go back
    /// when it ends.
    #[test]
    fn a_part_is_pinned_to_as_many_cores_as_it_asked_cpus() {
        let all: Vec<u32> = (0..8).collect();
        let near = crate::cgroup::cores::two_socket_model(&[0, 1, 2, 3], &all);
        let c = contain(ContainConfig::default(), Some(CorePool::new(all, near)));
        let l = c.limits(&launch(vec![3], 1500, 0, None), "a");
        assert_eq!(l.cores, Some(vec![4, 5]));
        assert_eq!(c.limits(&launch(vec![], 0, 0, None), "b").cores, None);
        c.release("a");
        let l = c.limits(&launch(vec![2], 2000, 0, None), "c");
        assert_eq!(l.cores, Some(vec![4, 5]));
    }
}
