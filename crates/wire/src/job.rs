//! Jobs as users submit and see them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// One job to run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JobSubmit {
    /// A name to recognise the job by; defaults to the program's file name. Not empty,
    /// without control characters (C0, DEL, C1, bidirectional marks and overrides,
    /// line separators): it is printed on terminals.
    #[serde(default)]
    #[schema(
        min_length = 1,
        max_length = 256,
        pattern = r"^[^\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]*$"
    )]
    pub name: Option<String>,
    /// Program and arguments, run directly (no shell). Use `["sh", "-c", "..."]` for a
    /// shell line. The program (first item) must not be empty; no item may hold a NUL.
    #[schema(min_items = 1, max_items = 4096)]
    pub command: Vec<String>,
    /// Whole GPUs, all on one node (default 1 unless a share or MIG profile is asked);
    /// 0 for a job without GPUs (a CPU-only step of a pipeline: it sees no GPU and runs
    /// on any node with room for its `cpus`, `mem_mib` and `resources`).
    /// At most one of `gpus`, `gpu_share`, `gpu_mem` and `mig` may be given.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 1024)]
    pub gpus: Option<u32>,
    /// A share of one GPU's compute, above 0 and at most 1 (e.g. 0.25), in thousandths
    /// (rounded; anything above 0 gets at least 0.001; 1 is one whole GPU).
    #[serde(default)]
    #[schema(exclusive_minimum = 0, maximum = 1)]
    pub gpu_share: Option<f64>,
    /// A share of one GPU by memory: MiB, or a size such as `20GiB` (see `parse_mib`).
    #[serde(default)]
    #[schema(
        pattern = r"^(?!0+(\.0+)?([KkMmGgTt]([Ii]?[Bb])?)?$)[0-9]{1,8}(\.[0-9]{1,6})?([KkMmGgTt]([Ii]?[Bb])?)?$"
    )]
    pub gpu_mem: Option<String>,
    /// One MIG instance of this profile, e.g. `1g.10gb` or `3g.40gb`.
    #[serde(default)]
    pub mig: Option<String>,
    /// Accepted GPU model prefix, e.g. `A100` or `H100-80GB`.
    #[serde(default)]
    pub gpu_model: Option<String>,
    /// CPUs (may be fractional) and memory (MiB) the job needs: its node holds them for
    /// it while it runs (a node whose CPUs or memory are taken starts no job that needs
    /// them), and `drf` weighs them in its dominant share. Where the node's agent has
    /// cgroups they are also the job's CPU quota and memory limit (`NodeView`'s
    /// containment says what each node enforces). Absent: nothing reserved.
    #[serde(default)]
    #[schema(exclusive_minimum = 0, maximum = 100000)]
    pub cpus: Option<f64>,
    #[serde(default)]
    #[schema(minimum = 1, maximum = 68719476736_u64)]
    pub mem_mib: Option<u64>,
    /// Generic counted resources the job needs on its node, by name (`{"fpga": 1}`):
    /// it waits until a node that declares them (`gpusched agent --resource fpga=2`)
    /// has them free, and gets `GPUSCHED_RESOURCE_FPGA=1` in its environment. Names are
    /// 1-32 lowercase letters, digits and `_`, starting with a letter; at most 16.
    #[serde(default)]
    pub resources: BTreeMap<String, u64>,
    /// Working directory on the node, an absolute path; the CLI sends the submitter's
    /// current directory, and the default is `/`.
    #[serde(default)]
    #[schema(pattern = r"^/[^\x00]*$")]
    pub cwd: Option<String>,
    /// Extra environment variables for the job (added to the agent's environment).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Run-time limit in seconds; the job is stopped (SIGTERM, grace, SIGKILL) and ends
    /// `timed_out` when it passes it. At most 366 days.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 31622400)]
    pub walltime_s: Option<u64>,
    /// Larger runs earlier under the `priority` policy (default: the queue's default).
    #[serde(default)]
    pub priority: Option<i32>,
    /// The queue (default: `default`, or the first queue the user may use).
    #[serde(default)]
    pub queue: Option<String>,
    /// How many times a job whose node was lost is put back in the queue.
    #[serde(default)]
    #[schema(maximum = 100)]
    pub max_retries: Option<u32>,
    /// Whose job it is (and the Unix user it runs as); default: the caller. Only an
    /// admin may name another user.
    #[serde(default)]
    #[schema(pattern = r"^[A-Za-z0-9._@-]{1,64}$")]
    pub user: Option<String>,
    /// Start only after these jobs have succeeded (Slurm's `afterok`); if one of them
    /// fails, is cancelled or times out, this job fails too.
    #[serde(default)]
    pub after: Vec<u64>,
    /// Start only after these jobs have ended, however they ended (Slurm's `afterany`).
    #[serde(default)]
    pub after_any: Vec<u64>,
    /// Start only after these jobs have ended without succeeding (Slurm's `afternotok`:
    /// failed, cancelled or timed out); if one of them succeeds, this job is cancelled.
    #[serde(default)]
    pub after_notok: Vec<u64>,
    /// Submit held: the job waits, whatever its turn, until `release` (Slurm's `-H`).
    #[serde(default)]
    pub hold: bool,
    /// Make this one submission an array of tasks of the same shape, each with its index
    /// in `GPUSCHED_ARRAY_INDEX`; tasks become jobs of their own as they start.
    #[serde(default)]
    pub array: Option<crate::array::ArraySpec>,
    /// A client-chosen key that makes a retried submission idempotent: a second
    /// submission with the same key returns the first job instead of a new one.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 128)]
    pub client_token: Option<String>,
    /// Run on this many nodes at once (a gang), `gpus_per_node` whole GPUs on each; all
    /// parts start together or none does. Default 1.
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1024)]
    pub nodes: Option<u32>,
    /// Whole GPUs on each node of a gang (with `nodes`); `gpus` is then their product.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 1024)]
    pub gpus_per_node: Option<u32>,
    /// Let the scheduler split `gpus` into equal parts on as few nodes as it can (16 may
    /// run as 2 x 8 or 4 x 4); without it, `gpus` must fit one node.
    #[serde(default)]
    pub split: bool,
    /// Processes the agent starts on each node, each with its own rank and GPUs (must
    /// divide the GPUs per node); default one process per node (e.g. `torchrun`).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 1024)]
    pub tasks_per_node: Option<u32>,
    /// A gang's nodes may have different GPU models (default: all the same model).
    #[serde(default)]
    pub mixed_models: bool,
    /// Run the command in this container image (`docker.io/library/python:3.12`, a
    /// SIF path for apptainer nodes), as the submitter, with its working directory,
    /// checkpoint directory and GPUs; only on nodes whose agent runs images
    /// (docs/containers.md). No whitespace or control characters; absent: a host
    /// process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        min_length = 1,
        max_length = 512,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f-][^\s\x00-\x1f\x7f-\x9f]*$"
    )]
    pub image: Option<String>,
    /// The most processes and threads the job may have at once on each node (cgroup
    /// `pids.max`; default: the node's). At least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub pids_max: Option<u64>,
    /// Partitions the job may run in, in order of preference: it runs on the nodes of
    /// the first that can hold it, never outside them (docs/partitions.md). Absent: the
    /// queue's default partition, else any node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 16)]
    pub partitions: Vec<String>,
    /// Node features the job's nodes must have, Slurm's syntax: `a100&nvlink`,
    /// `a100|h100`, `!slow`, parentheses (docs/partitions.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 1024)]
    pub constraint: Option<String>,
    /// Run only on these nodes (Slurm's `--nodelist`: a gang uses nodes of this list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 4096)]
    pub nodelist: Vec<String>,
    /// Never run on these nodes (Slurm's `--exclude`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 4096)]
    pub exclude: Vec<String>,
    /// Run inside this advance reservation, only in its window (docs/reservations.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64)]
    pub reservation: Option<String>,
    /// The account to charge (docs/accounts.md): one of the caller's; default: the
    /// caller's default account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 64)]
    pub account: Option<String>,
    /// An interactive allocation (`gpusched alloc`): the agent holds the GPUs with no
    /// process of the job's own, steps run in it (`gpusched run --jobid`), and its
    /// idle GPUs are watched (docs/interactive.md). `command` is then a label only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interactive: bool,
    /// How much faster than a V100 it runs on GPU models: `H100=2.8,A100=1.6` (model
    /// prefixes as `gpu_model`; docs/heterogeneous.md). Where several models are free
    /// it goes to the one where it gains most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 512)]
    pub speedup: Option<String>,
    /// When it must be finished, Unix milliseconds (`--deadline`; docs/deadlines.md): the
    /// answer to the submission says whether its estimate meets it, the `edf` policies
    /// order by it, and a queue with `refuse_late_deadlines` refuses one it cannot meet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    /// Makes it elastic (`--gpus MIN-MAX`; docs/elastic.md): it runs on `gpus` to
    /// `gpus_max` whole GPUs of one node. It waits for `gpus`, starts on more where its
    /// node has them idle, gives them back when a waiting job needs them and grows into
    /// GPUs that free up, each resize through the checkpoint contract (it restarts with
    /// the new `CUDA_VISIBLE_DEVICES`). At least `gpus`; not with a gang, a GPU share or
    /// MIG slice, or an interactive allocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1024)]
    pub gpus_max: Option<u32>,
    /// An elastic job's scaling: the share of its step that does not speed up with more
    /// GPUs (Amdahl's serial fraction), in [0, 1); default 0.05. Where idle GPUs go
    /// first, and whether a grow pays for its restart, follow from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, exclusive_maximum = 1.0)]
    pub scaling_serial: Option<f64>,
}

