//! How fast a job runs on each GPU type, relative to a reference type (issue 36).
//!
//! A job's speed on a GPU model is a factor: 2.0 means it does twice the work per second
//! it does on the reference model (V100 unless the caller says otherwise). The factor is
//! resolved in one order, the first that answers winning ([`SpeedModel::resolve`]):
//!
//! 1. the job's own declaration (`--speedup H100=2.8,A100=1.6`, [`Speedups`]);
//! 2. what the cluster learned from the history of jobs with the same key on each type
//!    ([`Learned`], filled by the caller: the simulator from a throughput table, the live
//!    server later from ended jobs), once it has enough samples;
//! 3. the default for the pair of types ([`defaults`]), where the table knows both;
//! 4. otherwise 1.0: an unknown model is taken to be as fast as the reference.
//!
//! Models match as everywhere else in the core: a name is a prefix of the GPU's model
//! (`A100` matches `A100-SXM4-80GB`; [`crate::resources::model_matches`]). Pure: no I/O,
//! no clock; maps are `BTreeMap`s so nothing depends on hash order.

pub mod defaults;
mod learned;

use std::collections::BTreeMap;

pub use learned::Learned;

use crate::resources::model_matches;

/// A job's declared speed-ups: GPU model prefix → factor against the reference model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Speedups(BTreeMap<String, f64>);

/// A declaration that cannot be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpeedupError {
    #[error("speed-up `{0}` is not MODEL=FACTOR; write e.g. H100=2.8,A100=1.6")]
    NotPair(String),
    #[error("speed-up `{item}`: `{factor}` is not a positive number; a factor is how many times faster than the reference GPU model the job runs, e.g. 1.6")]
    BadFactor { item: String, factor: String },
    #[error("speed-up model `{0}` is named twice; give each GPU model once")]
    Twice(String),
}

impl Speedups {
    /// Parses `MODEL=FACTOR,...` (`H100=2.8,A100=1.6`); an empty text declares nothing.
    pub fn parse(text: &str) -> Result<Self, SpeedupError> {
        let mut map = BTreeMap::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (model, factor) = item
                .split_once('=')
                .map(|(m, f)| (m.trim(), f.trim()))
                .filter(|(m, _)| !m.is_empty())
                .ok_or_else(|| SpeedupError::NotPair(item.to_string()))?;
            let value = factor
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| SpeedupError::BadFactor {
                    item: item.to_string(),
                    factor: factor.to_string(),
                })?;
            if map.insert(model.to_string(), value).is_some() {
                return Err(SpeedupError::Twice(model.to_string()));
            }
        }
        Ok(Speedups(map))
    }

    /// From pairs already checked by the caller (a throughput table).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, f64)>) -> Self {
        Speedups(pairs.into_iter().map(|(m, f)| (m.to_string(), f)).collect())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The declared factor for `model`: the longest declared prefix of it, so `A100-80`
    /// beats `A100` for an `A100-80GB` (the most specific declaration wins).
    pub fn get(&self, model: &str) -> Option<f64> {
        self.0
            .iter()
            .filter(|(m, _)| names(model, m))
            .max_by_key(|(m, _)| m.len())
            .map(|(_, &f)| f)
    }

    /// The declaration as text, models in order (`A100=1.6,H100=2.8`).
    pub fn text(&self) -> String {
        let items: Vec<String> = self.0.iter().map(|(m, f)| format!("{m}={f}")).collect();
        items.join(",")
    }
}

/// Whether GPU `model` is one `prefix` names: the prefix rule of `--gpu-model`
/// ([`model_matches`]), also on the model without NVML's vendor word, so `H100` names an
/// `NVIDIA H100 80GB HBM3` and `V100` a `Tesla V100-SXM2-16GB`, as people write them.
pub fn names(model: &str, prefix: &str) -> bool {
    let bare = model
        .strip_prefix("NVIDIA ")
        .or_else(|| model.strip_prefix("Tesla "))
        .unwrap_or(model);
    model_matches(model, Some(prefix)) || model_matches(bare, Some(prefix))
}

/// Where a factor came from, for `show` and the reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    Declared,
    Learned,
    Default,
    /// Neither the job, the history nor the defaults know the model: taken as 1.0.
    Unknown,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Declared => "declared",
            Source::Learned => "learned",
            Source::Default => "default",
            Source::Unknown => "unknown",
        }
    }
}

/// A resolved factor and where it came from.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Speed {
    pub factor: f64,
    pub source: Source,
}

/// The resolution rule: the reference model, and how many samples a learned factor needs
/// on each of the two types before it is believed.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedModel {
    pub reference: String,
    pub min_samples: u32,
}

impl Default for SpeedModel {
    fn default() -> Self {
        SpeedModel {
            reference: defaults::REFERENCE.to_string(),
            min_samples: 3,
        }
    }
}

impl SpeedModel {
    /// How fast a job runs on `model` against the reference, in the module's order:
    /// its declaration, the learned table under `key` (where both are given), the
    /// default for the pair, else 1.0.
    pub fn resolve(
        &self,
        declared: &Speedups,
        learned: Option<(&Learned, &str)>,
        model: &str,
    ) -> Speed {
        if let Some(f) = declared.get(model) {
            // A declaration that names the reference too is read against it.
            let base = declared.get(&self.reference).unwrap_or(1.0);
            return Speed {
                factor: f / base,
                source: Source::Declared,
            };
        }
        if let Some((table, key)) = learned {
            if let Some(f) = table.factor(key, model, &self.reference, self.min_samples) {
                return Speed {
                    factor: f,
                    source: Source::Learned,
                };
            }
        }
        match defaults::relative(model, &self.reference) {
            Some(f) => Speed {
                factor: f,
                source: Source::Default,
            },
            None => Speed {
                factor: 1.0,
                source: Source::Unknown,
            },
        }
    }

    /// [`SpeedModel::resolve`] for each of `models`, in their order.
    pub fn factors(
        &self,
        declared: &Speedups,
        learned: Option<(&Learned, &str)>,
        models: &[String],
    ) -> Vec<Speed> {
        models
            .iter()
            .map(|m| self.resolve(declared, learned, m))
            .collect()
    }
}

#[cfg(test)]
mod tests;
