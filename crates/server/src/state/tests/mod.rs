//! In-process tests of the server's state machine, data-driven in the style of the core's
//! `tests/policies.rs`: each scenario is a list of steps (agents register, poll and
//! report; users submit and cancel; time passes; the server restarts) and the whole
//! transcript they produce is compared with the expected one (`scenarios.rs`).
//!
//! The harness plays the actor: a `Round` step runs the scheduling pass and "commits"
//! the rows the tracked maps marked into its own store. At every round it checks that
//! the marked rows are exactly the rows that differ from the store (a change never
//! marked would be lost at restart; a mark without a change is a wasted write), and a
//! `Restart` loads a new `State` from that store only, as the real server would. Time is
//! the test's: `Wait` moves both clocks, and nothing in the state reads a clock.
//!
//! The update switch (rust-analyzer's `UPDATE_EXPECT`): after a change that moves
//! transcripts on purpose, run the tests with `UPDATE_EXPECT=1` in the environment
//! (`UPDATE_EXPECT=1 cargo test -p gpusched-server --lib state::tests`) and every
//! scenario whose transcript differs writes it into its expected text in the source
//! file instead of failing (the `gpusched-expect` crate); then read the diff as a reviewer would.

mod accounts;
mod arrays;
mod contain;
mod deadlines;
mod deps;
mod elastic;
mod ended;
mod energy;
mod follow;
mod gangs;
mod health;
mod history;
mod interactive;
mod learn;
mod liveness;
mod partitions;
mod power;
mod reservations;
mod rr;
mod scenarios;
mod services;
mod speed;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::record::JobRecord;
use gpusched_store::{NodeRecord, TokenRecord};
use gpusched_wire::{
    AttemptRef, GpuInfo, GpuSource, JobState, JobSubmit, Outcome, PollQuery, Register, Role,
    RunEvent, RunEventKind, TokenCreate,
};

use super::{PollResult, Rows, State, Who};
use crate::clock::Now;
use crate::config::ServerConfig;
use crate::groups::UserGroups;
use crate::queues::Queues;

