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

/// The sizes [`parse_mib`] accepts, as the OpenAPI document states them: up to 8 digits,
/// an optional fraction of up to 6, an optional unit (`K`, `M`, `G`, `T`, each optionally
/// followed by `B` or `iB`, any case), and not zero.
pub const MIB_PATTERN: &str =
    r"^(?!0+(\.0+)?([KkMmGgTt]([Ii]?[Bb])?)?$)[0-9]{1,8}(\.[0-9]{1,6})?([KkMmGgTt]([Ii]?[Bb])?)?$";

/// `512M`, `16G`, `20GiB`, `1T` (binary units, Slurm's habit) or a plain number of MiB;
/// exactly the language of [`MIB_PATTERN`]. A fraction of a MiB rounds up.
pub fn parse_mib(s: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "{s:?}: use a number of MiB or a size like 512M, 16G, 20GiB, 1T \
             (up to 8 digits, a fraction of up to 6, no spaces)"
        )
    };
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (num, None),
    };
    let digits = |d: &str, most: usize| {
        !d.is_empty() && d.len() <= most && d.bytes().all(|b| b.is_ascii_digit())
    };
    if !digits(int, 8) || frac.is_some_and(|f| !digits(f, 6)) {
        return Err(bad());
    }
    let mult: u128 = match unit.to_ascii_uppercase().as_str() {
        "" => 1 << 20,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        _ => return Err(bad()),
    };
    // Exact arithmetic in bytes x 10^6, so `1.5G` is 1536 and no float rounds.
    let frac = frac.unwrap_or("");
    let scaled: u128 = format!("{int}{frac:0<6}").parse().map_err(|_| bad())?;
    let micro_bytes = scaled * mult;
    let per_mib: u128 = 1_000_000 << 20;
    let mib = micro_bytes.div_ceil(per_mib);
    if mib == 0 {
        return Err(format!("{s:?} is zero; give a size of at least 1 MiB"));
    }
    u64::try_from(mib).map_err(|_| bad())
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
        assert!(parse_mib("0.000G").unwrap_err().contains("zero"));
        assert_eq!(parse_mib("0.001K").unwrap(), 1);
        assert_eq!(parse_mib("99999999T").unwrap(), 99_999_999 << 20);
        for bad in [
            "",
            " 5",
            "5 G",
            "-5",
            "+5",
            "1e3",
            ".5",
            "5.",
            "123456789",
            "1.1234567",
            "5GB5",
            "inf",
            "5P",
        ] {
            assert!(parse_mib(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn milli_reads_as_a_fraction() {
        assert_eq!(milli_text(250), "0.25");
        assert_eq!(milli_text(500), "0.5");
        assert_eq!(milli_text(1), "0.001");
    }
}
