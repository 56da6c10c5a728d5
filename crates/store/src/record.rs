//! What is stored per job and per node.

use std::collections::BTreeMap;

use gpusched_wire::{JobView, Register};
use serde::{Deserialize, Serialize};

/// A job as the server keeps it: what the API shows, plus what only the agent needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub view: JobView,
    pub env: BTreeMap<String, String>,
    pub client_token: Option<String>,
    /// Seconds between SIGTERM and SIGKILL when the job is stopped.
    pub grace_s: u64,
}

/// A node as last registered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    pub register: Register,
}
