//! Each tenant's share of the busy GPUs over time, as a stacked area per policy.

use std::path::Path;

use plotters::prelude::*;

use crate::plot::{err, PlotError};
use crate::tenants::TenantUsage;

/// Wider than this many columns and adjacent bins are merged: a 15-tenant SVG of
/// thousands of hours would be megabytes and no easier to read.
const MAX_COLUMNS: usize = 600;

/// Twenty distinct colours (matplotlib's tab20), enough for Philly's 15 VCs; tenants
/// keep their colour across policies because they keep their number.
fn colour(i: usize) -> RGBColor {
    const C: [RGBColor; 20] = [
        RGBColor(31, 119, 180),
        RGBColor(174, 199, 232),
        RGBColor(255, 127, 14),
        RGBColor(255, 187, 120),
        RGBColor(44, 160, 44),
        RGBColor(152, 223, 138),
        RGBColor(214, 39, 40),
        RGBColor(255, 152, 150),
        RGBColor(148, 103, 189),
        RGBColor(197, 176, 213),
        RGBColor(140, 86, 75),
        RGBColor(196, 156, 148),
        RGBColor(227, 119, 194),
        RGBColor(247, 182, 210),
        RGBColor(127, 127, 127),
        RGBColor(199, 199, 199),
        RGBColor(188, 189, 34),
        RGBColor(219, 219, 141),
        RGBColor(23, 190, 207),
        RGBColor(158, 218, 229),
    ];
    C[i % C.len()]
}

/// Per tenant (in number order), `(hour, share of the busy GPUs)` per merged column.
pub fn share_series(u: &TenantUsage) -> Vec<(u32, Vec<(f64, f64)>)> {
    let bins = u.bins();
    let group = bins.div_ceil(MAX_COLUMNS).max(1);
    let columns = bins.div_ceil(group);
    let sum = |v: &Vec<f64>, c: usize| -> f64 { v.iter().skip(c * group).take(group).sum() };
    let busy: Vec<f64> = (0..columns)
        .map(|c| u.held.values().map(|v| sum(v, c)).sum())
        .collect();
    u.held
        .iter()
        .map(|(&t, v)| {
            let pts = (0..columns)
                .map(|c| {
                    let hour = (c * group) as f64 * u.bin_seconds / 3600.0;
                    let share = if busy[c] > 0.0 {
                        sum(v, c) / busy[c]
                    } else {
                        0.0
                    };
                    (hour, share)
                })
                .collect();
            (t, pts)
        })
        .collect()
}

/// The stacked-area SVG of `u`; `names[t]` names tenant number `t`.
pub fn tenant_shares(
    path: &Path,
    title: &str,
    u: &TenantUsage,
    names: &[String],
) -> Result<(), PlotError> {
    let series = share_series(u);
    let x1 = series
        .iter()
        .flat_map(|(_, p)| p.last())
        .map(|p| p.0)
        .fold(1.0f64, f64::max);
    let root = SVGBackend::new(path, (1100, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let (left, right) = root.split_horizontally(880);
    let mut chart = ChartBuilder::on(&left)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x1, 0.0..1.0)
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("time since the first submit (h)")
        .y_desc("share of the busy GPUs")
        .draw()
        .map_err(|e| err(path, e))?;
    // Stack: tenant i's band runs from the sum of the tenants before it to that plus its
    // own share, drawn as one polygon (top edge forward, bottom edge back).
    let columns = series.first().map_or(0, |s| s.1.len());
    let mut below = vec![0.0; columns];
    for (i, (_, pts)) in series.iter().enumerate() {
        let top: Vec<f64> = below.iter().zip(pts).map(|(b, p)| b + p.1).collect();
        let mut outline: Vec<(f64, f64)> = pts.iter().zip(&top).map(|(p, y)| (p.0, *y)).collect();
        outline.extend(pts.iter().zip(&below).rev().map(|(p, y)| (p.0, *y)));
        chart
            .draw_series(std::iter::once(Polygon::new(outline, colour(i).filled())))
            .map_err(|e| err(path, e))?;
        below = top;
    }
    for (i, (t, _)) in series.iter().enumerate() {
        let y = 40 + i as i32 * 22;
        let name = names.get(*t as usize).cloned().unwrap_or(t.to_string());
        right
            .draw(&Rectangle::new([(10, y), (28, y + 14)], colour(i).filled()))
            .map_err(|e| err(path, e))?;
        right
            .draw(&Text::new(name, (36, y), ("sans-serif", 14)))
            .map_err(|e| err(path, e))?;
    }
    root.present().map_err(|e| err(path, e))
}
