//! What a job on part of a GPU asks for, and where it was put, in the core's terms.

/// Part of one GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SliceAsk {
    /// Thousandths of a GPU's compute (and the same fraction of its memory).
    Share { milli: u32 },
    /// MiB of a GPU's memory (charged the same fraction of compute on the smallest GPU
    /// that holds it).
    Memory { mib: u64 },
    /// A MIG instance of this profile.
    Mig { profile: String },
}

/// Where a slice job runs on its node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceAt {
    pub gpu: u32,
    /// Thousandths of the GPU's compute it holds.
    pub milli: u32,
    pub mem_mib: u64,
    /// For a MIG job: its instance.
    pub mig: Option<MigAt>,
}

/// A MIG job's instance: an idle one reused, or one to create (after destroying idle
/// ones).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigAt {
    pub profile: String,
    pub start: u8,
    pub size: u8,
    pub create: bool,
    pub destroy: Vec<u8>,
    pub uuid: Option<String>,
}
