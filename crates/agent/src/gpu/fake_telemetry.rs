//! What the fake GPUs read: plausible, deterministic telemetry, and faults a test (or an
//! operator trying the scheduler) injects into a running agent through a file.
//!
//! The model, per GPU, from its model's board power (NVIDIA's datasheets, below):
//! - idle (no job holds it): utilisation 0, ~60 W (a quarter of the board power on
//!   boards under 240 W), 31-40 °C, 4 MiB of memory used, clocks event reason `GPU_IDLE`;
//! - busy (a job holds it): utilisation 90-99 %, 85-95 % of the board power, ~68-72 °C,
//!   70-85 % of its memory;
//! - a GPU with a power limit below its board power (`set_power_limit`) draws at most
//!   97-100 % of the limit while busy, with `SW_POWER_CAP` among its clocks event
//!   reasons, so its energy counter grows with the limit, not the board power;
//! - the temperature moves toward its target with a 20 s time constant (a GPU that
//!   just got a job warms over a minute), the energy counter integrates the power
//!   over the time between passes and never goes down;
//! - the small variations come from a hash of (node salt, GPU, second), so the same
//!   calls give the same readings.
//!
//! Faults: `fake-faults.toml` in the agent's state directory, read at every pass (so a
//! test can write it while the agent runs; write it whole, e.g. to a temporary file
//! renamed over it):
//!
//! ```toml
//! [gpu.1]
//! temp_c = 95          # reads 95 °C (throttling), until the line goes
//! xid = 79             # one Xid 79 event when the value appears or changes
//! lost = true          # NVML answers GPU_IS_LOST for it
//! ecc_uncorrected = 1  # volatile uncorrectable ECC count
//! ecc_corrected = 3
//! util_pct = 50
//! ```
//!
//! A missing file is no fault; a file that does not parse is reported in the agent's
//! log (once per content) and the faults read before stay in force.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gpusched_wire::XidEvent;
use serde::Deserialize;

use super::sample::{throttle, GpuReading};

/// The fault file's name in the agent's state directory.
pub const FAULTS_FILE: &str = "fake-faults.toml";

/// How fast a GPU's temperature follows its load, milliseconds.
const THERMAL_TAU_MS: f64 = 20_000.0;

/// Idle memory use, as `nvidia-smi` shows on an idle data-centre GPU.
const IDLE_MEM_MIB: u64 = 4;

/// Injected faults of one GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuFault {
    pub temp_c: Option<u32>,
    pub xid: Option<u64>,
    #[serde(default)]
    pub lost: bool,
    pub ecc_uncorrected: Option<u64>,
    pub ecc_corrected: Option<u64>,
    pub util_pct: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultFile {
    #[serde(default)]
    gpu: BTreeMap<String, GpuFault>,
}

/// Parses a fault file: `[gpu.N]` tables of [`GpuFault`].
pub fn parse_faults(text: &str) -> Result<BTreeMap<u32, GpuFault>, String> {
    let file: FaultFile = toml::from_str(text).map_err(|e| e.message().to_string())?;
    file.gpu
        .into_iter()
        .map(|(k, v)| {
            k.trim()
                .parse::<u32>()
                .map(|i| (i, v))
                .map_err(|_| format!("[gpu.{k}]: {k:?} is not a GPU index (write [gpu.0])"))
        })
        .collect()
}

/// The fake GPUs' state between passes; shared by clones of the library.
#[derive(Debug, Default)]
pub struct SimState {
    gpus: BTreeMap<u32, GpuSim>,
    faults: BTreeMap<u32, GpuFault>,
    /// The fault file's text as last read, so an unchanged file is not parsed again
    /// and a bad one is reported once.
    faults_text: Option<String>,
    /// Power limits set below the board power, milliwatts, by GPU index.
    caps_mw: BTreeMap<u32, u32>,
}

#[derive(Debug, Default)]
struct GpuSim {
    last_ms: Option<u64>,
    temp_c: f64,
    energy_mj: u64,
    last_xid: Option<u64>,
}

/// One fake device as the model needs it.
pub struct SimDevice<'a> {
    pub index: u32,
    pub name: &'a str,
    pub memory_mib: u64,
}

