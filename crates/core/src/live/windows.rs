//! Advance reservations' windows in the live cluster (docs/reservations.md): a job of a
//! reservation runs only on its nodes and only while its window is open; every other job
//! is kept off a reservation's nodes while its window is open, and before it opens
//! unless the job's walltime ends by then (a job without a walltime never starts
//! there). A maintenance window admits no job at all.
//!
//! Applied as node sets (`JobSpec::nodes`, `crate::eligible`), worked out again each
//! round from `now`: the rule then holds for placement, gangs, backfill, reclaim, tiers
//! and serving alike. Jobs whose sets change with time never follow (`follow.rs`).

use std::collections::BTreeMap;

use super::cluster::{LiveCluster, LiveJob};
use super::node::LiveNode;
use super::reason::WaitReason;
use crate::eligible::NodeMask;
use crate::Seconds;

/// One reservation's window, as the server hands it in.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub name: String,
    /// The nodes it holds, by name.
    pub nodes: Vec<String>,
    /// Seconds (the clock of `round`'s `now`).
    pub start: Seconds,
    pub end: Seconds,
    /// No job at all runs on its nodes in it.
    pub maintenance: bool,
}

impl Window {
    pub fn open(&self, now: Seconds) -> bool {
        self.start <= now && now < self.end
    }

    /// Whether it keeps a job of another reservation (or none) that would run until
    /// `until` (`None`: no walltime, maybe forever) off its nodes when placed at `now`.
    pub fn keeps_out(&self, now: Seconds, until: Option<Seconds>) -> bool {
        self.end > now && (self.start <= now || until.is_none_or(|u| u > self.start))
    }
}

/// The windows (by index) that keep a job of no reservation off their nodes if placed
/// at `now` to run until `until`: the live cluster's rule for such jobs, and the
/// simulator's (`gpusched-sim`).
pub fn keeping_out(windows: &[Window], now: Seconds, until: Option<Seconds>) -> Vec<usize> {
    (0..windows.len())
        .filter(|&k| windows[k].keeps_out(now, until))
        .collect()
}

/// The nodes (of `names`, the scheduler's node order) outside windows `out`.
pub fn outside(windows: &[Window], out: &[usize], names: &[&str]) -> NodeMask {
    NodeMask::from_fn(names.len(), |k| {
        !out.iter()
            .any(|&w| windows[w].nodes.iter().any(|n| n == names[k]))
    })
}

/// The earliest start or end of a window after `now`: when who may run where changes.
pub fn next_boundary(windows: &[Window], now: Seconds) -> Option<Seconds> {
    windows
        .iter()
        .flat_map(|w| [w.start, w.end])
        .filter(|&t| t > now)
        .min_by(f64::total_cmp)
}

impl LiveCluster {
    /// Replaces the reservations' windows (applied from the next round on).
    pub fn set_windows(&mut self, windows: Vec<Window>) {
        if windows != self.windows {
            self.windows = windows;
            self.windows_dirty = true;
        }
    }

    /// Works the node sets of every job out again at `now` when windows exist (time
    /// alone moves them) or just changed.
    pub(super) fn apply_windows(&mut self, now: Seconds) {
        if self.windows.is_empty() && !self.windows_dirty {
            return;
        }
        self.windows_dirty = false;
        self.windows_now = now;
        self.recompute_masks();
    }

    /// Every whole-GPU job's node sets from its rules and the windows at the last
    /// `now` (`refresh_masks` calls this when the nodes change).
    pub(super) fn recompute_masks(&mut self) {
        let mut free_of = BTreeMap::new();
        self.members_open.clear();
        for i in 0..self.jobs.len() {
            let id = self.jobs[i].spec.id.0;
            let nodes = self.job_nodes(id, &mut free_of);
            self.jobs[i].spec.nodes = nodes;
        }
    }

