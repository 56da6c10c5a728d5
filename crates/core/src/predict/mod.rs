//! Run-time prediction from a cluster's own history: what sjf, srtf and the start-time
//! estimate use when the user gave no run time.
//!
//! The method is per-key quantiles with back-off, chosen because it is interpretable
//! (every prediction names the group of past jobs it came from), incremental (one
//! histogram update per level when a job ends, microseconds), deterministic, and needs
//! no training step or crate. A job's features give a chain of keys from the most
//! specific (this user's jobs of this name on this many GPUs) to the most general (every
//! job); the prediction is the chosen quantile of the first key with enough history.
//! Only what is known at submission is a feature (see [`Features`]); the predictor
//! learns from a job only when it ends ([`Predictor::observe`]), so nothing is learnt
//! from the future.

mod belief;
mod hist;
mod snapshot;

use std::collections::BTreeMap;

pub use belief::Belief;
pub use hist::LogHist;
pub use snapshot::{Snapshot, SnapshotGroup};

use crate::Seconds;

/// What is known of a job when it is submitted. Names are interned by the caller (the
/// same name, the same number); `None` where a trace or submission has no such field.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Features {
    pub user: u64,
    pub queue: u64,
    /// The job's name (a trace's model name stands in for it).
    pub name: Option<u64>,
    /// A finer detail of the job: its command line, or a trace's batch size.
    pub detail: Option<u64>,
    pub gpus: u32,
    pub gpu_model: Option<u64>,
    /// The user's walltime: a prediction never exceeds it.
    pub walltime: Option<Seconds>,
    /// Submit time, seconds from an origin at a midnight (for the time of day and week).
    pub submit: Seconds,
}

/// The levels of the back-off chain, most specific first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    UserNameDetailGpus,
    UserNameGpus,
    UserName,
    QueueName,
    UserGpus,
    QueueGpusDaypart,
    QueueGpus,
    Gpus,
    All,
}

impl Level {
    pub const ALL: [Level; 9] = [
        Level::UserNameDetailGpus,
        Level::UserNameGpus,
        Level::UserName,
        Level::QueueName,
        Level::UserGpus,
        Level::QueueGpusDaypart,
        Level::QueueGpus,
        Level::Gpus,
        Level::All,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Level::UserNameDetailGpus => "user+name+detail+gpus",
            Level::UserNameGpus => "user+name+gpus",
            Level::UserName => "user+name",
            Level::QueueName => "queue+name",
            Level::UserGpus => "user+gpus",
            Level::QueueGpusDaypart => "queue+gpus+daypart",
            Level::QueueGpus => "queue+gpus",
            Level::Gpus => "gpus",
            Level::All => "all",
        }
    }

    /// This level's key for `f`; `None` when `f` lacks a field the level needs.
    fn key(self, f: &Features) -> Option<Key> {
        let g = u64::from(f.gpus);
        let k = |a: u64, b: u64, c: u64, d: u64| Some(Key(self, a, b, c, d));
        match self {
            Level::UserNameDetailGpus => k(f.user, f.name?, f.detail?, g),
            Level::UserNameGpus => k(f.user, f.name?, g, 0),
            Level::UserName => k(f.user, f.name?, 0, 0),
            Level::QueueName => k(f.queue, f.name?, 0, 0),
            Level::UserGpus => k(f.user, g, 0, 0),
            Level::QueueGpusDaypart => k(f.queue, g, daypart(f.submit), 0),
            Level::QueueGpus => k(f.queue, g, 0, 0),
            Level::Gpus => k(g, 0, 0, 0),
            Level::All => k(0, 0, 0, 0),
        }
    }
}

/// Which quarter of the day (0-3) and whether a weekend (+4): interactive daytime work
/// and overnight or weekend runs differ in length.
fn daypart(submit: Seconds) -> u64 {
    if !submit.is_finite() || submit < 0.0 {
        return 0;
    }
    let s = submit as u64;
    let quarter = (s % 86_400) / 21_600;
    let weekend = u64::from((s / 86_400) % 7 >= 5);
    quarter + 4 * weekend
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key(Level, u64, u64, u64, u64);

/// Beliefs ([`Predictor::belief`]) need at least this many ended jobs in all: a
/// distribution of fewer says too little of the next job (one long job ended first
/// would make every newcomer look as long), so until then every job is
/// [`Belief::unknown`] and `blend` orders by attained service alone.
pub const BELIEF_MIN_JOBS: u32 = 10;

/// How the predictor answers.
#[derive(Clone, Debug, PartialEq)]
pub struct PredictorConfig {
    /// The quantile a prediction is (0.5: the median of the group).
    pub quantile: f64,
    /// A key is used once it holds this many jobs; below, the next level answers.
    pub min_samples: u32,
}

impl Default for PredictorConfig {
    fn default() -> Self {
        PredictorConfig {
            quantile: 0.5,
            min_samples: 3,
        }
    }
}

/// A prediction and where it came from.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Prediction {
    pub seconds: Seconds,
    pub level: Level,
}

