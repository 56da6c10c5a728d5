//! The calls on an array's tasks (`/api/jobs/{id}/tasks*`).

use gpusched_wire::{CancelResult, JobList, JobListQuery, JobView};
use hyper::Method;

use super::Client;

impl Client {
    /// The started tasks of array `id`, newest first.
    pub async fn tasks(&self, id: u64, q: &JobListQuery) -> anyhow::Result<JobList> {
        let qs = serde_urlencoded::to_string(q)?;
        self.json(
            Method::GET,
            &format!("/api/jobs/{id}/tasks?{qs}"),
            None::<&()>,
        )
        .await
    }

    /// Task `index` of array `id` (id 0 in the answer: not started yet).
    pub async fn task(&self, id: u64, index: u32) -> anyhow::Result<JobView> {
        let path = format!("/api/jobs/{id}/tasks/{index}");
        self.json(Method::GET, &path, None::<&()>).await
    }

    pub async fn cancel_task(&self, id: u64, index: u32) -> anyhow::Result<CancelResult> {
        let path = format!("/api/jobs/{id}/tasks/{index}/cancel");
        self.json(Method::POST, &path, None::<&()>).await
    }

    /// [`Client::resolve`], waiting (`logs -f`) for a task that has not started yet to
    /// start; None if it ended without starting (cancelled).
    pub async fn resolve_started(&self, r: gpusched_wire::JobRef) -> anyhow::Result<Option<u64>> {
        let Some(index) = r.task else {
            return Ok(Some(r.id));
        };
        loop {
            let v = self.task(r.id, index).await?;
            if v.id != 0 {
                return Ok(Some(v.id));
            }
            if v.state.is_terminal() {
                eprintln!("task {r} ended without starting ({})", v.reason);
                return Ok(None);
            }
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
    }

    /// The job id behind `r`: the id itself, or a started task's own id.
    pub async fn resolve(&self, r: gpusched_wire::JobRef) -> anyhow::Result<u64> {
        let Some(index) = r.task else {
            return Ok(r.id);
        };
        let v = self.task(r.id, index).await?;
        if v.id == 0 {
            anyhow::bail!(
                "task {r} has not started yet ({}), so it has no job of its own yet",
                v.reason
            );
        }
        Ok(v.id)
    }
}

/// Clap's parser of `12` and `12.7`.
pub fn job_ref(s: &str) -> Result<gpusched_wire::JobRef, String> {
    gpusched_wire::JobRef::parse(s)
}
