//! The agent protocol. The server keeps, per node, the *desired* set of job attempts
//! (start these, cancel those); the agent long-polls it and reconciles, and reports what
//! happened. Every message is idempotent: a launch the agent has seen before is not run
//! again, and a report about an attempt that is no longer current is acknowledged and
//! ignored. That is what makes crashes of either side safe.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::node::GpuInfo;

/// The agent protocol this build speaks. Every agent request carries it in
/// [`PROTOCOL_HEADER`]; a server accepts its own protocol and the one before
/// ([`MIN_AGENT_PROTOCOL`]), so servers can be upgraded before their agents, one release
/// apart, and refuses any other at registration with a 409 naming both versions.
///
/// - 1: the releases before leader election. No header (a request without one is of
///   protocol 1) and no epoch in [`Desired`].
/// - 2: [`Desired::epoch`] (an agent refuses desired state of an older epoch than it
///   has seen) and the header itself.
/// - 3: [`Desired::queued`]: attempts queued behind running ones, which the agent starts
///   by itself the moment those end. A server gives them only to agents of protocol 3
///   (an older agent would ignore the field, and its nodes would wait for nothing).
/// - 4: containment: [`Register::containment`], the limits and image of a [`Launch`]
///   (`cpu_milli`, `mem_mib`, `pids_max`, `image`), [`Outcome::OutOfMemory`] and the
///   [`Usage`](crate::contain::Usage) of an ended attempt. A server sends limits and
///   images only to agents of protocol 4 (an older agent refuses the fields and
///   enforced nothing anyway).
/// - 5: service replicas: [`Launch::serve`] (a port in `$PORT`, readiness and liveness
///   probes), [`RunEventKind::Listening`], [`RunEventKind::Ready`] and
///   [`Outcome::Unhealthy`]. A server places replicas only on agents of protocol 5.
/// - 6: job steps: [`Desired::steps`] ([`crate::step::StepLaunch`]) and the step
///   stream an agent opens for each (`GET /api/agent/steps/{job}/{step}`). A server
///   sends steps only to agents of protocol 6; a step on a node of an older agent is
///   refused, naming the node.
///
/// The compact messages (issue 39: a launch sent once, [`PollQuery::have`]; MessagePack,
/// [`MSGPACK`]) needed no new protocol: the server says it takes them
/// ([`Registered::compact`], which older agents ignore), an agent asks for them request
/// by request, and a server answers compactly only a request that asked.
///
/// Bump it (and keep the previous version's messages readable both ways) whenever a
/// message changes in a way the other side must know of: a new required field, a field
/// whose meaning changes, a new field in a type read with `deny_unknown_fields` by the
/// previous release ([`Launch`], [`PreemptOrder`], [`AttemptRef`], [`Outcome`]).
pub const AGENT_PROTOCOL: u32 = 6;

/// The first agent protocol whose agents hold interactive allocations ([`Launch::hold`]);
/// a server sends such a launch to no older agent (it would refuse the field, or run the
/// label as a program).
pub const HOLD_PROTOCOL: u32 = 6;

/// The oldest agent protocol a server of this build accepts.
pub const MIN_AGENT_PROTOCOL: u32 = AGENT_PROTOCOL - 1;

/// The request header naming the agent's protocol. A header, not a field of
/// [`Register`]: a server of the previous release ignores it (a new field would be
/// refused by its `deny_unknown_fields`, and would land in its stored node rows).
pub const PROTOCOL_HEADER: &str = "x-gpusched-agent-protocol";

/// The protocol of a request whose header is absent: agents before the header.
pub const PROTOCOL_WITHOUT_HEADER: u32 = 1;

/// Why a server speaking [`AGENT_PROTOCOL`] refuses an agent of protocol `agent` (None:
/// it accepts it). Worded for the agent's log and the operator.
pub fn protocol_refusal(node: &str, agent: u32, server_release: &str) -> Option<String> {
    if (MIN_AGENT_PROTOCOL..=AGENT_PROTOCOL).contains(&agent) {
        return None;
    }
    let ours = format!(
        "this server (gpusched {server_release}) speaks agent protocol {AGENT_PROTOCOL} and \
         accepts agents of protocols {MIN_AGENT_PROTOCOL} to {AGENT_PROTOCOL}"
    );
    Some(if agent < MIN_AGENT_PROTOCOL {
        format!(
            "the agent of node {node} speaks agent protocol {agent}, too old: {ours}. Upgrade \
             the agent on {node} to this server's release (servers first, then agents, at \
             most one release apart)"
        )
    } else {
        format!(
            "the agent of node {node} speaks agent protocol {agent}, newer than this server's: \
             {ours}. Upgrade the servers first (every server, then the agents), or run an \
             agent of this server's release on {node}"
        )
    })
}

