//! The agent's Prometheus metrics (`--metrics-listen ADDR`, `GET /metrics`): each GPU's
//! latest readings under DCGM exporter's names, so dashboards built for DCGM exporter
//! work unchanged, and the agent's own counters under `gpusched_agent_*`.
//!
//! Names, types and units follow DCGM exporter's `etc/default-counters.csv` (and the
//! fields it leaves commented out there, for ECC and retired pages): temperature in
//! °C, power in W, energy in mJ, framebuffer in MiB, utilisation in %. Labels are
//! DCGM exporter's (`gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`, `Hostname`)
//! plus `node`, the gpusched node name (the server's series use it too). DCGM
//! exporter types a few of these as counters without the `_total` suffix OpenMetrics
//! requires; they are gauges here, so the names stay verbatim (PromQL's `rate` works on
//! either). A GPU that fell off the bus, or a reading it does not support, has no
//! series, as with DCGM exporter.
//!
//! Access: the endpoint serves anyone who can connect, like node_exporter and DCGM
//! exporter; it is off unless `--metrics-listen` is given, and operators bind it to a
//! management address or firewall it. It shows GPU readings and counts, no job, user
//! or command.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::gpu::{DeviceFacts, GpuReading};

type Labels = Vec<(String, String)>;
type IntFamily = Family<Labels, Gauge>;
type FloatFamily = Family<Labels, Gauge<f64, AtomicU64>>;

/// The content type of the OpenMetrics text prometheus-client writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Spawn latency buckets, seconds: 1 ms to ~16 s (the journal fsync and the fork are
/// milliseconds; a slow disk or a busy forker shows in the upper buckets).
const SPAWN_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 4.0, 16.0,
];

/// Telemetry pass buckets, seconds: 10 µs (the fake) to 2.5 s (a GPU whose driver
/// stalls; NVML's calls are tens of µs each on a healthy one).
const PASS_BUCKETS: [f64; 9] = [0.00001, 0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 2.5];

/// Integer DCGM fields: name, help (without its final period: the encoder adds one),
/// and how to read it from a reading.
struct IntField {
    name: &'static str,
    help: &'static str,
    read: fn(&GpuReading) -> Option<i64>,
}

