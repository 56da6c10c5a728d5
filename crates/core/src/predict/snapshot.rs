//! The predictor as plain data, so the live server can store what it learnt and load it
//! after a restart (the core has no serde; the server turns this into JSON). A snapshot
//! holds the configuration and every key's non-empty buckets; loading it gives a
//! predictor that predicts exactly as the one that was saved.

use super::{Key, Level, LogHist, Predictor, PredictorConfig};

/// What a [`Predictor`] learnt, as plain data.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub quantile: f64,
    pub min_samples: u32,
    pub groups: Vec<SnapshotGroup>,
}

/// One key: its level (the index in [`Level::ALL`]), its four numbers and its
/// histogram's non-empty buckets as (bucket, count).
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotGroup {
    pub level: u8,
    pub key: [u64; 4],
    pub buckets: Vec<(u16, u32)>,
}

impl Predictor {
    pub fn snapshot(&self) -> Snapshot {
        let groups = self
            .groups
            .iter()
            .map(|(Key(level, a, b, c, d), h)| SnapshotGroup {
                level: Level::ALL.iter().position(|l| l == level).unwrap_or(0) as u8,
                key: [*a, *b, *c, *d],
                buckets: h.buckets(),
            })
            .collect();
        Snapshot {
            quantile: self.config.quantile,
            min_samples: self.config.min_samples,
            groups,
        }
    }

    /// The predictor a snapshot was taken of; an error names the first group that is
    /// not one this code writes (an unknown level, a bucket out of range).
    pub fn from_snapshot(s: &Snapshot) -> Result<Self, String> {
        let mut p = Predictor::new(PredictorConfig {
            quantile: s.quantile,
            min_samples: s.min_samples,
        });
        for (i, g) in s.groups.iter().enumerate() {
            let level = *Level::ALL
                .get(g.level as usize)
                .ok_or_else(|| format!("group {i}: unknown level {}", g.level))?;
            let hist = LogHist::from_buckets(&g.buckets)
                .ok_or_else(|| format!("group {i}: a bucket or count out of range"))?;
            let [a, b, c, d] = g.key;
            p.groups.insert(Key(level, a, b, c, d), hist);
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::Features;

    #[test]
    fn a_loaded_snapshot_predicts_as_the_saved_predictor() {
        let mut p = Predictor::new(PredictorConfig::default());
        for (user, secs) in [(1, 60.0), (1, 70.0), (1, 65.0), (2, 3600.0)] {
            let f = Features {
                user,
                gpus: 1,
                name: Some(7),
                ..Features::default()
            };
            p.observe(&f, secs);
        }
        let back = Predictor::from_snapshot(&p.snapshot()).unwrap();
        assert_eq!(back, p);
        let ask = Features {
            user: 1,
            gpus: 1,
            name: Some(7),
            ..Features::default()
        };
        assert_eq!(back.predict(&ask), p.predict(&ask));
        let mut bad = p.snapshot();
        bad.groups[0].level = 99;
        assert!(Predictor::from_snapshot(&bad)
            .unwrap_err()
            .contains("unknown level"));
    }
}
