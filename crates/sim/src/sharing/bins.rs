//! Samples binned by arrived load, as the FGD authors' analysis scripts bin them.
//!
//! Arrived load of a sample = `round(arrived / GPUs / 10)` percent (round half to even);
//! a sample's allocation = `allocated / GPUs / 10` percent rounded to 2 decimals; a bin's
//! value is the mean over its samples, rounded to 2 decimals. A bin with no sample takes
//! the samples within one percent of it. Rounding is Python's (`round(x, n)`: the exact
//! binary value, ties to even), which Rust's `{:.n}` formatting also does.

use super::experiment::ShareRun;

/// Highest arrived-load percent reported (the workload is inflated to 130%).
pub const MAX_PCT: usize = 130;

/// Per arrived-load percent 0..=130: allocated GPU % and fragmentation % of capacity.
#[derive(Clone, Debug, PartialEq)]
pub struct Bins {
    pub allocated_pct: Vec<Option<f64>>,
    pub frag_pct: Vec<Option<f64>>,
}

impl Bins {
    /// `100 - allocated` at `pct` arrived.
    pub fn unallocated_at(&self, pct: usize) -> Option<f64> {
        self.allocated_pct
            .get(pct)
            .copied()
            .flatten()
            .map(|a| 100.0 - a)
    }
}

fn round_to(x: f64, digits: usize) -> f64 {
    format!("{x:.digits$}").parse().unwrap_or(x)
}

fn bin_of(samples: &[(f64, f64, f64)], pct: usize) -> Option<(f64, f64)> {
    let p = pct as f64;
    let mut pick: Vec<&(f64, f64, f64)> = samples.iter().filter(|s| s.0 == p).collect();
    if pick.is_empty() {
        pick = samples
            .iter()
            .filter(|s| s.0 >= p - 1.0 && s.0 <= p + 1.0)
            .collect();
    }
    if pick.is_empty() {
        return None;
    }
    let n = pick.len() as f64;
    let alloc = pick.iter().map(|s| s.1).sum::<f64>() / n;
    let frag = pick.iter().map(|s| s.2).sum::<f64>() / n;
    Some((round_to(alloc, 2), round_to(frag, 2)))
}

pub fn bin_by_arrived(run: &ShareRun) -> Bins {
    let gpus = (run.total_gpu_milli / 1000) as f64;
    let samples: Vec<(f64, f64, f64)> = run
        .samples
        .iter()
        .map(|s| {
            let arrived = (s.arrived_milli as f64 / gpus / 10.0).round_ties_even();
            let alloc = round_to(s.allocated_milli as f64 / gpus / 10.0, 2);
            let frag = s.frag_milli / run.total_gpu_milli as f64 * 100.0;
            (arrived, alloc, frag)
        })
        .collect();
    let (mut allocated_pct, mut frag_pct) = (Vec::new(), Vec::new());
    for pct in 0..=MAX_PCT {
        let b = bin_of(&samples, pct);
        allocated_pct.push(b.map(|x| x.0));
        frag_pct.push(b.map(|x| x.1));
    }
    Bins {
        allocated_pct,
        frag_pct,
    }
}

/// The mean over runs of each bin (a bin missing in any run is missing).
pub fn mean_bins(all: &[Bins]) -> Bins {
    let mean = |pick: &dyn Fn(&Bins) -> Option<f64>| -> Option<f64> {
        let v: Option<Vec<f64>> = all.iter().map(pick).collect();
        v.filter(|v| !v.is_empty())
            .map(|v| v.iter().sum::<f64>() / v.len() as f64)
    };
    Bins {
        allocated_pct: (0..=MAX_PCT)
            .map(|p| mean(&|b: &Bins| b.allocated_pct[p]))
            .collect(),
        frag_pct: (0..=MAX_PCT)
            .map(|p| mean(&|b: &Bins| b.frag_pct[p]))
            .collect(),
    }
}
