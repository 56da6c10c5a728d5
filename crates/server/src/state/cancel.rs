//! Cancelling several jobs at once (`gpusched cancel A B C`).

use gpusched_wire::{CancelManyResult, CancelOutcome};

use super::{Fail, State, Who};

impl State {
    /// Cancels every id in this one round of the state task, so the scheduling pass that
    /// follows sees them all gone: GPUs freed by a running one cannot start a pending one
    /// of the same list. An id that cannot be cancelled (unknown, someone else's) is
    /// answered `refused` with the reason; the others are cancelled all the same.
    pub fn cancel_many(&mut self, ids: &[u64], who: &Who) -> Result<CancelManyResult, Fail> {
        if ids.is_empty() {
            return Err(Fail::BadRequest(
                "`ids` is empty: give at least one job id to cancel".into(),
            ));
        }
        let max = self.cfg.limits.max_batch;
        if ids.len() > max {
            return Err(Fail::BadRequest(format!(
                "{} ids in one cancel; this server takes at most {max} (--max-batch): split it",
                ids.len()
            )));
        }
        let results = ids
            .iter()
            .map(|&id| match self.cancel(id, who) {
                Ok(r) => CancelOutcome {
                    id,
                    result: r.result,
                    state: Some(r.state),
                    error: None,
                },
                Err(f) => CancelOutcome {
                    id,
                    result: "refused".into(),
                    state: None,
                    error: Some(f.message().to_string()),
                },
            })
            .collect();
        Ok(CancelManyResult { results })
    }
}
