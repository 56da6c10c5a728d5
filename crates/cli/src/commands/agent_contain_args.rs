//! `gpusched agent`'s flags for containing jobs in cgroups: docs/containment.md.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use gpusched_agent::cgroup::CgroupChoice;
use gpusched_agent::launcher::ContainConfig;

#[derive(ClapArgs, Debug, Clone)]
pub struct ContainArgs {
    /// The cgroup hierarchy that contains each job: auto (v2 where /sys/fs/cgroup is
    /// the unified hierarchy, else the v1 controllers), v1, v2, or none (--cpus and
    /// --mem are then accounting only). What is enforced shows in `gpusched nodes`.
    #[arg(long, value_name = "auto|v1|v2|none", default_value = "auto")]
    pub cgroup: CgroupChoice,
    /// CPUs per GPU for a job that asks for none (its CPU quota, and cores near its
    /// GPUs where cpuset is available), or `none`: no CPU limit for it.
    #[arg(long, value_name = "N|none", default_value = "none", value_parser = parse_cpus)]
    pub default_cpus_per_gpu: OrNone<f64>,
    /// Memory per GPU for a job that asks for none, e.g. 32G, or `none`.
    #[arg(long, value_name = "SIZE|none", default_value = "none", value_parser = parse_size)]
    pub default_mem_per_gpu: OrNone<u64>,
    /// The most processes and threads a job may have at once, unless it asks for
    /// another number (`submit --pids`); `none`: no limit.
    #[arg(long, value_name = "N|none", default_value = "none", value_parser = parse_count)]
    pub pids_max: OrNone<u64>,
    /// The most a job may ask for with `submit --pids` (more is cut to this); `none`:
    /// any.
    #[arg(long, value_name = "N|none", default_value = "none", value_parser = parse_count)]
    pub pids_max_cap: OrNone<u64>,
    /// Where the GPUs' device files (nvidiaN) are: a job's cgroup refuses the files
    /// of GPUs it was not given.
    #[arg(long, value_name = "DIR", default_value = "/dev")]
    pub gpu_device_dir: PathBuf,
}

/// A value or `none` (clap reads a field of type `Option` as a flag that may be
/// absent, not as a value that may be "none").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrNone<T>(pub Option<T>);

impl ContainArgs {
    pub fn config(&self) -> ContainConfig {
        ContainConfig {
            cgroup: self.cgroup,
            default_cpus_per_gpu: self.default_cpus_per_gpu.0,
            default_mem_mib_per_gpu: self.default_mem_per_gpu.0,
            pids_max: self.pids_max.0,
            pids_max_cap: self.pids_max_cap.0,
            gpu_device_dir: self.gpu_device_dir.clone(),
        }
    }
}

fn parse_cpus(s: &str) -> Result<OrNone<f64>, String> {
    if s == "none" {
        return Ok(OrNone(None));
    }
    match s.parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok(OrNone(Some(n))),
        _ => Err(format!("{s:?} is not a number of CPUs above 0 (or none)")),
    }
}

fn parse_size(s: &str) -> Result<OrNone<u64>, String> {
    if s == "none" {
        return Ok(OrNone(None));
    }
    match gpusched_wire::parse_mib(s) {
        Ok(0) => Err("a memory size above 0 (or none)".into()),
        Ok(mib) => Ok(OrNone(Some(mib))),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_count(s: &str) -> Result<OrNone<u64>, String> {
    if s == "none" {
        return Ok(OrNone(None));
    }
    match s.parse::<u64>() {
        Ok(n) if n > 0 => Ok(OrNone(Some(n))),
        _ => Err(format!("{s:?} is not a count above 0 (or none)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flags parse as `gpusched agent` gets them (clap checks the definitions).
    #[test]
    fn the_flags_parse_with_their_defaults_and_values() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            contain: ContainArgs,
        }
        let c = Cli::try_parse_from(["x"]).unwrap().contain.config();
        assert_eq!(c.cgroup, CgroupChoice::Auto);
        assert_eq!((c.default_cpus_per_gpu, c.pids_max), (None, None));
        let c = Cli::try_parse_from([
            "x",
            "--cgroup",
            "none",
            "--default-cpus-per-gpu",
            "8",
            "--default-mem-per-gpu",
            "64G",
            "--pids-max",
            "4096",
        ])
        .unwrap()
        .contain
        .config();
        assert_eq!(c.cgroup, CgroupChoice::None);
        assert_eq!(c.default_cpus_per_gpu, Some(8.0));
        assert_eq!(c.default_mem_mib_per_gpu, Some(65536));
        assert_eq!(c.pids_max, Some(4096));
        let e = Cli::try_parse_from(["x", "--cgroup", "v3"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("auto, v1, v2 or none"), "{e}");
    }

    #[test]
    fn none_or_a_positive_value() {
        assert_eq!(parse_cpus("none"), Ok(OrNone(None)));
        assert_eq!(parse_cpus("1.5"), Ok(OrNone(Some(1.5))));
        assert!(parse_cpus("0").is_err() && parse_cpus("nan").is_err());
        assert_eq!(parse_size("2G"), Ok(OrNone(Some(2048))));
        assert!(parse_size("0").is_err() && parse_size("lots").is_err());
        assert_eq!(parse_count("512"), Ok(OrNone(Some(512))));
        assert!(parse_count("0").is_err() && parse_count("-1").is_err());
    }
}
