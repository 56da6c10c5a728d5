//! The sharing experiment's plot: unallocated GPU % against arrived load, one line per
//! strategy (each line the mean over seeds).

use std::path::Path;

use crate::plot::{line_chart, PlotError};

use super::bins::Bins;

pub fn unallocated_vs_arrived(path: &Path, runs: &[(String, &Bins)]) -> Result<(), PlotError> {
    let series: Vec<(String, Vec<(f64, f64)>)> = runs
        .iter()
        .map(|(name, bins)| {
            let pts = bins
                .allocated_pct
                .iter()
                .enumerate()
                .filter_map(|(pct, a)| a.map(|a| (pct as f64, 100.0 - a)))
                .collect();
            (name.clone(), pts)
        })
        .collect();
    line_chart(
        path,
        "Unallocated GPU vs arrived workload (Alibaba v2023)",
        "arrived GPU requests (% of cluster GPUs)",
        "unallocated GPU (%)",
        &series,
    )
}
