//! What the state records of its changes beyond the rows themselves: each job's
//! timeline (`JobEvent`s) and the audit log of admin actions. A round collects them here
//! as it makes its changes; the actor writes them in the round's one transaction (so a
//! failed commit loses them with the change), and reads them back from the store on
//! request: nothing of the history is kept in memory past its round.

use gpusched_store::AUDIT_PAGE_MAX;
use gpusched_wire::history::{AuditAction, AuditEntry, AuditQuery, JobEvent, JobEventKind};
use gpusched_wire::JobView;

use super::{Fail, State, Who};

/// Events kept per job: its first (`submitted`) and the newest others.
pub const EVENTS_KEPT: u32 = 256;

/// The history a round made, for its commit.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Journal {
    /// By job, in the order they happened.
    pub events: Vec<(u64, JobEvent)>,
    pub audit: Vec<AuditEntry>,
}

impl Journal {
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.audit.is_empty()
    }
}

/// Where a job is: its parts' nodes in rank order, or its one node.
fn nodes_of(v: &JobView) -> Vec<String> {
    if v.parts.is_empty() {
        v.node.iter().cloned().collect()
    } else {
        v.parts.iter().map(|p| p.node.clone()).collect()
    }
}

/// Where a placement put a job, in words: each part's GPUs, or its slice.
pub(super) fn placement(v: &JobView) -> String {
    let node = v.node.as_deref().unwrap_or("?");
    if let Some(at) = &v.slice_at {
        return match &at.mig {
            Some(m) => format!("{node}: MIG {} on GPU {}", m.profile, at.gpu),
            None => format!("{node}: {}/1000 of GPU {}", at.milli, at.gpu),
        };
    }
    let gpus = |g: &[u32]| {
        if g.is_empty() {
            "no GPU".to_string()
        } else {
            let list: Vec<String> = g.iter().map(u32::to_string).collect();
            format!("GPU {}", list.join(","))
        }
    };
    if v.parts.len() > 1 {
        v.parts
            .iter()
            .map(|p| format!("{}: {}", p.node, gpus(&p.gpu_indices)))
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        format!("{node}: {}", gpus(&v.gpu_indices))
    }
}

impl State {
    /// Records a step of job `id` (`at_ms`: the node's clock for what a node saw).
    pub(super) fn note_at(&mut self, id: u64, kind: JobEventKind, at_ms: u64, detail: String) {
        let Some(job) = self.jobs.get(&id) else {
            return;
        };
        let v = &job.view;
        let submitted = kind == JobEventKind::Submitted;
        // A job never placed (nor queued behind a running job, whose launch went out)
        // has no attempt yet: what happens to it while it waits (held, released,
        // updated, cancelled) belongs to none, as its `submitted` does. Any earlier run
        // left it at attempt 2 or more.
        let unplaced =
            v.attempt <= 1 && v.node.is_none() && v.parts.is_empty() && job.behind.is_none();
        let event = JobEvent {
            at_ms,
            kind,
            attempt: if submitted || unplaced { 0 } else { v.attempt },
            nodes: if submitted { Vec::new() } else { nodes_of(v) },
            detail,
        };
        self.journal.events.push((id, event));
    }

    /// The words of job `id`'s `ended` event of this round, rewritten (a gang's end is
    /// worded once it is known which part decided).
    pub(super) fn reword_end(&mut self, id: u64, detail: String) {
        let last = self.journal.events.iter_mut().rev().find(|(j, _)| *j == id);
        if let Some((_, e)) = last.filter(|(_, e)| e.kind == JobEventKind::Ended) {
            e.detail = detail;
        }
    }

    /// Records a step of job `id` at the round's time.
    pub(super) fn note(&mut self, id: u64, kind: JobEventKind, detail: String) {
        self.note_at(id, kind, self.now.ms, detail);
    }

    /// Records an admin action at the round's time.
    pub(super) fn audit(
        &mut self,
        actor: &str,
        action: AuditAction,
        target: String,
        detail: String,
    ) {
        self.journal.audit.push(AuditEntry {
            id: 0, // the store numbers it
            at_ms: self.now.ms,
            actor: actor.to_string(),
            action,
            target,
            detail,
        });
    }

    /// May `who` read job `id`'s timeline: its owner or an admin, like its output (404
    /// for a job unknown, or hidden by `--private-jobs`; 403 for another user's).
    pub fn may_read_events(&self, id: u64, who: &Who) -> Result<(), Fail> {
        self.owned_job(id, who, "read its timeline").map(|_| ())
    }

    /// May `who` read the audit log with `q`: admins only, a page in range.
    pub fn may_read_audit(&self, q: &AuditQuery, who: &Who) -> Result<(), Fail> {
        if !who.admin {
            return Err(Fail::Forbidden(format!(
                "only an admin may read the audit log ({} is not one); ask an admin, or use \
                 an admin token",
                who.user
            )));
        }
        if q.limit.is_some_and(|l| l == 0 || l > AUDIT_PAGE_MAX) {
            return Err(Fail::BadRequest(format!(
                "`limit` must be between 1 and {AUDIT_PAGE_MAX}"
            )));
        }
        Ok(())
    }

    /// The history of this round, for the actor to write with its rows.
    pub fn take_journal(&mut self) -> Journal {
        std::mem::take(&mut self.journal)
    }
}
