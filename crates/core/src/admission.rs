//! Whether a job could ever run on the nodes the cluster knows (every node that has
//! registered, reachable now or not: one that is away comes back). A job that could
//! not is refused at submission with what to change; the server words each [`Unfit`]
//! (`server/src/state/validate.rs`). Parts of a GPU are checked by
//! [`crate::resources::ResourceRequest::validate_on`].

use std::collections::BTreeMap;

use crate::resources::model_matches;
use crate::room::Amount;

/// A node as admission needs it, implemented by the caller over its own node records.
pub trait KnownNode {
    fn name(&self) -> &str;
    fn cpus(&self) -> u32;
    fn mem_mib(&self) -> u64;
    /// Generic counted resources its agent declared.
    fn resources(&self) -> &BTreeMap<String, u64>;
    /// Each GPU's model and whether it is in MIG mode, in registration order.
    fn gpus(&self) -> impl Iterator<Item = (&str, bool)>;
}

/// What a job asks for of one node.
#[derive(Clone, Copy, Debug)]
pub struct Ask<'a> {
    /// Whole GPUs on one node (for a gang: per node, or 0 to check the rest alone).
    pub gpus: u32,
    /// A model prefix, or any.
    pub model: Option<&'a str>,
    /// CPUs as the user gave them.
    pub cpus: Option<f64>,
    pub mem_mib: Option<u64>,
    pub resources: &'a BTreeMap<String, u64>,
}

/// Why no known node could ever run the job.
#[derive(Clone, Debug, PartialEq)]
pub enum Unfit {
    /// More CPUs than the largest node has.
    Cpus { asked: f64, most: u32 },
    /// More memory than the largest node has.
    Memory { asked: u64, most: u64 },
    /// No node has registered yet.
    NoNodes,
    /// No node declares this resource; `declared` are the names nodes do declare.
    NoSuchResource { name: String, declared: Vec<String> },
    /// More of a resource than any node declares (`node` declares the most).
    TooMuchResource {
        name: String,
        want: u64,
        most: u64,
        node: String,
    },
    /// No node has GPUs of the model; `models` are the models there are.
    NoSuchModel { model: String, models: Vec<String> },
    /// More GPUs (of the model) than the largest node, `node`, has.
    TooManyGpus { gpus: u32, most: u32, node: String },
    /// Each is there, but no one node has the GPUs with the CPUs, memory and resources.
    NotTogether { gpus: u32 },
}

/// Why no set of known nodes could ever run a gang.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GangUnfit {
    /// A split gang asks for more GPUs (of its model) than the whole cluster has.
    Split { gpus: u32, total: u64 },
    /// Fewer than `nodes` nodes have `per_node` GPUs (of one model unless `mixed`).
    Nodes {
        nodes: u32,
        per_node: u32,
        have: usize,
        mixed: bool,
    },
}

/// The whole GPUs of `n` a job asking for `model` could use (not in MIG mode, of its
/// model).
pub fn matching(n: &impl KnownNode, model: Option<&str>) -> u32 {
    n.gpus()
        .filter(|&(m, mig)| !mig && model_matches(m, model))
        .count() as u32
}

/// Whether some known node could ever hold `ask` alone: CPUs, memory and each
/// resource exist on some node, then one node has its GPUs together with them.
pub fn could_ever_fit<N: KnownNode>(ask: &Ask<'_>, nodes: &[N]) -> Result<(), Unfit> {
    // CPUs and memory count for fair share; a request no node has is still a mistake.
    if let Some(asked) = ask.cpus {
        let most = nodes.iter().map(|n| n.cpus()).max().unwrap_or(0);
        if most > 0 && asked > f64::from(most) {
            return Err(Unfit::Cpus { asked, most });
        }
    }
    if let Some(asked) = ask.mem_mib {
        let most = nodes.iter().map(|n| n.mem_mib()).max().unwrap_or(0);
        if most > 0 && asked > most {
            return Err(Unfit::Memory { asked, most });
        }
    }
    let Some((most, name)) = nodes
        .iter()
        .map(|n| (matching(n, ask.model), n.name()))
        .max()
    else {
        return Err(Unfit::NoNodes);
    };
    resources_could_fit(ask, nodes)?;
    if most >= ask.gpus {
        return together(ask, nodes);
    }
    if let (Some(model), 0) = (ask.model, most) {
        let mut models: Vec<String> = nodes
            .iter()
            .flat_map(|n| n.gpus().map(|(m, _)| m.to_string()).collect::<Vec<_>>())
            .collect();
        models.sort();
        models.dedup();
        return Err(Unfit::NoSuchModel {
            model: model.to_string(),
            models,
        });
    }
    Err(Unfit::TooManyGpus {
        gpus: ask.gpus,
        most,
        node: name.to_string(),
    })
}