/// The learnt run times by key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Predictor {
    config: PredictorConfig,
    groups: BTreeMap<Key, LogHist>,
}

impl Predictor {
    pub fn new(config: PredictorConfig) -> Self {
        Predictor {
            config,
            groups: BTreeMap::new(),
        }
    }

    /// Learns that a job with `f` ran for `seconds` (call when it ends, with the time
    /// it ran, not counting waits).
    pub fn observe(&mut self, f: &Features, seconds: Seconds) {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return;
        }
        for level in Level::ALL {
            if let Some(key) = level.key(f) {
                self.groups.entry(key).or_default().add(seconds);
            }
        }
    }

    /// The predicted run time of a job with `f`; `None` before any job has ended.
    pub fn predict(&self, f: &Features) -> Option<Prediction> {
        let mut general = None;
        for level in Level::ALL {
            let Some(hist) = level.key(f).and_then(|k| self.groups.get(&k)) else {
                continue;
            };
            if hist.len() >= self.config.min_samples || level == Level::All {
                general = hist
                    .quantile(self.config.quantile)
                    .map(|s| Prediction { seconds: s, level });
                break;
            }
        }
        let mut p = general?;
        if let Some(w) = f.walltime.filter(|w| w.is_finite() && *w > 0.0) {
            p.seconds = p.seconds.min(w);
        }
        Some(p)
    }

    /// What the predictor believes of the run time of a job with `f`, as a distribution
    /// ([`Belief`]): the histogram of the key [`Predictor::predict`] answers from,
    /// shrunk toward each coarser key after it in the chain by its sample count (a key
    /// of `n` jobs weighs `n / (n + min_samples)` against what its parents believe), and
    /// capped at the walltime. [`Belief::unknown`] while fewer than [`BELIEF_MIN_JOBS`]
    /// jobs have ended; `None` before any has.
    pub fn belief(&self, f: &Features) -> Option<Belief> {
        let chain: Vec<(Level, &LogHist)> = Level::ALL
            .iter()
            .filter_map(|&l| Some((l, self.groups.get(&l.key(f)?)?)))
            .filter(|(_, h)| !h.is_empty())
            .collect();
        let start = chain
            .iter()
            .position(|(l, h)| h.len() >= self.config.min_samples || *l == Level::All)?;
        let (_, all) = chain.last()?;
        if all.len() < BELIEF_MIN_JOBS {
            return Some(Belief::unknown());
        }
        let prior = f64::from(self.config.min_samples.max(1));
        // From the coarsest key up: each key's counts plus `prior` jobs' worth of what
        // the keys after it believe.
        let mut w: Vec<f64> = Vec::new();
        for (_, h) in chain[start..].iter().rev() {
            let n = f64::from(h.len());
            if w.is_empty() {
                w = h.counts().iter().map(|&c| f64::from(c) / n).collect();
            } else {
                for (x, &c) in w.iter_mut().zip(h.counts()) {
                    *x = (f64::from(c) + prior * *x) / (n + prior);
                }
            }
        }
        let bins = w
            .iter()
            .enumerate()
            .map(|(b, &x)| {
                let (lo, hi) = hist::range(b);
                (lo, hi, x)
            })
            .collect();
        let mut b = Belief::from_bins(bins)?;
        if let Some(cap) = f.walltime {
            b.cap(cap);
        }
        Some(b)
    }

    /// How many keys it holds (its memory is about 0.5 KiB per key).
    pub fn keys(&self) -> usize {
        self.groups.len()
    }

    /// Keeps at most `max` keys, for a predictor that lives as long as a cluster (every
    /// distinct job name or command makes keys of its own): when over, it forgets keys
    /// of the name and detail levels down to three quarters of `max`, those with the
    /// fewest jobs first (ties: the key order), so what it forgets are mostly one-off
    /// names that never reached `min_samples`. The coarse levels (user, queue, GPUs,
    /// all) are never forgotten. Deterministic; returns how many keys it forgot.
    pub fn bound_keys(&mut self, max: usize) -> usize {
        if self.groups.len() <= max {
            return 0;
        }
        let target = max - max / 4;
        let fine = |l: Level| {
            matches!(
                l,
                Level::UserNameDetailGpus
                    | Level::UserNameGpus
                    | Level::UserName
                    | Level::QueueName
            )
        };
        let mut candidates: Vec<(u32, Key)> = self
            .groups
            .iter()
            .filter(|(k, _)| fine(k.0))
            .map(|(k, h)| (h.len(), *k))
            .collect();
        candidates.sort_unstable();
        let drop = (self.groups.len() - target).min(candidates.len());
        for (_, k) in &candidates[..drop] {
            self.groups.remove(k);
        }
        drop
    }
}

