//! The harness: plays the steps, waits for evidence and prints the transcript.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use gpusched_wire::{AttemptRef, NodeLocation, Outcome, Register, RunEvent, RunEventKind};
use tokio::sync::watch;

use super::checks::{alive, port_free};
use super::fake::{
    acked_events, acked_samples, desired, find_event, gpus, lock, pid_of, port_of, serve, xids,
    Fake, Heard, Shared, World,
};
use super::{AgentConfig, Cond, Node, Order, Step, STOP_WAIT, WAIT};
use crate::gpu::{FakeNvml, FakeTopology, GpuControl};

/// One agent life: its runtime (shut down at stop, as a process's tasks die with it).
pub(super) struct Life {
    rt: tokio::runtime::Runtime,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

/// One scenario as it goes: the fake servers, the agent's life, the transcript so far.
pub(super) struct Harness {
    pub(super) world: Shared,
    pub(super) http: Vec<tokio::task::JoinHandle<std::io::Result<()>>>,
    pub(super) node: Node,
    pub(super) dir: tempfile::TempDir,
    pub(super) metrics: Option<SocketAddr>,
    pub(super) agent: Option<Life>,
    pub(super) started: bool,
    pub(super) log: String,
    /// How much of `world.heard` is printed.
    pub(super) printed: usize,
    /// Ports by name (`p1`, ...) in the order first seen, and each attempt's ports
    /// already printed.
    pub(super) port_names: BTreeMap<u16, String>,
    pub(super) ports_printed: BTreeSet<(u64, u16)>,
    /// When a server last went down (Unix ms).
    pub(super) down_at: u64,
}

impl Harness {
    pub(super) fn new(node: Node) -> Harness {
        let metrics = node.metrics.then(|| {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap()
        });
        Harness {
            world: Arc::default(),
            http: Vec::new(),
            node,
            dir: tempfile::tempdir().unwrap(),
            metrics,
            agent: None,
            started: false,
            log: String::new(),
            printed: 0,
            port_names: BTreeMap::new(),
            ports_printed: BTreeSet::new(),
            down_at: 0,
        }
    }

    fn say(&mut self, line: impl AsRef<str>) {
        self.log.push_str(line.as_ref());
        self.log.push('\n');
    }

    /// Fails the scenario, with the transcript so far.
    pub(super) fn fail(&self, why: impl std::fmt::Display) -> ! {
        panic!("{why}\n--- transcript so far ---\n{}", self.log)
    }

    /// The index of server `name`, made (epoch 0) if the agent has not started yet.
    async fn server(&mut self, name: &'static str) -> usize {
        if let Some(i) = lock(&self.world)
            .servers
            .iter()
            .position(|f| f.name == name)
        {
            return i;
        }
        if self.started {
            self.fail(format!(
                "server {name} named after the agent started: name it before Start"
            ));
        }
        let (i, task) = serve(&self.world, name).await;
        self.http.push(task);
        i
    }

    async fn with_server(&mut self, name: &'static str, set: impl FnOnce(&mut Fake)) {
        let i = self.server(name).await;
        set(&mut lock(&self.world).servers[i]);
    }

    fn config(&self) -> AgentConfig {
        let faults = crate::gpu::fake_telemetry::faults_path(self.dir.path());
        let mut lib = FakeNvml::uniform(2, "NVIDIA A100-SXM4-80GB", 81920).with_faults_file(faults);
        if self.node.pcie {
            lib = lib.with_topology(FakeTopology::Pcie);
        }
        let servers: Vec<String> = lock(&self.world)
            .servers
            .iter()
            .map(|f| f.url.clone())
            .collect();
        AgentConfig {
            server: servers.join(","),
            name: "n0".into(),
            state_dir: self.dir.path().to_path_buf(),
            gpus: gpus(),
            cpus: 1,
            mem_mib: 1024,
            log_listen: "127.0.0.1:0".parse().unwrap(),
            log_url: None,
            join_token: "t".into(),
            allow_root_jobs: true,
            instant_jobs: false,
            ca_cert: None,
            control: GpuControl(Some(Arc::new(lib))),
            mps: false,
            resources: BTreeMap::new(),
            features: Vec::new(),
            advertise_addr: None,
            location: NodeLocation {
                switch: self.node.switch.map(String::from),
                rack: None,
            },
            telemetry_interval: Duration::from_millis(self.node.telemetry_ms),
            metrics_listen: self.metrics,
            retention: Default::default(),
            contain: Default::default(),
            image: None,
        }
    }

