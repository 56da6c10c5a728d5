//! Advance reservations (docs/reservations.md): admins hold nodes for a window of time
//! for some users or queues, or for maintenance. The server keeps the records (stored,
//! audited), checks them and the jobs that name one, and hands the core their windows
//! (`gpusched_core::live::Window`), which decide who may run where and when.

use std::collections::BTreeSet;

use gpusched_core::eligible::Constraint;
use gpusched_core::live::Window;
use gpusched_store::ReservationRecord;
use gpusched_wire::history::AuditAction;
use gpusched_wire::reservation::{
    check_name, ReservationList, ReservationSpec, ReservationState, ReservationView,
};
use gpusched_wire::JobSubmit;

use super::{Fail, State, Who};

/// The longest window, as a job's walltime (366 days).
const MAX_DURATION_S: u64 = 31_622_400;

fn end_ms(spec: &ReservationSpec) -> u64 {
    spec.start_ms
        .saturating_add(spec.duration_s.saturating_mul(1000))
}

impl State {
    /// The reservations the store holds, at start or after a takeover.
    pub fn restore_reservations(&mut self, records: Vec<ReservationRecord>) {
        self.reservations =
            super::tracked::Tracked::stored(records.into_iter().map(|r| (r.spec.name.clone(), r)));
        self.push_windows();
    }

    /// `POST /api/reservations` (admins).
    pub fn create_reservation(
        &mut self,
        spec: ReservationSpec,
        who: &Who,
    ) -> Result<ReservationView, Fail> {
        admin(who, "create a reservation")?;
        if self.reservations.contains_key(&spec.name) {
            return Err(Fail::Conflict(format!(
                "a reservation named {} exists; choose another name, or `gpusched \
                 reservation update` it",
                spec.name
            )));
        }
        let (nodes, gpus) = self.check_reservation(&spec, None)?;
        let now = self.now.ms;
        let detail = window_words(&spec, &nodes);
        let name = spec.name.clone();
        self.reservations.insert(
            name.clone(),
            ReservationRecord {
                spec,
                nodes,
                gpus,
                created_by: who.user.clone(),
                created_ms: now,
                updated_ms: now,
            },
        );
        self.audit(
            &who.user,
            AuditAction::ReservationCreate,
            name.clone(),
            detail,
        );
        self.push_windows();
        self.get_reservation(&name)
    }

    /// `PUT /api/reservations/{name}` (admins): new terms, checked as a new one is.
    pub fn update_reservation(
        &mut self,
        name: &str,
        spec: ReservationSpec,
        who: &Who,
    ) -> Result<ReservationView, Fail> {
        admin(who, "change a reservation")?;
        self.known_reservation(name)?;
        if spec.name != name {
            return Err(Fail::Conflict(format!(
                "the body names reservation {:?} but the URL {name:?}; a reservation's name \
                 cannot change (delete it and create another)",
                spec.name
            )));
        }
        // Nodes picked for `gpus` stay as they are while what picked them is unchanged
        // (a change of users or window must not move an open reservation's nodes).
        check_gpus(&spec)?;
        let old = &self.reservations[name];
        let same_pick = spec.gpus.is_some()
            && (old.spec.gpus, &old.spec.gpu_model, &old.spec.features)
                == (spec.gpus, &spec.gpu_model, &spec.features);
        let (nodes, gpus) = if same_pick {
            let kept = ReservationSpec {
                nodes: old.nodes.clone(),
                gpus: None,
                gpu_model: None,
                features: None,
                ..spec.clone()
            };
            self.check_reservation(&kept, Some(name))?
        } else {
            self.check_reservation(&spec, Some(name))?
        };
        let detail = window_words(&spec, &nodes);
        let now = self.now.ms;
        if let Some(r) = self.reservations.get_mut(name) {
            r.spec = spec;
            r.nodes = nodes;
            r.gpus = gpus;
            r.updated_ms = now;
        }
        self.audit(
            &who.user,
            AuditAction::ReservationUpdate,
            name.to_string(),
            detail,
        );
        self.push_windows();
        self.get_reservation(name)
    }

