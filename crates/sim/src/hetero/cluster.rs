//! A heterogeneous cluster for the simulator: `MODEL:NODESxGPUS,...`, e.g.
//! `v100:36x1,p100:36x1,k80:36x1` (Gavel's 36:36:36) or `v100:32x4,a100:16x8`.
//!
//! The round engine counts GPUs per type: a job of G GPUs takes G GPUs of one type,
//! wherever they are (as Gavel's simulator with its default of one GPU per server). The
//! node shape is kept for the report and for a later placement that packs nodes.

use gpusched_core::hetero::GpuTypes;

/// One type's part of the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypePart {
    pub model: String,
    pub nodes: u32,
    pub gpus_per_node: u32,
}

/// The cluster as GPU types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeteroCluster {
    pub parts: Vec<TypePart>,
}

/// A heterogeneous cluster text that cannot be read; each names the part and the fix.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ClusterSpecError {
    #[error("--cluster part `{0}` is not MODEL:NODESxGPUS; write e.g. v100:36x1,k80:16x4")]
    NotPart(String),
    #[error("--cluster part `{part}`: `{shape}` is not NODESxGPUS with both at least 1 (e.g. 36x1, 16x8)")]
    BadShape { part: String, shape: String },
    #[error("--cluster names GPU model `{0}` twice; give each model once (add up its nodes)")]
    Twice(String),
    #[error("--cluster part `{part}` has {gpus} GPUs; at most {max} GPUs per type are simulated (check for a typo)")]
    TooLarge { part: String, gpus: u64, max: u64 },
}

impl HeteroCluster {
    /// Whether `--cluster` text describes GPU types (it names a model before a colon).
    pub fn is_typed(text: &str) -> bool {
        text.contains(':')
    }

    pub fn parse(text: &str) -> Result<Self, ClusterSpecError> {
        let mut parts: Vec<TypePart> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (model, shape) = item
                .split_once(':')
                .map(|(m, s)| (m.trim(), s.trim()))
                .filter(|(m, _)| !m.is_empty())
                .ok_or_else(|| ClusterSpecError::NotPart(item.to_string()))?;
            let bad = || ClusterSpecError::BadShape {
                part: item.to_string(),
                shape: shape.to_string(),
            };
            let (n, g) = shape.split_once(['x', 'X']).ok_or_else(bad)?;
            let nodes: u32 = n.trim().parse().map_err(|_| bad())?;
            let per: u32 = g.trim().parse().map_err(|_| bad())?;
            if nodes == 0 || per == 0 {
                return Err(bad());
            }
            let gpus = u64::from(nodes) * u64::from(per);
            if gpus > gpusched_core::cluster::MAX_GPUS {
                return Err(ClusterSpecError::TooLarge {
                    part: item.to_string(),
                    gpus,
                    max: gpusched_core::cluster::MAX_GPUS,
                });
            }
            if parts.iter().any(|p| p.model == model) {
                return Err(ClusterSpecError::Twice(model.to_string()));
            }
            parts.push(TypePart {
                model: model.to_string(),
                nodes,
                gpus_per_node: per,
            });
        }
        if parts.is_empty() {
            return Err(ClusterSpecError::NotPart(text.to_string()));
        }
        Ok(HeteroCluster { parts })
    }

    /// The GPU types and their counts, in the text's order.
    pub fn types(&self) -> GpuTypes {
        GpuTypes {
            names: self.parts.iter().map(|p| p.model.clone()).collect(),
            gpus: self
                .parts
                .iter()
                .map(|p| p.nodes * p.gpus_per_node)
                .collect(),
        }
    }

    pub fn total_gpus(&self) -> u32 {
        self.parts.iter().map(|p| p.nodes * p.gpus_per_node).sum()
    }
}