    pub(super) async fn step(&mut self, step: Step) {
        match step {
            Step::Server(name, epoch) => {
                self.with_server(name, |f| f.epoch = epoch).await;
                self.say(format!("server {name} (epoch {epoch})"));
            }
            Step::Lease(name, heartbeat_ms, lease_ms) => {
                self.with_server(name, |f| {
                    (f.heartbeat_ms, f.lease_ms) = (heartbeat_ms, lease_ms)
                })
                .await;
                let lease = lease_ms.map_or("none".into(), |l| format!("{l} ms"));
                self.say(format!(
                    "{name} announces a heartbeat timeout of {heartbeat_ms} ms, lease {lease}"
                ));
            }
            Step::Stale(name, ms) => {
                self.with_server(name, |f| f.stale_ms = ms).await;
                self.say(format!("{name} answers polls {ms} ms late"));
            }
            Step::Want(name, orders) => {
                let i = self.server(name).await;
                let ports = self.reported_ports();
                let mut w = lock(&self.world);
                let f = &mut w.servers[i];
                f.desired = desired(f.desired.gen + 1, &orders, &ports);
                drop(w);
                let said: Vec<String> = orders.iter().map(|o| self.order_text(o)).collect();
                let said = if said.is_empty() {
                    "nothing".into()
                } else {
                    said.join(", ")
                };
                self.say(format!("{name} wants: {said}"));
            }
            Step::Down(name) => {
                self.with_server(name, |f| f.down = true).await;
                self.down_at = crate::clock::now_ms();
                self.say(format!("{name} is down"));
            }
            Step::Up(name) => {
                self.with_server(name, |f| f.down = false).await;
                self.say(format!("{name} is up"));
            }
            Step::Compact(name) => {
                self.with_server(name, |f| f.compact = true).await;
                self.say(format!("{name} takes compact messages"));
            }
            Step::Unheld(name, job) => {
                self.with_server(name, |f| f.unheld = Some(job)).await;
                self.say(format!(
                    "{name}'s next answer names {job}#1 as held, never having sent it"
                ));
            }
            Step::Refuse(name) => {
                self.with_server(name, |f| f.refuse = true).await;
                self.say(format!("{name} refuses reports"));
            }
            Step::Accept(name) => {
                self.with_server(name, |f| f.refuse = false).await;
                self.say(format!("{name} accepts reports"));
            }
            Step::Forget(name) => {
                self.with_server(name, |f| f.forgotten = true).await;
                self.say(format!("{name} forgets the node"));
            }
            Step::Start => self.start().await,
            Step::Stop => self.stop().await,
            Step::Until(conds) => self.until(&conds).await,
            Step::Pass(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                self.say(format!("{ms} ms pass"));
            }
            Step::Faults(text) => {
                let path = crate::gpu::fake_telemetry::faults_path(self.dir.path());
                let tmp = path.with_extension("tmp");
                std::fs::write(&tmp, text).unwrap();
                std::fs::rename(&tmp, &path).unwrap();
                let said: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
                self.say(format!("faults: {}", said.join(" ")));
            }
            Step::See(c) => {
                let verdict = self.check(c).await;
                self.say(verdict);
            }
            Step::Touch(job, name) => {
                let root = self.dir.path().join("jobs");
                let path = crate::jobdir::checkpoint_dir_under(&root, job).join(name);
                if let Err(e) = std::fs::write(&path, "") {
                    self.fail(format!("cannot make {}: {e}", path.display()));
                }
                self.say(format!("{job}#1's checkpoint directory gets {name}"));
            }
            Step::Remove(job, name) => {
                let root = self.dir.path().join("jobs");
                let path = crate::jobdir::checkpoint_dir_under(&root, job).join(name);
                if let Err(e) = std::fs::remove_file(&path) {
                    self.fail(format!("cannot remove {}: {e}", path.display()));
                }
                self.say(format!("{job}#1's checkpoint directory loses {name}"));
            }
        }
    }

    async fn start(&mut self) {
        if self.agent.is_some() {
            self.fail("Start while the agent runs");
        }
        if lock(&self.world).servers.is_empty() {
            self.server("a").await;
        }
        self.started = true;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (stop, stop_rx) = watch::channel(false);
        let task = rt.spawn(crate::session::run(self.config(), stop_rx));
        self.agent = Some(Life { rt, stop, task });
        self.say("the agent starts");
    }

