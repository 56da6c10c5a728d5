//! Job steps (agent protocol 6, `gpusched run`): the steps of the node's desired state
//! ([`gpusched_wire::Desired::steps`]) each started once, as tasks of their job (its
//! user, directory, environment, GPUs and cgroup, `env.rs`, `task.rs`), with a stream
//! of their own to the server (`GET /api/agent/steps/{job}/{step}`, upgraded), which
//! carries their output and ends up and their input, resizes and signals down. A step
//! is killed (SIGKILL to each task's session) when the server stops listing it or its
//! stream closes; it is never journalled: steps die with the agent, and the server
//! ends them as failed when their stream is cut.

mod env;
mod task;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

use gpusched_wire::step::{Frame, FrameBuf, StepLaunch, TaskEnd, STEP_UPGRADE};
use gpusched_wire::GpuInfo;
use nix::sys::signal::Signal;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

use crate::launcher::StepCgroup;
use task::{In, Out, Task, TaskSpec};

/// What a step needs of the agent besides its launch.
pub struct StepContext {
    pub http: reqwest::Client,
    /// The server to open the stream at (`http[s]://host:port`).
    pub base: String,
    pub node: String,
    pub gpus: Vec<GpuInfo>,
    pub allow_root: bool,
    /// The job's cgroup on this node, which the step's processes join.
    pub cgroup: Option<StepCgroup>,
}

/// The steps this agent runs, and those it has seen (never started twice).
#[derive(Default)]
pub struct Steps {
    seen: Mutex<BTreeSet<(u64, u32)>>,
    live: Mutex<BTreeMap<(u64, u32), watch::Sender<bool>>>,
}

impl Steps {
    /// Starts the listed steps not seen before and stops the running ones no longer
    /// listed.
    pub fn reconcile(&self, wanted: &[StepLaunch], ctx: impl Fn(&StepLaunch) -> StepContext) {
        let keys: BTreeSet<(u64, u32)> = wanted.iter().map(|s| (s.launch.job, s.step)).collect();
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|k, stop| {
            let keep = keys.contains(k) && !stop.is_closed();
            if !keep {
                stop.send_replace(true);
            }
            keep
        });
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        // Only what the server lists needs remembering: it never lists an ended step
        // again.
        seen.retain(|k| keys.contains(k) || live.contains_key(k));
        for s in wanted {
            let key = (s.launch.job, s.step);
            if !seen.insert(key) {
                continue;
            }
            let (stop, stop_rx) = watch::channel(false);
            live.insert(key, stop);
            tokio::spawn(run_step(ctx(s), s.clone(), stop_rx));
        }
    }

    /// Kills every step (the agent stops).
    pub fn stop_all(&self) {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        for stop in live.values() {
            stop.send_replace(true);
        }
    }
}

/// Keeps an idle stream's connections open.
const PING_EVERY: Duration = Duration::from_secs(20);

