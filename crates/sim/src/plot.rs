//! SVG plots of a run: the JCT CDF, and queue length and GPU utilisation over time, one
//! line per policy. Queue length and utilisation change only at events, so they are drawn
//! as steps.

use std::path::Path;

use plotters::prelude::*;

use crate::engine::SimRun;

/// A plot that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw {file}: {message}")]
pub struct PlotError {
    pub file: String,
    pub message: String,
}

const MAX_POINTS: usize = 2_000;

pub(crate) fn err(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError {
        file: path.display().to_string(),
        message: e.to_string(),
    }
}

fn palette(i: usize) -> RGBColor {
    const C: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    C[i % C.len()]
}

pub(crate) fn line_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), PlotError> {
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for (_, pts) in series {
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.05 };
    let root = SVGBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(|e| err(path, e))?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = palette(i);
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(|e| err(path, e))?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))
}

/// Evenly thinned to at most `MAX_POINTS`, keeping the last point.
fn thin(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points;
    }
    let step = points.len().div_ceil(MAX_POINTS);
    let last = *points.last().expect("non-empty");
    let mut out: Vec<(f64, f64)> = points.into_iter().step_by(step).collect();
    out.push(last);
    out
}

/// A step function's samples as the corners of its steps: each value holds until the next
/// sample, so a straight line between two samples would draw a slope that never was.
fn steps(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(points.len() * 2);
    for (x, y) in points {
        if let Some(&(_, prev)) = out.last() {
            if prev != y {
                out.push((x, prev));
            }
        }
        out.push((x, y));
    }
    out
}

/// JCT CDF, log-scaled JCT in hours on x.
pub fn jct_cdf(path: &Path, runs: &[(String, &SimRun)]) -> Result<(), PlotError> {
    let series: Vec<(String, Vec<(f64, f64)>)> = runs
        .iter()
        .map(|(name, run)| {
            let mut j: Vec<f64> = run.jobs.iter().map(|j| j.jct()).collect();
            j.sort_by(f64::total_cmp);
            let n = j.len() as f64;
            let pts = j
                .iter()
                .enumerate()
                .map(|(i, &v)| ((v.max(1.0)).log10(), (i + 1) as f64 / n))
                .collect();
            (name.clone(), thin(pts))
        })
        .collect();
    line_chart(
        path,
        "JCT CDF",
        "log10(JCT / s)",
        "fraction of jobs",
        &series,
    )
}

/// Waiting jobs over time (hours).
pub fn queue_length(path: &Path, runs: &[(String, &SimRun)]) -> Result<(), PlotError> {
    let series: Vec<(String, Vec<(f64, f64)>)> = runs
        .iter()
        .map(|(name, run)| {
            let pts = run
                .timeline
                .iter()
                .map(|s| (s.time / 3600.0, s.queued as f64))
                .collect();
            (name.clone(), steps(thin(pts)))
        })
        .collect();
    line_chart(path, "Queue length", "time (h)", "waiting jobs", &series)
}

/// Busy GPUs as a fraction of the cluster over time (hours).
pub fn utilization(path: &Path, runs: &[(String, &SimRun)]) -> Result<(), PlotError> {
    let series: Vec<(String, Vec<(f64, f64)>)> = runs
        .iter()
        .map(|(name, run)| {
            let g = run.total_gpus.max(1) as f64;
            let pts = run
                .timeline
                .iter()
                .map(|s| (s.time / 3600.0, s.busy_gpus as f64 / g))
                .collect();
            (name.clone(), steps(thin(pts)))
        })
        .collect();
    line_chart(
        path,
        "GPU utilisation",
        "time (h)",
        "busy GPUs / all GPUs",
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Sample;

    fn run(samples: &[(f64, u32)]) -> SimRun {
        SimRun {
            jobs: Vec::new(),
            timeline: samples
                .iter()
                .map(|&(time, busy)| Sample {
                    time,
                    queued: busy,
                    running: busy,
                    busy_gpus: busy,
                })
                .collect(),
            total_gpus: 8,
            busy_gpu_seconds: 0.0,
            powered_idle_gpu_seconds: 0.0,
            idle_node_seconds: 0.0,
            passes: 0,
            tenants: None,
            estimates: "oracle".into(),
            prediction: None,
            elastic: None,
        }
    }

    /// The points of every `<polyline>` in an SVG, in pixels.
    fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
        svg.split("<polyline")
            .skip(1)
            .map(|el| {
                let pts = el
                    .split("points=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                pts.split_whitespace()
                    .map(|p| {
                        let (x, y) = p.split_once(',').unwrap();
                        (x.parse().unwrap(), y.parse().unwrap())
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn utilisation_and_queue_length_are_drawn_as_steps() {
        let dir = tempfile::tempdir().unwrap();
        let r = run(&[
            (0.0, 0),
            (3600.0, 8),
            (5400.0, 2),
            (9000.0, 2),
            (10800.0, 0),
        ]);
        for (file, draw) in [
            ("u.svg", utilization as fn(&Path, &[(String, &SimRun)]) -> _),
            ("q.svg", queue_length),
        ] {
            let path = dir.path().join(file);
            draw(&path, &[("fifo".to_string(), &r)]).unwrap();
            let svg = std::fs::read_to_string(&path).unwrap();
            let lines = polylines(&svg);
            let series = lines.iter().max_by_key(|l| l.len()).expect("a polyline");
            // Four changes of value, each a vertical riser after a horizontal tread.
            assert!(series.len() >= 8, "{file}: {series:?}");
            for w in series.windows(2) {
                let (a, b) = (w[0], w[1]);
                assert!(
                    a.0 == b.0 || a.1 == b.1,
                    "{file}: slanted segment {a:?} -> {b:?}"
                );
            }
        }
    }

    #[test]
    fn steps_hold_each_value_until_the_next_sample() {
        assert_eq!(
            steps(vec![(0.0, 1.0), (1.0, 3.0), (2.0, 3.0), (4.0, 0.0)]),
            vec![
                (0.0, 1.0),
                (1.0, 1.0),
                (1.0, 3.0),
                (2.0, 3.0),
                (4.0, 3.0),
                (4.0, 0.0)
            ]
        );
    }
}
