//! A job's rules about where it runs, read against one node.

use std::fmt;
use std::sync::Arc;

use super::{Constraint, NodeMask};

/// A node as eligibility sees it.
#[derive(Clone, Copy, Debug)]
pub struct NodeFacts<'a> {
    pub name: &'a str,
    /// Sorted.
    pub features: &'a [String],
}

/// A set of nodes by name and by features (a partition's). A node is in it when it is
/// named or has the features; with neither, every node is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeSelector {
    pub names: Vec<String>,
    pub features: Option<Constraint>,
}

impl NodeSelector {
    pub fn selects(&self, node: NodeFacts<'_>) -> bool {
        if self.names.is_empty() && self.features.is_none() {
            return true;
        }
        self.names.iter().any(|n| n == node.name)
            || self
                .features
                .as_ref()
                .is_some_and(|c| c.holds(node.features))
    }
}

/// A partition as placement needs it: its name, its nodes, and whether a job listing it
/// with others may span them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PartitionNodes {
    pub name: String,
    pub nodes: NodeSelector,
    /// A job whose partitions all allow it may have a gang's parts in several of them.
    pub span: bool,
}

/// Where one job may run. The default (no rule) admits every node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeRules {
    /// The partitions it may run in, in order of preference (empty: any node).
    pub partitions: Vec<Arc<PartitionNodes>>,
    pub constraint: Option<Constraint>,
    /// Only these nodes (empty: no such rule).
    pub nodelist: Vec<String>,
    pub exclude: Vec<String>,
    /// The advance reservation it runs in: only on its nodes, only in its window
    /// (`crate::live::Window`, applied by the live cluster as time passes).
    pub reservation: Option<String>,
}

/// The rule that keeps a job off a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The node is in none of the job's partitions.
    Partition,
    /// Its features do not satisfy the job's constraint.
    Constraint,
    /// It is not in the job's `--nodelist`.
    NotListed,
    /// The job's `--exclude` names it.
    Excluded,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::Partition => "outside its partitions",
            Refusal::Constraint => "without its constraint's features",
            Refusal::NotListed => "not in its --nodelist",
            Refusal::Excluded => "in its --exclude",
        })
    }
}

impl NodeRules {
    /// Whether it admits every node.
    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty()
            && self.constraint.is_none()
            && self.nodelist.is_empty()
            && self.exclude.is_empty()
            && self.reservation.is_none()
    }

    /// Whether it says nothing about nodes (it may still name a reservation).
    pub fn any_node(&self) -> bool {
        self.partitions.is_empty()
            && self.constraint.is_none()
            && self.nodelist.is_empty()
            && self.exclude.is_empty()
    }

    /// The first rule that keeps the job off `node` (`None`: it may run there).
    pub fn refuses(&self, node: NodeFacts<'_>) -> Option<Refusal> {
        if !self.partitions.is_empty() && !self.partitions.iter().any(|p| p.nodes.selects(node)) {
            return Some(Refusal::Partition);
        }
        self.refuses_besides_partition(node)
    }

    fn refuses_besides_partition(&self, node: NodeFacts<'_>) -> Option<Refusal> {
        if self.exclude.iter().any(|n| n == node.name) {
            return Some(Refusal::Excluded);
        }
        if !self.nodelist.is_empty() && !self.nodelist.iter().any(|n| n == node.name) {
            return Some(Refusal::NotListed);
        }
        if let Some(c) = &self.constraint {
            if !c.holds(node.features) {
                return Some(Refusal::Constraint);
            }
        }
        None
    }

    pub fn admits(&self, node: NodeFacts<'_>) -> bool {
        self.refuses(node).is_none()
    }

    /// The node sets placement tries, in order: each partition alone (the first that
    /// fits wins), then all of them together when every one allows spanning; one set of
    /// every admitted node for a job without partitions. `nodes[i]` is the scheduler's
    /// node `i`.
    pub fn masks(&self, nodes: &[NodeFacts<'_>]) -> Vec<NodeMask> {
        if self.any_node() {
            return Vec::new();
        }
        if self.partitions.is_empty() {
            return vec![NodeMask::from_fn(nodes.len(), |i| self.admits(nodes[i]))];
        }
        let mut out: Vec<NodeMask> = self
            .partitions
            .iter()
            .map(|p| {
                NodeMask::from_fn(nodes.len(), |i| {
                    p.nodes.selects(nodes[i]) && self.refuses_besides_partition(nodes[i]).is_none()
                })
            })
            .collect();
        if out.len() > 1 && self.partitions.iter().all(|p| p.span) {
            out.push(NodeMask::from_fn(nodes.len(), |i| self.admits(nodes[i])));
        }
        out
    }

    /// The partitions' names, for messages.
    pub fn partition_names(&self) -> Vec<&str> {
        self.partitions.iter().map(|p| p.name.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node<'a>(name: &'a str, features: &'a [String]) -> NodeFacts<'a> {
        NodeFacts { name, features }
    }

    fn feats(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn part(name: &str, feature: &str, span: bool) -> Arc<PartitionNodes> {
        Arc::new(PartitionNodes {
            name: name.into(),
            nodes: NodeSelector {
                names: vec![],
                features: Some(Constraint::parse(feature).unwrap()),
            },
            span,
        })
    }

    #[test]
    fn each_rule_is_named_when_it_refuses() {
        let a100 = feats(&["a100", "nvlink"]);
        let h100 = feats(&["h100", "ib"]);
        let rules = NodeRules {
            partitions: vec![part("gpu", "a100|h100", false)],
            constraint: Some(Constraint::parse("nvlink|ib").unwrap()),
            nodelist: vec!["n1".into(), "n2".into(), "n3".into()],
            exclude: vec!["n2".into()],
            reservation: None,
        };
        assert_eq!(rules.refuses(node("n1", &a100)), None);
        assert_eq!(rules.refuses(node("n2", &h100)), Some(Refusal::Excluded));
        assert_eq!(rules.refuses(node("n4", &h100)), Some(Refusal::NotListed));
        assert_eq!(
            rules.refuses(node("n3", &feats(&["a100"]))),
            Some(Refusal::Constraint)
        );
        assert_eq!(
            rules.refuses(node("n1", &feats(&["v100"]))),
            Some(Refusal::Partition)
        );
        assert!(NodeRules::default().admits(node("x", &[])));
        assert!(NodeRules::default().is_empty());
    }

    #[test]
    fn partitions_are_tried_in_order_and_spanned_only_when_all_allow() {
        let fa = feats(&["a"]);
        let fb = feats(&["b"]);
        let nodes = [node("n0", &fa), node("n1", &fb), node("n2", &fa)];
        let rules = |span| NodeRules {
            partitions: vec![part("pb", "b", span), part("pa", "a", span)],
            ..NodeRules::default()
        };
        let m = rules(false).masks(&nodes);
        assert_eq!(m.len(), 2);
        assert!(m[0].contains(1) && m[0].count() == 1);
        assert!(m[1].contains(0) && m[1].contains(2) && m[1].count() == 2);
        let m = rules(true).masks(&nodes);
        assert_eq!(m.len(), 3);
        assert_eq!(m[2].count(), 3);
        // No rule about nodes: no set, every node (the scheduler's fast path).
        assert!(NodeRules::default().masks(&nodes).is_empty());
    }
}
