//! Where a job may run, as the server knows it: a submission's partitions, constraint
//! and node lists checked against the queue file's partitions (access, walltime limits,
//! the default partition), kept in the job's view (`JobView::rules`), and handed to the
//! core as node rules (`gpusched_core::eligible::NodeRules`), which decide placement.

use std::sync::Arc;

use gpusched_core::eligible::{Constraint, NodeRules};
use gpusched_core::live::LiveJob;
use gpusched_core::QueueId;
use gpusched_wire::{JobRules, JobSubmit, JobView};

use super::validate::{self, KnownNode};
use super::{Fail, State};

impl State {
    /// Checks and settles a submission's node rules once its user and queue are known:
    /// the default partition for a job that names none, each partition's access and
    /// walltime limits (the default walltime filled in), its priority added, the
    /// constraint in canonical form, and that some node the cluster knows is admitted
    /// and could hold the job.
    pub(super) fn settle_rules(
        &self,
        j: &mut JobSubmit,
        user: &str,
        groups: &[String],
        known: &[KnownNode<'_>],
    ) -> Result<(), Fail> {
        let queue = j.queue.clone().unwrap_or_default();
        let parts = &self.queues.partitions;
        if j.partitions.is_empty() {
            if let Some(d) = parts.default_partition() {
                if d.allows(user, groups, &queue) {
                    j.partitions.push(d.name.clone());
                }
            }
        }
        let mut seen = Vec::new();
        for name in &j.partitions {
            let Some(p) = parts.defs.get(name) else {
                return Err(Fail::Conflict(if parts.defs.is_empty() {
                    format!(
                        "no partition named `{name}`: this cluster has no partitions (the \
                         queue file's [partition.NAME] tables); leave --partition out, or \
                         use --queue for a queue"
                    )
                } else {
                    format!(
                        "no partition named `{name}`; the partitions are: {}",
                        parts.names()
                    )
                }));
            };
            if seen.contains(&name) {
                return Err(Fail::Conflict(format!(
                    "partition `{name}` is named twice; list each once"
                )));
            }
            seen.push(name);
            if !p.allows(user, groups, &queue) {
                return Err(Fail::Forbidden(format!(
                    "{user} may not use partition `{name}` (from queue `{queue}`); ask an \
                     admin to add you to its users, groups or queues"
                )));
            }
        }
        // Walltime: the first partition's default for a job without one; no partition's
        // maximum passed.
        if j.walltime_s.is_none() {
            j.walltime_s = j
                .partitions
                .iter()
                .find_map(|n| parts.defs.get(n)?.default_walltime_s);
        }
        for name in &j.partitions {
            let p = &parts.defs[name];
            if let (Some(max), Some(w)) = (p.max_walltime_s, j.walltime_s) {
                if w > max {
                    return Err(Fail::Conflict(format!(
                        "partition `{name}` allows a walltime of at most {}; this job asks \
                         for {}: ask for less with --walltime, or use another partition",
                        gpusched_wire::duration::format_duration(max),
                        gpusched_wire::duration::format_duration(w)
                    )));
                }
            }
            if let (Some(max), None) = (p.max_walltime_s, j.walltime_s) {
                return Err(Fail::Conflict(format!(
                    "partition `{name}` allows a walltime of at most {}; give the job one \
                     with --walltime",
                    gpusched_wire::duration::format_duration(max)
                )));
            }
        }
        if let Some(first) = j.partitions.first() {
            let bonus = parts.defs[first].priority;
            j.priority = Some(j.priority.unwrap_or(0).saturating_add(bonus));
        }
        if let Some(c) = &j.constraint {
            // 409, not 400: the schema cannot say the grammar, so a request it accepts
            // is refused for what it asks, not for its form.
            let parsed = Constraint::parse(c).map_err(|e| Fail::Conflict(e.to_string()))?;
            j.constraint = Some(parsed.to_string());
        }
        // Slurm's ranges (`gpu[01-04]`) as the names they stand for, so the job's view and
        // the core see names only.
        for (flag, list) in [
            ("--nodelist", &mut j.nodelist),
            ("--exclude", &mut j.exclude),
        ] {
            *list = gpusched_wire::hostlist::expand(list)
                .map_err(|e| Fail::Conflict(format!("{flag}: {e}")))?;
        }
        // A name that is no node's (empty, with spaces) is one the cluster has never seen:
        // 409, as for any unknown node.
        if let Some(unknown) = j
            .nodelist
            .iter()
            .find(|n| !known.iter().any(|k| k.name == n.as_str()))
        {
            return Err(Fail::Conflict(format!(
                "--nodelist names {unknown:?}, a node this cluster has never seen; \
                 `gpusched nodes` lists them"
            )));
        }
        let Some(rules) = self.node_rules_of(&rules_of(j)) else {
            return Ok(());
        };
        let in_reservation = |name: &str| {
            j.reservation.as_deref().is_none_or(|r| {
                self.reservation_nodes(r)
                    .is_some_and(|ns| ns.iter().any(|n| n == name))
            })
        };
        let admitted: Vec<KnownNode<'_>> = known
            .iter()
            .filter(|k| in_reservation(k.name))
            .filter(|k| {
                let features = self
                    .nodes
                    .get(k.name)
                    .map(|n| crate::live_map::features(&n.record.register, &self.cfg.topology))
                    .unwrap_or_default();
                rules.admits(gpusched_core::eligible::NodeFacts {
                    name: k.name,
                    features: &features,
                })
            })
            .cloned()
            .collect();
        let what = rules_of(j).describe();
        if admitted.is_empty() && !known.is_empty() {
            return Err(Fail::Conflict(format!(
                "no node this cluster knows is one this job may use ({what}); `gpusched \
                 nodes` lists each node's features and partitions"
            )));
        }
        if !admitted.is_empty() {
            validate::check_fits(j, &admitted)
                .map_err(|e| Fail::Conflict(format!("on the nodes of {what}: {e}")))?;
        }
        Ok(())
    }

    /// The core's node rules for a job's accepted rules (`None`: anywhere). A partition
    /// the queue file no longer has (a reload removed it) admits no node, so the job
    /// waits and says so rather than running outside it.
    pub(super) fn node_rules_of(&self, r: &JobRules) -> Option<Arc<NodeRules>> {
        if r.is_empty() {
            return None;
        }
        let partitions = r
            .partitions
            .iter()
            .map(|n| match self.queues.partitions.defs.get(n) {
                Some(p) => p.nodes.clone(),
                None => Arc::new(gpusched_core::eligible::PartitionNodes {
                    name: n.clone(),
                    // Nothing is named so: nothing is selected.
                    nodes: gpusched_core::eligible::NodeSelector {
                        names: vec![String::new()],
                        features: None,
                    },
                    span: false,
                }),
            })
            .collect();
        Some(Arc::new(NodeRules {
            partitions,
            // Checked at submission; a stored one that no longer parses admits nothing.
            constraint: r
                .constraint
                .as_deref()
                .map(|c| Constraint::parse(c).unwrap_or(Constraint::Any(Vec::new()))),
            nodelist: r.nodelist.clone(),
            exclude: r.exclude.clone(),
            reservation: r.reservation.clone(),
        }))
    }

    /// A job as the core's live cluster takes it, its node rules included.
    pub(super) fn live_job(&self, v: &JobView, queue: QueueId) -> LiveJob {
        let mut job = crate::live_map::job(v, queue);
        job.rules = v.rules.as_ref().and_then(|r| self.node_rules_of(r));
        job
    }
}

/// A submission's rules as the view keeps them (`None` fields left out).
pub(super) fn rules_of(j: &JobSubmit) -> JobRules {
    JobRules {
        partitions: j.partitions.clone(),
        constraint: j.constraint.clone(),
        nodelist: j.nodelist.clone(),
        exclude: j.exclude.clone(),
        reservation: j.reservation.clone(),
    }
}
