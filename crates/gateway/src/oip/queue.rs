//! A model's batch queue and when to send what (Triton's dynamic batcher): requests in
//! order of priority level, then arrival; a batch is the run of requests from the head
//! that can go together (same key: input names, types and shapes past the first
//! dimension, requested outputs) within `max_batch_size`. It is sent at once when it
//! cannot grow (full, or the next request cannot join it), when a prefix of it is a
//! preferred size (the largest), or when its oldest request has waited
//! `max_queue_delay_us`. No I/O: the batcher calls this.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

pub struct Entry<T> {
    /// Requests batch together only with the same key.
    pub key: String,
    /// Items (its first dimension).
    pub size: u32,
    pub arrived: Instant,
    /// When it is refused if still queued.
    pub deadline: Instant,
    pub item: T,
}

/// When to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    pub max_batch_size: u32,
    /// Ascending.
    pub preferred: Vec<u32>,
    pub delay: Duration,
}

pub enum Decision<T> {
    Send(Vec<Entry<T>>),
    /// Nothing to send before this (None: before the next arrival).
    Wait(Option<Instant>),
}

pub struct Queue<T> {
    levels: Vec<VecDeque<Entry<T>>>,
}

impl<T> Queue<T> {
    /// `levels` priority levels (at least one).
    pub fn new(levels: usize) -> Self {
        Queue {
            levels: (0..levels.max(1)).map(|_| VecDeque::new()).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.levels.iter().map(VecDeque::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queues `e` at `level` (0: the highest; past the last: the last).
    pub fn push(&mut self, level: usize, e: Entry<T>) {
        let last = self.levels.len() - 1;
        self.levels[level.min(last)].push_back(e);
    }

    /// Takes out every entry for which `gone` holds (expired, abandoned).
    pub fn take_if(&mut self, mut gone: impl FnMut(&Entry<T>) -> bool) -> Vec<Entry<T>> {
        let mut out = Vec::new();
        for l in &mut self.levels {
            let mut keep = VecDeque::with_capacity(l.len());
            for e in l.drain(..) {
                if gone(&e) {
                    out.push(e);
                } else {
                    keep.push_back(e);
                }
            }
            *l = keep;
        }
        out
    }

    /// The earliest deadline of a queued entry.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.levels.iter().flatten().map(|e| e.deadline).min()
    }

    /// What to send now, if anything.
    pub fn decide(&mut self, now: Instant, p: &Policy) -> Decision<T> {
        let mut order = self.levels.iter().flatten();
        let Some(head) = order.next() else {
            return Decision::Wait(None);
        };
        let mut total = head.size;
        let mut prefix = vec![head.size];
        let mut can_grow = total < p.max_batch_size;
        for e in order {
            if !can_grow {
                break;
            }
            if e.key != head.key || total + e.size > p.max_batch_size {
                can_grow = false;
                break;
            }
            total += e.size;
            prefix.push(e.size);
            can_grow = total < p.max_batch_size;
        }
        let full = total >= p.max_batch_size;
        let mut sum = 0;
        let mut preferred = None;
        for (i, s) in prefix.iter().enumerate() {
            sum += s;
            if p.preferred.contains(&sum) {
                preferred = Some(i + 1);
            }
        }
        let take = if full {
            prefix.len()
        } else if let Some(k) = preferred {
            k
        } else if !can_grow || now >= head.arrived + p.delay {
            prefix.len()
        } else {
            return Decision::Wait(Some(head.arrived + p.delay));
        };
        let mut out = Vec::with_capacity(take);
        for l in &mut self.levels {
            while out.len() < take {
                match l.pop_front() {
                    Some(e) => out.push(e),
                    None => break,
                }
            }
        }
        Decision::Send(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(key: &str, size: u32, at: Instant, item: u32) -> Entry<u32> {
        Entry {
            key: key.into(),
            size,
            arrived: at,
            deadline: at + Duration::from_secs(60),
            item,
        }
    }

    fn items(d: Decision<u32>) -> Vec<u32> {
        match d {
            Decision::Send(v) => v.into_iter().map(|e| e.item).collect(),
            Decision::Wait(_) => vec![],
        }
    }

    fn policy(max: u32, preferred: &[u32], delay_ms: u64) -> Policy {
        Policy {
            max_batch_size: max,
            preferred: preferred.to_vec(),
            delay: Duration::from_millis(delay_ms),
        }
    }

    #[test]
    fn a_partial_batch_waits_for_the_delay_then_goes() {
        let t = Instant::now();
        let mut q = Queue::new(1);
        q.push(0, e("k", 1, t, 1));
        q.push(0, e("k", 2, t, 2));
        let p = policy(8, &[], 10);
        match q.decide(t, &p) {
            Decision::Wait(Some(w)) => assert_eq!(w, t + Duration::from_millis(10)),
            _ => panic!("should wait for the delay"),
        }
        assert_eq!(items(q.decide(t + Duration::from_millis(10), &p)), [1, 2]);
        assert!(q.is_empty());
    }

    #[test]
    fn the_largest_preferred_size_goes_at_once_and_max_caps_a_batch() {
        let t = Instant::now();
        let mut q = Queue::new(1);
        for i in 0..5 {
            q.push(0, e("k", 1, t, i));
        }
        let p = policy(8, &[2, 4], 1000);
        assert_eq!(items(q.decide(t, &p)), [0, 1, 2, 3]);
        assert!(matches!(q.decide(t, &p), Decision::Wait(Some(_))));
        let mut q = Queue::new(1);
        for i in 0..5 {
            q.push(0, e("k", 3, t, i));
        }
        assert_eq!(
            items(q.decide(t, &policy(8, &[], 1000))),
            [0, 1],
            "6 + 3 > 8"
        );
    }

    #[test]
    fn a_different_key_ends_the_batch_and_priority_goes_first() {
        let t = Instant::now();
        let mut q = Queue::new(2);
        q.push(1, e("a", 1, t, 1));
        q.push(1, e("b", 1, t, 2));
        q.push(0, e("a", 1, t + Duration::from_millis(1), 3));
        let p = policy(8, &[], 1000);
        assert_eq!(
            items(q.decide(t, &p)),
            [3, 1],
            "level 0 first, then level 1's 'a'"
        );
        assert_eq!(items(q.decide(t + Duration::from_secs(2), &p)), [2]);
    }

    #[test]
    fn take_if_removes_only_the_matching() {
        let t = Instant::now();
        let mut q = Queue::new(1);
        q.push(0, e("k", 1, t, 1));
        q.push(0, e("k", 1, t, 2));
        let gone = q.take_if(|e| e.item == 1);
        assert_eq!(gone.len(), 1);
        assert_eq!(q.len(), 1);
        assert_eq!(q.next_deadline(), Some(t + Duration::from_secs(60)));
    }
}