/// Board power of a model, watts: the core's table (`gpusched_core::power::board_w`,
/// NVIDIA's datasheets; the SXM parts' maximum TDP), which the server's budget counts.
pub fn board_power_w(name: &str) -> u32 {
    gpusched_core::power::board_w(name)
}

/// Boards before Ampere retire pages; Ampere and later remap rows instead.
fn retires_pages(name: &str) -> bool {
    ["V100", "P100", "T4", "P40", "K80"]
        .iter()
        .any(|p| name.contains(p))
}

/// A number in [0, 1) from (salt, GPU, second): SplitMix64's finaliser.
fn jitter(salt: u32, index: u32, at_ms: u64) -> f64 {
    let mut z = (u64::from(salt) << 32 | u64::from(index))
        ^ (at_ms / 1000).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

impl SimState {
    /// GPU `index`'s power limit, when one below the board power was set.
    pub fn cap_mw(&self, index: u32) -> Option<u32> {
        self.caps_mw.get(&index).copied()
    }

    /// Sets (or, with `None`, lifts) GPU `index`'s power limit.
    pub fn set_cap_mw(&mut self, index: u32, cap: Option<u32>) {
        match cap {
            Some(mw) => self.caps_mw.insert(index, mw),
            None => self.caps_mw.remove(&index),
        };
    }

    /// Reads the fault file again if it changed; a bad file keeps the faults in force.
    pub fn load_faults(&mut self, path: &Path) {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                tracing::warn!(
                    "cannot read the fake GPU fault file {}: {e}",
                    path.display()
                );
                return;
            }
        };
        if self.faults_text.as_deref() == Some(text.as_str()) {
            return;
        }
        match parse_faults(&text) {
            Ok(f) => {
                if f != self.faults {
                    tracing::info!(?f, "fake GPU faults from {}", path.display());
                }
                self.faults = f;
            }
            Err(e) => tracing::warn!(
                "the fake GPU fault file {} is not valid ({e}); keeping the faults read \
                 before. Write tables like [gpu.1] with temp_c, xid, lost, ecc_uncorrected, \
                 ecc_corrected, util_pct",
                path.display()
            ),
        }
        self.faults_text = Some(text);
    }

    /// One pass over `devices`.
    pub fn sample(
        &mut self,
        salt: u32,
        devices: &[SimDevice<'_>],
        busy: &std::collections::BTreeSet<u32>,
        at_ms: u64,
    ) -> Vec<GpuReading> {
        devices
            .iter()
            .map(|d| {
                let fault = self.faults.get(&d.index).cloned().unwrap_or_default();
                let cap_w = self.caps_mw.get(&d.index).map(|&mw| f64::from(mw) / 1000.0);
                let sim = self.gpus.entry(d.index).or_default();
                read_one(sim, &fault, salt, d, busy.contains(&d.index), cap_w, at_ms)
            })
            .collect()
    }
}

