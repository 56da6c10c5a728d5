//! The CLI's HTTP client for the user API. Errors say which server was tried and how to
//! start one; a refusal from the server is shown with the server's own message (which
//! says what to fix).

use std::time::Duration;

use anyhow::{anyhow, Context};
use gpusched_wire::{
    ApiError, BatchSubmit, CancelResult, JobList, JobListQuery, JobSubmit, JobView, NodeList,
    Submitted,
};
use serde::de::DeserializeOwned;

/// Where the CLI looks for the server: `--server`, else `$GPUSCHED_SERVER`, else the
/// default local address.
pub fn server_url(flag: Option<String>) -> String {
    flag.or_else(|| std::env::var("GPUSCHED_SERVER").ok())
        .unwrap_or_else(|| format!("http://127.0.0.1:{}", gpusched_wire::DEFAULT_PORT))
}

pub struct Client {
    base: String,
    http: reqwest::Client,
}

impl Client {
    pub fn new(server: Option<String>) -> anyhow::Result<Self> {
        let base = server_url(server).trim_end_matches('/').to_string();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(330))
            .build()
            .context("cannot build the HTTP client")?;
        Ok(Client { base, http })
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> anyhow::Result<reqwest::Response> {
        let resp = req.send().await.map_err(|e| {
            anyhow!(
                "cannot reach the gpusched server at {} ({}); start one with `gpusched up`, \
                 or point --server / GPUSCHED_SERVER at it",
                self.base,
                root_cause(&e)
            )
        })?;
        if resp.status().is_success() {
            return Ok(resp);
        }
        let status = resp.status();
        let body = resp.bytes().await.unwrap_or_default();
        let msg = serde_json::from_slice::<ApiError>(&body)
            .map(|e| e.error)
            .unwrap_or_else(|_| String::from_utf8_lossy(&body).into_owned());
        Err(anyhow!("{msg} (HTTP {})", status.as_u16()))
    }

    async fn json<T: DeserializeOwned>(&self, req: reqwest::RequestBuilder) -> anyhow::Result<T> {
        let resp = self.send(req).await?;
        resp.json::<T>().await.with_context(|| {
            format!(
                "the server at {} sent an answer this CLI cannot read; are both the same version?",
                self.base
            )
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn submit(&self, jobs: Vec<JobSubmit>) -> anyhow::Result<Submitted> {
        let req = if jobs.len() == 1 {
            self.http.post(self.url("/api/jobs")).json(&jobs[0])
        } else {
            self.http
                .post(self.url("/api/jobs/batch"))
                .json(&BatchSubmit { jobs })
        };
        self.json(req).await
    }

    pub async fn list(&self, q: &JobListQuery) -> anyhow::Result<JobList> {
        self.json(self.http.get(self.url("/api/jobs")).query(q))
            .await
    }

    pub async fn get(&self, id: u64) -> anyhow::Result<JobView> {
        self.json(self.http.get(self.url(&format!("/api/jobs/{id}"))))
            .await
    }

    pub async fn cancel(&self, id: u64) -> anyhow::Result<CancelResult> {
        self.json(self.http.post(self.url(&format!("/api/jobs/{id}/cancel"))))
            .await
    }

    pub async fn wait(&self, id: u64, timeout_s: u64) -> anyhow::Result<JobView> {
        let url = self.url(&format!("/api/jobs/{id}/wait?timeout_s={timeout_s}"));
        self.json(self.http.get(url)).await
    }

    /// Log bytes from `offset`, and the job's state.
    pub async fn logs(
        &self,
        id: u64,
        stream: &str,
        offset: u64,
    ) -> anyhow::Result<(Vec<u8>, String)> {
        let url = self.url(&format!(
            "/api/jobs/{id}/logs?stream={stream}&offset={offset}"
        ));
        let resp = self.send(self.http.get(url)).await?;
        let state = resp
            .headers()
            .get("x-gpusched-job-state")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = resp.bytes().await.context("the log transfer broke off")?;
        Ok((body.to_vec(), state))
    }

    pub async fn nodes(&self) -> anyhow::Result<NodeList> {
        self.json(self.http.get(self.url("/api/nodes"))).await
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
