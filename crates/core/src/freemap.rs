//! An index of free whole GPUs per node that answers placement queries without scanning
//! the cluster.
//!
//! Nodes of each switch are bucketed by their count of free GPUs; every bucket is a
//! two-level bitset of the switch's nodes, so "the first node with at least `k` free
//! GPUs" costs one lookup per bucket (at most GPUs-per-node + 1 of them), each a scan of a
//! summary word or two, whatever the cluster size. Resetting to an idle cluster is a
//! copy of a template, with no allocation, which the re-packing policies do every pass.

use crate::cluster::Cluster;
use crate::ids::NodeId;

/// A set of small integers with a summary level: bit `w` of `summary` says whether word
/// `w` of `words` is non-zero.
#[derive(Clone, Debug, Default)]
pub struct NodeSet {
    words: Vec<u64>,
    summary: Vec<u64>,
}

impl NodeSet {
    fn new(len: usize) -> Self {
        let words = len.div_ceil(64);
        NodeSet {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
        }
    }

    fn insert(&mut self, i: usize) {
        let w = i / 64;
        self.words[w] |= 1 << (i % 64);
        self.summary[w / 64] |= 1 << (w % 64);
    }

    fn remove(&mut self, i: usize) {
        let w = i / 64;
        self.words[w] &= !(1 << (i % 64));
        if self.words[w] == 0 {
            self.summary[w / 64] &= !(1 << (w % 64));
        }
    }

    /// The smallest member `>= from`.
    fn next_from(&self, from: usize) -> Option<usize> {
        let mut w = from / 64;
        if w >= self.words.len() {
            return None;
        }
        let masked = self.words[w] & (u64::MAX << (from % 64));
        if masked != 0 {
            return Some(w * 64 + masked.trailing_zeros() as usize);
        }
        // Jump through the summary to the next non-empty word.
        w += 1;
        let mut s = w / 64;
        if s >= self.summary.len() {
            return None;
        }
        let mut bits = if w.is_multiple_of(64) {
            self.summary[s]
        } else {
            self.summary[s] & (u64::MAX << (w % 64))
        };
        loop {
            if bits != 0 {
                let w = s * 64 + bits.trailing_zeros() as usize;
                return Some(w * 64 + self.words[w].trailing_zeros() as usize);
            }
            s += 1;
            if s >= self.summary.len() {
                return None;
            }
            bits = self.summary[s];
        }
    }

    fn first(&self) -> Option<usize> {
        self.next_from(0)
    }
}

/// Free whole GPUs per node, indexed for placement.
#[derive(Clone, Debug)]
pub struct FreeMap {
    free: Vec<u32>,
    total: Vec<u32>,
    /// First global node index of each switch, plus one past the end.
    switch_start: Vec<usize>,
    max_per_node: u32,
    /// `buckets[switch][k]`: nodes of the switch (local index) with exactly `k` free GPUs.
    buckets: Vec<Vec<NodeSet>>,
    /// Nodes of the switch with every GPU free.
    idle: Vec<NodeSet>,
    switch_free: Vec<u64>,
    total_free: u64,
    model: Vec<u16>,
    model_names: Vec<String>,
    /// Where each node sits, for gang placement ([`crate::gang`]): shared between the
    /// scheduler's copies, never changed by placements.
    locations: std::sync::Arc<[Location]>,
}

/// Where a node sits in the network: its switch and, if known, its rack (small ids;
/// equal ids mean the same switch or rack).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub switch: u32,
    pub rack: Option<u32>,
}

