//! Idle GPUs in interactive allocations: an allocation whose GPUs have all stayed below
//! a utilisation threshold for a configured time is warned, and where its policy says
//! so, ended once a grace after the warning has passed with its GPUs still idle.
//!
//! Pure: the caller hands in each sample (busy or not, at its time) and asks for the
//! step at a time of its choosing; nothing here reads a clock. The server feeds it the
//! agents' GPU samples and carries the steps out (`state/idle.rs`).
//!
//! The rule, per allocation:
//! - a node of the allocation is idle since its first sample with every GPU of the
//!   allocation there below the threshold, and busy again at any sample with one at or
//!   above it (a sample without a reading counts as busy: nothing is ended on missing
//!   data);
//! - the allocation is idle since the latest of its nodes' idle times, and only once every
//!   node has been seen idle;
//! - idle for `after`: one warning; busy again clears it (a later idle spell warns again);
//! - with [`IdleAction::End`], still idle `grace` after the warning: end it.

use std::collections::BTreeMap;

/// What the policy does with an allocation idle past its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleAction {
    /// Nothing: idle time is still counted for accounting.
    Off,
    /// A warning to the allocation's owner (its terminal and its timeline).
    Warn,
    /// A warning, then the allocation ends after the grace.
    End,
}

impl IdleAction {
    pub fn name(self) -> &'static str {
        match self {
            IdleAction::Off => "off",
            IdleAction::Warn => "warn",
            IdleAction::End => "end",
        }
    }

    pub fn parse(s: &str) -> Option<IdleAction> {
        match s {
            "off" => Some(IdleAction::Off),
            "warn" => Some(IdleAction::Warn),
            "end" => Some(IdleAction::End),
            _ => None,
        }
    }
}

/// One queue's idle policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdlePolicy {
    /// A GPU under this utilisation (percent) is idle.
    pub threshold_pct: u32,
    /// How long every GPU of the allocation must stay idle before the warning.
    pub after_ms: u64,
    pub action: IdleAction,
    /// With [`IdleAction::End`]: how long after the warning the allocation ends if its
    /// GPUs are still idle.
    pub grace_ms: u64,
}

impl IdlePolicy {
    /// Whether a GPU reading `util_pct` is idle under this policy (no reading: not idle).
    pub fn idle(&self, util_pct: Option<u32>) -> bool {
        util_pct.is_some_and(|u| u < self.threshold_pct)
    }
}

/// What to do with an allocation now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleStep {
    Nothing,
    /// Warn its owner: its GPUs have been idle for `idle_ms`; with `ends_in_ms`, it ends
    /// after that unless they are used.
    Warn {
        idle_ms: u64,
        ends_in_ms: Option<u64>,
    },
    /// End it: its GPUs have been idle for `idle_ms`, warned `grace` ago.
    End {
        idle_ms: u64,
    },
}

/// What is known of one allocation's idleness.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdleWatch {
    /// Per node: since when its GPUs of the allocation have all been idle (`None`: busy
    /// at its last sample).
    nodes: BTreeMap<String, Option<u64>>,
    /// When the warning of the current idle spell was given.
    warned_at: Option<u64>,
}

impl IdleWatch {
    /// One sample of `node`: whether any GPU of the allocation there was busy, at `at_ms`.
    pub fn observe(&mut self, node: &str, busy: bool, at_ms: u64) {
        let since = self.nodes.entry(node.to_string()).or_insert(None);
        if busy {
            *since = None;
            self.warned_at = None;
        } else if since.is_none() {
            *since = Some(at_ms);
        }
    }

    /// Since when the allocation, on `nodes` nodes, has been idle: every node seen idle,
    /// the latest of their idle times.
    pub fn idle_since(&self, nodes: usize) -> Option<u64> {
        if self.nodes.len() < nodes.max(1) {
            return None;
        }
        self.nodes
            .values()
            .try_fold(0, |latest: u64, since| since.map(|s| latest.max(s)))
    }

    /// When the current idle spell's warning was given.
    pub fn warned_at(&self) -> Option<u64> {
        self.warned_at
    }

