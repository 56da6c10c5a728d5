//! `gpusched simulate --reservations FILE`: advance reservations replayed beside a
//! trace, and what they cost (docs/reservations.md, docs/simulator.md).
//!
//! ```toml
//! [[reservation]]
//! name = "maintenance"
//! start = 86400        # seconds, on the trace's clock (its submit times)
//! duration = "4h"      # or seconds
//! nodes = [0, 1]       # node indices of the simulated cluster
//! ```
//!
//! A trace's jobs never name a reservation, so every window only keeps them out: none
//! runs on its nodes in it, none starts there before it unless its estimate ends by
//! then (the live cluster's rule, `gpusched_core::live::windows`).

use std::path::Path;

use anyhow::{bail, Context, Result};
use gpusched_core::live::Window;
use gpusched_core::Cluster;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    reservation: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    start: f64,
    duration: toml::Value,
    nodes: Vec<usize>,
}

/// Reads the reservations file; errors name the file, the reservation and the fix.
pub fn read(path: &Path, cluster: &Cluster) -> Result<Vec<Window>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the reservations file {}", path.display()))?;
    parse(&text, &path.display().to_string(), cluster.nodes.len())
}

fn parse(text: &str, origin: &str, nodes: usize) -> Result<Vec<Window>> {
    let file: File = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        anyhow::anyhow!(
            "{origin}:{line}: {}; each [[reservation]] has name, start (seconds on the \
             trace's clock), duration (\"4h\" or seconds) and nodes (indices)",
            e.message().trim_end()
        )
    })?;
    let mut out = Vec::new();
    for e in file.reservation {
        let at = |what: String| anyhow::anyhow!("{origin}: reservation {:?}: {what}", e.name);
        let duration = match &e.duration {
            toml::Value::Integer(s) if *s > 0 => *s as f64,
            toml::Value::Float(s) if s.is_finite() && *s > 0.0 => *s,
            toml::Value::String(s) => gpusched_wire::parse_duration(s)
                .ok()
                .filter(|&d| d > 0)
                .ok_or_else(|| {
                    at(format!(
                        "duration {s:?} is not a duration above 0 (e.g. \"4h\")"
                    ))
                })? as f64,
            other => {
                return Err(at(format!(
                    "duration {other} must be above 0 (\"4h\" or seconds)"
                )))
            }
        };
        if !e.start.is_finite() || e.start < 0.0 {
            return Err(at(format!("start {} must be seconds from 0 on", e.start)));
        }
        if e.nodes.is_empty() {
            return Err(at(
                "holds no nodes; list node indices, e.g. nodes = [0, 1]".into()
            ));
        }
        if let Some(n) = e.nodes.iter().find(|&&n| n >= nodes) {
            return Err(at(format!(
                "node {n} is not in the simulated cluster (nodes 0 to {})",
                nodes.saturating_sub(1)
            )));
        }
        out.push(Window {
            name: e.name.clone(),
            nodes: e.nodes.iter().map(|n| n.to_string()).collect(),
            start: e.start,
            end: e.start + duration,
            maintenance: true,
        });
    }
    if out.is_empty() {
        bail!("{origin}: no [[reservation]] tables");
    }
    Ok(out)
}

/// GPU-seconds the windows hold: each window's nodes' GPUs over its length.
pub fn held_gpu_seconds(windows: &[Window], cluster: &Cluster) -> f64 {
    windows
        .iter()
        .map(|w| {
            let gpus: usize = w
                .nodes
                .iter()
                .filter_map(|n| n.parse::<usize>().ok())
                .filter_map(|i| cluster.nodes.get(i))
                .map(|n| n.gpus.len())
                .sum();
            gpus as f64 * (w.end - w.start)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_reads_and_its_mistakes_are_named() {
        let w = super::parse(
            "[[reservation]]\nname = \"m\"\nstart = 100\nduration = \"1h\"\nnodes = [0, 2]\n",
            "r.toml",
            4,
        )
        .unwrap();
        assert_eq!((w[0].start, w[0].end), (100.0, 3700.0));
        assert_eq!(w[0].nodes, ["0", "2"]);
        let e = |t: &str| super::parse(t, "r.toml", 4).unwrap_err().to_string();
        assert!(
            e("[[reservation]]\nname = \"m\"\nstart = 1\nduration = 5\nnodes = [4]")
                .contains("node 4 is not in the simulated cluster (nodes 0 to 3)")
        );
        assert!(
            e("[[reservation]]\nname = \"m\"\nstart = 1\nduration = \"x\"\nnodes = [0]")
                .contains("is not a duration")
        );
        assert!(e("[[reservation]]\nname = \"m\"\nstart = 1\nnodes = [0]").contains("r.toml:"));
        assert!(e("").contains("no [[reservation]]"));
    }
}
