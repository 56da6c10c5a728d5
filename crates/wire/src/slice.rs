//! Parts of one GPU: what a job asks for (a share or a MIG profile), where the scheduler
//! put it, and the MIG layout an agent reports.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A part of one GPU, as a job asks for it (instead of whole GPUs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SliceAsk {
    /// A share of one GPU's compute, in thousandths (1..=999).
    Share { milli: u32 },
    /// A share of one GPU by memory, in MiB.
    Memory { mib: u64 },
    /// One MIG instance of a profile such as `1g.10gb`.
    Mig { profile: String },
}

impl SliceAsk {
    /// `0.25 GPU`, `20480 MiB of a GPU`, `MIG 1g.10gb`.
    pub fn describe(&self) -> String {
        match self {
            SliceAsk::Share { milli } => format!("{} GPU", milli_text(*milli)),
            SliceAsk::Memory { mib } => format!("{mib} MiB of a GPU"),
            SliceAsk::Mig { profile } => format!("MIG {profile}"),
        }
    }
}

/// `250` → `0.25`.
pub fn milli_text(milli: u32) -> String {
    let s = format!("{:.3}", f64::from(milli) / 1000.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Where the scheduler put a job's slice, as the agent needs it to start the job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SliceAt {
    /// Node-local GPU index (NVML order).
    pub gpu: u32,
    /// Compute thousandths and memory MiB the job is entitled to on that GPU (for a MIG
    /// instance: the instance's share of the GPU).
    pub milli: u32,
    pub mem_mib: u64,
    /// The MIG instance, for a MIG job.
    #[serde(default)]
    pub mig: Option<MigAt>,
}

/// A job's MIG instance: an existing one, or one the agent creates for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MigAt {
    pub profile: String,
    /// First memory slice of the instance (NVML's placement start).
    pub start: u8,
    /// Memory slices it spans (NVML's placement size).
    pub size: u8,
    /// True: the agent creates the instance before the job and destroys it after.
    pub create: bool,
    /// Idle instances (by start slice) the agent destroys first to make room (a
    /// re-layout); only instances no job holds are ever listed.
    #[serde(default)]
    pub destroy: Vec<u8>,
    /// `MIG-…` UUID, once known.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// A GPU's MIG state as its agent reports it. Absent on a GPU with MIG disabled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MigInfo {
    /// The agent may create and destroy instances on this GPU to fit the queue.
    pub dynamic: bool,
    /// The GPU instances that exist now.
    pub instances: Vec<MigInstanceInfo>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MigInstanceInfo {
    pub profile: String,
    pub start: u8,
    pub size: u8,
    /// `MIG-…` UUID of its compute instance (what `CUDA_VISIBLE_DEVICES` takes).
    pub uuid: Option<String>,
}

/// One slice of a GPU as `gpusched nodes` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SliceView {
    /// `share` or `mig`.
    pub kind: String,
    /// The MIG profile and start slice, for a MIG instance.
    pub profile: Option<String>,
    pub start: Option<u8>,
    pub uuid: Option<String>,
    pub milli: u32,
    pub mem_mib: u64,
    /// The job holding it (none: an idle MIG instance).
    pub job: Option<u64>,
    pub user: Option<String>,
}

/// `512M`, `16G`, `20GiB`, `1T` (binary units, Slurm's habit) or a plain number of MiB.
pub fn parse_mib(s: &str) -> Result<u64, String> {
    let bad = || format!("{s:?}: use a number of MiB or a size like 512M, 16G, 20GiB, 1T");
    let t = s.trim();
    let (num, mult) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => {
            let mult = match t[i..]
                .to_ascii_uppercase()
                .trim_end_matches("IB")
                .trim_end_matches('B')
            {
                "K" => 1.0 / 1024.0,
                "M" => 1.0,
                "G" => 1024.0,
                "T" => 1024.0 * 1024.0,
                _ => return Err(bad()),
            };
            (&t[..i], mult)
        }
        None => (t, 1.0),
    };
    let n: f64 = num.trim().parse().map_err(|_| bad())?;
    let mib = (n * mult).ceil();
    if !(1.0..1e15).contains(&mib) {
        return Err(format!("{s:?} is less than 1 MiB (or absurdly large)"));
    }
    Ok(mib as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes() {
        assert_eq!(parse_mib("512").unwrap(), 512);
        assert_eq!(parse_mib("16G").unwrap(), 16384);
        assert_eq!(parse_mib("1.5GiB").unwrap(), 1536);
        assert_eq!(parse_mib("20GiB").unwrap(), 20480);
        assert_eq!(parse_mib("1T").unwrap(), 1 << 20);
        assert!(parse_mib("lots").unwrap_err().contains("16G"));
        assert!(parse_mib("0").is_err());
    }

    #[test]
    fn milli_reads_as_a_fraction() {
        assert_eq!(milli_text(250), "0.25");
        assert_eq!(milli_text(500), "0.5");
        assert_eq!(milli_text(1), "0.001");
    }
}