fn one() -> u32 {
    1
}

fn default_queue() -> String {
    "default".to_string()
}

/// Where a job may run, as accepted (see [`JobSubmit`]'s fields of the same names).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct JobRules {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<String>,
    /// The constraint in its canonical form (`a100&(nvlink|ib)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodelist: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<String>,
}

impl JobRules {
    pub fn is_empty(&self) -> bool {
        self == &JobRules::default()
    }

    /// "partition gpu, constraint ib&nvlink, nodes n1,n2, not n3, reservation r":
    /// what holds a job, for wait reasons and `show`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if !self.partitions.is_empty() {
            let word = if self.partitions.len() == 1 {
                "partition"
            } else {
                "partitions"
            };
            parts.push(format!("{word} {}", self.partitions.join(",")));
        }
        if let Some(c) = &self.constraint {
            parts.push(format!("constraint {c}"));
        }
        if !self.nodelist.is_empty() {
            parts.push(format!("nodes {}", self.nodelist.join(",")));
        }
        if !self.exclude.is_empty() {
            parts.push(format!("not {}", self.exclude.join(",")));
        }
        if let Some(r) = &self.reservation {
            parts.push(format!("reservation {r}"));
        }
        parts.join(", ")
    }
}

/// A queue as `GET /api/queues` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct QueueView {
    pub name: String,
    /// GPUs guaranteed.
    pub quota: u32,
    /// The most GPUs it may hold (quota plus borrowing); none: no limit.
    pub max: Option<u32>,
    pub weight: f64,
    pub users: Vec<String>,
    pub groups: Vec<String>,
    pub default_priority: i32,
    pub max_priority: Option<i32>,
    /// The lowest base priority of each tier above the first, ascending (`[100, 1000]`:
    /// below 100, 100 to 999, 1000 and up); empty: one tier (docs/preemption.md).
    #[serde(default)]
    pub priority_tiers: Vec<i32>,
    /// A waiting job may preempt running jobs of lower tiers of this queue.
    #[serde(default)]
    pub preempt_lower_priority: bool,
    /// GPUs its starting and running jobs hold now.
    pub used_gpus: u32,
    pub running: u32,
    pub pending: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct QueueList {
    pub queues: Vec<QueueView>,
}