    /// `DELETE /api/reservations/{name}` (admins): refused while jobs that have not
    /// ended name it.
    pub fn delete_reservation(&mut self, name: &str, who: &Who) -> Result<ReservationView, Fail> {
        admin(who, "delete a reservation")?;
        let view = self.get_reservation(name)?;
        if !view.jobs.is_empty() {
            return Err(Fail::Conflict(format!(
                "reservation {name} has jobs that have not ended ({}); cancel them first \
                 (`gpusched cancel ID`)",
                view.jobs
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        self.reservations.remove(name);
        self.audit(
            &who.user,
            AuditAction::ReservationDelete,
            name.to_string(),
            String::new(),
        );
        self.push_windows();
        Ok(view)
    }

    /// `GET /api/reservations`: every reservation, by name.
    pub fn list_reservations(&self) -> ReservationList {
        ReservationList {
            reservations: self
                .reservations
                .keys()
                .filter_map(|n| self.get_reservation(n).ok())
                .collect(),
        }
    }

    /// `GET /api/reservations/{name}`.
    pub fn get_reservation(&self, name: &str) -> Result<ReservationView, Fail> {
        let r = self.known_reservation(name)?;
        let end = end_ms(&r.spec);
        let now = self.now.ms;
        let state = if now < r.spec.start_ms {
            ReservationState::Waiting
        } else if now < end {
            ReservationState::Active
        } else {
            ReservationState::Ended
        };
        Ok(ReservationView {
            spec: r.spec.clone(),
            nodes: r.nodes.clone(),
            gpus: r.gpus,
            state,
            end_ms: end,
            created_by: r.created_by.clone(),
            created_ms: r.created_ms,
            jobs: self.jobs_in(name),
        })
    }

    fn known_reservation(&self, name: &str) -> Result<&ReservationRecord, Fail> {
        self.reservations.get(name).ok_or_else(|| {
            Fail::NotFound(format!(
                "no reservation named {name:?}; `gpusched reservation ls` lists them"
            ))
        })
    }

    /// Jobs not ended that name reservation `name`.
    fn jobs_in(&self, name: &str) -> Vec<u64> {
        self.jobs
            .values()
            .filter(|j| !j.view.state.is_terminal())
            .filter(|j| {
                j.view
                    .rules
                    .as_ref()
                    .is_some_and(|r| r.reservation.as_deref() == Some(name))
            })
            .map(|j| j.view.id)
            .collect()
    }

    /// A reservation's terms checked against itself, the nodes and the other
    /// reservations (`except`: the one being changed): its nodes and their GPUs.
    fn check_reservation(
        &self,
        spec: &ReservationSpec,
        except: Option<&str>,
    ) -> Result<(Vec<String>, u32), Fail> {
        check_name(&spec.name).map_err(Fail::BadRequest)?;
        check_gpus(spec)?;
        if !(60..=MAX_DURATION_S).contains(&spec.duration_s) {
            return Err(Fail::BadRequest(format!(
                "duration_s {} must be 60 to {MAX_DURATION_S} seconds (a minute to 366 days)",
                spec.duration_s
            )));
        }
        if end_ms(spec) <= self.now.ms {
            return Err(Fail::Conflict(
                "the window ends in the past; give a start_ms and duration_s that end \
                 after now"
                    .into(),
            ));
        }
        match (spec.nodes.is_empty(), spec.gpus) {
            (false, Some(_)) | (true, None) => {
                return Err(Fail::Conflict(
                    "give either `nodes` (by name) or `gpus` (a count the server finds nodes \
                     for), not both and not neither"
                        .into(),
                ))
            }
            _ => {}
        }
        if spec.maintenance && !(spec.users.is_empty() && spec.queues.is_empty()) {
            return Err(Fail::Conflict(
                "a maintenance reservation admits no job; leave `users` and `queues` out".into(),
            ));
        }
        if spec.gpus.is_none() && (spec.gpu_model.is_some() || spec.features.is_some()) {
            return Err(Fail::Conflict(
                "`gpu_model` and `features` choose nodes for `gpus`; with `nodes`, leave \
                 them out"
                    .into(),
            ));
        }
        let features = match &spec.features {
            Some(f) => Some(Constraint::parse(f).map_err(|e| Fail::Conflict(e.to_string()))?),
            None => None,
        };
        if let Some(q) = spec
            .queues
            .iter()
            .find(|q| !self.queues.defs.contains_key(*q))
        {
            return Err(Fail::Conflict(format!(
                "no queue named `{q}`; the queues are: {}",
                self.queues.names()
            )));
        }
        // Nodes held by another reservation whose window overlaps this one.
        let (start, end) = (spec.start_ms, end_ms(spec));
        let mut taken: BTreeSet<&str> = BTreeSet::new();
        let mut by: Vec<(&str, &str)> = Vec::new();
        for r in self.reservations.values() {
            if Some(r.spec.name.as_str()) == except {
                continue;
            }
            if r.spec.start_ms < end && start < end_ms(&r.spec) {
                for n in &r.nodes {
                    taken.insert(n);
                    by.push((n, &r.spec.name));
                }
            }
        }
        let gpus_of = |name: &str| {
            self.nodes
                .get(name)
                .map_or(0, |n| n.record.register.gpus.len() as u32)
        };
        if let Some(want) = spec.gpus {
            let mut candidates: Vec<(&str, u32)> = self
                .nodes
                .values()
                .map(|n| &n.record.register)
                .filter(|r| !taken.contains(r.node.as_str()))
                .filter(|r| {
                    gpusched_core::resources::model_matches(
                        r.gpus.first().map_or("", |g| g.model.as_str()),
                        spec.gpu_model.as_deref(),
                    )
                })
                .filter(|r| {
                    features
                        .as_ref()
                        .is_none_or(|c| c.holds(&crate::live_map::features(r, &self.cfg.topology)))
                })
                .map(|r| (r.node.as_str(), r.gpus.len() as u32))
                .filter(|&(_, g)| g > 0)
                .collect();
            // The fewest nodes: the largest first, then by name.
            candidates.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let mut picked = Vec::new();
            let mut got = 0;
            for (n, g) in candidates {
                if got >= want {
                    break;
                }
                picked.push(n.to_string());
                got += g;
            }
            if got < want {
                return Err(Fail::Conflict(format!(
                    "only {got} GPUs{} are on nodes free of other reservations in that \
                     window; ask for fewer, another window, or name nodes",
                    match (&spec.gpu_model, &spec.features) {
                        (Some(m), _) => format!(" of model {m}"),
                        (None, Some(f)) => format!(" with features {f}"),
                        _ => String::new(),
                    }
                )));
            }
            picked.sort();
            return Ok((picked, got));
        }
        let mut nodes = gpusched_wire::hostlist::expand(&spec.nodes)
            .map_err(|e| Fail::Conflict(format!("nodes: {e}")))?;
        nodes.sort();
        nodes.dedup();
        if let Some(n) = nodes.iter().find(|n| !self.nodes.contains_key(n.as_str())) {
            return Err(Fail::Conflict(format!(
                "node {n} is not known to this cluster; `gpusched nodes` lists them"
            )));
        }
        if let Some((n, other)) = by.iter().find(|(n, _)| nodes.iter().any(|x| x == n)) {
            return Err(Fail::Conflict(format!(
                "node {n} is held by reservation {other} in an overlapping window; choose \
                 other nodes or another window"
            )));
        }
        let gpus = nodes.iter().map(|n| gpus_of(n)).sum();
        Ok((nodes, gpus))
    }

    /// Checks a submission's `reservation`: it exists, is not a maintenance window, the
    /// user or queue may use it, and one of its nodes could hold the job.
    pub(super) fn check_job_reservation(
        &self,
        j: &JobSubmit,
        user: &str,
        admin: bool,
    ) -> Result<(), Fail> {
        let Some(name) = &j.reservation else {
            return Ok(());
        };
        let Some(r) = self.reservations.get(name) else {
            return Err(Fail::Conflict(format!(
                "no reservation named {name:?}; `gpusched reservation ls` lists them"
            )));
        };
        if r.spec.maintenance {
            return Err(Fail::Conflict(format!(
                "reservation {name} is a maintenance window: no job runs in it"
            )));
        }
        if end_ms(&r.spec) <= self.now.ms {
            return Err(Fail::Conflict(format!(
                "reservation {name}'s window has ended; submit without --reservation"
            )));
        }
        let queue = j.queue.as_deref().unwrap_or_default();
        let allowed = admin
            || r.spec.users.iter().any(|u| u == user)
            || r.spec.queues.iter().any(|q| q == queue);
        if !allowed {
            return Err(Fail::Forbidden(format!(
                "{user} may not run in reservation {name} (from queue `{queue}`); it is for {}",
                for_words(&r.spec)
            )));
        }
        Ok(())
    }

    /// The core's windows from the records; ended ones without jobs are dropped.
    pub(super) fn push_windows(&mut self) {
        let windows = self
            .reservations
            .values()
            .map(|r| Window {
                name: r.spec.name.clone(),
                nodes: r.nodes.clone(),
                start: r.spec.start_ms as f64 / 1000.0,
                end: end_ms(&r.spec) as f64 / 1000.0,
                maintenance: r.spec.maintenance,
            })
            .collect();
        self.cluster.set_windows(windows);
        self.sched_due = true;
    }

    /// Each round while reservations exist: those whose window has closed and that no
    /// job names are deleted; time alone moves who may run where, so the round runs.
    pub(super) fn tend_reservations(&mut self) {
        if self.reservations.is_empty() {
            return;
        }
        let now = self.now.ms;
        let over: Vec<String> = self
            .reservations
            .values()
            .filter(|r| end_ms(&r.spec) <= now)
            .map(|r| r.spec.name.clone())
            .filter(|n| self.jobs_in(n).is_empty())
            .collect();
        for name in &over {
            self.reservations.remove(name);
        }
        // An open maintenance window drains its nodes: what still runs there is asked
        // to stop (the checkpoint contract's grace) and requeued.
        let drains: Vec<(String, String)> = self
            .reservations
            .values()
            .filter(|r| r.spec.maintenance && r.spec.start_ms <= now && now < end_ms(&r.spec))
            .flat_map(|r| r.nodes.iter().map(|n| (n.clone(), r.spec.name.clone())))
            .collect();
        for (node, name) in drains {
            let why = format!("{node} is in maintenance reservation {name}");
            for id in self.jobs_on(&node) {
                self.preempt_for(id, &why);
            }
        }
        if !over.is_empty() {
            self.push_windows();
        }
        self.sched_due = true;
    }

    /// The nodes of a reservation, as facts for the job checks (`rules.rs`).
    pub(super) fn reservation_nodes(&self, name: &str) -> Option<&[String]> {
        self.reservations.get(name).map(|r| r.nodes.as_slice())
    }
}

/// `gpus`, where given, within the schema's bounds (400: the schema says them).
fn check_gpus(spec: &ReservationSpec) -> Result<(), Fail> {
    match spec.gpus {
        Some(g) if !(1..=1_000_000).contains(&g) => Err(Fail::BadRequest(format!(
            "gpus {g} must be 1 to 1000000 (or leave it out and name `nodes`)"
        ))),
        _ => Ok(()),
    }
}

fn admin(who: &Who, what: &str) -> Result<(), Fail> {
    if who.admin {
        Ok(())
    } else {
        Err(Fail::Forbidden(format!(
            "only an admin may {what}; you are {}",
            who.user
        )))
    }
}

/// Who a reservation is for: "users alice, bob and queue research", or "admins only".
fn for_words(spec: &ReservationSpec) -> String {
    let mut parts = Vec::new();
    if !spec.users.is_empty() {
        parts.push(format!("users {}", spec.users.join(", ")));
    }
    if !spec.queues.is_empty() {
        parts.push(format!("queues {}", spec.queues.join(", ")));
    }
    if parts.is_empty() {
        "admins only".into()
    } else {
        parts.join(" and ")
    }
}

/// An audit entry's detail: "n1,n2 from 1700000000000 for 4h (users alice)".
fn window_words(spec: &ReservationSpec, nodes: &[String]) -> String {
    format!(
        "{} from {} ms for {}{} ({})",
        nodes.join(","),
        spec.start_ms,
        gpusched_wire::duration::format_duration(spec.duration_s),
        if spec.maintenance {
            ", maintenance"
        } else {
            ""
        },
        for_words(spec)
    )
}
