//! What the cluster learned of a job key's speed on each GPU model: the run times it
//! observed, per (key, model), as the mean of their logarithms (a ratio of geometric
//! means is the speed-up a typical job of the key saw). The caller chooses the key (the
//! predictor's keys on the live server; the job type in the simulator) and feeds it;
//! nothing here reads a clock or a file.

use std::collections::BTreeMap;

/// Observed run times per job key and GPU model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Learned {
    /// (key, model) → (samples, sum of ln(seconds)).
    seen: BTreeMap<(String, String), (u32, f64)>,
}

impl Learned {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that a job of `key` took `seconds` of run time on `model` (the same work
    /// on every model: a whole job's run time, or seconds per step). Non-positive or
    /// non-finite times are ignored.
    pub fn observe(&mut self, key: &str, model: &str, seconds: f64) {
        if !(seconds.is_finite() && seconds > 0.0) {
            return;
        }
        let e = self
            .seen
            .entry((key.to_string(), model.to_string()))
            .or_insert((0, 0.0));
        e.0 += 1;
        e.1 += seconds.ln();
    }

    /// Samples recorded for `key` on models matching `model`, and the mean of their
    /// log run times.
    fn stats(&self, key: &str, model: &str) -> Option<(u32, f64)> {
        let (n, sum) = self
            .seen
            .range((key.to_string(), String::new())..)
            .take_while(|((k, _), _)| k == key)
            .filter(|((_, m), _)| super::names(m, model) || m == model)
            .fold((0u32, 0.0), |(n, s), (_, &(k, v))| (n + k, s + v));
        (n > 0).then(|| (n, sum / n as f64))
    }

    /// How many times faster `key`'s jobs ran on `model` than on `reference`, once each
    /// has at least `min_samples` observations (else `None`, and the caller falls back).
    pub fn factor(&self, key: &str, model: &str, reference: &str, min_samples: u32) -> Option<f64> {
        let (n, on_model) = self.stats(key, model)?;
        let (r, on_ref) = self.stats(key, reference)?;
        (n >= min_samples.max(1) && r >= min_samples.max(1)).then(|| (on_ref - on_model).exp())
    }

    /// Samples recorded for `key` on `model`.
    pub fn samples(&self, key: &str, model: &str) -> u32 {
        self.stats(key, model).map_or(0, |s| s.0)
    }

    /// What was recorded, in order: (key, model, samples, sum of ln(seconds)), for a
    /// caller that keeps it (the live server stores it beside its predictor).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str, u32, f64)> {
        self.seen
            .iter()
            .map(|((k, m), &(n, s))| (k.as_str(), m.as_str(), n, s))
    }

    /// A table from [`Learned::entries`] (entries with no sample are dropped).
    pub fn from_entries(entries: impl IntoIterator<Item = (String, String, u32, f64)>) -> Self {
        Learned {
            seen: entries
                .into_iter()
                .filter(|(_, _, n, s)| *n > 0 && s.is_finite())
                .map(|(k, m, n, s)| ((k, m), (n, s)))
                .collect(),
        }
    }

    /// How many (key, model) pairs it holds.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}
