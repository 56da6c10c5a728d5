//! GPU-seconds held and asked for by each tenant, in fixed-width time bins.
//!
//! Between two events no job starts or stops, so every tenant's GPU count is constant;
//! integrating it over each bin is therefore exact, with no sampling error, however
//! sparse the events are.

use std::collections::BTreeMap;

use gpusched_core::policy::drf::tenant_of;
use gpusched_core::{PolicyConfig, SchedJob};

/// Per tenant number, GPU-seconds in each bin `[origin + k * bin, origin + (k+1) * bin)`.
#[derive(Clone, Debug, PartialEq)]
pub struct TenantUsage {
    pub bin_seconds: f64,
    /// The first event's time (the first submit).
    pub origin: f64,
    /// The last event's time.
    pub end: f64,
    /// GPU-seconds of the tenant's running jobs.
    pub held: BTreeMap<u32, Vec<f64>>,
    /// GPU-seconds of the tenant's running and waiting jobs: what it would hold if the
    /// cluster were big enough.
    pub demand: BTreeMap<u32, Vec<f64>>,
}

impl TenantUsage {
    /// How many bins cover the run.
    pub fn bins(&self) -> usize {
        self.held
            .values()
            .chain(self.demand.values())
            .map(Vec::len)
            .max()
            .unwrap_or(0)
    }

    /// The GPU-seconds of bin `k` that lie inside the run, for a cluster of `gpus`.
    pub fn capacity(&self, k: usize, gpus: u32) -> f64 {
        let lo = self.origin + k as f64 * self.bin_seconds;
        let hi = (lo + self.bin_seconds).min(self.end);
        gpus as f64 * (hi - lo).max(0.0)
    }
}

/// Adds `gpus` held from `from` to `to` to `series`, split over the bins it spans.
fn add(series: &mut Vec<f64>, origin: f64, bin: f64, gpus: u64, from: f64, to: f64) {
    if gpus == 0 || to <= from {
        return;
    }
    let first = ((from - origin) / bin).floor().max(0.0) as usize;
    let last = ((to - origin) / bin).floor().max(0.0) as usize;
    if series.len() <= last {
        series.resize(last + 1, 0.0);
    }
    for (k, slot) in series.iter_mut().enumerate().take(last + 1).skip(first) {
        let lo = (origin + k as f64 * bin).max(from);
        let hi = (origin + (k + 1) as f64 * bin).min(to);
        if hi > lo {
            *slot += gpus as f64 * (hi - lo);
        }
    }
}

/// What the engine keeps while it runs: the GPU counts after the last pass, integrated
/// into [`TenantUsage`] when time moves on.
pub(crate) struct Recorder {
    usage: TenantUsage,
    held: BTreeMap<u32, u64>,
    demand: BTreeMap<u32, u64>,
}

impl Recorder {
    pub(crate) fn new(bin_seconds: f64, origin: f64) -> Self {
        Recorder {
            usage: TenantUsage {
                bin_seconds,
                origin,
                end: origin,
                held: BTreeMap::new(),
                demand: BTreeMap::new(),
            },
            held: BTreeMap::new(),
            demand: BTreeMap::new(),
        }
    }

    /// Charges the counts seen after the last pass for the time from `from` to `to`.
    pub(crate) fn advance(&mut self, from: f64, to: f64) {
        let u = &mut self.usage;
        for (&t, &g) in &self.held {
            add(
                u.held.entry(t).or_default(),
                u.origin,
                u.bin_seconds,
                g,
                from,
                to,
            );
        }
        for (&t, &g) in &self.demand {
            add(
                u.demand.entry(t).or_default(),
                u.origin,
                u.bin_seconds,
                g,
                from,
                to,
            );
        }
        u.end = u.end.max(to);
    }

    /// Counts each tenant's GPUs after a pass.
    pub(crate) fn observe(&mut self, jobs: &[SchedJob], cfg: &PolicyConfig) {
        self.held.clear();
        self.demand.clear();
        for j in jobs {
            let t = tenant_of(cfg, j);
            *self.demand.entry(t).or_default() += j.spec.gpus as u64;
            if j.running {
                *self.held.entry(t).or_default() += j.spec.gpus as u64;
            }
        }
    }

    pub(crate) fn finish(self) -> TenantUsage {
        self.usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_is_split_over_the_bins_it_spans() {
        let mut s = Vec::new();
        add(&mut s, 100.0, 10.0, 2, 105.0, 127.0);
        assert_eq!(s, vec![10.0, 20.0, 14.0]);
        add(&mut s, 100.0, 10.0, 0, 105.0, 127.0);
        add(&mut s, 100.0, 10.0, 3, 110.0, 110.0);
        assert_eq!(s, vec![10.0, 20.0, 14.0]);
    }
}