/// One run of one job.
#[derive(
    Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(deny_unknown_fields)]
pub struct AttemptRef {
    pub job: u64,
    pub attempt: u32,
}

/// `POST /api/agent/register`: sent when the agent starts and whenever the server does
/// not know it (the server restarted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Register {
    pub node: String,
    pub agent_version: String,
    pub gpus: Vec<GpuInfo>,
    pub cpus: u32,
    pub mem_mib: u64,
    /// The node runs NVIDIA MPS (`nvidia-cuda-mps-control -d`): shares of its GPUs are
    /// limited by MPS instead of by agreement.
    #[serde(default)]
    pub mps: bool,
    /// Generic counted resources the node offers (`gpusched agent --resource fpga=2`),
    /// by name: jobs that ask for them are scheduled here, one count each at a time.
    #[serde(default)]
    pub resources: BTreeMap<String, u64>,
    /// Features the node offers (`gpusched agent --feature a100,nvlink,ib`; also the
    /// topology file), which jobs' constraints and partitions select nodes by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// Where the server can fetch job logs from this agent (`http://host:port`).
    pub log_url: Option<String>,
    /// The bearer secret the server must present to `log_url` (new every agent start,
    /// so the join token never travels to an agent's plain-HTTP log endpoint).
    #[serde(default)]
    pub log_token: Option<String>,
    /// The address other nodes reach this one at (`MASTER_ADDR` when a job's first
    /// part runs here, the hostfile): `--advertise-addr`, else the local address of the
    /// agent's connection to the server.
    #[serde(default)]
    pub advertise_addr: Option<String>,
    /// Where the node sits (`--switch`, `--rack`).
    #[serde(default)]
    pub location: crate::gang::NodeLocation,
    /// How its GPUs are linked, pair by pair (NVML topology; empty where unknown).
    #[serde(default)]
    pub gpu_links: Vec<crate::gang::GpuLink>,
    /// What the agent enforces on its jobs (`None` from agents before protocol 4:
    /// accounting only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<crate::contain::Containment>,
    /// Attempts running right now.
    pub running: Vec<AttemptRef>,
    /// Ends the server has not acknowledged yet (applied before `running` is compared).
    pub events: Vec<RunEvent>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Registered {
    /// Changes every time the server starts; polls name it.
    pub instance: String,
    /// The longest the server holds a poll; the agent polls again at once after each.
    pub poll_wait_ms: u64,
    /// Silence after which the server places nothing more on the node (it stays
    /// unreachable, its jobs kept, until its agent is heard again or the lease ends).
    pub heartbeat_timeout_ms: u64,
    /// The node lease: silence after which the server declares the node's jobs lost and
    /// requeues them, counted from the last request it received from the agent (or from
    /// its own start). The agent stops its jobs before the same span has passed since
    /// it sent the last request the server answered, so no job runs twice. Absent from
    /// servers before it was sent: the agent then uses half the heartbeat timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
    /// The agent protocol the server speaks ([`AGENT_PROTOCOL`]); absent from servers of
    /// protocol 1.
    #[serde(default = "protocol_without_header")]
    pub protocol: u32,
    /// The server takes the compact agent messages (`compact.rs`): polls naming what the
    /// agent holds ([`PollQuery::have`]) answered with the launches it lacks, and
    /// MessagePack ([`MSGPACK`]) for polls and reports. Absent (false) from servers
    /// before them: the agent then speaks JSON and takes whole desired states. An
    /// addition needing no new protocol: `Registered` is read without
    /// `deny_unknown_fields`, and a server answers compactly only a request that asks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compact: bool,
}

fn protocol_without_header() -> u32 {
    PROTOCOL_WITHOUT_HEADER
}

/// `GET /api/agent/poll` parameters. The call returns at once when the desired state's
/// generation differs from `gen` (or the instance changed), else waits up to
/// `poll_wait_ms` for a change. Each poll is also the node's heartbeat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, IntoParams, ToSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PollQuery {
    pub node: String,
    pub instance: String,
    pub gen: u64,
    /// The generation of the last desired state the agent applied in this registration,
    /// with every launch in it kept (sent only to a server that said
    /// [`Registered::compact`]). The answer then names by [`AttemptRef`] alone the
    /// launches the server sent unchanged in a state of that generation or before
    /// ([`Desired::run_known`], [`Desired::queued_known`]). Absent: every launch whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub have: Option<u64>,
}

