//! Each GPU's latest sample under NVIDIA DCGM exporter's names and labels, verbatim, so
//! dashboards built for DCGM exporter work on gpusched's `/metrics` unchanged.
//!
//! Names, help texts and units follow DCGM exporter's `etc/default-counters.csv`; the
//! labels are its defaults (`gpu`, `UUID`, `device`, `modelName`, `Hostname`) plus
//! `node`, gpusched's name for the host everywhere else. Two deliberate differences:
//! `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` is typed gauge, not counter (OpenMetrics would
//! rename a counter `..._total`; `rate()` and `increase()` read it the same), and a
//! reading NVML does not offer on that GPU is absent rather than 0. Only online nodes'
//! samples are shown: an offline node's last sample is not its GPUs' state now.

use std::collections::BTreeMap;

use gpusched_wire::{GpuSample, GpuView, NodeList, NodeState};

use super::sheet::{Labels, Sheet};

/// One DCGM field: its name, its help, and its value in a sample (None: not read).
struct Field {
    name: &'static str,
    help: &'static str,
    value: fn(&GpuSample, &GpuView) -> Option<f64>,
}

const FIELDS: &[Field] = &[
    Field {
        name: "DCGM_FI_DEV_GPU_UTIL",
        help: "GPU utilization (in %).",
        value: |s, _| s.util_pct.map(f64::from),
    },
    Field {
        name: "DCGM_FI_DEV_FB_USED",
        help: "Framebuffer memory used (in MiB).",
        value: |s, _| s.mem_used_mib.map(|m| m as f64),
    },
    Field {
        name: "DCGM_FI_DEV_FB_FREE",
        help: "Framebuffer memory free (in MiB).",
        // The GPU's memory less what is used (NVML's free also leaves out the driver's
        // reserve, a few hundred MiB).
        value: |s, g| {
            s.mem_used_mib
                .map(|used| g.info.mem_mib.saturating_sub(used) as f64)
        },
    },
    Field {
        name: "DCGM_FI_DEV_GPU_TEMP",
        help: "GPU temperature (in C).",
        value: |s, _| s.temp_c.map(f64::from),
    },
    Field {
        name: "DCGM_FI_DEV_POWER_USAGE",
        help: "Power draw (in W).",
        value: |s, _| s.power_mw.map(|mw| f64::from(mw) / 1000.0),
    },
    Field {
        name: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        help: "Total energy consumption since boot (in mJ).",
        value: |s, _| s.energy_mj.map(|e| e as f64),
    },
    Field {
        name: "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
        help: "Current clock throttle reasons (bitmask of DCGM_CLOCKS_THROTTLE_REASON_*).",
        value: |s, _| s.throttle_reasons.map(|r| r as f64),
    },
    Field {
        name: "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        help: "Total number of single-bit volatile ECC errors.",
        value: |s, _| s.ecc_corrected.map(|e| e as f64),
    },
    Field {
        name: "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        help: "Total number of double-bit volatile ECC errors.",
        value: |s, _| s.ecc_uncorrected.map(|e| e as f64),
    },
];

/// DCGM exporter's default labels for GPU `g` of node `node`, and gpusched's `node`.
fn labels(node: &str, g: &GpuView) -> Labels {
    let mut l: Labels = vec![("gpu", g.info.index.to_string())];
    if let Some(uuid) = &g.info.uuid {
        l.push(("UUID", uuid.clone()));
    }
    l.push(("device", format!("nvidia{}", g.info.index)));
    l.push(("modelName", g.info.model.clone()));
    l.push(("Hostname", node.to_string()));
    l.push(("node", node.to_string()));
    l
}

/// The DCGM series of every online node's latest samples; `last_xid` holds the last Xid
/// each GPU reported (by node and index).
pub fn gpus(nodes: &NodeList, last_xid: &BTreeMap<(String, u32), u64>, out: &mut Sheet) {
    // (node, its GPU, its sample) for every GPU with a sample that is not lost.
    let mut read: Vec<(&str, &GpuView, &GpuSample)> = Vec::new();
    for n in nodes.nodes.iter().filter(|n| n.state == NodeState::Online) {
        for g in &n.gpus {
            let sample = n
                .telemetry
                .as_ref()
                .and_then(|t| t.gpus.iter().find(|s| s.index == g.info.index));
            if let Some(s) = sample.filter(|s| !s.lost) {
                read.push((&n.name, g, s));
            }
        }
    }
    for f in FIELDS {
        out.gauge(f.name, f.help);
        for &(node, g, s) in &read {
            if let Some(v) = (f.value)(s, g) {
                out.add(labels(node, g), v);
            }
        }
    }
    out.gauge(
        "DCGM_FI_DEV_XID_ERRORS",
        "Value of the last XID error encountered.",
    );
    // GPUs that report samples: 0 until one reports an Xid (as DCGM exporter).
    for &(node, g, _) in &read {
        let v = last_xid
            .get(&(node.to_string(), g.info.index))
            .copied()
            .unwrap_or(0);
        out.add(labels(node, g), v as f64);
    }
    // Not DCGM's: gpusched's own readings with no DCGM field of the same meaning.
    out.gauge(
        "gpusched_gpu_lost",
        "1 if NVML no longer sees the GPU (fallen off the bus) in its node's latest sample",
    );
    for n in nodes.nodes.iter().filter(|n| n.state == NodeState::Online) {
        let Some(t) = &n.telemetry else { continue };
        for g in &n.gpus {
            if let Some(s) = t.gpus.iter().find(|s| s.index == g.info.index) {
                out.add(labels(&n.name, g), if s.lost { 1.0 } else { 0.0 });
            }
        }
    }
    out.gauge(
        "gpusched_gpu_retired_pages",
        "Retired pages (before Ampere) or remapped rows (Ampere and later), in all",
    );
    for &(node, g, s) in &read {
        if let Some(p) = s.retired_pages {
            out.add(labels(node, g), p as f64);
        }
    }
    out.gauge(
        "gpusched_gpu_retire_pending",
        "1 if a page retirement or row remap waits for a GPU reset",
    );
    for &(node, g, s) in &read {
        if let Some(p) = s.retire_pending {
            out.add(labels(node, g), if p { 1.0 } else { 0.0 });
        }
    }
}
