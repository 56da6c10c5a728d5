//! A set of node indices (the scheduler's `NodeId`s), cheap to clone and compare.

use std::sync::Arc;

/// Which of the scheduler's nodes a job may use. Nodes beyond its length are not in it
/// (a node that registered after the mask was made waits for the next one).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeMask(Arc<[u64]>);

impl NodeMask {
    /// The mask of the nodes `pick` says yes to, over `0..len`.
    pub fn from_fn(len: usize, mut pick: impl FnMut(usize) -> bool) -> NodeMask {
        let mut bits = vec![0u64; len.div_ceil(64)];
        for i in 0..len {
            if pick(i) {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        NodeMask(bits.into())
    }

    /// The nodes in both.
    pub fn and(&self, other: &NodeMask) -> NodeMask {
        let bits: Vec<u64> = (0..self.0.len().max(other.0.len()))
            .map(|i| self.0.get(i).copied().unwrap_or(0) & other.0.get(i).copied().unwrap_or(0))
            .collect();
        NodeMask(bits.into())
    }

    pub fn contains(&self, node: usize) -> bool {
        self.0
            .get(node / 64)
            .is_some_and(|w| w & (1 << (node % 64)) != 0)
    }

    /// How many nodes it holds.
    pub fn count(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::NodeMask;

    #[test]
    fn holds_exactly_the_picked_nodes() {
        let m = NodeMask::from_fn(130, |i| i % 64 == 3 || i == 129);
        assert!(m.contains(3) && m.contains(67) && m.contains(129));
        assert!(!m.contains(4) && !m.contains(130) && !m.contains(10_000));
        assert_eq!(m.count(), 3);
        assert!(NodeMask::from_fn(5, |_| false).is_empty());
    }
}