impl FreeMap {
    /// An idle cluster. Nodes must be grouped by switch in order, as [`Cluster`] builds them.
    pub fn new(cluster: &Cluster) -> Self {
        let switches = cluster.switches as usize;
        let mut switch_start = vec![0usize; switches + 1];
        for n in &cluster.nodes {
            switch_start[n.switch.index() + 1] += 1;
        }
        for s in 0..switches {
            switch_start[s + 1] += switch_start[s];
        }
        let max_per_node = cluster.max_gpus_per_node();
        let mut model_names: Vec<String> = Vec::new();
        let model = cluster
            .nodes
            .iter()
            .map(|n| {
                let name = n.gpus.first().map(|g| g.model.clone()).unwrap_or_default();
                match model_names.iter().position(|m| *m == name) {
                    Some(i) => i as u16,
                    None => {
                        model_names.push(name);
                        (model_names.len() - 1) as u16
                    }
                }
            })
            .collect();
        let mut map = FreeMap {
            free: cluster.nodes.iter().map(|n| n.gpus.len() as u32).collect(),
            total: cluster.nodes.iter().map(|n| n.gpus.len() as u32).collect(),
            buckets: (0..switches)
                .map(|s| {
                    let len = switch_start[s + 1] - switch_start[s];
                    (0..=max_per_node).map(|_| NodeSet::new(len)).collect()
                })
                .collect(),
            idle: (0..switches)
                .map(|s| NodeSet::new(switch_start[s + 1] - switch_start[s]))
                .collect(),
            switch_free: vec![0; switches],
            total_free: 0,
            switch_start,
            max_per_node,
            model,
            model_names,
            locations: cluster
                .nodes
                .iter()
                .map(|n| Location {
                    switch: n.switch.get(),
                    rack: None,
                })
                .collect(),
        };
        for (i, n) in cluster.nodes.iter().enumerate() {
            let s = n.switch.index();
            let local = i - map.switch_start[s];
            let g = map.free[i];
            map.buckets[s][g as usize].insert(local);
            map.idle[s].insert(local);
            map.switch_free[s] += g as u64;
            map.total_free += g as u64;
        }
        map
    }