async fn run_step(ctx: StepContext, s: StepLaunch, mut stop: watch::Receiver<bool>) {
    let (job, step) = (s.launch.job, s.step);
    let url = format!(
        "{}/api/agent/steps/{job}/{step}?node={}",
        ctx.base,
        encode(&ctx.node)
    );
    let r = ctx
        .http
        .get(&url)
        .header(reqwest::header::CONNECTION, "upgrade")
        .header(reqwest::header::UPGRADE, STEP_UPGRADE)
        .send()
        .await;
    let io = match r {
        Ok(r) if r.status() == reqwest::StatusCode::SWITCHING_PROTOCOLS => {
            match r.upgrade().await {
                Ok(io) => io,
                Err(e) => {
                    tracing::warn!(job, step, "cannot switch the step's stream: {e}");
                    return;
                }
            }
        }
        Ok(r) => {
            let status = r.status();
            let body = r.text().await.unwrap_or_default();
            tracing::warn!(job, step, %status, "the server refused the step's stream: {body}");
            return;
        }
        Err(e) => {
            tracing::warn!(job, step, "cannot open the step's stream: {e}");
            return;
        }
    };
    let (mut rd, mut wr) = tokio::io::split(io);
    let (up, mut up_rx) = mpsc::unbounded_channel::<Frame>();
    let writer = tokio::spawn(async move {
        loop {
            let f = match tokio::time::timeout(PING_EVERY, up_rx.recv()).await {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(_) => Frame::Ping,
            };
            if wr.write_all(&f.encode()).await.is_err() || wr.flush().await.is_err() {
                return;
            }
        }
        let _ = wr.shutdown().await;
    });
    let (down_tx, mut down) = mpsc::unbounded_channel::<Frame>();
    let reader = tokio::spawn(async move {
        let mut fb = FrameBuf::default();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match rd.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            fb.push(&buf[..n]);
            loop {
                match fb.next_frame() {
                    Ok(Some(f)) => {
                        if down_tx.send(f).is_err() {
                            return;
                        }
                    }
                    Ok(None) => break,
                    Err(_) => return,
                }
            }
        }
    });

    let home = crate::launcher::identity::resolve_cached(&s.launch.user, ctx.allow_root);
    let (out_tx, mut out) = mpsc::unbounded_channel::<Out>();
    let mut tasks: Vec<Task> = Vec::new();
    let mut ended: BTreeMap<u32, TaskEnd> = BTreeMap::new();
    for rank in s.first_rank..s.first_rank + s.tasks {
        let started = home.clone().and_then(|run_as| {
            let who = run_as.as_ref().map(|r| (r.name.as_str(), r.home.as_str()));
            let env = env::task_env(&s, rank, &ctx.gpus, who)?;
            task::start(
                TaskSpec {
                    rank,
                    command: s.command.clone(),
                    cwd: s.launch.cwd.clone(),
                    env,
                    run_as: run_as.clone(),
                    cgroup: ctx.cgroup.clone(),
                    pty: s.pty.then_some((s.cols, s.rows)),
                },
                out_tx.clone(),
            )
        });
        match started {
            Ok(t) => tasks.push(t),
            Err(m) => {
                let _ = up.send(Frame::Error(format!("task {rank}: {m}")));
                let end = TaskEnd {
                    code: Some(127),
                    signal: None,
                };
                ended.insert(rank, end);
                let _ = up.send(Frame::Exit { rank, end });
            }
        }
    }
    drop(out_tx);
    let mut cut = false;
    while (ended.len() as u32) < s.tasks {
        tokio::select! {
            _ = stop.changed() => { cut = true; break; }
            f = down.recv() => match f {
                Some(Frame::Stdin(d)) => for t in &tasks { let _ = t.input.send(In::Stdin(d.clone())); },
                Some(Frame::StdinEof) => for t in &tasks { let _ = t.input.send(In::StdinEof); },
                Some(Frame::Resize { cols, rows }) => for t in &tasks { let _ = t.input.send(In::Resize(cols, rows)); },
                Some(Frame::Signal(n)) => {
                    if let Ok(sig) = Signal::try_from(n) {
                        for t in &tasks { t.signal(sig); }
                    }
                }
                Some(_) => {}
                // The server closed the stream: the step is over there.
                None => { cut = true; break; }
            },
            o = out.recv() => match o {
                Some(Out::Stdout(rank, data)) => { let _ = up.send(Frame::Stdout { rank, data }); }
                Some(Out::Stderr(rank, data)) => { let _ = up.send(Frame::Stderr { rank, data }); }
                Some(Out::Ended(rank, end)) => {
                    ended.insert(rank, end);
                    let _ = up.send(Frame::Exit { rank, end });
                }
                None => break,
            },
        }
    }
    if cut {
        tracing::info!(
            job,
            step,
            "the step is over on the server's side; killing its tasks"
        );
        for t in &tasks {
            t.signal(Signal::SIGKILL);
        }
    }
    drop(up);
    let _ = tokio::time::timeout(Duration::from_secs(5), writer).await;
    reader.abort();
}

/// A node name in a query string.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