/// Many jobs in one call, accepted (or refused) together in one transaction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchSubmit {
    #[schema(min_items = 1, max_items = 100000)]
    pub jobs: Vec<JobSubmit>,
}

/// The ids given to submitted jobs, in submission order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Submitted {
    pub ids: Vec<u64>,
    /// For a job submitted with a deadline (the first of a batch that has one): whether
    /// its estimated finish meets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<JobDeadline>,
}

/// Where a job is in its life.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Pending,
    Starting,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    TimedOut,
}

impl JobState {
    pub const ALL: [JobState; 7] = [
        JobState::Pending,
        JobState::Starting,
        JobState::Running,
        JobState::Succeeded,
        JobState::Failed,
        JobState::Cancelled,
        JobState::TimedOut,
    ];

    pub fn name(self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Starting => "starting",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
            JobState::TimedOut => "timed_out",
        }
    }

    pub fn parse(s: &str) -> Option<JobState> {
        JobState::ALL.into_iter().find(|st| st.name() == s)
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed | JobState::Cancelled | JobState::TimedOut
        )
    }
}

/// A job as the API shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobView {
    pub id: u64,
    pub name: String,
    pub user: String,
    pub state: JobState,
    /// Why the job is in this state: why it waits, how it ended.
    pub reason: String,
    /// The program and its arguments; empty in another user's job (a command line may
    /// hold secrets: only its owner and admins see it).
    pub command: Vec<String>,
    pub cwd: String,
    /// Whole GPUs (0 for a job on part of one GPU).
    pub gpus: u32,
    pub gpu_model: Option<String>,
    /// Part of one GPU instead of whole GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<Box<crate::slice::SliceAsk>>,
    /// Where its slice is (or last was), while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_at: Option<Box<crate::slice::SliceAt>>,
    #[serde(default = "default_queue")]
    pub queue: String,
    /// The account it is charged to (docs/accounts.md); absent: the root (no accounts,
    /// or a user in none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// CPUs in thousandths and memory in MiB asked for (0: not said).
    #[serde(default)]
    pub cpu_milli: u64,
    #[serde(default)]
    pub mem_mib: u64,
    /// Generic counted resources asked for (`fpga: 1`), held on its node while it runs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, u64>,
    pub priority: i32,
    pub walltime_s: Option<u64>,
    /// The node it runs (or last ran) on.
    pub node: Option<String>,
    /// The node-local GPU indices it holds (or last held).
    pub gpu_indices: Vec<u32>,
    /// 1 for the first run; a job requeued after its node was lost runs again with the
    /// next attempt number.
    pub attempt: u32,
    pub max_retries: u32,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// Unix times in milliseconds.
    pub submit_ms: u64,
    pub start_ms: Option<u64>,
    pub end_ms: Option<u64>,
    /// A cancel was asked for and the node is stopping the job.
    pub cancel_requested: bool,
    /// Jobs that must succeed before this one starts.
    #[serde(default)]
    pub after: Vec<u64>,
    /// Jobs that must end (however they end) before this one starts.
    #[serde(default)]
    pub after_any: Vec<u64>,
    /// Jobs that must end without succeeding before this one starts.
    #[serde(default)]
    pub after_notok: Vec<u64>,
    /// Held: it waits until released, whatever its turn.
    #[serde(default)]
    pub held: bool,
    /// This job is an array: the indices of its tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<crate::array::ArraySpec>,
    /// For an array: how many of its tasks are in each state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_counts: Option<Box<crate::array::ArrayCounts>>,
    /// This job is one task of an array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_task: Option<crate::array::ArrayTask>,
    /// For a pending job: when it should start (Unix ms) if running jobs end at their
    /// walltimes; absent when that depends on a job without a walltime.
    #[serde(default)]
    pub est_start_ms: Option<u64>,
    /// Times it was preempted (each preemption also took an attempt number).
    #[serde(default)]
    pub preemptions: u32,
    /// A preemption was asked for and the node is stopping the job.
    #[serde(default)]
    pub preempt_requested: bool,
    /// When the current attempt last saved a checkpoint (Unix ms), as its node saw it.
    #[serde(default)]
    pub last_checkpoint_ms: Option<u64>,
    /// The names of the extra environment variables it was given; never their values.
    #[serde(default)]
    pub env_keys: Vec<String>,
    /// Nodes it runs on at once (1 unless it is a gang; for `split`, 0 until placed).
    #[serde(default = "one")]
    pub nodes: u32,
    /// Whole GPUs on each node (`gpus` / `nodes`; for `split`, 0 until placed).
    #[serde(default)]
    pub gpus_per_node: u32,
    /// The scheduler chose (or will choose) how to split `gpus` over nodes.
    #[serde(default)]
    pub split: bool,
    #[serde(default)]
    pub tasks_per_node: Option<u32>,
    #[serde(default)]
    pub mixed_models: bool,
    /// Every part of the current (or last) attempt, by `NODE_RANK`; empty while pending.
    #[serde(default)]
    pub parts: Vec<crate::gang::JobPart>,
    /// `MASTER_PORT` of the current (or last) attempt, once known.
    #[serde(default)]
    pub master_port: Option<u16>,
    /// Its steps (`gpusched run --jobid`), in order; only in the answer for one job
    /// (`GET /api/jobs/{id}`), absent in lists and for a job without steps. Boxed: the
    /// server keeps a view per live job, and most have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Box<Vec<crate::step::StepView>>>,
    /// Energy its GPUs drew while it held them, Joules, from NVML's energy counters
    /// (see docs/energy.md); `None` when no sample ever covered it.
    #[serde(default)]
    pub energy_j: Option<u64>,
    /// The container image its parts run in (`submit --image`); `None`: host processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The most processes (and threads) each part may have at once (`None`: the node's
    /// default). Enforced where the node has a cgroup (`containment` of its node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids_max: Option<u64>,
    /// Where it may run: its partitions (the default partition's if it named none), its
    /// constraint, node lists and reservation; `None`: anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Box<JobRules>>,
    /// An interactive allocation (`gpusched alloc`): its agents hold its GPUs with no
    /// process of its own; `command` is a label (docs/interactive-alloc.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interactive: bool,
    /// What the current (or last) attempt used, as its nodes' cgroups measured it when
    /// its parts ended: CPU time and pressure summed over its parts, the peak memory of
    /// its largest part. `None` while it runs, and for an attempt whose agents measured
    /// nothing (no cgroup, or an agent before protocol 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Box<crate::contain::Usage>>,
    /// This job is a replica of a service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<Box<crate::service::ReplicaOf>>,
    /// An interactive allocation's GPU time held idle (every sample of a GPU below its
    /// queue's idle threshold counts the time since the GPU's previous sample), in
    /// GPU-seconds; `None` for other jobs and before the first sample. Stored with the
    /// job's row as it changes state (docs/interactive-alloc.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_gpu_s: Option<u32>,
    /// The steps that ended in it and their GPU time; absent while none has. Boxed, as
    /// `steps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_use: Option<Box<crate::step::StepUse>>,
    /// How fast it runs on each GPU model: its declared speed-ups, and (in the answer for
    /// one job) the factor on each model of the cluster and where it comes from. Boxed:
    /// most jobs declare none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<Box<JobSpeed>>,
    /// Its deadline and how it stands against it (docs/deadlines.md). Boxed: most jobs
    /// have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<Box<JobDeadline>>,
    /// For an elastic job: its range and scaling (docs/elastic.md); `gpus` is then its
    /// minimum and its placement what it holds now. Boxed: most jobs are rigid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elastic: Option<Box<JobElastic>>,
}

