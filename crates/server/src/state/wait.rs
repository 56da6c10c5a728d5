//! `wait`: the job once it has ended.

use gpusched_wire::JobView;
use tokio::sync::oneshot;

use super::privacy;
use super::{Fail, State, Who};

/// `wait`: the job is over, or a receiver that fires when it is.
pub enum WaitResult {
    Done(Box<JobView>),
    Pending(oneshot::Receiver<JobView>),
}

impl State {
    /// `wait`: the ended job, or a receiver for its end. The caller redacts what fires
    /// on the receiver (`privacy::redact`).
    pub fn wait(&mut self, id: u64, who: &Who) -> Result<WaitResult, Fail> {
        let job = self.job_for(id, who)?;
        if job.view.state.is_terminal() {
            let mut v = self.view(job);
            privacy::redact(&mut v, who);
            return Ok(WaitResult::Done(Box::new(v)));
        }
        let (tx, rx) = oneshot::channel();
        let ws = self.waiters.entry(id).or_default();
        ws.retain(|w| !w.is_closed());
        ws.push(tx);
        Ok(WaitResult::Pending(rx))
    }
}