fn read_one(
    sim: &mut GpuSim,
    fault: &GpuFault,
    salt: u32,
    d: &SimDevice<'_>,
    busy: bool,
    cap_w: Option<f64>,
    at_ms: u64,
) -> GpuReading {
    let mut xids = Vec::new();
    if fault.xid != sim.last_xid {
        if let Some(code) = fault.xid {
            xids.push(XidEvent { code, at_ms });
        }
        sim.last_xid = fault.xid;
    }
    if fault.lost {
        // A lost GPU's Xids were raised before it fell off (Xid 79 is "fallen off the bus").
        return GpuReading {
            xids,
            ..GpuReading::lost(d.index, at_ms)
        };
    }
    let j = jitter(salt, d.index, at_ms);
    let board = f64::from(board_power_w(d.name));
    let idle_w = if board >= 240.0 { 60.0 } else { board / 4.0 };
    let uncapped_w = if busy {
        board * (0.85 + 0.1 * j)
    } else {
        idle_w * (0.95 + 0.1 * j)
    };
    // A capped GPU under load sits just under its limit (the clocks fall to hold it).
    let power_w = match cap_w {
        Some(cap) if busy => uncapped_w.min(cap * (0.97 + 0.03 * j)),
        _ => uncapped_w,
    };
    let power_mw = (power_w * 1000.0).round() as u32;
    let target = if busy {
        68.0 + 4.0 * j
    } else {
        31.0 + f64::from(d.index % 5) * 1.5 + 2.0 * j
    };
    let dt_ms = sim.last_ms.map(|t| at_ms.saturating_sub(t));
    sim.temp_c = match dt_ms {
        None => target,
        Some(dt) => target + (sim.temp_c - target) * (-(dt as f64) / THERMAL_TAU_MS).exp(),
    };
    if let Some(t) = fault.temp_c {
        // The injected heat stays in the model: the GPU cools down once the line goes.
        sim.temp_c = f64::from(t);
    }
    if let Some(dt) = dt_ms {
        sim.energy_mj += u64::from(power_mw) * dt / 1000;
    }
    sim.last_ms = Some(sim.last_ms.map_or(at_ms, |t| t.max(at_ms)));
    let temp_c = sim.temp_c.round() as u32;
    let util_pct = fault
        .util_pct
        .unwrap_or(if busy { 90 + (j * 10.0) as u32 } else { 0 });
    let mem_used_mib = if busy {
        (d.memory_mib as f64 * (0.7 + 0.15 * j)) as u64
    } else {
        IDLE_MEM_MIB.min(d.memory_mib)
    };
    let mut reasons = if busy { 0 } else { throttle::GPU_IDLE };
    if busy && (power_w > board * 0.93 || cap_w.is_some_and(|c| power_w >= c * 0.97)) {
        reasons |= throttle::SW_POWER_CAP;
    }
    if temp_c >= 85 {
        reasons |= throttle::SW_THERMAL_SLOWDOWN;
    }
    if temp_c >= 90 {
        reasons |= throttle::HW_THERMAL_SLOWDOWN | throttle::HW_SLOWDOWN;
    }
    let pages = retires_pages(d.name);
    GpuReading {
        index: d.index,
        at_ms,
        lost: false,
        util_pct: Some(util_pct),
        mem_used_mib: Some(mem_used_mib),
        mem_free_mib: Some(d.memory_mib - mem_used_mib),
        temp_c: Some(temp_c),
        power_mw: Some(power_mw),
        energy_mj: Some(sim.energy_mj),
        throttle_reasons: Some(reasons),
        ecc_corrected: Some(fault.ecc_corrected.unwrap_or(0)),
        ecc_uncorrected: Some(fault.ecc_uncorrected.unwrap_or(0)),
        retired_sbe: pages.then_some(0),
        retired_dbe: pages.then_some(0),
        retired_pending: pages.then_some(false),
        remapped_correctable: (!pages).then_some(0),
        remapped_uncorrectable: (!pages).then_some(0),
        remap_pending: (!pages).then_some(false),
        remap_failed: (!pages).then_some(false),
        xids,
    }
}