    async fn stop(&mut self) {
        let Some(life) = self.agent.take() else {
            self.fail("Stop without Start");
        };
        self.say("the agent stops");
        let _ = life.stop.send(true);
        let ended = tokio::time::timeout(STOP_WAIT, life.task).await;
        life.rt.shutdown_background();
        match ended {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => self.fail(format!("the agent stopped with an error: {e:#}")),
            Ok(Err(e)) => self.fail(format!("the agent's task failed: {e}")),
            Err(_) => self.fail(format!("the agent did not stop within {STOP_WAIT:?}")),
        }
        let upto = lock(&self.world).heard.len();
        self.print_heard(upto);
    }

    async fn until(&mut self, conds: &[Cond]) {
        let said: Vec<String> = conds.iter().map(|c| self.cond_text(c)).collect();
        self.say(format!("until {}", said.join(", ")));
        let base: Vec<u32> = lock(&self.world)
            .servers
            .iter()
            .map(|f| f.answered)
            .collect();
        let samples = acked_samples(&lock(&self.world)).len();
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let upto = {
                let w = lock(&self.world);
                conds
                    .iter()
                    .all(|c| self.holds(&w, c, &base, samples))
                    .then(|| w.heard.len())
            };
            if let Some(upto) = upto {
                self.print_heard(upto);
                return;
            }
            if tokio::time::Instant::now() > deadline {
                self.fail(format!("not in {WAIT:?}: {}", said.join(", ")));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn holds(&self, w: &World, c: &Cond, base: &[u32], samples: usize) -> bool {
        let server = |name: &str| {
            w.servers
                .iter()
                .position(|f| f.name == name)
                .unwrap_or_else(|| self.fail(format!("no server {name}")))
        };
        match *c {
            Cond::Started(job) => find_event(w, job, |e| matches!(e, RunEventKind::Started { .. })),
            Cond::Ended(job) => find_event(w, job, |e| matches!(e, RunEventKind::Ended { .. })),
            Cond::Port(job) => {
                find_event(w, job, |e| matches!(e, RunEventKind::PortReserved { .. }))
            }
            Cond::Polls(name, n) => {
                let i = server(name);
                w.servers[i].answered >= base[i] + n
            }
            Cond::Registered(name, n) => w.servers[server(name)].registrations >= n,
            Cond::PortFree(job) => port_of(w, job).is_some_and(port_free),
            Cond::Gone(job) => pid_of(w, job).is_some_and(|pid| !alive(pid)),
            Cond::Samples(n) => acked_samples(w).len() >= samples + n as usize,
            Cond::XidOffered(gpu, n) => xids(w, gpu, false).len() >= n,
            Cond::XidAcked(gpu) => !xids(w, gpu, true).is_empty(),
            Cond::Busy(gpu) => acked_samples(w).last().is_some_and(|t| {
                t.gpus.iter().all(|g| {
                    if g.index == gpu {
                        g.util_pct >= Some(90)
                    } else {
                        g.util_pct == Some(0)
                    }
                })
            }),
            Cond::Readiness(job, n) => {
                acked_events(w)
                    .filter(|e| e.job == job && matches!(e.event, RunEventKind::Ready { .. }))
                    .count()
                    >= n
            }
            Cond::GpuLost(gpu) => acked_samples(w).last().is_some_and(|t| {
                t.gpus.iter().all(|g| {
                    if g.index == gpu {
                        g.lost && g.temp_c.is_none()
                    } else {
                        !g.lost
                    }
                })
            }),
        }
    }

    fn cond_text(&self, c: &Cond) -> String {
        match *c {
            Cond::Started(job) => format!("{job}#1 started"),
            Cond::Ended(job) => format!("{job}#1 ended"),
            Cond::Port(job) => format!("{job}#1's port"),
            Cond::Polls(name, n) => format!("{name} answers {}", count(n, "more poll")),
            Cond::Registered(name, n) => format!("{name} has {}", count(n, "registration")),
            Cond::PortFree(job) => format!("{job}#1's port free"),
            Cond::Gone(job) => format!("{job}#1's process gone"),
            Cond::Samples(n) => format!("{} of samples", count(n, "more report")),
            Cond::XidOffered(gpu, n) => {
                format!("GPU {gpu}'s Xid refused {}", count(n as u32, "time"))
            }
            Cond::XidAcked(gpu) => format!("GPU {gpu}'s Xid acknowledged"),
            Cond::Busy(gpu) => format!("GPU {gpu} busy and the others idle"),
            Cond::GpuLost(gpu) => format!("GPU {gpu} lost and the others not"),
            Cond::Readiness(job, n) => {
                format!("{job}#1's {}", count(n as u32, "readiness change"))
            }
        }
    }

    fn order_text(&self, o: &Order) -> String {
        match *o {
            Order::Run(job, script) => format!("run {job} `{script}`"),
            Order::Gang(job, script) => format!("run {job} as a gang's first part `{script}`"),
            Order::Queued(job, after, script) => format!("queue {job} behind {after} `{script}`"),
            Order::Chain(from, to, script, last) => format!(
                "queue {from}..={to} each behind the one before `{script}` (the last `{last}`)"
            ),
            Order::Preempt(job) => format!("preempt {job}"),
            Order::Cancel(job) => format!("cancel {job}"),
            Order::Reserve(job) => format!("reserve a port for {job}"),
            Order::Serve(job, program, probes) => {
                format!("serve {job} ({program:?} program, {probes:?} probes)")
            }
        }
    }

    /// The first port reported for each job.
    fn reported_ports(&self) -> BTreeMap<u64, u16> {
        let w = lock(&self.world);
        let mut out = BTreeMap::new();
        for h in &w.heard {
            if let Heard::Event { event, .. } = h {
                if let RunEventKind::PortReserved { port } = event.event {
                    out.entry(event.job).or_insert(port);
                }
            }
        }
        out
    }

    pub(super) fn port_name(&mut self, port: u16) -> String {
        let n = self.port_names.len() + 1;
        self.port_names
            .entry(port)
            .or_insert_with(|| format!("p{n}"))
            .clone()
    }

    /// Prints what was heard up to `upto` since the last print: registrations, then one
    /// line per attempt (in job order; a run of three or more jobs with the same line as
    /// one), then leaves.
    fn print_heard(&mut self, upto: usize) {
        let items: Vec<Printed> = {
            let w = lock(&self.world);
            w.heard[self.printed..upto]
                .iter()
                .filter_map(|h| match h {
                    Heard::Registered {
                        server,
                        instance,
                        body,
                    } => Some(Printed::Registration(
                        format!("{server} registers n0 ({instance})"),
                        register_summary(body),
                    )),
                    Heard::Event {
                        event,
                        carried: false,
                    } => Some(Printed::Event(event.clone())),
                    Heard::Event { carried: true, .. } => None,
                    Heard::Leave { instance } => Some(Printed::Leave(instance.clone())),
                })
                .collect()
        };
        self.printed = upto;
        let (mut regs, mut leaves) = (Vec::new(), Vec::new());
        let mut attempts: BTreeMap<(u64, u32), Vec<String>> = BTreeMap::new();
        for item in items {
            match item {
                Printed::Registration(who, reg) => regs.push((who, reg)),
                Printed::Event(e) => {
                    // The agent repeats a reserved port while it is asked for; the
                    // server takes the repeat as nothing new.
                    if let RunEventKind::PortReserved { port } = e.event {
                        if !self.ports_printed.insert((e.job, port)) {
                            continue;
                        }
                    }
                    let said = self.event_text(&e.event);
                    attempts.entry((e.job, e.attempt)).or_default().push(said);
                }
                Printed::Leave(instance) => leaves.push(instance),
            }
        }
        for (who, reg) in regs {
            let line = self.registration_text(&who, &reg);
            self.say(format!("  {line}"));
        }
        let lines: Vec<((u64, u32), String)> = attempts
            .into_iter()
            .map(|(a, said)| (a, said.join("; ")))
            .collect();
        let mut i = 0;
        while i < lines.len() {
            let ((job, attempt), said) = &lines[i];
            let mut j = i + 1;
            while j < lines.len()
                && lines[j].1 == *said
                && lines[j].0 == (job + (j - i) as u64, *attempt)
            {
                j += 1;
            }
            if j - i >= 3 {
                let last = lines[j - 1].0 .0;
                self.say(format!("  job {job}#{attempt} .. {last}#{attempt}: {said}"));
            } else {
                for ((job, attempt), said) in &lines[i..j] {
                    self.say(format!("  job {job}#{attempt}: {said}"));
                }
            }
            i = j;
        }
        for instance in leaves {
            self.say(format!("  n0 leaves ({instance})"));
        }
    }

    fn registration_text(&mut self, who: &str, reg: &Summary) -> String {
        let runs: Vec<String> = reg
            .running
            .iter()
            .map(|a| format!("{}#{}", a.job, a.attempt))
            .collect();
        let carried: Vec<String> = reg
            .events
            .iter()
            .map(|e| format!("{}#{} {}", e.job, e.attempt, self.event_text(&e.event)))
            .collect();
        let or_none = |v: Vec<String>| {
            if v.is_empty() {
                "-".to_string()
            } else {
                v.join(", ")
            }
        };
        format!(
            "{who}: {}; runs {}; reports {}",
            reg.hardware,
            or_none(runs),
            or_none(carried)
        )
    }

    fn event_text(&mut self, e: &RunEventKind) -> String {
        match e {
            RunEventKind::Started { mig_uuid, .. } => match mig_uuid {
                Some(uuid) => format!("started on {uuid}"),
                None => "started".into(),
            },
            RunEventKind::Checkpoint => "checkpoint".into(),
            RunEventKind::PortReserved { port } => format!("port {}", self.port_name(*port)),
            RunEventKind::Listening { port } => format!("listening on {}", self.port_name(*port)),
            RunEventKind::Ready { ready: true, .. } => "ready".into(),
            RunEventKind::Ready {
                ready: false,
                message,
            } => {
                format!("not ready: {}", numbers(message.as_deref().unwrap_or("")))
            }
            RunEventKind::Ended { outcome, .. } => format!("ended {}", outcome_text(outcome)),
        }
    }

    pub(super) fn metrics_url(&self) -> String {
        match self.metrics {
            Some(addr) => format!("http://{addr}/metrics"),
            None => self.fail("a metrics check on a node without metrics (Node::metrics)"),
        }
    }

    pub(super) fn finish(&mut self) {
        if self.agent.is_some() {
            self.fail("the scenario ends with the agent running: end it with Stop");
        }
        for h in &self.http {
            h.abort();
        }
    }
}

/// What the transcript says of a registration.
pub(super) struct Summary {
    hardware: String,
    running: Vec<AttemptRef>,
    events: Vec<RunEvent>,
}

pub(super) fn register_summary(r: &Register) -> Summary {
    let models: BTreeSet<&str> = r.gpus.iter().map(|g| g.model.as_str()).collect();
    let mut hw = format!(
        "{} GPUs {}",
        r.gpus.len(),
        models.into_iter().collect::<Vec<_>>().join(" ")
    );
    if let Some(a) = &r.advertise_addr {
        let _ = write!(hw, ", advertises {a}");
    }
    if let Some(s) = &r.location.switch {
        let _ = write!(hw, ", switch {s}");
    }
    for l in &r.gpu_links {
        let _ = write!(hw, ", link {}-{} {:?}", l.a, l.b, l.kind);
    }
    Summary {
        hardware: hw,
        running: r.running.clone(),
        events: r.events.clone(),
    }
}

/// A heard item as `print_heard` sorts it.
pub(super) enum Printed {
    Registration(String, Summary),
    Event(RunEvent),
    Leave(String),
}

pub(super) fn outcome_text(o: &Outcome) -> String {
    match o {
        Outcome::Exited { code } => format!("exited {code}"),
        Outcome::Signaled { signal } => format!("signaled {signal}"),
        Outcome::TimedOut { .. } => "timed out".into(),
        Outcome::Cancelled => "cancelled".into(),
        Outcome::SpawnFailed { message } => format!("spawn failed: {}", numbers(message)),
        Outcome::Lost { message } => format!("lost: {}", numbers(message)),
        Outcome::Preempted => "preempted".into(),
        Outcome::Stopped { message } => format!("stopped: {}", numbers(message)),
        Outcome::OutOfMemory { .. } => "out of memory".into(),
        Outcome::Unhealthy { message } => format!("unhealthy: {}", numbers(message)),
    }
}

/// `text` with every number as `N` (seconds waited, pids).
pub(super) fn numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// `1 poll`, `3 polls`.
pub(super) fn count(n: u32, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(super) fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}
