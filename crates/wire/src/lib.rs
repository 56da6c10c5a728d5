//! The types that cross the wire: the user API (jobs, nodes, errors) and the agent
//! protocol. Plain serde structs with their OpenAPI schemas, and the parsers of what users
//! write into them (durations, sizes, the TOML job and service files); no I/O.
//!
//! Unknown fields are refused everywhere a client writes (`deny_unknown_fields`), so a
//! misspelt option is an error instead of a silently ignored wish.

pub mod account;
pub mod agent;
pub mod array;
pub mod auth;
pub mod compact;
pub mod contain;
pub mod duration;
pub mod export;
#[doc(hidden)]
pub mod fuzz_entry;
pub mod gang;
pub mod history;
pub mod hostlist;
pub mod image;
pub mod job;
pub mod jobfile;
pub mod node;
pub mod reservation;
pub mod resource;
pub mod servers;
pub mod service;
pub mod servicefile;
pub mod slice;
pub mod step;
pub mod telemetry;
pub mod text;
pub mod usage;
pub mod workflow;

pub use account::{AccountList, AccountUserView, AccountView};
pub use agent::{
    AttemptRef, Desired, Launch, Outcome, PollQuery, PreemptOrder, QueuedKnown, QueuedLaunch,
    Register, Registered, Report, ReportAck, RunEvent, RunEventKind,
};
pub use array::{ArrayCounts, ArrayError, ArraySpec, ArrayTask, JobRef};
pub use auth::{Role, TokenCreate, TokenCreated, TokenList, TokenView, WhoAmI};
pub use duration::{parse_duration, parse_duration_us};
pub use gang::{DistHost, DistLaunch, GpuLink, JobPart, LinkKind, NodeLocation, PartState};
pub use history::{
    AuditAction, AuditEntry, AuditList, AuditQuery, JobEvent, JobEventKind, JobEvents,
};
pub use job::{
    BatchSubmit, CancelMany, CancelManyResult, CancelOutcome, CancelResult, DeadlineStatus,
    JobDeadline, JobElastic, JobList, JobListQuery, JobRules, JobSpeed, JobState, JobSubmit,
    JobUpdate, JobView, ModelSpeed, QueueList, QueueView, Submitted,
};
pub use jobfile::JobFile;
pub use node::{GpuInfo, GpuSource, GpuView, NodeList, NodeState, NodeView};
pub use service::{
    Autoscale, Batching, Endpoint, EndpointSet, GatewaySync, ModelConfig, Probe, ReplicaOf,
    ReplicaPhase, ReplicaView, Rollout, ServeLaunch, ServeProtocol, ServiceEndpoints, ServiceList,
    ServiceLoad, ServiceSpec, ServiceView,
};
pub use servicefile::{parse as parse_service_file, Replicas};
pub use slice::{
    milli_text, parse_mib, MigAt, MigInfo, MigInstanceInfo, SliceAsk, SliceAt, SliceView,
    MIB_PATTERN,
};
pub use telemetry::{Drain, DrainRequest, GpuHealth, GpuSample, NodeTelemetry, XidEvent};
pub use text::{agree, command_line, count, count_as, terminal_safe};
pub use usage::{UsageQuery, UsageReport, UsageRow};
pub use workflow::{WorkflowStep, WorkflowSubmit, WorkflowSubmitted};

/// The body of every error response: what went wrong and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ApiError {
    pub error: String,
}

/// The default address of the server's HTTP listener.
pub const DEFAULT_PORT: u16 = 6450;