/// Where a fake node's fault file lives.
pub fn faults_path(state_dir: &Path) -> PathBuf {
    state_dir.join(FAULTS_FILE)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::gpu::{FakeNvml, GpuLibrary};

    fn a100s(n: u32) -> FakeNvml {
        FakeNvml::uniform(n, "NVIDIA A100-SXM4-80GB", 81920)
    }

    /// Every 5 s for `secs`, GPUs `busy` holding jobs: each pass's readings.
    fn run(lib: &FakeNvml, n: u32, busy: &[u32], secs: u64) -> Vec<Vec<GpuReading>> {
        let busy: BTreeSet<u32> = busy.iter().copied().collect();
        let all: Vec<u32> = (0..n).collect();
        (0..=secs / 5)
            .map(|k| lib.sample(&all, &busy, 1_000_000 + k * 5000))
            .collect()
    }

    #[test]
    fn idle_and_busy_gpus_read_plausibly_and_energy_integrates_power() {
        let lib = a100s(4);
        let passes = run(&lib, 4, &[1], 300);
        for pass in &passes {
            assert_eq!(pass.len(), 4);
            for r in pass {
                let (t, w, u) = (
                    r.temp_c.unwrap(),
                    r.power_mw.unwrap() / 1000,
                    r.util_pct.unwrap(),
                );
                if r.index == 1 {
                    assert!((68..=72).contains(&t), "busy temp {t}");
                    assert!((340..=380).contains(&w), "busy power {w} W of 400");
                    assert!((90..=99).contains(&u), "busy util {u}");
                    assert!(r.mem_used_mib.unwrap() > 81920 / 2);
                } else {
                    assert!((30..=40).contains(&t), "idle temp {t}");
                    assert!((56..=64).contains(&w), "idle power {w} W");
                    assert_eq!(u, 0);
                    assert_eq!(r.throttle_reasons, Some(throttle::GPU_IDLE));
                }
                assert_eq!(r.mem_used_mib.unwrap() + r.mem_free_mib.unwrap(), 81920);
                assert_eq!(r.ecc_uncorrected, Some(0));
                // An A100 remaps rows; it has no page retirement.
                assert_eq!((r.remapped_uncorrectable, r.retired_dbe), (Some(0), None));
                assert!(r.xids.is_empty() && !r.lost);
            }
        }
        for gpu in 0..4 {
            let energy: Vec<u64> = passes.iter().map(|p| p[gpu].energy_mj.unwrap()).collect();
            assert!(energy.windows(2).all(|w| w[0] < w[1]), "{energy:?}");
            // 300 s at ~60 W idle or ~360 W busy.
            let joules = (energy.last().unwrap() - energy[0]) / 1000;
            let expect = if gpu == 1 { 360 * 300 } else { 60 * 300 };
            assert!(
                joules.abs_diff(expect) * 100 < expect * 6,
                "GPU {gpu}: {joules} J, expected ~{expect}"
            );
        }
    }

    #[test]
    fn same_calls_same_readings_and_a_new_job_warms_the_gpu_gradually() {
        let (a, b) = (a100s(2), a100s(2));
        assert_eq!(run(&a, 2, &[], 60), run(&b, 2, &[], 60));
        // GPU 0 gets a job after a minute idle: warmer at every pass, ~70 within 2 min.
        let busy = BTreeSet::from([0]);
        let temps: Vec<u32> = (13..40)
            .map(|k| {
                a.sample(&[0, 1], &busy, 1_000_000 + k * 5000)[0]
                    .temp_c
                    .unwrap()
            })
            .collect();
        assert!(temps[0] < 50, "{temps:?}");
        assert!(temps.windows(2).all(|w| w[0] <= w[1] + 2), "{temps:?}");
        assert!(*temps.last().unwrap() >= 66, "{temps:?}");
        assert_eq!(board_power_w("NVIDIA A100-PCIE-40GB"), 250);
        assert_eq!(board_power_w("NVIDIA A10"), 150);
        assert_eq!(board_power_w("NVIDIA L4"), 72);
        assert_eq!(board_power_w("NVIDIA H100 80GB HBM3"), 700);
    }

    #[test]
    fn faults_from_the_file_appear_at_the_next_pass_and_xids_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = faults_path(dir.path());
        let lib = a100s(3).with_faults_file(path.clone());
        let none = BTreeSet::new();
        let pass = |k: u64| lib.sample(&[0, 1, 2], &none, 1_000_000 + k * 5000);
        assert!(pass(0).iter().all(|r| r.xids.is_empty()));
        std::fs::write(
            &path,
            "[gpu.1]\ntemp_c = 95\nxid = 79\necc_uncorrected = 1\n[gpu.2]\nlost = true\n",
        )
        .unwrap();
        let p = pass(1);
        assert_eq!(p[1].temp_c, Some(95));
        let reasons = p[1].throttle_reasons.unwrap();
        assert!(reasons & throttle::HW_THERMAL_SLOWDOWN != 0, "{reasons:#x}");
        assert_eq!(p[1].ecc_uncorrected, Some(1));
        assert_eq!(
            p[1].xids,
            vec![XidEvent {
                code: 79,
                at_ms: 1_005_000
            }]
        );
        assert!(p[2].lost && p[2].temp_c.is_none() && p[2].energy_mj.is_none());
        assert!(!p[0].lost && p[0].temp_c.unwrap() < 40);
        // The Xid was raised once; a new code is a new event.
        assert!(pass(2)[1].xids.is_empty());
        std::fs::write(&path, "[gpu.1]\nxid = 48\n").unwrap();
        let p = pass(3);
        assert_eq!(p[1].xids.iter().map(|x| x.code).collect::<Vec<_>>(), [48]);
        assert!(!p[2].lost, "the lost GPU came back with its line gone");
        // Cooling from 95 after the fault's line went.
        assert!(
            (40..95).contains(&p[1].temp_c.unwrap()),
            "{:?}",
            p[1].temp_c
        );
        // A bad file keeps the faults in force; a missing one clears them.
        std::fs::write(&path, "[gpu.1]\nxid = 48\ntemperature = 3\n").unwrap();
        assert!(pass(4)[1].xids.is_empty());
        std::fs::write(&path, "[gpu.1]\nutil_pct = 50\n[gpu.x]\n").unwrap();
        assert_eq!(pass(5)[1].util_pct, Some(0));
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "[gpu.0]\nutil_pct = 50\n").unwrap();
        assert_eq!(pass(6)[0].util_pct, Some(50));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(pass(7)[0].util_pct, Some(0));
    }

    #[test]
    fn a_power_limit_caps_draw_and_energy_and_is_checked_as_nvml_does() {
        let lib = a100s(2);
        assert_eq!(lib.power_limit_constraints(0), Ok((100_000, 400_000)));
        assert_eq!(lib.power_limit(0), Ok(400_000));
        let e = lib.set_power_limit(0, 50_000).unwrap_err();
        assert!(e.to_string().contains("NVML_ERROR_INVALID_ARGUMENT"), "{e}");
        assert!(matches!(
            lib.set_power_limit(7, 250_000),
            Err(crate::gpu::GpuError::InvalidIndex { index: 7, count: 2 })
        ));
        lib.set_power_limit(0, 250_000).unwrap();
        assert_eq!(lib.power_limit(0), Ok(250_000));
        assert_eq!(lib.power_limit(1), Ok(400_000));
        let passes = run(&lib, 2, &[0, 1], 300);
        for pass in &passes {
            let (w0, w1) = (
                pass[0].power_mw.unwrap() / 1000,
                pass[1].power_mw.unwrap() / 1000,
            );
            assert!(
                (242..=250).contains(&w0),
                "capped GPU draws {w0} W at a 250 W cap"
            );
            assert!((340..=380).contains(&w1), "uncapped GPU draws {w1} W");
            let reasons = pass[0].throttle_reasons.unwrap();
            assert!(reasons & throttle::SW_POWER_CAP != 0, "{reasons:#x}");
        }
        let joules = |gpu: usize| {
            (passes.last().unwrap()[gpu].energy_mj.unwrap() - passes[0][gpu].energy_mj.unwrap())
                / 1000
        };
        // 300 s at ~246 W against ~360 W: the energy counter follows the cap.
        assert!(joules(0).abs_diff(246 * 300) < 246 * 3, "{}", joules(0));
        assert!(
            joules(1) > joules(0) * 13 / 10,
            "{} vs {}",
            joules(1),
            joules(0)
        );
        // The model of what the cap costs: 62.5 % of the power, 86.9 % of the speed.
        let s = lib.speed(0).unwrap();
        assert!((s - 0.8687).abs() < 1e-3, "{s}");
        assert_eq!(lib.speed(1), Ok(1.0));
        // An idle capped GPU draws its idle power; lifting the cap restores the board's.
        let idle = lib.sample(&[0], &BTreeSet::new(), 2_000_000)[0]
            .power_mw
            .unwrap()
            / 1000;
        assert!((56..=64).contains(&idle), "{idle}");
        lib.set_power_limit(0, 400_000).unwrap();
        assert_eq!(lib.power_limit(0), Ok(400_000));
        assert_eq!(lib.speed(0), Ok(1.0));
    }

    #[test]
    fn fault_file_errors_say_what_to_write() {
        let e = parse_faults("[gpu.one]\nlost = true\n").unwrap_err();
        assert!(e.contains("[gpu.0]"), "{e}");
        let e = parse_faults("[gpu.0]\nhot = true\n").unwrap_err();
        assert!(e.contains("hot"), "{e}");
        assert_eq!(parse_faults("").unwrap(), BTreeMap::new());
    }
}
