//! What each running job part has used, read from its cgroup at every scrape, under
//! the names cAdvisor gives container series (so dashboards made for containers read
//! them): `container_cpu_usage_seconds_total`, `container_memory_usage_bytes`,
//! `container_memory_max_usage_bytes` and, on cgroup v2, the pressure stall totals
//! `container_pressure_{cpu,memory}_waiting_seconds_total`. Labels: `id` (the part's
//! cgroup name), `job`, `attempt` and `node`.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::launcher::Contain;

#[derive(Debug)]
pub struct JobUsageCollector {
    pub contain: Arc<Contain>,
    pub node: String,
}

type Labels = Vec<(String, String)>;

/// `job-12.3` as its job and attempt.
fn labels(node: &str, name: &str) -> Labels {
    let (job, attempt) = name
        .strip_prefix("job-")
        .and_then(|r| r.split_once('.'))
        .unwrap_or(("", ""));
    vec![
        ("id".into(), name.to_string()),
        ("job".into(), job.to_string()),
        ("attempt".into(), attempt.to_string()),
        ("node".into(), node.to_string()),
    ]
}

impl Collector for JobUsageCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let parts = self.contain.running_usage();
        if parts.is_empty() {
            return Ok(());
        }
        let rows: Vec<(Labels, _, _)> = parts
            .into_iter()
            .map(|(name, usage, now)| (labels(&self.node, &name), usage, now))
            .collect();
        let counter = ConstCounter::new(0.0f64);
        let gauge = ConstGauge::new(0i64);
        {
            let mut e = encoder.encode_descriptor(
                "container_cpu_usage_seconds",
                "Cumulative CPU time consumed by the job part's processes, seconds",
                None,
                counter.metric_type(),
            )?;
            for (l, u, _) in &rows {
                ConstCounter::new(u.cpu_ms as f64 / 1000.0).encode(e.encode_family(l)?)?;
            }
        }
        {
            let mut e = encoder.encode_descriptor(
                "container_memory_usage_bytes",
                "Memory the job part's processes hold now, bytes",
                None,
                gauge.metric_type(),
            )?;
            for (l, _, now) in &rows {
                if let Some(b) = now {
                    ConstGauge::new(i64::try_from(*b).unwrap_or(i64::MAX))
                        .encode(e.encode_family(l)?)?;
                }
            }
        }
        {
            let mut e = encoder.encode_descriptor(
                "container_memory_max_usage_bytes",
                "The most memory the job part's processes held at once, bytes",
                None,
                gauge.metric_type(),
            )?;
            for (l, u, _) in &rows {
                if let Some(b) = u.mem_peak_bytes {
                    ConstGauge::new(i64::try_from(b).unwrap_or(i64::MAX))
                        .encode(e.encode_family(l)?)?;
                }
            }
        }
        for (name, help, read) in [
            (
                "container_pressure_cpu_waiting_seconds",
                "Time some of the job part's processes waited for a CPU (cgroup v2), seconds",
                (|u: &gpusched_wire::contain::Usage| u.cpu_pressure_ms)
                    as fn(&gpusched_wire::contain::Usage) -> Option<u64>,
            ),
            (
                "container_pressure_memory_waiting_seconds",
                "Time some of the job part's processes waited for memory (cgroup v2), seconds",
                |u| u.mem_pressure_ms,
            ),
        ] {
            if rows.iter().all(|(_, u, _)| read(u).is_none()) {
                continue;
            }
            let mut e = encoder.encode_descriptor(name, help, None, counter.metric_type())?;
            for (l, u, _) in &rows {
                if let Some(ms) = read(u) {
                    ConstCounter::new(ms as f64 / 1000.0).encode(e.encode_family(l)?)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_parts_cgroup_name_gives_its_job_and_attempt() {
        let l = super::labels("n1", "job-12.3");
        assert_eq!(l[1], ("job".into(), "12".into()));
        assert_eq!(l[2], ("attempt".into(), "3".into()));
    }
}
