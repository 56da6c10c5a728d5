//! The throughput table: how fast each job type runs on each GPU type, against a
//! reference type, for `simulate --throughputs FILE`.
//!
//! ```json
//! { "reference": "v100",
//!   "jobs": [
//!     { "job": "ResNet-18 (batch size 32)", "gpus": 1,
//!       "speed": { "v100": 1.0, "p100": 0.61, "k80": 0.22 } } ] }
//! ```
//!
//! A trace job's key is its `name`; its row is the one for its name and GPU count, else
//! the one for its name without `gpus`. The row is the job's declaration in the core's
//! speed model ([`gpusched_core::speed`]): a type the row does not name falls back to the
//! defaults. The trace's `duration` is the run time on the reference type. The table is
//! both what the job does and what policies know of it (an oracle, as in Gavel's
//! simulator).

use std::collections::BTreeMap;

use gpusched_core::speed::{Speed, SpeedModel, Speedups};
use serde::Deserialize;

/// One row of the file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    job: String,
    #[serde(default)]
    gpus: Option<u32>,
    speed: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    reference: Option<String>,
    jobs: Vec<Row>,
}

/// The table, read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Throughputs {
    pub model: SpeedModel,
    rows: BTreeMap<(String, Option<u32>), Speedups>,
}

/// A table that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("{file}: not a throughput table: {why}; expected {{\"reference\": \"v100\", \"jobs\": [{{\"job\": NAME, \"gpus\": N, \"speed\": {{\"v100\": 1.0, ...}}}}]}} (docs/heterogeneous.md)")]
    Json { file: String, why: String },
    #[error("{file}: job `{job}`: speed on `{model}` is {value}; give a positive number (how many times the reference type's speed), or leave the type out")]
    BadSpeed {
        file: String,
        job: String,
        model: String,
        value: f64,
    },
    #[error("{file}: job `{job}` with gpus {gpus:?} has two rows; keep one")]
    Twice {
        file: String,
        job: String,
        gpus: Option<u32>,
    },
}

impl Throughputs {
    /// Reads the JSON text of `file`.
    pub fn parse(file: &str, text: &str) -> Result<Self, TableError> {
        let f: File = serde_json::from_str(text).map_err(|e| TableError::Json {
            file: file.to_string(),
            why: e.to_string(),
        })?;
        let mut rows = BTreeMap::new();
        for r in f.jobs {
            if let Some((m, &v)) = r.speed.iter().find(|(_, v)| !(v.is_finite() && **v > 0.0)) {
                return Err(TableError::BadSpeed {
                    file: file.to_string(),
                    job: r.job,
                    model: m.clone(),
                    value: v,
                });
            }
            let decl = Speedups::from_pairs(r.speed.iter().map(|(m, &v)| (m.as_str(), v)));
            if rows.insert((r.job.clone(), r.gpus), decl).is_some() {
                return Err(TableError::Twice {
                    file: file.to_string(),
                    job: r.job,
                    gpus: r.gpus,
                });
            }
        }
        let mut model = SpeedModel::default();
        if let Some(r) = f.reference {
            model.reference = r;
        }
        Ok(Throughputs { model, rows })
    }

    /// A job's speed on each of `models`: its row (by name and GPUs, else by name), then
    /// the defaults.
    pub fn speeds(&self, name: Option<&str>, gpus: u32, models: &[String]) -> Vec<Speed> {
        let empty = Speedups::default();
        let decl = name
            .and_then(|n| {
                self.rows
                    .get(&(n.to_string(), Some(gpus)))
                    .or_else(|| self.rows.get(&(n.to_string(), None)))
            })
            .unwrap_or(&empty);
        self.model.factors(decl, None, models)
    }
}
