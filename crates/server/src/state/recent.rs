//! The demand of jobs that ended and left memory, for share placement's window
//! (`--share-demand-window`): counts per (time slot, GPUs, thousandths), not one entry
//! per job. Why: at 500 jobs/s an hour's window is 1.8 million jobs; one entry each grew
//! the server by ~49 MiB per hour of a rate soak (docs/benchmarks.md). With slots, memory
//! is bounded by the window's slots times the distinct asks.
//!
//! A slot is 1/64 of the window (at least one second). A job counts as submitted at its
//! slot's end, so it stays in the demand up to one slot longer than the window, never
//! shorter.

use std::collections::{BTreeMap, VecDeque};

/// Slots per window.
const SLOTS: f64 = 64.0;

/// One slot: its index (slot start = index x width) and the asks of its jobs.
struct Slot {
    index: i64,
    asks: BTreeMap<(u32, Option<u32>), u64>,
}

/// Ended jobs submitted within the window, counted per slot and ask.
#[derive(Default)]
pub struct RecentDemand {
    slots: VecDeque<Slot>,
}

fn width(window_s: f64) -> f64 {
    (window_s / SLOTS).max(1.0)
}

impl RecentDemand {
    /// Counts a job submitted at `submitted_s` that asked for `gpus` whole GPUs or
    /// `milli` thousandths of one. Jobs end out of submission order, so the slot is
    /// found (or made) in order.
    pub fn add(&mut self, window_s: f64, submitted_s: f64, gpus: u32, milli: Option<u32>) {
        let index = (submitted_s / width(window_s)).floor() as i64;
        let at = self.slots.partition_point(|s| s.index < index);
        if self.slots.get(at).is_none_or(|s| s.index != index) {
            self.slots.insert(
                at,
                Slot {
                    index,
                    asks: BTreeMap::new(),
                },
            );
        }
        *self.slots[at].asks.entry((gpus, milli)).or_default() += 1;
    }

    /// Drops the slots whose every job was submitted before `now_s - window_s`.
    pub fn expire(&mut self, window_s: f64, now_s: f64) {
        let w = width(window_s);
        while self
            .slots
            .front()
            .is_some_and(|s| (s.index + 1) as f64 * w <= now_s - window_s)
        {
            self.slots.pop_front();
        }
    }

    /// Every counted job as (submitted s, GPUs, milli), a slot's jobs at its end.
    pub fn jobs(&self, window_s: f64) -> impl Iterator<Item = (f64, u32, Option<u32>)> + '_ {
        let w = width(window_s);
        self.slots.iter().flat_map(move |s| {
            let end = (s.index + 1) as f64 * w;
            s.asks
                .iter()
                .flat_map(move |(&(gpus, milli), &n)| (0..n).map(move |_| (end, gpus, milli)))
        })
    }

    /// Entries held (slots x distinct asks), for the memory bound's test.
    #[cfg(test)]
    fn entries(&self) -> usize {
        self.slots.iter().map(|s| s.asks.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_million_jobs_in_the_window_take_one_entry_per_slot_and_ask() {
        let window = 3600.0;
        let mut r = RecentDemand::default();
        for i in 0..1_000_000u64 {
            let t = i as f64 * 0.0036; // 1,000,000 jobs over one hour
            r.add(
                window,
                t,
                if i % 2 == 0 { 1 } else { 0 },
                (i % 2 == 1).then_some(500),
            );
        }
        assert!(r.entries() <= 2 * 65, "{}", r.entries());
        assert_eq!(r.jobs(window).count(), 1_000_000);
    }

    #[test]
    fn a_job_counts_for_the_window_and_at_most_one_slot_longer() {
        let window = 640.0; // slots of 10 s
        let mut r = RecentDemand::default();
        r.add(window, 1005.0, 1, None); // slot [1000, 1010)
        r.add(window, 995.0, 2, None); // ended later, submitted earlier: slot [990, 1000)
        let firsts: Vec<_> = r.jobs(window).map(|(t, g, _)| (t, g)).collect();
        assert_eq!(firsts, [(1000.0, 2), (1010.0, 1)]);
        r.expire(window, 1005.0 + window); // the first slot's jobs are all out
        assert_eq!(r.jobs(window).count(), 1);
        r.expire(window, 1009.0 + window); // 1005 is out, but its slot ends at 1010
        assert_eq!(r.jobs(window).count(), 1);
        r.expire(window, 1010.0 + window);
        assert_eq!(r.jobs(window).count(), 0);
    }
}