/// An elastic job's range and scaling (`JobView::elastic`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobElastic {
    /// The most whole GPUs it runs on (`gpus` is the least).
    pub gpus_max: u32,
    /// Amdahl's serial fraction it declared, else the default (0.05).
    pub scaling_serial: f64,
}

/// A job's deadline and how it stands (`JobView::deadline`, `Submitted::deadline`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct JobDeadline {
    /// When it must be finished, Unix milliseconds.
    pub at_ms: u64,
    /// `on_track` (its estimated finish is at or before the deadline), `at_risk` (after
    /// it, or no estimate to say), `met` (it ended by the deadline) or `missed` (it ended
    /// after it, or is still unfinished past it).
    pub status: DeadlineStatus,
    /// When it is expected to finish (waiting or running jobs with an estimate: the
    /// estimated start plus the walltime or the predicted run time), or when it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_ms: Option<u64>,
    /// Seconds from that finish to the deadline: negative when late.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack_s: Option<i64>,
}

/// How a job stands against its deadline.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeadlineStatus {
    OnTrack,
    AtRisk,
    Met,
    Missed,
}

impl DeadlineStatus {
    pub fn name(self) -> &'static str {
        match self {
            DeadlineStatus::OnTrack => "on track",
            DeadlineStatus::AtRisk => "at risk",
            DeadlineStatus::Met => "met",
            DeadlineStatus::Missed => "missed",
        }
    }
}