/// One thing that happens to the server. Users are plain users except `root` (admin).
#[derive(Clone, Copy, Debug)]
pub(super) enum Step {
    /// An agent registers a node with this many GPUs (A100-80GB), running nothing.
    Node(&'static str, u32),
    /// An agent of the previous protocol (2: no followers) registers a node.
    OldNode(&'static str, u32),
    /// The node's agent registers again (it restarted), saying it runs these jobs (their
    /// current attempts).
    Rejoin(&'static str, u32, &'static [u64]),
    /// A user submits one job: `gpus=N`, `share=F`, `retries=N`, `after=A,B`, `queue=Q`,
    /// `name=NAME`, `for=USER` (an admin submitting for someone), `batch=N` (N copies in
    /// one batch).
    Submit(&'static str, &'static str),
    /// The end of a round: the scheduling pass, then the commit of the marked rows.
    Round,
    /// The node's agent polls: what it should run, cancel or preempt.
    Poll(&'static str),
    /// The node's agent polls as a compact agent: naming the generation of its last
    /// poll's answer (`PollQuery::have`), so the launches it holds come back named only.
    PollHeld(&'static str),
    /// The node's agent stops: it reports that it runs nothing more and is leaving.
    Leave(&'static str),
    /// Whether the node's agent is heard from, as `nodes` shows it.
    NodeIs(&'static str),
    /// A node that registers with features (`a100,ib`), and how `nodes` shows its
    /// features and partitions.
    FeatureNode(&'static str, u32, &'static str),
    /// A node whose GPUs are of this model.
    ModelNode(&'static str, u32, &'static str),
    /// A job's speed on each model, as `show` gets it.
    Speeds(&'static str, u64),
    /// A job's deadline and how it stands, as `show` gets it (times from now).
    Deadline(&'static str, u64),
    /// `USER reserves name=N nodes=a,b gpus=K start=+SECS dur=SECS users=a,b queues=q
    /// maint=1`.
    Reserve(&'static str, &'static str),
    /// USER deletes reservation NAME.
    Unreserve(&'static str, &'static str),
    /// Reservations as `reservation ls` has them.
    Reservations,
    /// The account tree as `gpusched accounts` has it (usage in GPU-hours).
    Accounts,
    /// The node reports that the job's current attempt started.
    Started(&'static str, u64),
    /// The node reports that the job's current attempt exited with this code.
    Exit(&'static str, u64, i32),
    /// The node reports that its agent lost track of the job's current attempt.
    Lost(&'static str, u64),
    /// The node reports that the job's current attempt stopped for a preemption.
    Preempted(&'static str, u64),
    Cancel(&'static str, u64),
    /// The node reserved this port for the job's `MASTER_PORT` (a gang's first node).
    Port(&'static str, u64, u16),
    /// The node's agent was told to stop and stopped the job's current attempt.
    Stopped(&'static str, u64),
    /// The node stopped the job's current attempt because it was told to cancel it.
    Cancelled(&'static str, u64),
    /// The node stopped the job's current attempt for passing its walltime.
    TimedOut(&'static str, u64),
    /// The job's owner asks where the output of (node, rank) is read from.
    Logs(u64, Option<&'static str>, Option<u32>),
    /// Both clocks move on by this many seconds (a new round starts at the new time).
    Wait(u64),
    /// `rr`'s turn now and the slowest checkpoint measured (`checkpoint_cost.rs`).
    Quantum,
    /// The heartbeat tick: silent nodes expire.
    Tick,
    /// The power levels `/metrics` shows (`power.rs`): idle and down nodes, idle
    /// node-seconds, what is drawn at the caps, jobs held back.
    Power,
    /// The heartbeat tick of a round that began this many seconds after the previous
    /// one ended: the state task itself was stalled.
    TickAfterStall(u64),
    /// The queue file (SIGHUP reload).
    Queues(&'static str),
    /// A pending job's reason contains this text (checked, not logged).
    Reason(u64, &'static str),
    /// An admin creates a token for this user; then one revokes token N.
    Token(&'static str),
    Revoke(u64),
    /// The server restarts: a new `State` from what the rounds committed, nothing else.
    Restart,
    /// The store's rows lose their parts, as rows written before schema 3 have none.
    Schema2Rows,
    /// The job's current attempt has this many parts (checked, not logged).
    Parts(u64, usize),
    /// `user` drains the node (`now`: running jobs are requeued) with this reason.
    Drain(&'static str, &'static str, &'static str, bool),
    /// `user` resumes the node.
    Resume(&'static str, &'static str),
    /// The node reports one sample of one GPU with the report of no event:
    /// `temp=C`, `ecc=N` (uncorrectable), `xid=CODE`, `energy=MJ` (the counter), `lost`.
    Sample(&'static str, u32, &'static str),
    /// The server's `--unhealthy-jobs requeue` from now on.
    RequeueUnhealthy,
    /// The job's energy as its view says (`energy_j`).
    Energy(u64),
    /// `usage --by user` as root sees it: each user's energy.
    UsageEnergy,
    /// `usage --by user` as root sees it: each user's GPU-hours held idle.
    UsageIdle,
    /// An interactive allocation's GPU time held idle as its view says (`idle_gpu_s`).
    Idle(u64),
    /// `usage` over all time by user and by queue, from the sums the state keeps (read
    /// from the store the first time, as the actor does), checked against the store's
    /// aggregate over its rows; prints each row's jobs and GPU-hours.
    UsageAllTime,
    /// The nodes as `gpusched nodes` shows them: drain and GPU health.
    Nodes,
    /// The job's timeline as the rounds committed it (`user` asks: refusals are logged).
    Events(&'static str, u64),
    /// The audit log as the rounds committed it, oldest first.
    Audit,
    /// The owner (or an admin) reports through the API that the job saved a checkpoint.
    Checkpoint(&'static str, u64),
    /// `user` holds, releases or updates (`priority=N walltime=S queue=Q`) a job.
    Hold(&'static str, u64),
    Release(&'static str, u64),
    Update(&'static str, u64, &'static str),
    /// `user` submits a workflow: `;`-separated steps `KEY [after=K,..] [any=K,..]
    /// [notok=K,..] [SUBMIT SPEC]`.
    Workflow(&'static str, &'static str),
    /// `user` shows one job (`gpusched show`).
    Show(&'static str, u64),
    /// `user` lists jobs: `state=S limit=N before=ID after=ID user=U node=N`, the store
    /// answering for the ended ones as the actor's store read would.
    List(&'static str, &'static str),
    /// `user` lists an array's tasks (`gpusched queue --all --tasks ID`: every state),
    /// the store answering for the ended ones.
    Tasks(&'static str, u64),
    /// `user` cancels one task (by index) of an array.
    CancelTask(&'static str, u64, u32),
    /// An array's state and counts as its view says.
    Counts(u64),
    /// One task of an array as `GET /api/jobs/{id}/tasks/{index}` shows it.
    Task(u64, u32),
    /// An agent of protocol 4 whose node contains jobs (cgroup v1, every controller)
    /// registers a node.
    ContainedNode(&'static str, u32),
    /// An agent of protocol 3 (accounting only: no limits, no images) registers a node.
    Protocol3Node(&'static str, u32),
    /// What the node enforces, as `nodes` shows it.
    Enforces(&'static str),
    /// The job's image and process cap (`image=REF pids=N`), set on its view as a
    /// submission with them would.
    Contain(u64, &'static str),
    /// The node reports that the job's current attempt exited with this code, having
    /// used `cpu=MS peak=MIB cpu_psi=MS mem_psi=MS` (each optional but cpu).
    Used(&'static str, u64, i32, &'static str),
    /// The node reports that the kernel killed the job's current attempt for passing its
    /// memory limit: peak and limit in MiB (having used 9 s of CPU).
    OutOfMemory(&'static str, u64, u64, u64),
    /// What the job's attempt used, as its view says (`show`'s `used` line).
    UsedBy(u64),
    /// `usage --by user` as root sees it: each user's CPU-hours and memory GiB-hours.
    UsageUsed,
    /// `user` creates a service (`service_spec`'s keys), updates one (the whole spec
    /// again, by name), deletes one.
    ServiceNew(&'static str, &'static str),
    ServiceUpdate(&'static str, &'static str),
    ServiceDelete(&'static str, &'static str),
    /// A service as `service show` sees it: its status and replicas.
    ServiceShow(&'static str),
    /// The node gave the replica (its current attempt) this port.
    Listening(&'static str, u64, u16),
    /// The node's probe of the replica passes, or fails (`false`).
    Ready(&'static str, u64, bool),
    /// The node stopped the replica for failing its liveness probe.
    Unhealthy(&'static str, u64),
    /// A gateway syncs with its load (`SERVICE:IN_FLIGHT:QUEUED`, space-separated) and
    /// is told the endpoints.
    Sync(&'static str, &'static str),
}

/// What the rounds committed, as the store would hold it.
#[derive(Default)]
struct Store {
    jobs: BTreeMap<u64, JobRecord>,
    nodes: BTreeMap<String, NodeRecord>,
    tokens: BTreeMap<u64, TokenRecord>,
    /// Each job's events, and the audit log, as the rounds' journals wrote them.
    events: BTreeMap<u64, Vec<gpusched_wire::history::JobEvent>>,
    audit: Vec<gpusched_wire::history::AuditEntry>,
    /// The `meta` values the rounds wrote (`learn.rs`: predictor, attained service).
    meta: BTreeMap<&'static str, String>,
    services: BTreeMap<String, gpusched_store::ServiceRecord>,
    reservations: BTreeMap<String, gpusched_store::ReservationRecord>,
    /// The array tasks of `jobs` last written as compact records.
    compact: BTreeSet<u64>,
    /// The compact tasks that got their job row.
    promoted: BTreeSet<u64>,
}

struct Harness {
    st: State,
    cfg: Arc<ServerConfig>,
    queues: Queues,
    now: Now,
    store: Store,
    /// The server instance each node's agent registered with (polls and reports name it).
    instance: BTreeMap<String, String>,
    /// The generation of each node's last poll answer.
    polled: BTreeMap<String, u64>,
    log: String,
}

fn who(user: &str) -> Who {
    Who {
        user: user.to_string(),
        admin: user == "root",
    }
}

/// A state with one node, `n1` with one A100 (8 CPUs, 64 GiB), and no job: the fixture of
/// the unit tests beside the state's own files (`metrics.rs`, `transition.rs`).
pub(super) fn one_gpu_state() -> State {
    let listen = "127.0.0.1:0".parse().expect("an address");
    let cfg = crate::config::ServerConfig::new(std::env::temp_dir(), listen);
    let node = NodeRecord {
        register: Register {
            cpus: 8,
            mem_mib: 65536,
            log_url: None,
            advertise_addr: None,
            ..node_register("n1", 1, vec![])
        },
        drain: None,
        gpu_health: Default::default(),
    };
    let queues = crate::queues::Queues::default();
    let now = crate::clock::Now::read();
    // Registered, not loaded: a node known only from the store is unreachable until
    // its agent registers.
    let mut st = State::load(Arc::new(cfg), vec![], vec![], vec![], queues, now);
    st.begin_round(now);
    st.register(node.register).expect("a valid registration");
    st
}

fn node_register(name: &str, gpus: u32, running: Vec<AttemptRef>) -> Register {
    Register {
        containment: None,
        node: name.to_string(),
        agent_version: "test".into(),
        gpus: (0..gpus)
            .map(|index| GpuInfo {
                index,
                uuid: None,
                model: "A100-SXM4-80GB".into(),
                mem_mib: 81920,
                source: GpuSource::Declared,
                mig: None,
            })
            .collect(),
        cpus: 64,
        mem_mib: 512 * 1024,
        mps: false,
        log_url: Some(format!("http://{name}.test:7000")),
        log_token: None,
        resources: Default::default(),
        features: Vec::new(),
        advertise_addr: Some(format!("10.0.0.{}", name.trim_start_matches('n'))),
        location: Default::default(),
        gpu_links: Vec::new(),
        running,
        events: vec![],
    }
}

fn job_submit(spec: &str) -> (JobSubmit, usize) {
    let mut j = JobSubmit {
        command: vec!["/bin/true".into()],
        ..Default::default()
    };
    let mut copies = 1;
    for kv in spec.split_whitespace() {
        let (k, v) = kv.split_once('=').expect("key=value");
        match k {
            "gpus" => j.gpus = Some(v.parse().unwrap()),
            "model" => j.gpu_model = Some(v.to_string()),
            "share" => j.gpu_share = Some(v.parse().unwrap()),
            "retries" => j.max_retries = Some(v.parse().unwrap()),
            "after" => j.after = v.split(',').map(|d| d.parse().unwrap()).collect(),
            "any" => j.after_any = v.split(',').map(|d| d.parse().unwrap()).collect(),
            "notok" => j.after_notok = v.split(',').map(|d| d.parse().unwrap()).collect(),
            "hold" => j.hold = v == "1",
            "priority" => j.priority = Some(v.parse().unwrap()),
            "walltime" => j.walltime_s = Some(v.parse().unwrap()),
            "queue" => j.queue = Some(v.to_string()),
            "name" => j.name = Some(v.to_string()),
            "for" => j.user = Some(v.to_string()),
            "batch" => copies = v.parse().unwrap(),
            "cpus" => j.cpus = Some(v.parse().unwrap()),
            "mem" => j.mem_mib = Some(v.parse().unwrap()),
            "nodes" => j.nodes = Some(v.parse().unwrap()),
            "gpn" => j.gpus_per_node = Some(v.parse().unwrap()),
            "split" => j.split = v == "1",
            "tasks" => j.tasks_per_node = Some(v.parse().unwrap()),
            "token" => j.client_token = Some(v.to_string()),
            "interactive" => j.interactive = v == "1",
            "partition" => j.partitions = v.split(',').map(String::from).collect(),
            "constraint" => j.constraint = Some(v.to_string()),
            "nodelist" => j.nodelist = gpusched_wire::hostlist::split(v),
            "exclude" => j.exclude = gpusched_wire::hostlist::split(v),
            "reservation" => j.reservation = Some(v.to_string()),
            "speedup" => j.speedup = Some(v.to_string()),
            "account" => j.account = Some(v.to_string()),
            // Seconds from now: the Submit step adds the clock.
            "deadline" => {
                j.deadline_ms = Some(v.trim_start_matches('+').parse::<u64>().unwrap() * 1000)
            }
            "max" => j.gpus_max = Some(v.parse().unwrap()),
            "serial" => j.scaling_serial = Some(v.parse().unwrap()),
            "array" => j.array = Some(gpusched_wire::ArraySpec::parse(v).unwrap()),
            "env" => {
                let (k, v) = v.split_once(':').expect("env=K:V");
                j.env.insert(k.into(), v.into());
            }
            _ => panic!("unknown submit key {k}"),
        }
    }
    (j, copies)
}

/// A reservation from `name=N nodes=a,b gpus=K start=+SECS dur=SECS users=a,b
/// queues=q maint=1`, its start relative to `now_ms`.
fn reservation_spec(spec: &str, now_ms: u64) -> gpusched_wire::reservation::ReservationSpec {
    let mut r = gpusched_wire::reservation::ReservationSpec {
        name: String::new(),
        start_ms: now_ms,
        duration_s: 3600,
        nodes: Vec::new(),
        gpus: None,
        gpu_model: None,
        features: None,
        users: Vec::new(),
        queues: Vec::new(),
        maintenance: false,
    };
    let list = |v: &str| v.split(',').map(String::from).collect::<Vec<_>>();
    for kv in spec.split_whitespace() {
        let (k, v) = kv.split_once('=').expect("key=value");
        match k {
            "name" => r.name = v.into(),
            "nodes" => r.nodes = list(v),
            "gpus" => r.gpus = Some(v.parse().unwrap()),
            "model" => r.gpu_model = Some(v.into()),
            "features" => r.features = Some(v.into()),
            "start" => {
                r.start_ms = now_ms + v.trim_start_matches('+').parse::<u64>().unwrap() * 1000
            }
            "dur" => r.duration_s = v.parse().unwrap(),
            "users" => r.users = list(v),
            "queues" => r.queues = list(v),
            "maint" => r.maintenance = v == "1",
            _ => panic!("unknown reservation key {k}"),
        }
    }
    r
}

/// A service from `name=N replicas=K gpus=G surge=S unavailable=U drain=SECS
/// autoscale=MIN..MAX target=T down=SECS idle=SECS live=/PATH ready=/PATH cmd=WORD`.
fn service_spec(spec: &str) -> gpusched_wire::ServiceSpec {
    let mut s = gpusched_wire::ServiceSpec {
        name: String::new(),
        replica: JobSubmit {
            command: vec!["serve".into()],
            gpus: Some(1),
            ..Default::default()
        },
        replicas: None,
        protocol: Default::default(),
        models: Vec::new(),
        readiness: None,
        liveness: None,
        rollout: Default::default(),
        autoscale: None,
    };
    let probe = |path: &str| gpusched_wire::Probe {
        path: Some(path.to_string()),
        ..Default::default()
    };
    for kv in spec.split_whitespace() {
        let (k, v) = kv.split_once('=').expect("key=value");
        match k {
            "name" => s.name = v.to_string(),
            "replicas" => s.replicas = Some(v.parse().unwrap()),
            "gpus" => s.replica.gpus = Some(v.parse().unwrap()),
            "cmd" => s.replica.command = vec![v.to_string()],
            "queue" => s.replica.queue = Some(v.to_string()),
            "surge" => s.rollout.max_surge = v.parse().unwrap(),
            "unavailable" => s.rollout.max_unavailable = v.parse().unwrap(),
            "drain" => s.rollout.drain_s = v.parse().unwrap(),
            "ready" => s.readiness = Some(probe(v)),
            "live" => s.liveness = Some(probe(v)),
            "autoscale" => {
                let (min, max) = v.split_once("..").expect("MIN..MAX");
                s.autoscale = Some(gpusched_wire::Autoscale {
                    min: min.parse().unwrap(),
                    max: max.parse().unwrap(),
                    target_in_flight: 2.0,
                    latency_p95_ms: None,
                    up_window_s: 0,
                    down_window_s: 10,
                    idle_to_zero_s: 30,
                });
            }
            "target" | "down" | "idle" => {
                let a = s.autoscale.as_mut().expect("autoscale= first");
                match k {
                    "target" => a.target_in_flight = v.parse().unwrap(),
                    "down" => a.down_window_s = v.parse().unwrap(),
                    _ => a.idle_to_zero_s = v.parse().unwrap(),
                }
            }
            _ => panic!("unknown service key {k}"),
        }
    }
    s
}

fn job_update(spec: &str) -> gpusched_wire::JobUpdate {
    let mut up = gpusched_wire::JobUpdate::default();
    for kv in spec.split_whitespace() {
        let (k, v) = kv.split_once('=').expect("key=value");
        match k {
            "priority" => up.priority = Some(v.parse().unwrap()),
            "walltime" => up.walltime_s = Some(v.parse().unwrap()),
            "queue" => up.queue = Some(v.to_string()),
            _ => panic!("unknown update key {k}"),
        }
    }
    up
}

fn workflow(spec: &str) -> gpusched_wire::workflow::WorkflowSubmit {
    let steps = spec
        .split(';')
        .map(|step| {
            let mut words = step.split_whitespace();
            let key = words.next().expect("a step key").to_string();
            let keys = |v: &str| v.split(',').map(String::from).collect::<Vec<_>>();
            let (mut after, mut after_any, mut after_notok) = (vec![], vec![], vec![]);
            let mut rest = Vec::new();
            for kv in words {
                match kv.split_once('=') {
                    Some(("after", v)) => after = keys(v),
                    Some(("any", v)) => after_any = keys(v),
                    Some(("notok", v)) => after_notok = keys(v),
                    _ => rest.push(kv),
                }
            }
            let (job, _) = job_submit(&rest.join(" "));
            gpusched_wire::workflow::WorkflowStep {
                key,
                job,
                after,
                after_any,
                after_notok,
            }
        })
        .collect();
    gpusched_wire::workflow::WorkflowSubmit { steps }
}

fn outcome(r: Result<String, super::Fail>) -> String {
    match r {
        Ok(s) => format!("ok {s}"),
        Err(f) => format!("{f:?}"),
    }
}

fn list<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let s: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    if s.is_empty() {
        "-".into()
    } else {
        s.join(" ")
    }
}

/// What a poll tells a node to run: job#attempt [GPUs], and for a part of a gang its
/// rank, the nodes and the master's address and port.
fn launch_line(l: &gpusched_wire::Launch) -> String {
    let mut s = format!("{}#{} {:?}", l.job, l.attempt, l.gpus);
    let d = l
        .dist
        .as_ref()
        .expect("every Launch carries its launch environment");
    if d.nnodes > 1 {
        let hosts = d.hosts.iter().map(|h| format!("{}*{}", h.addr, h.slots));
        write!(
            s,
            " rank {}/{} master {}:{} hosts {}",
            d.node_rank,
            d.nnodes,
            d.master_addr.as_deref().unwrap_or("?"),
            d.master_port.map_or("?".into(), |p| p.to_string()),
            list(hosts)
        )
        .unwrap();
    } else {
        assert_eq!((d.node_rank, d.master_port, d.hosts.len()), (0, None, 0));
    }
    if let Some(k) = d.tasks_per_node {
        write!(s, " tasks {k}").unwrap();
    }
    if l.hold {
        s.push_str(" hold");
    }
    if l.cpu_milli > 0 || l.mem_mib > 0 || l.pids_max.is_some() || l.image.is_some() {
        write!(
            s,
            " limits cpu {} mem {} pids {} image {}",
            l.cpu_milli,
            l.mem_mib,
            l.pids_max.map_or("-".into(), |p| p.to_string()),
            l.image.as_deref().unwrap_or("-")
        )
        .unwrap();
    }
    s
}

/// `cpu=MS peak=MIB cpu_psi=MS mem_psi=MS`, what a part used.
fn usage_of(spec: &str) -> gpusched_wire::contain::Usage {
    let mut u = gpusched_wire::contain::Usage::default();
    for kv in spec.split_whitespace() {
        let (k, v) = kv.split_once('=').expect("key=value");
        let n: u64 = v.parse().unwrap();
        match k {
            "cpu" => u.cpu_ms = n,
            "peak" => u.mem_peak_bytes = Some(n << 20),
            "cpu_psi" => u.cpu_pressure_ms = Some(n),
            "mem_psi" => u.mem_pressure_ms = Some(n),
            _ => panic!("unknown usage key {k}"),
        }
    }
    u
}

/// A job as a transcript line: state, where, attempt, the stored reason.
fn job_line(j: &JobRecord) -> String {
    let v = &j.view;
    let mut s = format!("job {} {}", v.id, v.state.name());
    if let Some(node) = &v.node {
        match &v.slice_at {
            Some(at) => write!(s, " on {node} gpu {} share {}", at.gpu, at.milli).unwrap(),
            None => write!(s, " on {node} {:?}", v.gpu_indices).unwrap(),
        }
    }
    write!(s, " #{}", v.attempt).unwrap();
    if let Some(a) = &v.account {
        write!(s, " account {a}").unwrap();
    }
    if let Some(after) = j.behind.map(std::num::NonZeroU64::get) {
        write!(s, " behind {after}").unwrap();
    }
    if let Some(t) = v.array_task {
        write!(s, " task {}.{}", t.array_id, t.index).unwrap();
    }
    if let (Some(a), Some(p)) = (v.array, &j.array_progress) {
        write!(s, " array {} next {}", a.text(), p.next).unwrap();
    }
    // A gang's parts (a job of one node has one, part 0 = its node, shown above).
    if v.parts.len() > 1 {
        let parts = v.parts.iter().map(|p| {
            let end = match (p.exit_code, p.signal) {
                (Some(c), _) => format!("({c})"),
                (None, Some(sig)) => format!("(sig {sig})"),
                _ => String::new(),
            };
            format!("{}{:?}:{:?}{end}", p.node, p.gpu_indices, p.state).to_lowercase()
        });
        write!(s, " parts {}", list(parts)).unwrap();
        if let Some(port) = v.master_port {
            write!(s, " port {port}").unwrap();
        }
    }
    if !v.reason.is_empty() {
        write!(s, ": {}", v.reason).unwrap();
    }
    s
}

impl Harness {
    fn new() -> Harness {
        Harness::with(|_| {})
    }

    /// A harness whose server runs with the configuration `set` makes.
    fn with(set: impl FnOnce(&mut ServerConfig)) -> Harness {
        let listen: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let mut cfg = ServerConfig::new("/nonexistent/gpusched-test".into(), listen);
        cfg.default_max_retries = 0;
        // The scenarios written before the node lease lose a silent node's jobs at the
        // heartbeat timeout; those of `liveness.rs` set a longer lease.
        cfg.node_lease = cfg.heartbeat_timeout;
        // Followers change when jobs start; the scenarios of `follow.rs` turn them on.
        cfg.follow = None;
        set(&mut cfg);
        let cfg = Arc::new(cfg);
        // Any fixed start: the state must not care what the wall clock says.
        let now = Now {
            ms: 1_700_000_000_000,
            instant: std::time::Instant::now(),
        };
        let queues = Queues::default();
        let st = State::load(cfg.clone(), vec![], vec![], vec![], queues.clone(), now);
        Harness {
            st,
            cfg,
            queues,
            now,
            store: Store::default(),
            instance: BTreeMap::new(),
            polled: BTreeMap::new(),
            log: String::new(),
        }
    }

    fn line(&mut self, s: impl AsRef<str>) {
        self.log.push_str(s.as_ref());
        self.log.push('\n');
    }

    fn current_attempt(&self, job: u64) -> u32 {
        self.job(job).map_or(0, |j| j.view.attempt)
    }

    /// A job as the server would find it: in memory if live, else in the store.
    fn job(&self, id: u64) -> Option<&JobRecord> {
        self.st
            .jobs
            .get(&id)
            .map(|j| &**j)
            .or_else(|| self.store.jobs.get(&id))
    }

    /// The store's page of ended jobs (`gpusched_store::EndedQuery`, in SQL there): the
    /// ended rows of jobs no longer in memory, newest first.
    fn stored_page(&self, q: &gpusched_store::EndedQuery) -> Vec<JobRecord> {
        self.store
            .jobs
            .range(q.from..q.to)
            .rev()
            .map(|(_, j)| j)
            .filter(|j| j.view.state.is_terminal() && !self.st.jobs.contains_key(&j.view.id))
            .filter(|j| q.states.is_empty() || q.states.contains(&j.view.state))
            .filter(|j| q.user.as_ref().is_none_or(|u| &j.view.user == u))
            .filter(|j| match q.tasks {
                gpusched_store::TaskRows::All => true,
                gpusched_store::TaskRows::None => j.view.array_task.is_none(),
                gpusched_store::TaskRows::Of(a) => {
                    j.view.array_task.is_some_and(|t| t.array_id == a)
                }
            })
            .filter(|j| {
                q.node.as_ref().is_none_or(|n| {
                    j.view.node.as_ref() == Some(n) || j.view.parts.iter().any(|p| &p.node == n)
                })
            })
            .take(q.limit)
            .cloned()
            .collect()
    }

    /// What the actor does before a command: the rows of ended jobs come from the store
    /// (here every one, so any command may name any job).
    fn recall_ended(&mut self) {
        for j in self.store.jobs.values() {
            if j.view.state.is_terminal() && self.st.wants_row(j.view.id) {
                self.st.recall(j.clone());
            }
            if let Some(t) = j.client_token.as_ref().filter(|t| self.st.wants_token(t)) {
                self.st.recall_token(t.clone(), j.view.id);
            }
        }
    }

    /// The node reports that the job's current attempt ended so, measuring nothing.
    fn ended(&mut self, node: &str, job: u64, outcome: Outcome) -> String {
        self.report(
            node,
            job,
            RunEventKind::Ended {
                outcome,
                usage: None,
            },
        )
    }

    fn report(&mut self, node: &str, job: u64, event: RunEventKind) -> String {
        let ev = RunEvent {
            job,
            attempt: self.current_attempt(job),
            at_ms: self.now.ms,
            event,
        };
        let instance = self.instance.get(node).cloned().unwrap_or_default();
        match self.st.report(node, &instance, &[ev]) {
            Ok(()) => "ok".into(),
            Err(f) => format!("{f:?}"),
        }
    }

    fn register(&mut self, name: &str, gpus: u32, running: &[u64]) -> String {
        self.register_as(name, gpus, running, gpusched_wire::agent::AGENT_PROTOCOL)
    }

    fn register_as(&mut self, name: &str, gpus: u32, running: &[u64], protocol: u32) -> String {
        self.register_with(name, gpus, running, protocol, None)
    }

    fn register_with(
        &mut self,
        name: &str,
        gpus: u32,
        running: &[u64],
        protocol: u32,
        containment: Option<gpusched_wire::contain::Containment>,
    ) -> String {
        let running = running
            .iter()
            .map(|&job| AttemptRef {
                job,
                attempt: self.current_attempt(job),
            })
            .collect();
        let reg = Register {
            containment,
            ..node_register(name, gpus, running)
        };
        match self.st.register_as(reg, protocol) {
            Ok(r) => {
                self.instance.insert(name.to_string(), r.instance);
                "ok".into()
            }
            Err(f) => format!("{f:?}"),
        }
    }

    fn step(&mut self, step: Step) {
        self.recall_ended();
        match step {
            Step::Node(name, gpus) => {
                let r = self.register(name, gpus, &[]);
                self.line(format!("node {name} ({gpus} GPUs) registers: {r}"));
            }
            Step::OldNode(name, gpus) => {
                let r = self.register_as(name, gpus, &[], 2);
                self.line(format!(
                    "node {name} ({gpus} GPUs, agent protocol 2) registers: {r}"
                ));
            }
            Step::Reserve(user, spec) => {
                let r = reservation_spec(spec, self.now.ms);
                let got = match self.st.create_reservation(r, &who(user)) {
                    Ok(v) => format!(
                        "ok {} on {} ({} GPUs)",
                        v.spec.name,
                        v.nodes.join(","),
                        v.gpus
                    ),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} reserves {spec}: {got}"));
            }
            Step::Unreserve(user, name) => {
                let got = match self.st.delete_reservation(name, &who(user)) {
                    Ok(_) => "ok".to_string(),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} deletes reservation {name}: {got}"));
            }
            Step::Accounts => {
                for a in self.st.accounts_view(&who("root")).accounts {
                    let users = a.users.iter().map(|u| {
                        format!(
                            "{} {:.2}h rank {} factor {:.3}",
                            u.user, u.usage_gpu_hours, u.rank, u.fair_share
                        )
                    });
                    self.line(format!(
                        "account {}{}: shares {} usage {:.2}h level {}; {}",
                        "  ".repeat(a.depth as usize),
                        a.name,
                        a.shares,
                        a.usage_gpu_hours,
                        a.level_fs.map_or("inf".into(), |l| format!("{l:.3}")),
                        list(users)
                    ));
                }
            }
            Step::Reservations => {
                for v in self.st.list_reservations().reservations {
                    self.line(format!(
                        "reservation {} {:?} on {} jobs [{}]",
                        v.spec.name,
                        v.state,
                        v.nodes.join(","),
                        list(v.jobs)
                    ));
                }
            }
            Step::ModelNode(name, gpus, model) => {
                let mut reg = node_register(name, gpus, Vec::new());
                for g in &mut reg.gpus {
                    g.model = model.into();
                }
                let r = match self
                    .st
                    .register_as(reg, gpusched_wire::agent::AGENT_PROTOCOL)
                {
                    Ok(r) => {
                        self.instance.insert(name.to_string(), r.instance);
                        "ok".to_string()
                    }
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("node {name} ({gpus} {model}) registers: {r}"));
            }
            Step::FeatureNode(name, gpus, features) => {
                let features: Vec<String> = features.split(',').map(String::from).collect();
                let reg = Register {
                    features,
                    ..node_register(name, gpus, Vec::new())
                };
                let r = match self
                    .st
                    .register_as(reg, gpusched_wire::agent::AGENT_PROTOCOL)
                {
                    Ok(r) => {
                        self.instance.insert(name.to_string(), r.instance);
                        "ok".to_string()
                    }
                    Err(f) => format!("{f:?}"),
                };
                let view = (self.st.node_list(&who("root")).nodes)
                    .into_iter()
                    .find(|n| n.name == name)
                    .expect("the node is listed");
                self.line(format!(
                    "node {name} ({gpus} GPUs, features {}) registers: {r}; partitions {}",
                    view.features.join(","),
                    if view.partitions.is_empty() {
                        "-".to_string()
                    } else {
                        view.partitions.join(",")
                    }
                ));
            }
            Step::NodeIs(name) => {
                let state = (self.st.node_list(&who("root")).nodes)
                    .into_iter()
                    .find(|n| n.name == name)
                    .map_or("unknown".to_string(), |n| format!("{:?}", n.state));
                self.line(format!("{name} is {state}"));
            }
            Step::Leave(name) => {
                let instance = self.instance.get(name).cloned().unwrap_or_default();
                let r = match self.st.report(name, &instance, &[]) {
                    Ok(()) => {
                        self.st.node_leaving(name);
                        "ok".to_string()
                    }
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{name} leaves: {r}"));
            }
            Step::Rejoin(name, gpus, running) => {
                let r = self.register(name, gpus, running);
                self.line(format!(
                    "node {name} registers again running {running:?}: {r}"
                ));
            }
            Step::Submit(user, spec) => {
                let (mut job, copies) = job_submit(spec);
                let now = self.st.now.ms;
                if let Some(d) = job.deadline_ms.as_mut() {
                    *d += now;
                }
                let jobs = vec![job; copies];
                // The HTTP layer resolves groups; here `g-USER` stands for a group of
                // USER's, so queue files can open a queue to `g-alice`.
                let mut groups = UserGroups::default();
                for u in jobs
                    .iter()
                    .filter_map(|j| j.user.clone())
                    .chain([user.into()])
                {
                    groups.insert(u.clone(), vec![format!("g-{u}")]);
                }
                let r = match self.st.submit(jobs, &who(user), &groups) {
                    Ok(s) => match s.deadline {
                        None => format!("ok {}", list(s.ids)),
                        Some(d) => format!(
                            "ok {} (deadline {}: finish {}, slack {})",
                            list(s.ids),
                            d.status.name(),
                            d.finish_ms
                                .map_or("unknown".into(), |f| format!("+{}s", (f - now) / 1000)),
                            d.slack_s.map_or("unknown".into(), |s| format!("{s}s"))
                        ),
                    },
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} submits {spec}: {r}"));
            }
            Step::Round => self.round(),
            Step::Poll(node) | Step::PollHeld(node) => {
                let instance = self.instance.get(node).cloned().unwrap_or_default();
                let have = matches!(step, Step::PollHeld(_))
                    .then(|| self.polled.get(node).copied())
                    .flatten();
                let q = PollQuery {
                    node: node.to_string(),
                    instance,
                    gen: 0,
                    have,
                };
                let r = match self.st.poll(&q, true) {
                    Ok(PollResult::Ready(d)) => {
                        self.polled.insert(node.to_string(), d.gen);
                        let mut s = format!(
                            "run {}; cancel {}; preempt {}",
                            list(d.run.iter().map(launch_line)),
                            list(d.cancel.iter().map(|a| format!("{}#{}", a.job, a.attempt))),
                            list(d.preempt.iter().map(|p| format!("{}#{}", p.job, p.attempt))),
                        );
                        if !d.queued.is_empty() {
                            let q = d.queued.iter().map(|q| {
                                format!(
                                    "{}#{} after {}#{} {:?}",
                                    q.launch.job,
                                    q.launch.attempt,
                                    q.after.job,
                                    q.after.attempt,
                                    q.launch.gpus
                                )
                            });
                            write!(s, "; queued {}", list(q)).unwrap();
                        }
                        if !d.power_caps.is_empty() {
                            let caps = d
                                .power_caps
                                .iter()
                                .map(|(g, mw)| format!("{g}:{} W", mw / 1000));
                            write!(s, "; power caps {}", list(caps)).unwrap();
                        }
                        if !d.reserve_ports.is_empty() {
                            let r = d
                                .reserve_ports
                                .iter()
                                .map(|a| format!("{}#{}", a.job, a.attempt));
                            write!(s, "; reserve port {}", list(r)).unwrap();
                        }
                        if !d.run_known.is_empty() || !d.queued_known.is_empty() {
                            let held = d
                                .run_known
                                .iter()
                                .map(|a| format!("{}#{}", a.job, a.attempt))
                                .chain(d.queued_known.iter().map(|q| {
                                    format!(
                                        "{}#{} after {}#{}",
                                        q.attempt.job,
                                        q.attempt.attempt,
                                        q.after.job,
                                        q.after.attempt
                                    )
                                }));
                            write!(s, "; held {}", list(held)).unwrap();
                        }
                        s
                    }
                    Ok(PollResult::Wait(_)) => "wait".into(),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{node} polls: {r}"));
            }
            Step::Started(node, job) => {
                let r = self.report(
                    node,
                    job,
                    RunEventKind::Started {
                        pid: 100 + job as u32,
                        mig_uuid: None,
                    },
                );
                self.line(format!("{node} reports {job} started: {r}"));
            }
            Step::Exit(node, job, code) => {
                let outcome = Outcome::Exited { code };
                let r = self.report(
                    node,
                    job,
                    RunEventKind::Ended {
                        outcome,
                        usage: None,
                    },
                );
                self.line(format!("{node} reports {job} exited {code}: {r}"));
            }
            Step::Lost(node, job) => {
                let outcome = Outcome::Lost {
                    message: "the agent lost it".into(),
                };
                let r = self.ended(node, job, outcome);
                self.line(format!("{node} reports {job} lost: {r}"));
            }
            Step::Preempted(node, job) => {
                let outcome = Outcome::Preempted;
                let r = self.report(
                    node,
                    job,
                    RunEventKind::Ended {
                        outcome,
                        usage: None,
                    },
                );
                self.line(format!("{node} reports {job} preempted: {r}"));
            }
            Step::Port(node, job, port) => {
                let r = self.report(node, job, RunEventKind::PortReserved { port });
                self.line(format!("{node} reports {job} port {port}: {r}"));
            }
            Step::Stopped(node, job) => {
                let outcome = Outcome::Stopped {
                    message: "the agent was told to stop".into(),
                };
                let r = self.report(
                    node,
                    job,
                    RunEventKind::Ended {
                        outcome,
                        usage: None,
                    },
                );
                self.line(format!("{node} reports {job} stopped: {r}"));
            }
            Step::Cancelled(node, job) => {
                let outcome = Outcome::Cancelled;
                let r = self.report(
                    node,
                    job,
                    RunEventKind::Ended {
                        outcome,
                        usage: None,
                    },
                );
                self.line(format!("{node} reports {job} cancelled: {r}"));
            }
            Step::TimedOut(node, job) => {
                let outcome = Outcome::TimedOut { walltime_s: 60 };
                let r = self.report(
                    node,
                    job,
                    RunEventKind::Ended {
                        outcome,
                        usage: None,
                    },
                );
                self.line(format!("{node} reports {job} timed out: {r}"));
            }
            Step::Logs(job, node, rank) => {
                let owner = self.job(job).expect("the job exists").view.user.clone();
                let ask = super::LogAsk {
                    attempt: None,
                    node: node.map(String::from),
                    rank,
                };
                let r = match self.st.log_target(job, &ask, &who(&owner)) {
                    Ok(t) => format!("{} rank {:?}", t.url, t.rank),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("logs of {job} node {node:?} rank {rank:?}: {r}"));
            }
            Step::Hold(user, job) => {
                let r = self.st.hold(job, &who(user)).map(|v| v.reason);
                self.line(format!("{user} holds {job}: {}", outcome(r)));
            }
            Step::Release(user, job) => {
                let r = self.st.release_hold(job, &who(user)).map(|v| v.reason);
                self.line(format!("{user} releases {job}: {}", outcome(r)));
            }
            Step::Update(user, job, spec) => {
                let up = job_update(spec);
                let r = self
                    .st
                    .update(job, &up, &who(user), &UserGroups::default())
                    .map(|v| {
                        format!(
                            "priority {} walltime {:?} queue {}",
                            v.priority, v.walltime_s, v.queue
                        )
                    });
                self.line(format!("{user} updates {job} {spec}: {}", outcome(r)));
            }
            Step::Workflow(user, spec) => {
                let wf = workflow(spec);
                let r = self
                    .st
                    .submit_workflow(wf, &who(user), &UserGroups::default())
                    .map(|s| list(s.ids.iter().map(|(k, id)| format!("{k}={id}"))));
                self.line(format!("{user} submits workflow {spec}: {}", outcome(r)));
            }
            Step::Cancel(user, job) => {
                let r = match self.st.cancel(job, &who(user)) {
                    Ok(c) => format!("{} ({})", c.result, c.state.name()),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} cancels {job}: {r}"));
            }
            Step::Wait(s) => {
                self.now = self.now.after(Duration::from_secs(s));
                self.st.begin_round(self.now);
                self.line(format!("{s}s pass"));
            }
            Step::Power => {
                let p = self.st.power_level();
                self.line(format!(
                    "power: {} W drawn at caps, {} held; idle nodes {}, down {}; idle node-s {}, \
                     down node-s {}, idle J {}",
                    p.view.drawn_w,
                    p.view.held_jobs,
                    p.idle_nodes,
                    p.down_nodes,
                    p.idle_node_seconds,
                    p.down_node_seconds,
                    p.idle_joules
                ));
            }
            Step::Quantum => {
                let slowest = self.st.checkpoint_cost.slowest_s();
                let slowest = slowest.map_or("none".into(), |s| format!("{s} s"));
                let q = self.st.rr_quantum();
                self.line(format!(
                    "rr's turn {q} s; slowest checkpoint measured {slowest}"
                ));
            }
            Step::Tick => {
                self.st.expire_nodes(Duration::ZERO);
                self.st.schedule_if_quotas();
                self.st.schedule_if_preemptive();
                self.line("tick");
            }
            Step::TickAfterStall(s) => {
                self.st.expire_nodes(Duration::from_secs(s));
                self.st.schedule_if_quotas();
                self.line(format!("tick after a {s}s stall"));
            }
            Step::Queues(text) => {
                let q = Queues::parse(text, "queues.toml").expect("a valid queue file");
                let r = self.st.reload_queues(q.clone());
                if r.is_ok() {
                    self.queues = q;
                }
                self.line(format!("queues reload: {r:?}"));
            }
            Step::Reason(job, want) => {
                let v = self.st.get(job, &who("root")).expect("the job exists");
                assert_eq!(v.state, JobState::Pending, "job {job} is not pending");
                assert!(
                    v.reason.contains(want),
                    "job {job}'s reason {:?} does not say {want:?}",
                    v.reason
                );
            }
            Step::Token(user) => {
                let req = TokenCreate {
                    user: user.to_string(),
                    role: Role::User,
                };
                let r = match self.st.create_token(req, &who("root")) {
                    Ok(t) => format!("ok {}", t.id),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("token for {user}: {r}"));
            }
            Step::Revoke(id) => {
                let r = match self.st.revoke_token(id, &who("root")) {
                    Ok(t) => format!("revoked {}", t.revoked),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("revoke token {id}: {r}"));
            }
            Step::Schema2Rows => {
                for j in self.store.jobs.values_mut() {
                    j.view.parts.clear();
                }
                self.line("the stored rows have no parts (schema 2)");
            }
            Step::Parts(job, n) => {
                let parts = &self.st.jobs[&job].view.parts;
                assert_eq!(parts.len(), n, "job {job}'s parts: {parts:?}");
                let v = &self.st.jobs[&job].view;
                if let Some(p) = parts.first() {
                    assert_eq!(Some(&p.node), v.node.as_ref());
                    assert_eq!(p.gpu_indices, v.gpu_indices);
                    // The shape is the placement's (a split job's is chosen by it).
                    assert_eq!(v.nodes as usize, n, "job {job}'s nodes");
                    assert_eq!(v.gpus_per_node as usize, p.gpu_indices.len());
                }
            }
            Step::Drain(user, node, reason, now) => {
                let req = gpusched_wire::DrainRequest {
                    reason: Some(reason.to_string()),
                    now,
                };
                let r = match self.st.drain(&who(user), node, &req) {
                    Ok(v) => format!("ok, drained by {}", v.drain.map_or("-".into(), |d| d.by)),
                    Err(f) => format!("{f:?}"),
                };
                let flag = if now { " --now" } else { "" };
                self.line(format!("{user} drains {node}{flag} ({reason}): {r}"));
            }
            Step::Resume(user, node) => {
                let r = match self.st.resume(&who(user), node) {
                    Ok(_) => "ok".to_string(),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} resumes {node}: {r}"));
            }
            Step::Sample(node, gpu, spec) => {
                let mut s = gpusched_wire::GpuSample {
                    index: gpu,
                    at_ms: self.now.ms,
                    temp_c: Some(50),
                    ecc_uncorrected: Some(0),
                    ..Default::default()
                };
                for kv in spec.split_whitespace() {
                    match kv.split_once('=') {
                        Some(("temp", v)) => s.temp_c = Some(v.parse().unwrap()),
                        Some(("ecc", v)) => s.ecc_uncorrected = Some(v.parse().unwrap()),
                        Some(("energy", v)) => s.energy_mj = Some(v.parse().unwrap()),
                        Some(("util", v)) => s.util_pct = Some(v.parse().unwrap()),
                        Some(("xid", v)) => s.xids.push(gpusched_wire::XidEvent {
                            code: v.parse().unwrap(),
                            at_ms: self.now.ms,
                        }),
                        None if kv == "lost" => s.lost = true,
                        _ => panic!("unknown sample key {kv}"),
                    }
                }
                let t = gpusched_wire::NodeTelemetry { gpus: vec![s] };
                let instance = self.instance.get(node).cloned().unwrap_or_default();
                let r = match self.st.report(node, &instance, &[]) {
                    Ok(()) => {
                        self.st.telemetry(node, &t);
                        "ok".to_string()
                    }
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{node} reports GPU {gpu} {spec}: {r}"));
            }
            Step::Energy(id) => {
                let e = self.job(id).map(|j| j.view.energy_j);
                match e {
                    Some(Some(j)) => self.line(format!("energy of job {id}: {j} J")),
                    Some(None) => self.line(format!("energy of job {id}: none")),
                    None => self.line(format!("energy of job {id}: no such job")),
                }
            }
            Step::UsageEnergy => {
                let q = gpusched_wire::UsageQuery::default();
                // The store's part: the jobs that ended and left memory.
                let ended = self.store.jobs.values().filter(|j| {
                    j.view.state.is_terminal() && !self.st.jobs.contains_key(&j.view.id)
                });
                let stored = crate::state::usage::ended_sums(ended, 0, false);
                let rows = self.st.usage(&q, &who("root"), stored).unwrap().rows;
                let rows: Vec<String> = rows
                    .iter()
                    .map(|r| format!("{} {:.6} kWh", r.key, r.energy_kwh))
                    .collect();
                self.line(format!("usage: {}", rows.join(", ")));
            }
            Step::UsageIdle => {
                let q = gpusched_wire::UsageQuery::default();
                let ended = self.store.jobs.values().filter(|j| {
                    j.view.state.is_terminal() && !self.st.jobs.contains_key(&j.view.id)
                });
                let stored = crate::state::usage::ended_sums(ended, 0, false);
                let rows = self.st.usage(&q, &who("root"), stored).unwrap().rows;
                let rows: Vec<String> = rows
                    .iter()
                    .map(|r| format!("{} {:.4} idle GPU-hours", r.key, r.idle_gpu_hours))
                    .collect();
                self.line(format!("usage: {}", rows.join(", ")));
            }
            Step::Idle(job) => {
                let v = self.st.get(job, &who("root")).expect("the job exists");
                let idle = v
                    .idle_gpu_s
                    .map_or("none".into(), |ms| format!("{ms} GPU-s"));
                self.line(format!("idle of job {job}: {idle}"));
            }
            Step::UsageAllTime => {
                let ended: Vec<crate::record::JobRecord> = self
                    .store
                    .jobs
                    .values()
                    .filter(|j| {
                        j.view.state.is_terminal() && !self.st.jobs.contains_key(&j.view.id)
                    })
                    .cloned()
                    .collect();
                if self.st.wants_all_time_usage() {
                    let pairs = crate::state::usage::ended_pairs(ended.iter());
                    self.st.set_all_time_usage(pairs);
                }
                for by_queue in [false, true] {
                    let ask = crate::state::usage::UsageAsk {
                        since_ms: 0,
                        by_queue,
                        by_account: false,
                        user: None,
                    };
                    let kept = self.st.all_time_usage(&ask);
                    let want = crate::state::usage::ended_sums(ended.iter(), 0, by_queue);
                    assert_eq!(kept.len(), want.len(), "{kept:?} {want:?}");
                    for (k, w) in kept.iter().zip(&want) {
                        assert_eq!(
                            (
                                &k.key,
                                k.jobs,
                                k.succeeded,
                                k.failed,
                                k.cancelled,
                                k.energy_j
                            ),
                            (
                                &w.key,
                                w.jobs,
                                w.succeeded,
                                w.failed,
                                w.cancelled,
                                w.energy_j
                            )
                        );
                        assert!((k.gpu_hours - w.gpu_hours).abs() < 1e-9, "{k:?} {w:?}");
                        assert!((k.wait_s - w.wait_s).abs() < 1e-9, "{k:?} {w:?}");
                    }
                    let rows: Vec<String> = kept
                        .iter()
                        .map(|r| format!("{} {} jobs {:.6} GPU-h", r.key, r.jobs, r.gpu_hours))
                        .collect();
                    let by = if by_queue { "queue" } else { "user" };
                    self.line(format!("usage over all time by {by}: {}", rows.join(", ")));
                }
            }
            Step::RequeueUnhealthy => {
                let mut cfg = (*self.cfg).clone();
                cfg.unhealthy_jobs = crate::config::UnhealthyJobs::Requeue;
                self.cfg = Arc::new(cfg);
                self.st.cfg = self.cfg.clone();
                self.line("the server requeues jobs on unhealthy GPUs");
            }
            Step::Nodes => {
                for n in self.st.node_list(&who("root")).nodes {
                    let drain = n.drain.map_or("-".into(), |d| {
                        format!("{} by {} now={}", d.reason, d.by, d.now)
                    });
                    let health = n.gpu_health.iter().map(|(g, h)| match h {
                        gpusched_wire::GpuHealth::Healthy => format!("{g}:healthy"),
                        gpusched_wire::GpuHealth::Unhealthy { reason, .. } => {
                            format!("{g}:{reason}")
                        }
                    });
                    let line = format!(
                        "nodes: {} drain {drain}; unhealthy {}",
                        n.name,
                        list(health)
                    );
                    self.line(line);
                }
            }
            Step::Events(user, id) => {
                if let Err(f) = self.st.may_read_events(id, &who(user)) {
                    self.line(format!("{user} reads events of {id}: {f:?}"));
                    return;
                }
                self.line(format!("{user} reads events of {id}:"));
                let events = self.store.events.get(&id).cloned().unwrap_or_default();
                for e in events {
                    let at = (e.at_ms - 1_700_000_000_000) / 1000;
                    let line = format!(
                        "- {at}s {} #{} [{}] {}",
                        e.kind.name(),
                        e.attempt,
                        e.nodes.join(","),
                        e.detail
                    );
                    self.line(line.trim_end());
                }
            }
            Step::Audit => {
                let q = Default::default();
                if let Err(f) = self.st.may_read_audit(&q, &who("alice")) {
                    self.line(format!("alice reads the audit log: {f:?}"));
                }
                self.line("audit log:");
                let entries = self.store.audit.clone();
                for e in entries {
                    let at = (e.at_ms - 1_700_000_000_000) / 1000;
                    let line = format!(
                        "- {at}s {} {} {}: {}",
                        e.actor,
                        e.action.name(),
                        e.target,
                        e.detail
                    );
                    self.line(line.trim_end());
                }
            }
            Step::Checkpoint(user, id) => {
                let r = match self.st.checkpoint(id, &who(user)) {
                    Ok(_) => "ok".to_string(),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} reports a checkpoint of {id}: {r}"));
            }
            Step::Speeds(user, id) => {
                let r = match self.st.get(id, &who(user)) {
                    Ok(v) => match v.speed {
                        None => "none".to_string(),
                        Some(s) => {
                            let on: Vec<String> =
                                s.on.iter()
                                    .map(|m| format!("{} {:.2} {}", m.model, m.factor, m.source))
                                    .collect();
                            format!("declared {:?}; {}", s.declared, on.join(", "))
                        }
                    },
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} speeds of {id}: {r}"));
            }
            Step::Deadline(user, id) => {
                let now = self.st.now.ms as i64;
                let r = match self.st.get(id, &who(user)) {
                    Ok(v) => match v.deadline {
                        None => "none".to_string(),
                        Some(d) => format!(
                            "due +{}s, {}, finish {}, slack {}",
                            (d.at_ms as i64 - now) / 1000,
                            d.status.name(),
                            d.finish_ms.map_or("unknown".into(), |f| format!(
                                "{:+}s",
                                (f as i64 - now) / 1000
                            )),
                            d.slack_s.map_or("unknown".into(), |s| format!("{s}s"))
                        ),
                    },
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} deadline of {id}: {r}"));
            }
            Step::Show(user, id) => {
                let r = match self.st.get(id, &who(user)) {
                    Ok(v) => format!("{} {}: {}", v.id, v.state.name(), v.reason),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} shows {id}: {r}"));
            }
            Step::List(user, spec) => {
                let mut q = gpusched_wire::JobListQuery::default();
                for kv in spec.split_whitespace() {
                    let (k, v) = kv.split_once('=').expect("key=value");
                    match k {
                        "state" => q.state = Some(v.to_string()),
                        "limit" => q.limit = Some(v.parse().unwrap()),
                        "before" => q.before = Some(v.parse().unwrap()),
                        "after" => q.after = Some(v.parse().unwrap()),
                        "user" => q.user = Some(v.to_string()),
                        "node" => q.node = Some(v.to_string()),
                        _ => panic!("unknown list key {k}"),
                    }
                }
                let stored = match self.st.ended_query(&q, &who(user)) {
                    Ok(Some(eq)) => self.stored_page(&eq),
                    Ok(None) => Vec::new(),
                    Err(f) => {
                        self.line(format!("{user} lists {spec}: {f:?}"));
                        return;
                    }
                };
                let r = match self.st.list(&q, &who(user), stored) {
                    Ok(l) => {
                        let jobs = l
                            .jobs
                            .iter()
                            .map(|v| format!("{}:{}", v.id, v.state.name()));
                        format!("{}; next_before {:?}", list(jobs), l.next_before)
                    }
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} lists {spec}: {r}"));
            }
            Step::Tasks(user, id) => {
                let q = gpusched_wire::JobListQuery::default();
                let stored = match self.st.task_query(id, &q, &who(user)) {
                    Ok(Some(eq)) => self.stored_page(&eq),
                    Ok(None) => Vec::new(),
                    Err(f) => {
                        self.line(format!("{user} lists the tasks of {id}: {f:?}"));
                        return;
                    }
                };
                let r = match self.st.list_tasks(id, &q, &who(user), stored) {
                    Ok(l) => {
                        let jobs = l.jobs.iter().map(|v| {
                            let index = v.array_task.map_or(0, |t| t.index);
                            format!("{}:{id}.{index}:{}", v.id, v.state.name())
                        });
                        format!("{}; next_before {:?}", list(jobs), l.next_before)
                    }
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} lists the tasks of {id}: {r}"));
            }
            Step::CancelTask(user, id, index) => {
                let r = match self.st.cancel_task(id, index, &who(user)) {
                    Ok(c) => format!("{} ({}) job {}", c.result, c.state.name(), c.id),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} cancels {id}.{index}: {r}"));
            }
            Step::Counts(id) => {
                let v = match self.st.get(id, &who("root")) {
                    Ok(v) => v,
                    Err(f) => return self.line(format!("job {id}: {f:?}")),
                };
                let Some(c) = v.array_counts else {
                    self.line(format!("job {id} is not an array"));
                    return;
                };
                self.line(format!(
                    "array {id} {}: pending {} starting {} running {} succeeded {} failed {} \
                     cancelled {} timed_out {}",
                    v.state.name(),
                    c.pending,
                    c.starting,
                    c.running,
                    c.succeeded,
                    c.failed,
                    c.cancelled,
                    c.timed_out
                ));
            }
            Step::Task(id, index) => {
                let r = match self.st.task_view(id, index, &who("root")) {
                    Ok(v) => format!("job {} {} {}: {}", v.id, v.name, v.state.name(), v.reason),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("task {id}.{index}: {r}"));
            }
            Step::ContainedNode(name, gpus) => {
                let c = gpusched_wire::contain::Containment {
                    cgroup: gpusched_wire::contain::CgroupMode::V1,
                    enforced: ["memory", "cpu", "cpuset", "pids", "devices", "kill"]
                        .map(String::from)
                        .into(),
                    notes: Vec::new(),
                    image_runtime: Some("podman 4.3.1".into()),
                };
                let protocol = gpusched_wire::agent::AGENT_PROTOCOL;
                let r = self.register_with(name, gpus, &[], protocol, Some(c));
                self.line(format!(
                    "node {name} ({gpus} GPUs, contained) registers: {r}"
                ));
            }
            Step::Protocol3Node(name, gpus) => {
                let r = self.register_as(name, gpus, &[], 3);
                self.line(format!(
                    "node {name} ({gpus} GPUs, agent protocol 3) registers: {r}"
                ));
            }
            Step::Enforces(name) => {
                let nodes = self.st.node_list(&who("alice")).nodes;
                let c = nodes
                    .iter()
                    .find(|n| n.name == name)
                    .and_then(|n| n.containment.clone())
                    .expect("every node says what it enforces");
                self.line(format!(
                    "{name} enforces {} [{}] images {}; notes: {}",
                    c.cgroup.as_str(),
                    c.enforced.join(" "),
                    c.image_runtime.as_deref().unwrap_or("-"),
                    list(c.notes)
                ));
            }
            Step::Contain(id, spec) => {
                let v = &mut self.st.jobs.get_mut(&id).expect("a live job").view;
                for kv in spec.split_whitespace() {
                    match kv.split_once('=').expect("key=value") {
                        ("image", i) => v.image = Some(i.to_string()),
                        ("pids", n) => v.pids_max = Some(n.parse().unwrap()),
                        (k, _) => panic!("unknown containment key {k}"),
                    }
                }
                self.line(format!("to run job {id} contained: {spec}"));
            }
            Step::Used(node, job, code, spec) => {
                let event = RunEventKind::Ended {
                    outcome: Outcome::Exited { code },
                    usage: (!spec.is_empty()).then(|| usage_of(spec)),
                };
                let r = self.report(node, job, event);
                self.line(format!(
                    "{node} reports {job} exited {code} using {spec}: {r}"
                ));
            }
            Step::OutOfMemory(node, job, peak, limit) => {
                let event = RunEventKind::Ended {
                    outcome: Outcome::OutOfMemory {
                        peak_bytes: peak << 20,
                        limit_bytes: limit << 20,
                    },
                    usage: Some(gpusched_wire::contain::Usage {
                        cpu_ms: 9_000,
                        mem_peak_bytes: Some(peak << 20),
                        ..Default::default()
                    }),
                };
                let r = self.report(node, job, event);
                self.line(format!("{node} reports {job} out of memory: {r}"));
            }
            Step::UsedBy(id) => {
                let line = match self.job(id).map(|j| &j.view) {
                    None => "no such job".to_string(),
                    Some(v) => match v.usage.as_deref() {
                        None => "nothing measured".to_string(),
                        Some(u) => {
                            let ran = v.start_ms.zip(v.end_ms).map(|(s, e)| e - s);
                            let parts = v.parts.len().max(1) as u32;
                            gpusched_wire::contain::usage_text(u, ran, v.mem_mib, parts)
                        }
                    },
                };
                self.line(format!("used by job {id}: {line}"));
            }
            Step::UsageUsed => {
                let q = gpusched_wire::UsageQuery::default();
                let ended = self.store.jobs.values().filter(|j| {
                    j.view.state.is_terminal() && !self.st.jobs.contains_key(&j.view.id)
                });
                let stored = crate::state::usage::ended_sums(ended, 0, false);
                let rows = self.st.usage(&q, &who("root"), stored).unwrap().rows;
                let rows: Vec<String> = rows
                    .iter()
                    .map(|r| {
                        format!(
                            "{} {:.6} CPU-h {:.6} GiB-h",
                            r.key, r.cpu_hours, r.mem_gib_hours
                        )
                    })
                    .collect();
                self.line(format!("usage: {}", rows.join(", ")));
            }
            Step::ServiceNew(user, spec) => {
                let groups = UserGroups::default();
                let r = match self
                    .st
                    .create_service(service_spec(spec), &who(user), &groups)
                {
                    Ok(v) => format!("ok version {}", v.version),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} creates service {spec}: {r}"));
            }
            Step::ServiceUpdate(user, spec) => {
                let groups = UserGroups::default();
                let s = service_spec(spec);
                let name = s.name.clone();
                let r = match self.st.update_service(&name, s, &who(user), &groups) {
                    Ok(v) => format!("ok version {}", v.version),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} updates service {spec}: {r}"));
            }
            Step::ServiceDelete(user, name) => {
                let r = match self.st.delete_service(name, &who(user)) {
                    Ok(v) => format!("ok: {}", v.status),
                    Err(f) => format!("{f:?}"),
                };
                self.line(format!("{user} deletes service {name}: {r}"));
            }
            Step::ServiceShow(name) => match self.st.service_view(name, &who("root")) {
                Ok(v) => {
                    self.line(format!(
                        "service {name} v{} desired {} ready {} failures {}: {}",
                        v.version, v.desired, v.ready, v.failures, v.status
                    ));
                    for r in v.replicas_list {
                        self.line(format!(
                            "  replica {} v{} {:?}{}{}",
                            r.job,
                            r.version,
                            r.phase,
                            r.node.map(|n| format!(" on {n}")).unwrap_or_default(),
                            r.url.map(|u| format!(" {u}")).unwrap_or_default()
                        ));
                    }
                }
                Err(f) => self.line(format!("service {name}: {f:?}")),
            },
            Step::Listening(node, job, port) => {
                let r = self.report(node, job, RunEventKind::Listening { port });
                self.line(format!("{node} reports {job} listening on {port}: {r}"));
            }
            Step::Ready(node, job, ready) => {
                let message = (!ready).then(|| "GET /ready: status 503".to_string());
                let r = self.report(node, job, RunEventKind::Ready { ready, message });
                let what = if ready { "ready" } else { "not ready" };
                self.line(format!("{node} reports {job} {what}: {r}"));
            }
            Step::Unhealthy(node, job) => {
                let outcome = Outcome::Unhealthy {
                    message: "liveness probe failed 3 times in a row: connection refused".into(),
                };
                let r = self.ended(node, job, outcome);
                self.line(format!("{node} reports {job} unhealthy: {r}"));
            }
            Step::Sync(gateway, load) => {
                let load = load
                    .split_whitespace()
                    .map(|l| {
                        let mut it = l.split(':');
                        gpusched_wire::ServiceLoad {
                            service: it.next().unwrap().to_string(),
                            in_flight: it.next().unwrap().parse().unwrap(),
                            queued: it.next().unwrap().parse().unwrap(),
                            p95_ms: None,
                            answered: 0,
                        }
                    })
                    .collect();
                let set = self.st.gateway_sync(gpusched_wire::GatewaySync {
                    gateway: gateway.to_string(),
                    load,
                });
                let services = set.services.iter().map(|s| {
                    let urls = s.endpoints.iter().map(|e| format!("{} {}", e.job, e.url));
                    format!("{} (desired {}) [{}]", s.name, s.desired, list(urls))
                });
                self.line(format!("gateway {gateway} syncs: {}", list(services)));
            }
            Step::Restart => {
                let s = &self.store;
                self.st = State::load(
                    self.cfg.clone(),
                    s.jobs.values().cloned().collect(),
                    s.nodes.values().cloned().collect(),
                    s.tokens.values().cloned().collect(),
                    self.queues.clone(),
                    self.now,
                );
                self.st
                    .restore_services(self.store.services.values().cloned().collect());
                self.st
                    .restore_reservations(self.store.reservations.values().cloned().collect());
                let live_compact = (self.store.compact.iter())
                    .filter(|id| {
                        (self.store.jobs.get(id)).is_some_and(|j| !j.view.state.is_terminal())
                    })
                    .copied()
                    .collect();
                self.st.restore_compact(live_compact);
                let meta = |k| self.store.meta.get(k).map(String::as_str);
                let (p, a) = (
                    meta(super::learn::PREDICTOR_KEY),
                    meta(super::learn::ATTAINED_KEY),
                );
                self.st.restore_learnt(p, a);
                self.st
                    .restore_fair_usage(meta(super::accounts::FAIR_USAGE_KEY));
                self.line("server restarts");
                // Only live jobs are loaded: ended ones stay in the store.
                let jobs: Vec<String> = self.st.jobs.values().map(|j| job_line(j)).collect();
                for j in jobs {
                    self.line(format!("  {j}"));
                }
                let ended = (self.store.jobs.values())
                    .filter(|j| j.view.state.is_terminal())
                    .count();
                if ended > 0 {
                    self.line(format!("ended, in the store only: {ended}"));
                }
            }
        }
    }

    /// The end of a round, as the actor does it: the pass, then the commit of exactly
    /// the marked rows; checks that they are exactly the rows that changed.
    fn round(&mut self) {
        self.st.schedule();
        let mut rows = self.st.take_touched();
        let changed_jobs: BTreeSet<u64> = self
            .st
            .jobs
            .iter()
            // A task its array's row lists has no row of its own (`unwritten.rs`);
            // whether the store rebuilds it is checked below, after the commit.
            .filter(|(id, _)| !self.st.listed.contains(**id))
            .filter(|(id, j)| {
                // Energy totals change unstored by design (`energy.rs`): they ride on
                // the row's next write, so they alone do not count as a change.
                self.store.jobs.get(*id).is_none_or(|s| {
                    let mut s = s.clone();
                    s.view.energy_j = j.view.energy_j;
                    // So is an allocation's idle time (`idle.rs`).
                    s.view.idle_gpu_s = j.view.idle_gpu_s;
                    s != ***j
                })
            })
            .map(|(id, _)| *id)
            .collect();
        let changed_nodes: BTreeSet<String> = self
            .st
            .nodes
            .iter()
            .filter(|(k, n)| self.store.nodes.get(*k) != Some(&n.record))
            .map(|(k, _)| k.clone())
            .collect();
        let changed_tokens: BTreeSet<u64> = self
            .st
            .tokens
            .iter()
            .filter(|(id, t)| self.store.tokens.get(*id) != Some(*t))
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(rows.jobs, changed_jobs, "job rows marked vs changed");
        assert_eq!(rows.nodes, changed_nodes, "node rows marked vs changed");
        assert_eq!(rows.tokens, changed_tokens, "token rows marked vs changed");
        let mut changed_services: BTreeSet<String> = self
            .st
            .services
            .records
            .iter()
            .filter(|(name, r)| self.store.services.get(*name) != Some(*r))
            .map(|(name, _)| name.clone())
            .collect();
        changed_services.extend(
            (self.store.services.keys())
                .filter(|name| !self.st.services.records.contains_key(*name))
                .cloned(),
        );
        assert_eq!(
            rows.services, changed_services,
            "service rows marked vs changed"
        );
        for name in &rows.services {
            match self.st.services.records.get(name) {
                Some(r) => self.store.services.insert(name.clone(), r.clone()),
                None => self.store.services.remove(name),
            };
        }
        for name in &rows.reservations {
            match self.st.reservations.get(name) {
                Some(r) => self.store.reservations.insert(name.clone(), r.clone()),
                None => self.store.reservations.remove(name),
            };
        }
        // As the actor commits: tasks that fit a compact record are written as one
        // (with their events), and read back rebuilt from their array's stored row.
        let written = rows.jobs.clone();
        let mut journal = self.st.take_journal();
        let compact = self.st.compact_tasks(&mut rows, &mut journal);
        for id in &compact.promoted {
            assert!(rows.jobs.contains(id), "a promoted task {id} gets its row");
            assert!(
                self.store.compact.contains(id),
                "task {id} was a compact record"
            );
            self.store.promoted.insert(*id);
        }
        for id in &rows.jobs {
            self.store.jobs.insert(*id, (*self.st.jobs[id]).clone());
            assert!(
                !self.store.compact.contains(id) || compact.promoted.contains(id),
                "compact task {id} got a job row without its record going"
            );
            self.store.compact.remove(id);
        }
        for t in compact.tasks {
            let array = self.store.jobs[&t.array_id].to_row();
            let task = crate::record::JobRecord::from_row(gpusched_store::rebuild(&array, &t));
            assert_eq!(
                task, *self.st.jobs[&t.id],
                "task {} as its record rebuilds it",
                t.id
            );
            self.store.jobs.insert(t.id, task);
            self.store.compact.insert(t.id);
            self.store.events.entry(t.id).or_default().extend(t.events);
        }
        let rows = Rows {
            jobs: written,
            ..rows
        };
        for name in &rows.nodes {
            let record = self.st.nodes[name].record.clone();
            self.store.nodes.insert(name.clone(), record);
        }
        for id in &rows.tokens {
            self.store.tokens.insert(*id, self.st.tokens[id].clone());
        }
        self.check_listed_tasks_rebuild();
        self.check_runs_told();
        for (id, e) in journal.events {
            self.store.events.entry(id).or_default().push(e);
        }
        self.store.audit.extend(journal.audit);
        for (key, value) in self.st.take_learnt_writes() {
            self.store.meta.insert(key, value);
        }
        let woke = std::mem::take(&mut self.st.touched.bumped);
        let ended = std::mem::take(&mut self.st.touched.ended);
        // Services only where a round wrote one (the scenarios before them say nothing).
        let mut services = match rows.services.is_empty() {
            true => String::new(),
            false => format!(" services {}", list(&rows.services)),
        };
        if !rows.reservations.is_empty() {
            services.push_str(&format!(" reservations {}", list(&rows.reservations)));
        }
        self.line(format!(
            "round: wrote jobs {} nodes {} tokens {}{services}; woke {}; ended {}",
            list(&rows.jobs),
            list(&rows.nodes),
            list(&rows.tokens),
            list(woke),
            list(ended)
        ));
        for id in &rows.jobs {
            let line = job_line(&self.st.jobs[id]);
            self.line(format!("  {line}"));
        }
        // As the actor does after the commit: ended jobs leave memory.
        self.st.forget_ended();
        let kept: BTreeSet<u64> = self.st.jobs.keys().copied().collect();
        assert!(
            kept.iter()
                .all(|id| !self.st.jobs[id].view.state.is_terminal()),
            "an ended job stayed in memory: {kept:?}"
        );
    }
}

impl Harness {
    /// The core decides preemptions from the runs the server told it (`runs.rs`): after
    /// every round, what it holds of each placed job's run is exactly the job's row.
    fn check_runs_told(&self) {
        for id in self.st.cluster.placed() {
            let Some(job) = self.st.jobs.get(&id) else {
                continue;
            };
            assert_eq!(
                self.st.cluster.run(id),
                Some(super::runs::run_facts(&job.view)),
                "job {id}: the core's run differs from its row"
            );
        }
    }

    /// Every live job the store has no row of is listed by its array's stored row, and
    /// rebuilt from that entry exactly as it is in memory: what a restart would load.
    fn check_listed_tasks_rebuild(&self) {
        for (id, job) in &self.st.jobs {
            if self.store.jobs.contains_key(id) {
                continue;
            }
            let t = job
                .view
                .array_task
                .unwrap_or_else(|| panic!("job {id} is live, not an array task, and has no row"));
            let array = &self.store.jobs[&t.array_id];
            let list = array.array_progress.as_deref().map(|p| &p.unwritten[..]);
            let entry = list
                .and_then(|l| l.iter().find(|e| e.id == *id))
                .unwrap_or_else(|| panic!("task {id} has no row and its array does not list it"));
            assert_eq!(
                super::unwritten::rebuilt(array, entry),
                **job,
                "task {id}: the store would rebuild it otherwise"
            );
        }
    }
}

/// Runs one scenario and compares its transcript with the expected text, without the
/// indentation its lines share (`gpusched_expect::check`). With `UPDATE_EXPECT=1`, a
/// transcript that differs is written into the expected text instead of failing.
#[track_caller]
fn run(name: &str, steps: &[Step], expected: &str) {
    run_with(name, |_| {}, steps, expected);
}

/// [`run`] with the server configured by `set`.
#[track_caller]
fn run_with(name: &str, set: impl FnOnce(&mut ServerConfig), steps: &[Step], expected: &str) {
    let at = std::panic::Location::caller();
    let mut h = Harness::with(set);
    for &step in steps {
        h.step(step);
    }
    gpusched_expect::check(at, name, expected, &h.log);
}
