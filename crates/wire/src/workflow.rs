//! Workflows: a DAG of jobs and arrays submitted in one request, its edges named by the
//! steps' keys (`gpusched workflow submit FILE.toml`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::JobSubmit;

/// `POST /api/workflows`: every step is accepted, or none is (a cycle, an unknown key,
/// or any step's own refusal refuses the whole workflow).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowSubmit {
    #[schema(min_items = 1, max_items = 10000)]
    pub steps: Vec<WorkflowStep>,
}

/// One step: a job (or an array) and the steps it waits for, by key. The job's own
/// `after*` lists may also name jobs submitted before.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowStep {
    /// Unique within the workflow: 1-64 letters, digits, `_`, `-` or `.`.
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,64}$")]
    pub key: String,
    pub job: JobSubmit,
    /// Steps that must succeed first (every task, for an array).
    #[serde(default)]
    pub after: Vec<String>,
    /// Steps that must end first, however they end.
    #[serde(default)]
    pub after_any: Vec<String>,
    /// Steps that must end without succeeding first.
    #[serde(default)]
    pub after_notok: Vec<String>,
}

/// The id each step got, by key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WorkflowSubmitted {
    pub ids: BTreeMap<String, u64>,
}