/// A job's speed on GPU models (`JobView::speed`; docs/heterogeneous.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobSpeed {
    /// What it declared (`--speedup`), in canonical form (`A100=1.6,H100=2.8`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
    /// Its factor against a V100 on each GPU model of the cluster, fastest first: only
    /// in `GET /api/jobs/{id}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on: Vec<ModelSpeed>,
}

/// How fast a job runs on one GPU model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ModelSpeed {
    pub model: String,
    /// Times a V100's speed.
    pub factor: f64,
    /// `declared`, `learned` (from jobs of its user and name that ran on both),
    /// `default` (the table of docs/heterogeneous.md) or `unknown` (taken as 1).
    pub source: String,
}

/// `GET /api/jobs` filters. Jobs come newest first, a page at a time: pass a page's
/// `next_before` as `before` to get the next (older) page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, IntoParams, ToSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct JobListQuery {
    /// Comma-separated states (`pending,running`), or `active` for every live state, or
    /// `all` (the default).
    #[serde(default)]
    #[param(
        pattern = r"^(|all|active|(pending|starting|running|succeeded|failed|cancelled|timed_out)(,(pending|starting|running|succeeded|failed|cancelled|timed_out))*)$"
    )]
    pub state: Option<String>,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub node: Option<String>,
    /// Only jobs with an id above this.
    #[serde(default)]
    pub after: Option<u64>,
    /// Only jobs with an id below this: the cursor, from the previous page's
    /// `next_before`.
    #[serde(default)]
    pub before: Option<u64>,
    /// At most this many jobs (default 1000, at most 100000).
    #[serde(default)]
    #[param(minimum = 1, maximum = 100000)]
    pub limit: Option<usize>,
    /// Also list the started tasks of arrays (by default an array is one item, with its
    /// counts; asking by `node` always lists the tasks that run there).
    #[serde(default)]
    pub tasks: Option<bool>,
}