    /// Makes `self` equal to `template` without allocating.
    pub fn reset_from(&mut self, template: &FreeMap) {
        self.free.clone_from(&template.free);
        for (mine, theirs) in self.buckets.iter_mut().zip(&template.buckets) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.words.clone_from(&b.words);
                a.summary.clone_from(&b.summary);
            }
        }
        for (a, b) in self.idle.iter_mut().zip(&template.idle) {
            a.words.clone_from(&b.words);
            a.summary.clone_from(&b.summary);
        }
        self.switch_free.clone_from(&template.switch_free);
        self.total_free = template.total_free;
    }

    pub fn switches(&self) -> usize {
        self.buckets.len()
    }
    pub fn total_free(&self) -> u64 {
        self.total_free
    }
    pub fn switch_free(&self, switch: usize) -> u64 {
        self.switch_free[switch]
    }
    pub fn free(&self, node: NodeId) -> u32 {
        self.free[node.index()]
    }
    pub fn capacity(&self, node: NodeId) -> u32 {
        self.total[node.index()]
    }
    pub fn max_per_node(&self) -> u32 {
        self.max_per_node
    }
    pub fn nodes(&self) -> usize {
        self.free.len()
    }
    /// Nodes of `switch` as a range of global indices.
    pub fn switch_nodes(&self, switch: usize) -> std::ops::Range<usize> {
        self.switch_start[switch]..self.switch_start[switch + 1]
    }

    /// The node's GPU model as a small id (equal ids: the same model).
    pub fn model_of(&self, node: usize) -> u16 {
        self.model[node]
    }

    /// Where the node sits: its cluster switch unless [`FreeMap::set_locations`] said.
    pub fn location(&self, node: usize) -> Location {
        self.locations[node]
    }

    /// Sets where every node sits (one per node, in node order); ignored otherwise.
    pub fn set_locations(&mut self, locations: std::sync::Arc<[Location]>) {
        if locations.len() == self.free.len() {
            self.locations = locations;
        }
    }

    /// Whether the node is one `want` accepts: its GPUs' model and its place in the
    /// job's node set (`crate::eligible`).
    pub fn admits(&self, node: usize, want: Want<'_>) -> bool {
        self.model_matches(node, want.model) && want.nodes.is_none_or(|m| m.contains(node))
    }

    /// Whether node's GPUs are of a model accepted by `prefix`.
    pub fn model_matches(&self, node: usize, prefix: Option<&str>) -> bool {
        crate::resources::model_matches(&self.model_names[self.model[node] as usize], prefix)
    }

    /// The lowest-numbered node of `switch` with at least `k` free GPUs.
    pub fn first_with_at_least(&self, switch: usize, k: u32) -> Option<NodeId> {
        (k.max(1)..=self.max_per_node)
            .filter_map(|b| self.buckets[switch][b as usize].first())
            .min()
            .map(|l| NodeId((l + self.switch_start[switch]) as u32))
    }

    /// The lowest-numbered node of `switch` among those with the fewest free GPUs `>= k`.
    pub fn tightest_with_at_least(&self, switch: usize, k: u32) -> Option<NodeId> {
        (k.max(1)..=self.max_per_node)
            .find_map(|b| self.buckets[switch][b as usize].first())
            .map(|l| NodeId((l + self.switch_start[switch]) as u32))
    }

    /// The lowest-numbered node of `switch` among those with the most free GPUs.
    pub fn loosest(&self, switch: usize) -> Option<NodeId> {
        (1..=self.max_per_node)
            .rev()
            .find_map(|b| self.buckets[switch][b as usize].first())
            .map(|l| NodeId((l + self.switch_start[switch]) as u32))
    }

    /// Idle nodes of `switch` in index order, starting at global index `from`.
    pub fn next_idle(&self, switch: usize, from: usize) -> Option<NodeId> {
        let start = self.switch_start[switch];
        self.idle[switch]
            .next_from(from.saturating_sub(start))
            .map(|l| NodeId((l + start) as u32))
    }

    fn switch_of(&self, node: usize) -> usize {
        self.switch_start.partition_point(|&s| s <= node) - 1
    }

    /// Takes `k` GPUs of `node`. Panics if fewer are free: placement asks first.
    pub fn take(&mut self, node: NodeId, k: u32) {
        let i = node.index();
        let before = self.free[i];
        assert!(before >= k, "node {node} has {before} free GPUs, asked {k}");
        self.set_free(i, before - k);
    }

    /// Gives `k` GPUs of `node` back.
    pub fn give(&mut self, node: NodeId, k: u32) {
        let i = node.index();
        let after = self.free[i] + k;
        assert!(
            after <= self.total[i],
            "node {node} would have more free GPUs than it has"
        );
        self.set_free(i, after);
    }

    fn set_free(&mut self, i: usize, now: u32) {
        let s = self.switch_of(i);
        let local = i - self.switch_start[s];
        let before = self.free[i];
        self.buckets[s][before as usize].remove(local);
        self.buckets[s][now as usize].insert(local);
        if before == self.total[i] {
            self.idle[s].remove(local);
        }
        if now == self.total[i] {
            self.idle[s].insert(local);
        }
        self.switch_free[s] = self.switch_free[s] + now as u64 - before as u64;
        self.total_free = self.total_free + now as u64 - before as u64;
        self.free[i] = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodeset_finds_members_across_words_and_summary_blocks() {
        let mut s = NodeSet::new(10_000);
        assert_eq!(s.first(), None);
        for i in [3, 64, 4095, 4096, 9_999] {
            s.insert(i);
        }
        assert_eq!(s.first(), Some(3));
        assert_eq!(s.next_from(4), Some(64));
        assert_eq!(s.next_from(65), Some(4095));
        assert_eq!(s.next_from(4097), Some(9_999));
        s.remove(9_999);
        assert_eq!(s.next_from(4097), None);
    }

    #[test]
    fn queries_follow_takes_and_gives() {
        let c = Cluster::parse_shape("4x8", "V100").unwrap();
        let mut m = FreeMap::new(&c);
        assert_eq!(m.total_free(), 32);
        m.take(NodeId(0), 6);
        m.take(NodeId(1), 3);
        assert_eq!(m.first_with_at_least(0, 2), Some(NodeId(0)));
        assert_eq!(m.first_with_at_least(0, 3), Some(NodeId(1)));
        assert_eq!(m.tightest_with_at_least(0, 3), Some(NodeId(1)));
        assert_eq!(m.loosest(0), Some(NodeId(2)));
        assert_eq!(m.next_idle(0, 0), Some(NodeId(2)));
        m.give(NodeId(0), 6);
        assert_eq!(m.next_idle(0, 0), Some(NodeId(0)));
        let template = FreeMap::new(&c);
        m.reset_from(&template);
        assert_eq!(m.total_free(), 32);
        assert_eq!(m.free(NodeId(1)), 8);
    }
}

/// What a job accepts of a node besides room: the model of its GPUs (a prefix) and, for
/// a job with node rules (partitions, constraints, node lists: `crate::eligible`), the
/// set of nodes it may use. The default accepts every node.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Want<'a> {
    pub model: Option<&'a str>,
    pub nodes: Option<&'a crate::eligible::NodeMask>,
}

impl<'a> Want<'a> {
    /// Only a model (or any node).
    pub fn model(model: Option<&'a str>) -> Want<'a> {
        Want { model, nodes: None }
    }

    /// Whether it accepts every node (the free map's fast queries apply).
    pub fn any_node(&self) -> bool {
        self.model.is_none() && self.nodes.is_none()
    }
}