/// Each generic resource the job asks for is declared, in that count, by some node.
fn resources_could_fit<N: KnownNode>(ask: &Ask<'_>, nodes: &[N]) -> Result<(), Unfit> {
    for (name, &want) in ask.resources {
        let most = nodes
            .iter()
            .filter_map(|n| n.resources().get(name).map(|&c| (c, n.name())))
            .max();
        match most {
            None => {
                let mut declared: Vec<String> = nodes
                    .iter()
                    .flat_map(|n| n.resources().keys().cloned().collect::<Vec<_>>())
                    .collect();
                declared.sort_unstable();
                declared.dedup();
                return Err(Unfit::NoSuchResource {
                    name: name.clone(),
                    declared,
                });
            }
            Some((most, node)) if most < want => {
                return Err(Unfit::TooMuchResource {
                    name: name.clone(),
                    want,
                    most,
                    node: node.to_string(),
                })
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// One node has the job's GPUs together with its CPUs, memory and generic resources
/// (each alone was checked): a job needs them all on the node it runs on.
fn together<N: KnownNode>(ask: &Ask<'_>, nodes: &[N]) -> Result<(), Unfit> {
    let wanted = Amount {
        cpu_milli: ask.cpus.map_or(0, |c| (c * 1000.0).round() as u64),
        mem_mib: ask.mem_mib.unwrap_or(0),
        generic: ask.resources,
    };
    let fits = |n: &N| {
        let has = Amount {
            cpu_milli: u64::from(n.cpus()) * 1000,
            mem_mib: n.mem_mib(),
            generic: n.resources(),
        };
        matching(n, ask.model) >= ask.gpus && has.holds(wanted)
    };
    if nodes.iter().any(fits) {
        Ok(())
    } else {
        Err(Unfit::NotTogether { gpus: ask.gpus })
    }
}

/// Whether some set of known nodes could ever hold a gang of `nodes` x `per_node` GPUs
/// of `model` (of one model unless `mixed`), or, `split`, `gpus` anywhere.
pub fn gang_could_fit<N: KnownNode>(
    model: Option<&str>,
    split: Option<u32>,
    (nodes, per_node): (u32, u32),
    mixed: bool,
    known: &[N],
) -> Result<(), GangUnfit> {
    if let Some(gpus) = split {
        let total: u64 = known.iter().map(|n| u64::from(matching(n, model))).sum();
        if total < u64::from(gpus) {
            return Err(GangUnfit::Split { gpus, total });
        }
        return Ok(());
    }
    let big_enough = known.iter().filter(|k| matching(*k, model) >= per_node);
    let have = if mixed {
        big_enough.count()
    } else {
        // The most nodes of one model.
        let mut by_model = BTreeMap::<&str, usize>::new();
        for k in big_enough {
            let first = k.gpus().next().map_or("", |(m, _)| m);
            *by_model.entry(first).or_default() += 1;
        }
        by_model.into_values().max().unwrap_or(0)
    };
    if have >= nodes as usize {
        return Ok(());
    }
    Err(GangUnfit::Nodes {
        nodes,
        per_node,
        have,
        mixed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Node {
        name: &'static str,
        gpus: Vec<(&'static str, bool)>,
        cpus: u32,
        mem_mib: u64,
        resources: BTreeMap<String, u64>,
    }

    impl KnownNode for Node {
        fn name(&self) -> &str {
            self.name
        }
        fn cpus(&self) -> u32 {
            self.cpus
        }
        fn mem_mib(&self) -> u64 {
            self.mem_mib
        }
        fn resources(&self) -> &BTreeMap<String, u64> {
            &self.resources
        }
        fn gpus(&self) -> impl Iterator<Item = (&str, bool)> {
            self.gpus.iter().copied()
        }
    }

    fn node(name: &'static str, n: usize, model: &'static str, cpus: u32) -> Node {
        Node {
            name,
            gpus: vec![(model, false); n],
            cpus,
            mem_mib: 1 << 16,
            resources: BTreeMap::new(),
        }
    }

    fn ask(gpus: u32) -> Ask<'static> {
        static NONE: BTreeMap<String, u64> = BTreeMap::new();
        Ask {
            gpus,
            model: None,
            cpus: None,
            mem_mib: None,
            resources: &NONE,
        }
    }

    #[test]
    fn each_reason_a_job_could_never_run_is_named() {
        let nodes = [node("a", 4, "A100", 8), node("b", 8, "H100", 16)];
        assert_eq!(could_ever_fit(&ask(8), &nodes), Ok(()));
        assert_eq!(
            could_ever_fit(&ask(9), &nodes),
            Err(Unfit::TooManyGpus {
                gpus: 9,
                most: 8,
                node: "b".into()
            })
        );
        let a100 = Ask {
            model: Some("A100"),
            ..ask(5)
        };
        assert!(matches!(
            could_ever_fit(&a100, &nodes),
            Err(Unfit::TooManyGpus { most: 4, .. })
        ));
        let v100 = Ask {
            model: Some("V100"),
            ..ask(1)
        };
        assert_eq!(
            could_ever_fit(&v100, &nodes),
            Err(Unfit::NoSuchModel {
                model: "V100".into(),
                models: vec!["A100".into(), "H100".into()]
            })
        );
        let cpus = Ask {
            cpus: Some(16.5),
            ..ask(1)
        };
        assert_eq!(
            could_ever_fit(&cpus, &nodes),
            Err(Unfit::Cpus {
                asked: 16.5,
                most: 16
            })
        );
        // 8 GPUs exist (on b) and 12 CPUs exist (on b), but 4 A100s and 12 CPUs do not.
        let apart = Ask {
            cpus: Some(12.0),
            ..a100
        };
        let apart = Ask { gpus: 4, ..apart };
        assert_eq!(
            could_ever_fit(&apart, &nodes),
            Err(Unfit::NotTogether { gpus: 4 })
        );
        let none: [Node; 0] = [];
        assert_eq!(could_ever_fit(&ask(1), &none), Err(Unfit::NoNodes));
        let fpga: BTreeMap<String, u64> = [("fpga".to_string(), 1)].into_iter().collect();
        assert_eq!(
            could_ever_fit(
                &Ask {
                    resources: &fpga,
                    ..ask(1)
                },
                &nodes
            ),
            Err(Unfit::NoSuchResource {
                name: "fpga".into(),
                declared: vec![]
            })
        );
    }

    #[test]
    fn a_gang_needs_its_nodes_of_one_model_unless_mixed() {
        let nodes = [
            node("a", 4, "A100", 8),
            node("b", 4, "H100", 8),
            node("c", 2, "H100", 8),
        ];
        assert_eq!(gang_could_fit(None, None, (2, 4), true, &nodes), Ok(()));
        assert_eq!(
            gang_could_fit(None, None, (2, 4), false, &nodes),
            Err(GangUnfit::Nodes {
                nodes: 2,
                per_node: 4,
                have: 1,
                mixed: false
            })
        );
        assert_eq!(
            gang_could_fit(None, Some(10), (0, 0), false, &nodes),
            Ok(())
        );
        assert_eq!(
            gang_could_fit(Some("H100"), Some(7), (0, 0), false, &nodes),
            Err(GangUnfit::Split { gpus: 7, total: 6 })
        );
    }
}