    /// The step at `now` for an allocation on `nodes` nodes under `policy`; a warning
    /// is remembered, so it is given once per idle spell.
    pub fn decide(&mut self, policy: &IdlePolicy, nodes: usize, now: u64) -> IdleStep {
        if policy.action == IdleAction::Off {
            return IdleStep::Nothing;
        }
        let Some(since) = self.idle_since(nodes) else {
            return IdleStep::Nothing;
        };
        let idle_ms = now.saturating_sub(since);
        match self.warned_at {
            None if idle_ms >= policy.after_ms => {
                self.warned_at = Some(now);
                IdleStep::Warn {
                    idle_ms,
                    ends_in_ms: (policy.action == IdleAction::End).then_some(policy.grace_ms),
                }
            }
            Some(warned)
                if policy.action == IdleAction::End
                    && now.saturating_sub(warned) >= policy.grace_ms =>
            {
                IdleStep::End { idle_ms }
            }
            _ => IdleStep::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    fn policy(action: IdleAction) -> IdlePolicy {
        IdlePolicy {
            threshold_pct: 5,
            after_ms: 30 * MIN,
            action,
            grace_ms: 10 * MIN,
        }
    }

    /// Samples of one node every minute (`busy` from a list), the step after each.
    fn run(p: &IdlePolicy, busy: impl Fn(u64) -> bool, minutes: u64) -> Vec<(u64, IdleStep)> {
        let mut w = IdleWatch::default();
        let mut out = Vec::new();
        for m in 0..=minutes {
            w.observe("n1", busy(m), m * MIN);
            match w.decide(p, 1, m * MIN) {
                IdleStep::Nothing => {}
                step => out.push((m, step)),
            }
        }
        out
    }

    #[test]
    fn an_idle_allocation_is_warned_once_then_ended_after_the_grace() {
        let steps = run(&policy(IdleAction::End), |_| false, 60);
        assert_eq!(
            steps,
            vec![
                (
                    30,
                    IdleStep::Warn {
                        idle_ms: 30 * MIN,
                        ends_in_ms: Some(10 * MIN)
                    }
                ),
                (40, IdleStep::End { idle_ms: 40 * MIN }),
                // The caller ends it; asked again it says so again.
                (41, IdleStep::End { idle_ms: 41 * MIN }),
            ]
            .into_iter()
            .chain((42..=60).map(|m| (m, IdleStep::End { idle_ms: m * MIN })))
            .collect::<Vec<_>>()
        );
    }

    #[test]
    fn warn_only_warns_once_per_idle_spell_and_off_never_acts() {
        let steps = run(&policy(IdleAction::Warn), |m| (35..37).contains(&m), 90);
        let warn = |m| IdleStep::Warn {
            idle_ms: m,
            ends_in_ms: None,
        };
        // Idle 0-34: warned at 30. Busy 35-36. Idle from 37: warned again at 67.
        assert_eq!(steps, vec![(30, warn(30 * MIN)), (67, warn(30 * MIN))]);
        assert!(run(&policy(IdleAction::Off), |_| false, 600).is_empty());
    }

    #[test]
    fn use_during_the_grace_saves_the_allocation() {
        let steps = run(&policy(IdleAction::End), |m| m == 35, 80);
        let warn = IdleStep::Warn {
            idle_ms: 30 * MIN,
            ends_in_ms: Some(10 * MIN),
        };
        // Warned at 30; busy at 35, so no end at 40; idle again from 36: warned at 66,
        // ended at 76.
        assert_eq!(
            steps[..3],
            [
                (30, warn),
                (66, warn),
                (76, IdleStep::End { idle_ms: 40 * MIN })
            ]
        );
    }

    #[test]
    fn every_node_of_a_gang_must_be_idle_and_the_latest_counts() {
        let p = policy(IdleAction::End);
        let mut w = IdleWatch::default();
        w.observe("n1", false, 0);
        // n2 not seen yet: not idle.
        assert_eq!(w.idle_since(2), None);
        assert_eq!(w.decide(&p, 2, 40 * MIN), IdleStep::Nothing);
        w.observe("n2", true, 5 * MIN);
        assert_eq!(w.idle_since(2), None);
        w.observe("n2", false, 10 * MIN);
        assert_eq!(w.idle_since(2), Some(10 * MIN));
        assert_eq!(w.decide(&p, 2, 39 * MIN), IdleStep::Nothing);
        assert!(matches!(
            w.decide(&p, 2, 40 * MIN),
            IdleStep::Warn { idle_ms, .. } if idle_ms == 30 * MIN
        ));
        // n1 busy: the spell, and its warning, are over.
        w.observe("n1", true, 41 * MIN);
        assert_eq!(w.warned_at(), None);
        assert_eq!(w.decide(&p, 2, 60 * MIN), IdleStep::Nothing);
    }

    #[test]
    fn the_threshold_is_strict_and_a_missing_reading_is_busy() {
        let p = policy(IdleAction::Warn);
        assert!(p.idle(Some(4)));
        assert!(!p.idle(Some(5)));
        assert!(!p.idle(None));
        assert_eq!(IdleAction::parse("end"), Some(IdleAction::End));
        assert_eq!(IdleAction::parse("kill"), None);
    }
}