/// What the server wants a node to be doing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Desired {
    pub gen: u64,
    /// Attempts that should run (start any not seen before). An attempt running on the
    /// node but absent here and from `cancel` is no longer wanted and is stopped.
    pub run: Vec<Launch>,
    /// Attempts to stop (SIGTERM, grace, SIGKILL) and report as cancelled.
    pub cancel: Vec<AttemptRef>,
    /// Attempts to preempt: the checkpoint signal, the grace to save, then stop; they
    /// end `preempted` and the server requeues them.
    #[serde(default)]
    pub preempt: Vec<PreemptOrder>,
    /// Attempts whose first part runs here: reserve a free port for `MASTER_PORT`, hold
    /// it until the part starts, and report it ([`RunEventKind::PortReserved`]); the
    /// parts of the gang are launched once it is known.
    #[serde(default)]
    pub reserve_ports: Vec<AttemptRef>,
    /// The leader's epoch when it said this (0: a server from before leader election).
    /// An agent refuses desired state of an epoch older than the highest it has seen: a
    /// deposed leader must not steer it.
    #[serde(default)]
    pub epoch: u64,
    /// Attempts queued behind others on this node (protocol 3), each to start on the
    /// GPUs of `after` as soon as `after` ends by itself ([`Outcome::follows`]), with no
    /// round of the server in between; an attempt queued here is wanted like one in
    /// `run`. Chains are listed first follower first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queued: Vec<QueuedLaunch>,
    /// Job steps to run here (protocol 6): each is started once, and its tasks are
    /// killed as soon as it is no longer listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<crate::step::StepLaunch>,
    /// The power limit each GPU should have, milliwatts, by GPU index (`gpusched serve
    /// --gpu-power-cap`, docs/power.md); a GPU not listed keeps its default limit. An
    /// addition needing no new protocol: `Desired` is read without
    /// `deny_unknown_fields`, so an agent of an older release ignores it, and a server
    /// sends it only when a cap is set. Such an agent's GPUs keep their default limit,
    /// which the server cannot tell from the protocol: a power budget counts caps that
    /// only agents of this release apply (docs/power.md).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub power_caps: BTreeMap<u32, u32>,
    /// Attempts wanted as in `run` whose launch the agent already holds, unchanged, from
    /// the state of [`PollQuery::have`] or before (only in answers to a poll naming
    /// one). An agent that does not hold one asks again without `have`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_known: Vec<AttemptRef>,
    /// Attempts queued as in `queued` whose launch the agent already holds, likewise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queued_known: Vec<QueuedKnown>,
}

/// A queued attempt whose launch the agent already holds (see [`Desired::queued_known`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueuedKnown {
    /// The attempt it follows.
    pub after: AttemptRef,
    /// The queued attempt.
    pub attempt: AttemptRef,
}

/// The media type of the agent messages' compact encoding: MessagePack with fields by
/// name (so optional fields stay optional both ways, as in JSON). Chosen over JSON and
/// CBOR by `examples/agent_codec.rs` (docs/benchmarks.md).
pub const MSGPACK: &str = "application/msgpack";

/// Whether a `Content-Type` or `Accept` header's value names [`MSGPACK`] (one of a
/// list; parameters allowed): the one test both ends make of what a message is in.
pub fn names_msgpack(value: &str) -> bool {
    value.split(',').any(|t| t.trim().starts_with(MSGPACK))
}

/// `value` in [`MSGPACK`].
pub fn to_msgpack<T: Serialize>(value: &T) -> Result<Vec<u8>, rmp_serde::encode::Error> {
    rmp_serde::to_vec_named(value)
}

/// A value read from [`MSGPACK`].
pub fn from_msgpack<'a, T: Deserialize<'a>>(
    bytes: &'a [u8],
) -> Result<T, rmp_serde::decode::Error> {
    rmp_serde::from_slice(bytes)
}

/// An attempt to start when another ends (see [`Desired::queued`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QueuedLaunch {
    /// The attempt it follows: a running one, or one queued itself.
    pub after: AttemptRef,
    pub launch: Launch,
}

/// How to preempt one attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreemptOrder {
    pub job: u64,
    pub attempt: u32,
    /// The signal asking the job to checkpoint (10 = SIGUSR1).
    pub signal: i32,
    /// Seconds it has to save and exit before it is stopped.
    pub grace_s: u64,
}

