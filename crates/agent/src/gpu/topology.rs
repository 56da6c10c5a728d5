//! How a node's GPUs are linked, pair by pair, for placement inside a node (the best
//! linked GPUs for a job of several) and for `nodes --gpus`.
//!
//! NVML's semantics (`nvmlDeviceGetTopologyCommonAncestor`, `nvmlGpuTopologyLevel_t`):
//! `INTERNAL` two GPUs on one board, `SINGLE` behind one PCIe switch (nvidia-smi's
//! PIX), `MULTIPLE` behind several switches without a host bridge (PXB), `HOSTBRIDGE`
//! through one host bridge (PHB), `NODE` across host bridges in one NUMA node, `SYSTEM`
//! across NUMA nodes (SYS). NVLink sits above all of them: an active NVLink between the
//! two GPUs (`nvmlDeviceGetNvLinkRemotePciInfo` names the other GPU) is `NvLink`; two
//! GPUs whose active NVLinks both lead to a device that is not a GPU are on an
//! NVSwitch fabric (DGX/HGX boards), `NvSwitch`.

use gpusched_wire::{GpuInfo, GpuLink, LinkKind};

use super::GpuLibrary;

/// NVML's topology levels (`nvmlGpuTopologyLevel_t`), as the library reports them.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TopologyLevel {
    Internal,
    Single,
    Multiple,
    HostBridge,
    Node,
    System,
}

/// The link kind of a common ancestor. Two GPUs on one board (`INTERNAL`) are
/// connected by the board's own PCIe switch, so they rank with `SINGLE`.
pub fn link_of_level(level: TopologyLevel) -> LinkKind {
    match level {
        TopologyLevel::Internal | TopologyLevel::Single => LinkKind::PcieSwitch,
        TopologyLevel::Multiple => LinkKind::PcieMulti,
        TopologyLevel::HostBridge => LinkKind::HostBridge,
        TopologyLevel::Node => LinkKind::Numa,
        TopologyLevel::System => LinkKind::System,
    }
}

/// Every pair `a < b` of `gpus` the library can tell the link of. A pair it cannot
/// tell (no topology support, a failing call) is left out: the server counts it as the
/// worst link. Failures are logged once.
pub fn links(lib: &dyn GpuLibrary, gpus: &[GpuInfo]) -> Vec<GpuLink> {
    let mut indices: Vec<u32> = gpus.iter().map(|g| g.index).collect();
    indices.sort_unstable();
    indices.dedup();
    let mut out = Vec::new();
    let mut warned = false;
    for (i, &a) in indices.iter().enumerate() {
        for &b in &indices[i + 1..] {
            match lib.link(a, b) {
                Ok(Some(kind)) => out.push(GpuLink { a, b, kind }),
                Ok(None) => {}
                Err(e) => {
                    if !warned {
                        tracing::warn!(
                            "cannot read how GPUs {a} and {b} are linked ({e}); placement \
                             inside this node will not prefer linked GPUs"
                        );
                        warned = true;
                    }
                }
            }
        }
    }
    out
}