/// One page of jobs, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct JobList {
    pub jobs: Vec<JobView>,
    /// More (older) jobs match: ask again with `before` set to this. Null on the last page.
    #[serde(default)]
    pub next_before: Option<u64>,
}

/// `PATCH /api/jobs/{id}`: change a pending job (Slurm's `scontrol update`); fields left
/// out keep their values. A job that has started is refused (409).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JobUpdate {
    #[serde(default)]
    pub priority: Option<i32>,
    #[serde(default)]
    #[schema(minimum = 1, maximum = 31622400)]
    pub walltime_s: Option<u64>,
    #[serde(default)]
    pub queue: Option<String>,
}

/// What a cancel did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CancelResult {
    pub id: u64,
    /// `cancelled` (it never ran or is gone), `cancelling` (its node is stopping it),
    /// or `already_ended`.
    pub result: String,
    pub state: JobState,
}

/// `POST /api/jobs/cancel`: several jobs cancelled in one request and one transaction,
/// so GPUs freed by one of them never go to another before its cancel arrives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelMany {
    /// The jobs to cancel (at least one, at most 100000).
    #[schema(min_items = 1, max_items = 100000)]
    pub ids: Vec<u64>,
}

/// What a cancel of several jobs did: one entry per id, in the order given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CancelManyResult {
    pub results: Vec<CancelOutcome>,
}

/// One id of a [`CancelMany`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CancelOutcome {
    pub id: u64,
    /// `cancelled`, `cancelling`, `already_ended` (as [`CancelResult`]), or `refused`:
    /// this id was not cancelled, `error` says why; the other ids still were.
    pub result: String,
    /// The job's state after the cancel; absent when refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<JobState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document states the memory sizes `parse_mib` reads.
    #[test]
    fn gpu_mem_is_documented_with_the_parsers_pattern() {
        let schema = serde_json::to_value(<JobSubmit as utoipa::PartialSchema>::schema()).unwrap();
        assert_eq!(
            schema["properties"]["gpu_mem"]["pattern"],
            crate::slice::MIB_PATTERN
        );
    }
}