fn int(v: Option<u64>) -> Option<i64> {
    v.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

fn flag(v: Option<bool>) -> Option<i64> {
    v.map(i64::from)
}

const INT_FIELDS: [IntField; 14] = [
    IntField {
        name: "DCGM_FI_DEV_GPU_UTIL",
        help: "GPU utilization (in %)",
        read: |r| r.util_pct.map(i64::from),
    },
    IntField {
        name: "DCGM_FI_DEV_FB_USED",
        help: "Framebuffer memory used (in MiB)",
        read: |r| int(r.mem_used_mib),
    },
    IntField {
        name: "DCGM_FI_DEV_FB_FREE",
        help: "Framebuffer memory free (in MiB)",
        read: |r| int(r.mem_free_mib),
    },
    IntField {
        name: "DCGM_FI_DEV_GPU_TEMP",
        help: "GPU temperature (in C)",
        read: |r| r.temp_c.map(i64::from),
    },
    IntField {
        name: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        help: "Total energy consumption since boot (in mJ)",
        read: |r| int(r.energy_mj),
    },
    IntField {
        name: "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
        help: "Current clock throttle reasons (NVML's bitmask)",
        read: |r| int(r.throttle_reasons),
    },
    IntField {
        name: "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        help: "Total number of single-bit volatile ECC errors",
        read: |r| int(r.ecc_corrected),
    },
    IntField {
        name: "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        help: "Total number of double-bit volatile ECC errors",
        read: |r| int(r.ecc_uncorrected),
    },
    IntField {
        name: "DCGM_FI_DEV_RETIRED_SBE",
        help: "Total number of retired pages due to single-bit errors",
        read: |r| int(r.retired_sbe),
    },
    IntField {
        name: "DCGM_FI_DEV_RETIRED_DBE",
        help: "Total number of retired pages due to double-bit errors",
        read: |r| int(r.retired_dbe),
    },
    IntField {
        name: "DCGM_FI_DEV_RETIRED_PENDING",
        help: "Whether pages are pending retirement (1) or not (0)",
        read: |r| flag(r.retired_pending),
    },
    IntField {
        name: "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        help: "Number of remapped rows for correctable errors",
        read: |r| int(r.remapped_correctable),
    },
    IntField {
        name: "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        help: "Number of remapped rows for uncorrectable errors",
        read: |r| int(r.remapped_uncorrectable),
    },
    IntField {
        name: "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        help: "Whether remapping of rows has failed",
        read: |r| flag(r.remap_failed),
    },
];

pub struct AgentMetrics {
    registry: Registry,
    node: String,
    /// Each GPU's labels, from NVML's facts.
    labels: BTreeMap<u32, Labels>,
    ints: Vec<IntFamily>,
    power: FloatFamily,
    xid: IntFamily,
    /// The last Xid code seen per GPU (DCGM exporter's gauge holds the last one).
    last_xid: std::sync::Mutex<BTreeMap<u32, u64>>,
    spawn: Histogram,
    jobs_running: Gauge,
    reports: Family<Labels, Counter>,
    passes: Histogram,
}

impl AgentMetrics {
    /// Metrics of node `node` whose GPUs NVML (or the fake) describes as `facts`.
    pub fn new(node: &str, facts: &[DeviceFacts]) -> Self {
        let mut registry = Registry::default();
        let mut ints = Vec::with_capacity(INT_FIELDS.len());
        for f in &INT_FIELDS {
            let family = IntFamily::default();
            registry.register(f.name, f.help, family.clone());
            ints.push(family);
        }
        let power = FloatFamily::default();
        registry.register(
            "DCGM_FI_DEV_POWER_USAGE",
            "Power draw (in W)",
            power.clone(),
        );
        let xid = IntFamily::default();
        registry.register(
            "DCGM_FI_DEV_XID_ERRORS",
            "Value of the last XID error encountered",
            xid.clone(),
        );
        let spawn = Histogram::new(SPAWN_BUCKETS);
        registry.register(
            "gpusched_agent_spawn_seconds",
            "Time from a job's launch order reaching the agent to its processes running \
             (slice prepared, journal written, forked), seconds",
            spawn.clone(),
        );
        let jobs_running = Gauge::default();
        registry.register(
            "gpusched_agent_jobs_running",
            "Job attempts with live processes on this node",
            jobs_running.clone(),
        );
        let reports = Family::<Labels, Counter>::default();
        registry.register(
            "gpusched_agent_reports",
            "Reports the server acknowledged, by what they carried: kind=\"events\" (job \
             events, with telemetry) or kind=\"telemetry\" (telemetry alone)",
            reports.clone(),
        );
        let passes = Histogram::new(PASS_BUCKETS);
        registry.register(
            "gpusched_agent_telemetry_pass_seconds",
            "Time one telemetry pass over the node's GPUs took (NVML calls, or the fake's \
             model), seconds",
            passes.clone(),
        );
        let labels = facts
            .iter()
            .map(|f| (f.index, gpu_labels(node, f)))
            .collect();
        AgentMetrics {
            registry,
            node: node.to_string(),
            labels,
            ints,
            power,
            xid,
            last_xid: Default::default(),
            spawn,
            jobs_running,
            reports,
            passes,
        }
    }

    /// Shows the launcher's failed replica probes as
    /// `gpusched_agent_probe_failures_total{kind="readiness"|"liveness"}`.
    pub fn with_probe_failures(mut self, failures: &crate::probe::Failures) -> Self {
        self.registry.register(
            "gpusched_agent_probe_failures",
            "Service replica probes that failed on this node, by kind=\"readiness\" or              kind=\"liveness\"",
            failures.family(),
        );
        self
    }

    /// Adds series computed at each scrape (each job part's usage, `job_metrics.rs`).
    pub fn with_collector(mut self, c: impl prometheus_client::collector::Collector) -> Self {
        self.registry.register_collector(Box::new(c));
        self
    }

    fn labels_of(&self, index: u32) -> Labels {
        self.labels.get(&index).cloned().unwrap_or_else(|| {
            vec![
                ("gpu".into(), index.to_string()),
                ("node".into(), self.node.clone()),
            ]
        })
    }

    /// Takes one pass's readings, which took `secs`: each series set, or removed where
    /// the GPU is lost or the reading unsupported.
    pub fn observe(&self, readings: &[GpuReading], secs: f64) {
        self.passes.observe(secs);
        let mut last_xid = self.last_xid.lock().unwrap_or_else(|p| p.into_inner());
        for r in readings {
            let labels = self.labels_of(r.index);
            for (field, family) in INT_FIELDS.iter().zip(&self.ints) {
                match (field.read)(r) {
                    Some(v) if !r.lost => {
                        family.get_or_create(&labels).set(v);
                    }
                    _ => {
                        family.remove(&labels);
                    }
                }
            }
            match r.power_mw {
                Some(mw) if !r.lost => {
                    self.power
                        .get_or_create(&labels)
                        .set(f64::from(mw) / 1000.0);
                }
                _ => {
                    self.power.remove(&labels);
                }
            }
            if let Some(x) = r.xids.last() {
                last_xid.insert(r.index, x.code);
            }
            // The last Xid stays visible even for a lost GPU: it says why it was lost.
            let code = last_xid.get(&r.index).copied().unwrap_or(0);
            self.xid
                .get_or_create(&labels)
                .set(i64::try_from(code).unwrap_or(i64::MAX));
        }
    }

    /// A job's processes started `secs` after its launch order arrived.
    pub fn spawned(&self, secs: f64) {
        self.spawn.observe(secs);
    }

    /// A report was acknowledged; `events` whether it carried job events.
    pub fn reported(&self, events: bool) {
        let kind = if events { "events" } else { "telemetry" };
        self.reports
            .get_or_create(&vec![("kind".to_string(), kind.to_string())])
            .inc();
    }

    /// The OpenMetrics text, with `running` job attempts.
    pub fn encode(&self, running: usize) -> String {
        self.jobs_running
            .set(i64::try_from(running).unwrap_or(i64::MAX));
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// DCGM exporter's labels for one GPU, and gpusched's node.
fn gpu_labels(node: &str, f: &DeviceFacts) -> Labels {
    vec![
        ("gpu".into(), f.index.to_string()),
        ("UUID".into(), f.uuid.clone()),
        ("pci_bus_id".into(), f.pci_bus_id.clone()),
        // The device file, `/dev/nvidia<minor>` (the index where NVML does not say).
        (
            "device".into(),
            format!("nvidia{}", f.minor_number.unwrap_or(f.index)),
        ),
        ("modelName".into(), f.name.clone()),
        ("Hostname".into(), node.to_string()),
        ("node".into(), node.to_string()),
    ]
}

/// The agent's metrics endpoint: `GET /metrics`.
pub fn router(
    metrics: std::sync::Arc<AgentMetrics>,
    running: impl Fn() -> usize + Clone + Send + Sync + 'static,
) -> axum::Router {
    use axum::http::header::CONTENT_TYPE as CT;
    axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let metrics = metrics.clone();
            let running = running.clone();
            async move { ([(CT, CONTENT_TYPE)], metrics.encode(running())) }
        }),
    )
}

