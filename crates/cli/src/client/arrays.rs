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