/// How good a run of predictions was: relative errors `|predicted - actual| / actual`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Accuracy {
    errors: Vec<f64>,
    under: u64,
    none: u64,
}

impl Accuracy {
    /// Records one job: what was predicted at its admission (if anything) and what it ran.
    pub fn record(&mut self, predicted: Option<Seconds>, actual: Seconds) {
        match predicted {
            None => self.none += 1,
            Some(p) if actual > 0.0 => {
                self.errors.push((p - actual).abs() / actual);
                if p < actual {
                    self.under += 1;
                }
            }
            Some(_) => {}
        }
    }

    /// Jobs with a prediction, jobs without.
    pub fn counts(&self) -> (u64, u64) {
        (self.errors.len() as u64, self.none)
    }

    /// The median and 90th percentile relative error, and the share of predictions
    /// below the actual run time.
    pub fn summary(&self) -> Option<(f64, f64, f64)> {
        if self.errors.is_empty() {
            return None;
        }
        let mut e = self.errors.clone();
        e.sort_by(f64::total_cmp);
        let at = |q: f64| e[((q * (e.len() - 1) as f64).round() as usize).min(e.len() - 1)];
        Some((at(0.5), at(0.9), self.under as f64 / e.len() as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(user: u64, name: Option<u64>, gpus: u32) -> Features {
        Features {
            user,
            queue: 0,
            name,
            gpus,
            ..Default::default()
        }
    }

    #[test]
    fn a_bound_forgets_one_off_names_first_and_keeps_what_predicts() {
        let mut p = Predictor::default();
        // A name seen often, then 1,000 one-off names of the same user.
        for _ in 0..5 {
            p.observe(&f(1, Some(7), 1), 600.0);
        }
        for name in 100..1100 {
            p.observe(&f(1, Some(name), 1), 5.0);
        }
        let before = p.keys();
        assert!(before > 3000, "{before}");
        let forgot = p.bound_keys(1000);
        assert_eq!(p.keys(), 750);
        assert_eq!(forgot, before - 750);
        // The often-seen name still answers at its own level, and the coarse levels
        // are all kept.
        let guess = p.predict(&f(1, Some(7), 1)).unwrap();
        assert_eq!(guess.level, Level::UserNameGpus);
        assert!((guess.seconds / 600.0 - 1.0).abs() < 0.1);
        assert!(p.groups.keys().any(|k| k.0 == Level::All));
        // Under the bound nothing is forgotten; the same history gives the same keys.
        assert_eq!(p.bound_keys(1000), 0);
        let mut q = Predictor::default();
        for _ in 0..5 {
            q.observe(&f(1, Some(7), 1), 600.0);
        }
        for name in 100..1100 {
            q.observe(&f(1, Some(name), 1), 5.0);
        }
        q.bound_keys(1000);
        assert_eq!(p, q);
    }

    #[test]
    fn backs_off_to_coarser_keys_until_there_is_history() {
        let mut p = Predictor::default();
        assert_eq!(p.predict(&f(1, Some(7), 1)), None);
        // Other users' 1-GPU jobs run 100 s.
        for u in 2..6 {
            p.observe(&f(u, None, 1), 100.0);
        }
        let guess = p.predict(&f(1, Some(7), 1)).unwrap();
        assert_eq!(guess.level, Level::QueueGpusDaypart);
        assert!((guess.seconds / 100.0 - 1.0).abs() < 0.1);
        // Once user 1's job 7 has run three times at 10,000 s, that is the answer.
        for _ in 0..3 {
            p.observe(&f(1, Some(7), 1), 10_000.0);
        }
        let guess = p.predict(&f(1, Some(7), 1)).unwrap();
        assert_eq!(guess.level, Level::UserNameGpus);
        assert!((guess.seconds / 10_000.0 - 1.0).abs() < 0.1);
        // The user's other names fall back to the user's history on 1 GPU.
        let other = p.predict(&f(1, Some(8), 1)).unwrap();
        assert_eq!(other.level, Level::UserGpus);
    }

    #[test]
    fn a_walltime_caps_the_prediction() {
        let mut p = Predictor::default();
        for _ in 0..5 {
            p.observe(&f(1, None, 1), 5000.0);
        }
        let mut q = f(1, None, 1);
        q.walltime = Some(600.0);
        assert_eq!(p.predict(&q).unwrap().seconds, 600.0);
    }

    /// The probability a belief gives run times in `[lo, hi)`.
    fn mass(b: &Belief, lo: f64, hi: f64) -> f64 {
        b.bins()
            .iter()
            .filter(|bin| bin.0 >= lo && bin.1 <= hi)
            .map(|bin| bin.2)
            .sum()
    }

    #[test]
    fn a_belief_is_the_answering_key_shrunk_toward_its_parents_once_there_is_history() {
        let mut p = Predictor::default();
        assert_eq!(p.belief(&f(1, Some(7), 1)), None);
        // Nine other jobs of 1 GPU, about 100 s: too little history for a belief.
        for u in 2..11 {
            p.observe(&f(u, None, 1), 100.0);
        }
        assert_eq!(p.belief(&f(1, Some(7), 1)), Some(Belief::unknown()));
        p.observe(&f(11, None, 1), 100.0);
        // The tenth: user 1's job 7 is believed to be like every 1-GPU job.
        let b = p.belief(&f(1, Some(7), 1)).unwrap();
        assert!((mass(&b, 80.0, 120.0) - 1.0).abs() < 1e-9, "{b:?}");
        // Three runs of it at 10,000 s: its key answers, weighing its 3 jobs against 3
        // (min_samples) jobs' worth of what its parents believe. The parents down to
        // user 1 on 1 GPU hold the same three jobs (so they count again); the rest are
        // mostly the 100 s jobs, and some of that stays.
        for _ in 0..3 {
            p.observe(&f(1, Some(7), 1), 10_000.0);
        }
        let b = p.belief(&f(1, Some(7), 1)).unwrap();
        let long = mass(&b, 8000.0, 12_000.0);
        // 3/13 of everyone, then (3 + 3x) / 6 at each of the four keys above.
        let mut want = 3.0 / 13.0;
        for _ in 0..4 {
            want = (3.0 + 3.0 * want) / 6.0;
        }
        assert!((long - want).abs() < 1e-9, "{long} vs {want}: {b:?}");
        assert!((long + mass(&b, 80.0, 120.0) - 1.0).abs() < 1e-9);
        // More runs make it surer.
        for _ in 0..30 {
            p.observe(&f(1, Some(7), 1), 10_000.0);
        }
        let surer = mass(&p.belief(&f(1, Some(7), 1)).unwrap(), 8000.0, 12_000.0);
        assert!(surer > long, "{surer} vs {long}");
        // A walltime caps it: what lies beyond is a point at the walltime.
        let mut capped = f(1, Some(7), 1);
        capped.walltime = Some(600.0);
        let b = p.belief(&capped).unwrap();
        assert_eq!(b.bins().last().map(|x| (x.0, x.1)), Some((600.0, 600.0)));
        assert!(b.bins().iter().all(|x| x.1 <= 600.0));
    }

    #[test]
    fn accuracy_summary() {
        let mut a = Accuracy::default();
        a.record(Some(50.0), 100.0);
        a.record(Some(200.0), 100.0);
        a.record(Some(100.0), 100.0);
        a.record(None, 100.0);
        let (med, p90, under) = a.summary().unwrap();
        assert_eq!(med, 0.5);
        assert_eq!(p90, 1.0);
        assert!((under - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(a.counts(), (3, 1));
    }
}