/// Everything the agent needs to start one attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    pub job: u64,
    pub attempt: u32,
    pub name: String,
    /// The submitting user; an agent running as root runs the job as this Unix user.
    pub user: String,
    pub command: Vec<String>,
    pub cwd: String,
    pub env: BTreeMap<String, String>,
    /// Node-local GPU indices (NVML order).
    pub gpus: Vec<u32>,
    pub walltime_s: Option<u64>,
    /// Seconds between SIGTERM and SIGKILL when the job is stopped.
    pub grace_s: u64,
    /// For a job on part of a GPU: the share or MIG instance (`gpus` then names the one
    /// GPU it is on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<crate::slice::SliceAt>,
    /// Generic counted resources the job was given on this node (`fpga: 1`); the agent
    /// tells the job in `GPUSCHED_RESOURCE_<NAME>` variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, u64>,
    /// The distributed launch environment (ranks, master address and port, hostfile,
    /// processes per node); `None` from an older server: one process, as a job of one
    /// node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<crate::gang::DistLaunch>,
    /// CPUs the part may use, in thousandths (0: none asked; the node's default per
    /// GPU applies). Enforced where the agent has a cgroup.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cpu_milli: u64,
    /// The part's memory limit in MiB (0: none asked; the node's default per GPU
    /// applies). Enforced where the agent has a cgroup, with no swap beyond it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mem_mib: u64,
    /// The most processes (and threads) the part may have at once (`None`: the node's
    /// default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids_max: Option<u64>,
    /// The container image the part runs in (`None`: a host process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// A replica of a service (protocol 5): the agent gives it a free port in `$PORT`,
    /// reports it ([`RunEventKind::Listening`]) and probes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serve: Option<crate::service::ServeLaunch>,
    /// An interactive allocation ([`HOLD_PROTOCOL`]): the agent holds the GPUs with no
    /// process of the job's own (`command` is a label), keeps the attempt running (its
    /// cgroup made, so steps can join it) until it is cancelled, stopped or passes its
    /// walltime, and ends it as it would a process.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hold: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Launch {
    pub fn attempt_ref(&self) -> AttemptRef {
        AttemptRef {
            job: self.job,
            attempt: self.attempt,
        }
    }
}

/// How an attempt ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Outcome {
    /// The process exited by itself with this status.
    Exited { code: i32 },
    /// The process was killed by a signal it did not ask for (not by gpusched).
    Signaled { signal: i32 },
    /// gpusched stopped it for passing its walltime.
    TimedOut { walltime_s: u64 },
    /// gpusched stopped it because it was cancelled.
    Cancelled,
    /// The program could not be started (not found, not executable, bad directory).
    SpawnFailed { message: String },
    /// The agent lost track of it (the agent restarted while it ran); the server
    /// requeues it if retries are left.
    Lost { message: String },
    /// It was preempted (checkpoint signal, grace, stop); the server requeues it with
    /// its service kept.
    Preempted,
    /// Its agent was told to stop (SIGTERM or SIGINT to `gpusched agent` or `up`) and
    /// stopped it (SIGTERM to its group, the grace, SIGKILL); the server requeues it
    /// without using a retry: nothing went wrong with the job.
    Stopped { message: String },
    /// The kernel killed it for passing its memory limit (`mem_mib` or the node's
    /// default): `peak_bytes` is the most it held, `limit_bytes` the limit.
    OutOfMemory { peak_bytes: u64, limit_bytes: u64 },
    /// A replica failed its liveness probe `failure_threshold` times in a row and its
    /// agent stopped it; `message` says what the last probe got.
    Unhealthy { message: String },
}