/// One sample line of the text format: name, labels, value.
#[cfg(test)]
pub(crate) type Line = (String, BTreeMap<String, String>, f64);

/// Parses the exposition's sample lines (what a scraper reads), checking each line's
/// shape on the way.
#[cfg(test)]
pub(crate) fn parse(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (series, value) = line.rsplit_once(' ').expect(line);
        let value: f64 = value.parse().expect(line);
        let (name, labels) = match series.split_once('{') {
            None => (series.to_string(), BTreeMap::new()),
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').expect(line);
                let mut labels = BTreeMap::new();
                let mut rest = body;
                while !rest.is_empty() {
                    let (k, v) = rest.split_once("=\"").expect(line);
                    let end = v.find('"').expect(line);
                    labels.insert(k.to_string(), v[..end].to_string());
                    rest = v[end + 1..].trim_start_matches(',');
                }
                (name.to_string(), labels)
            }
        };
        out.push((name, labels, value));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::gpu::{FakeNvml, GpuLibrary};

    fn find<'a>(lines: &'a [Line], name: &str, gpu: Option<&str>) -> Vec<&'a Line> {
        lines
            .iter()
            .filter(|(n, l, _)| {
                n == name && gpu.is_none_or(|g| l.get("gpu").map(String::as_str) == Some(g))
            })
            .collect()
    }

    #[test]
    fn gpu_series_use_dcgm_names_labels_and_units_and_agent_counters_follow() {
        let lib = FakeNvml::uniform(2, "NVIDIA H100 80GB HBM3", 81559).with_uuid_salt(7);
        let facts: Vec<_> = (0..2).map(|i| lib.device(i).unwrap()).collect();
        let m = AgentMetrics::new("gpu-07", &facts);
        let busy = BTreeSet::from([1]);
        m.observe(&lib.sample(&[0, 1], &busy, 1_000_000), 0.002);
        let mut second = lib.sample(&[0, 1], &busy, 1_005_000);
        second[0]
            .xids
            .push(gpusched_wire::XidEvent { code: 79, at_ms: 1 });
        m.observe(&second, 0.0004);
        m.spawned(0.004);
        m.spawned(0.3);
        m.reported(true);
        m.reported(false);
        m.reported(false);
        let text = m.encode(3);
        assert!(text.contains("# TYPE DCGM_FI_DEV_GPU_TEMP gauge"), "{text}");
        // DCGM exporter's help text, verbatim (the encoder ends it with the period).
        assert!(text.contains("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n"));
        assert!(text.contains("# TYPE gpusched_agent_spawn_seconds histogram"));
        assert!(text.trim_end().ends_with("# EOF"));
        let lines = parse(&text);
        for name in [
            "DCGM_FI_DEV_GPU_UTIL",
            "DCGM_FI_DEV_FB_USED",
            "DCGM_FI_DEV_FB_FREE",
            "DCGM_FI_DEV_GPU_TEMP",
            "DCGM_FI_DEV_POWER_USAGE",
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            "DCGM_FI_DEV_XID_ERRORS",
            "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
            "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
            "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
            "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
            "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        ] {
            let series = find(&lines, name, None);
            assert_eq!(series.len(), 2, "{name}: {series:?}");
            let labels = &series[0].1;
            let keys: Vec<&str> = labels.keys().map(String::as_str).collect();
            assert_eq!(
                keys,
                [
                    "Hostname",
                    "UUID",
                    "device",
                    "gpu",
                    "modelName",
                    "node",
                    "pci_bus_id"
                ],
                "{name}"
            );
            assert_eq!(labels["modelName"], "NVIDIA H100 80GB HBM3");
            assert_eq!(labels["Hostname"], "gpu-07");
            assert!(labels["UUID"].starts_with("GPU-00000007-"));
            assert_eq!(labels["device"], format!("nvidia{}", labels["gpu"]));
        }
        // An H100 remaps rows: no retired-page series.
        assert!(find(&lines, "DCGM_FI_DEV_RETIRED_DBE", None).is_empty());
        // Units: watts (not mW), mJ, MiB, percent, Celsius.
        let watts = find(&lines, "DCGM_FI_DEV_POWER_USAGE", Some("1"))[0].2;
        assert!((590.0..=670.0).contains(&watts), "busy H100 at {watts} W");
        assert_eq!(watts, f64::from(second[1].power_mw.unwrap()) / 1000.0);
        let mj = find(&lines, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Some("1"))[0].2;
        assert_eq!(mj, second[1].energy_mj.unwrap() as f64);
        assert!(mj > watts * 1000.0 * 4.0, "5 s at {watts} W is {mj} mJ");
        let used = find(&lines, "DCGM_FI_DEV_FB_USED", Some("1"))[0].2;
        let free = find(&lines, "DCGM_FI_DEV_FB_FREE", Some("1"))[0].2;
        assert_eq!(used + free, 81559.0);
        assert_eq!(find(&lines, "DCGM_FI_DEV_XID_ERRORS", Some("0"))[0].2, 79.0);
        assert_eq!(find(&lines, "DCGM_FI_DEV_XID_ERRORS", Some("1"))[0].2, 0.0);
        // The agent's own.
        assert_eq!(find(&lines, "gpusched_agent_jobs_running", None)[0].2, 3.0);
        assert_eq!(
            find(&lines, "gpusched_agent_spawn_seconds_count", None)[0].2,
            2.0
        );
        let le = |b: &str| {
            lines
                .iter()
                .find(|(n, l, _)| n == "gpusched_agent_spawn_seconds_bucket" && l["le"] == b)
                .map(|x| x.2)
        };
        assert_eq!(
            (le("0.005"), le("0.25"), le("0.5")),
            (Some(1.0), Some(1.0), Some(2.0))
        );
        let reports: BTreeMap<&str, f64> = find(&lines, "gpusched_agent_reports_total", None)
            .iter()
            .map(|(_, l, v)| (l["kind"].as_str(), *v))
            .collect();
        assert_eq!(
            reports,
            BTreeMap::from([("events", 1.0), ("telemetry", 2.0)])
        );
        assert_eq!(
            find(&lines, "gpusched_agent_telemetry_pass_seconds_count", None)[0].2,
            2.0
        );
        let pass_le = |b: &str| {
            lines
                .iter()
                .find(|(n, l, _)| {
                    n == "gpusched_agent_telemetry_pass_seconds_bucket" && l["le"] == b
                })
                .map(|x| x.2)
        };
        assert_eq!((pass_le("0.001"), pass_le("0.005")), (Some(1.0), Some(2.0)));

        // GPU 0 falls off the bus: its readings go, its last Xid stays.
        m.observe(&[GpuReading::lost(0, 1_010_000)], 0.001);
        let lines = parse(&m.encode(0));
        assert!(find(&lines, "DCGM_FI_DEV_GPU_TEMP", Some("0")).is_empty());
        assert_eq!(find(&lines, "DCGM_FI_DEV_GPU_TEMP", Some("1")).len(), 1);
        assert_eq!(find(&lines, "DCGM_FI_DEV_XID_ERRORS", Some("0"))[0].2, 79.0);
    }
}