    /// One job's node sets: its rules' (`crate::eligible`), narrowed by the windows at
    /// the last `now`. `free_of` keeps the nodes left to a non-member per set of windows
    /// that keep it out, shared by the jobs of one pass. Marks a job of an open window
    /// as one that goes first.
    pub(super) fn job_nodes(
        &mut self,
        id: u64,
        free_of: &mut BTreeMap<Vec<usize>, NodeMask>,
    ) -> Vec<NodeMask> {
        let now = self.windows_now;
        let len = self.nodes.len();
        let rules = self.rules.get(&id);
        // Only jobs with rules read the nodes' facts: every round under windows walks
        // every job, and most have none.
        let base = rules
            .map(|r| {
                let facts: Vec<_> = self.nodes.iter().map(LiveNode::facts).collect();
                r.masks(&facts)
            })
            .unwrap_or_default();
        if let Some(name) = rules.and_then(|r| r.reservation.as_deref()) {
            let w = self
                .windows
                .iter()
                .find(|w| w.name == name && w.open(now) && !w.maintenance);
            if w.is_some() {
                self.members_open.insert(id);
            }
            let inside = NodeMask::from_fn(len, |k| {
                w.is_some_and(|w| w.nodes.contains(&self.nodes[k].name))
            });
            return narrow(base, &inside);
        }
        if self.windows.is_empty() {
            return base;
        }
        let until = self.walltimes.get(&id).map(|w| now + w);
        let out = keeping_out(&self.windows, now, until);
        if out.is_empty() {
            return base;
        }
        // Worked out once per set of windows that keep jobs out, shared by the round.
        let free = free_of.entry(out).or_insert_with_key(|out| {
            let names: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
            outside(&self.windows, out, &names)
        });
        narrow(base, free)
    }

    /// The nodes a slice job may use under the windows at `now`, by name; `None` when
    /// no window narrows it.
    pub(super) fn window_fence(
        &self,
        job: &super::place::SliceJob,
        now: Seconds,
    ) -> Option<std::collections::BTreeSet<&str>> {
        let member = job.rules.as_ref().and_then(|r| r.reservation.as_deref());
        if self.windows.is_empty() && member.is_none() {
            return None;
        }
        if let Some(name) = member {
            let w = self
                .windows
                .iter()
                .find(|w| w.name == name && w.open(now) && !w.maintenance);
            return Some(
                w.map(|w| w.nodes.iter().map(String::as_str).collect())
                    .unwrap_or_default(),
            );
        }
        let until = job.estimate.map(|w| now + w);
        let out: Vec<&Window> = self
            .windows
            .iter()
            .filter(|w| w.keeps_out(now, until))
            .collect();
        if out.is_empty() {
            return None;
        }
        Some(
            self.nodes
                .iter()
                .map(|n| n.name.as_str())
                .filter(|n| !out.iter().any(|w| w.nodes.iter().any(|x| x == n)))
                .collect(),
        )
    }

    /// Why a job waits on a reservation, when one is why: its own is not open (or is
    /// gone), or another's window keeps it off the only nodes that could hold it now.
    pub(super) fn window_wait(&self, job: &LiveJob) -> Option<WaitReason> {
        if self.windows.is_empty() && job.rules.as_ref().is_none_or(|r| r.reservation.is_none()) {
            return None;
        }
        let now = self.windows_now;
        if let Some(name) = job.rules.as_ref().and_then(|r| r.reservation.as_deref()) {
            let Some(w) = self.windows.iter().find(|w| w.name == name) else {
                return Some(WaitReason::ReservationGone {
                    name: name.to_string(),
                });
            };
            return (!w.open(now)).then(|| WaitReason::ReservationClosed {
                name: name.to_string(),
                start: w.start,
                end: w.end,
            });
        }
        let until = job.walltime.map(|w| now + w);
        let out: Vec<&Window> = self
            .windows
            .iter()
            .filter(|w| w.keeps_out(now, until))
            .collect();
        let first = out.iter().min_by(|a, b| a.start.total_cmp(&b.start))?;
        // Kept out only matters if no other node could hold it now.
        let outside = self.nodes.iter().any(|n| {
            !n.closed()
                && n.has_model(job.model.as_deref())
                && !out.iter().any(|w| w.nodes.contains(&n.name))
                && job.rules.as_ref().is_none_or(|r| r.admits(n.facts()))
                && self.whole_free(&n.name) >= job.gpus
        });
        (!outside).then(|| WaitReason::KeptOutByReservation {
            name: first.name.clone(),
            start: first.start,
            open: first.open(now),
            walltime: job.walltime.is_some(),
        })
    }
}

/// A job's node sets, each narrowed to `to` (one set, `to`, for a job with none).
fn narrow(base: Vec<NodeMask>, to: &NodeMask) -> Vec<NodeMask> {
    if base.is_empty() {
        vec![to.clone()]
    } else {
        base.iter().map(|m| m.and(to)).collect()
    }
}