impl Outcome {
    /// Whether the attempt queued behind one that ended this way starts (on the agent,
    /// at once) and takes its GPUs (on the server): yes when it ended by itself or was
    /// cancelled; no when it was preempted, stopped with its agent or lost, because
    /// then its GPUs are wanted elsewhere or the node is going away (the server sends its
    /// followers back to the queue).
    pub fn follows(&self) -> bool {
        !matches!(
            self,
            Outcome::Preempted | Outcome::Stopped { .. } | Outcome::Lost { .. }
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RunEventKind {
    Started {
        pid: u32,
        /// The `MIG-…` UUID of the instance the job was given, for a MIG job.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mig_uuid: Option<String>,
    },
    /// The job saved a checkpoint at the event's `at_ms` (it touched the file
    /// `$GPUSCHED_CHECKPOINT_DIR/checkpoint`).
    Checkpoint,
    /// The port this node reserved for the attempt's `MASTER_PORT` (see
    /// [`Desired::reserve_ports`]).
    PortReserved { port: u16 },
    /// A replica's port (`$PORT`), given at its start, before `Started`.
    Listening { port: u16 },
    /// A replica's readiness changed: it passes its readiness probe (`ready`), or it
    /// failed it `failure_threshold` times in a row (`message`: what the last probe got).
    Ready {
        ready: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    Ended {
        outcome: Outcome,
        /// What the part used, read from its cgroup (`None` where it had none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<crate::contain::Usage>,
    },
}

/// Something that happened to an attempt on a node, with the node's clock (Unix ms).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunEvent {
    pub job: u64,
    pub attempt: u32,
    pub at_ms: u64,
    pub event: RunEventKind,
}

/// The answer to a report: it is durable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReportAck {
    pub ok: bool,
}

/// `POST /api/agent/report`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub node: String,
    pub instance: String,
    pub events: Vec<RunEvent>,
    /// The node's latest GPU samples (sent with event reports, and on their own every
    /// `--telemetry-interval` when no event goes out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<crate::telemetry::NodeTelemetry>,
    /// The agent is stopping and runs nothing any more (it stopped its jobs and these
    /// events report their ends): the server takes the node out of placement now
    /// instead of after the heartbeat timeout.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub leaving: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The current protocol and the one before are accepted; the refusal of an older
    /// one says to upgrade the agent, of a newer one to upgrade the servers first, and
    /// both name the versions.
    #[test]
    fn a_server_accepts_its_protocol_and_the_previous_and_names_both_when_refusing() {
        assert_eq!(protocol_refusal("n1", AGENT_PROTOCOL, "0.1.0"), None);
        assert_eq!(protocol_refusal("n1", AGENT_PROTOCOL - 1, "0.1.0"), None);
        let old = protocol_refusal("n1", MIN_AGENT_PROTOCOL - 1, "0.1.0").unwrap();
        for part in [
            &format!("speaks agent protocol {}", MIN_AGENT_PROTOCOL - 1),
            &format!("speaks agent protocol {AGENT_PROTOCOL}"),
            "Upgrade the agent on n1",
        ] {
            assert!(old.contains(part), "{part:?} missing from: {old}");
        }
        let new = protocol_refusal("n1", AGENT_PROTOCOL + 1, "0.1.0").unwrap();
        assert!(new.contains("Upgrade the servers first"), "{new}");
        assert!(
            new.contains(&format!("protocol {}", AGENT_PROTOCOL + 1)),
            "{new}"
        );
    }

    /// An older server's registration answer (no protocol) reads as protocol 1.
    #[test]
    fn a_registration_answer_without_a_protocol_is_of_protocol_1() {
        let r: Registered =
            serde_json::from_str(r#"{"instance":"i","poll_wait_ms":1,"heartbeat_timeout_ms":2}"#)
                .unwrap();
        assert_eq!(r.protocol, 1);
    }

    /// Agents and servers one version apart: a desired state without an epoch (an older
    /// server's) reads as epoch 0, and an older agent's reading ignores the new field.
    #[test]
    fn the_epoch_is_optional_both_ways() {
        let old = r#"{"gen":3,"run":[],"cancel":[]}"#;
        let d: Desired = serde_json::from_str(old).unwrap();
        assert_eq!((d.gen, d.epoch), (3, 0));
        #[derive(Deserialize)]
        #[allow(dead_code)]
        struct OlderDesired {
            gen: u64,
            run: Vec<Launch>,
            cancel: Vec<AttemptRef>,
        }
        let new = serde_json::to_string(&Desired { epoch: 7, ..d }).unwrap();
        assert!(new.contains("\"epoch\":7"), "{new}");
        let o: OlderDesired = serde_json::from_str(&new).unwrap();
        assert_eq!(o.gen, 3);
    }

    /// Power caps ride on the desired state only when set, and an agent of the release
    /// before them reads a desired state that has them.
    #[test]
    fn power_caps_are_optional_both_ways() {
        let d: Desired = serde_json::from_str(r#"{"gen":3,"run":[],"cancel":[]}"#).unwrap();
        assert!(d.power_caps.is_empty());
        assert!(!serde_json::to_string(&d).unwrap().contains("power_caps"));
        let capped = Desired {
            power_caps: BTreeMap::from([(0, 250_000), (3, 300_000)]),
            ..d
        };
        let text = serde_json::to_string(&capped).unwrap();
        assert!(
            text.contains(r#""power_caps":{"0":250000,"3":300000}"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Desired>(&text).unwrap(), capped);
        #[derive(Deserialize)]
        #[allow(dead_code)]
        struct Protocol6Desired {
            gen: u64,
            run: Vec<Launch>,
            cancel: Vec<AttemptRef>,
            #[serde(default)]
            steps: Vec<crate::step::StepLaunch>,
        }
        assert_eq!(
            serde_json::from_str::<Protocol6Desired>(&text).unwrap().gen,
            3
        );
    }
}
