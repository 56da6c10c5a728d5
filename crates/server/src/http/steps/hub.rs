//! The splice of a step's stream: one task per client connection (`serve_client`),
//! one per agent connection (`serve_agent`), meeting in the [`Hub`] by (job, step).
//! Frames from the client (stdin, resizes, signals) go to every agent of the step, and
//! are kept to be replayed to an agent that opens its stream later; frames from the
//! agents (output, task ends, errors) go to the client. The client's task decides how
//! the step ended: every task's end arrived, an agent's stream was cut first, an agent
//! never came, or the client went away; it then tells the state and closes the hub's
//! entry, which closes the agents' streams (their tasks are killed on that close).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

use gpusched_wire::step::{step_exit_code, Frame, FrameBuf, StepState, TaskEnd};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::actor::Cmd;
use crate::http::App;
use crate::state::steps::{StepEnd, StepStarted};

/// Keeps an idle stream's connections from being closed as idle (`bounded.rs`).
const PING_EVERY: Duration = Duration::from_secs(20);
/// How long the agents of a step's nodes have to open their streams.
const ATTACH_WITHIN: Duration = Duration::from_secs(60);
/// How long an agent's stream waits for its client's task to register the step (the
/// agent may hear of the step before the handler that started it has run on).
const ENTRY_WAIT: Duration = Duration::from_secs(5);

/// What an agent's task tells the client's.
pub enum Up {
    Attached(String),
    Frame(String, Frame),
    Gone(String),
}

struct Entry {
    up: mpsc::UnboundedSender<Up>,
    agents: Vec<mpsc::UnboundedSender<Frame>>,
    /// What went to the agents so far, for one that attaches later.
    sent: Vec<Frame>,
}

/// The steps whose streams are open, by (job, step).
#[derive(Default)]
pub struct Hub {
    entries: Mutex<BTreeMap<(u64, u32), Entry>>,
}

impl Hub {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(u64, u32), Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a step that was just started; its client's task reads the receiver.
    pub fn open(&self, key: (u64, u32)) -> mpsc::UnboundedReceiver<Up> {
        let (up, rx) = mpsc::unbounded_channel();
        self.lock().insert(
            key,
            Entry {
                up,
                agents: Vec::new(),
                sent: Vec::new(),
            },
        );
        rx
    }

    fn to_agents(&self, key: (u64, u32), frame: Frame) {
        let mut entries = self.lock();
        if let Some(e) = entries.get_mut(&key) {
            // Output the agents have not read yet is bounded by what a client types;
            // stdin piped from a file is kept whole (replayed to a late agent).
            for a in &e.agents {
                let _ = a.send(frame.clone());
            }
            e.sent.push(frame);
        }
    }

    pub fn close(&self, key: (u64, u32)) {
        self.lock().remove(&key);
    }

    /// Adds an agent's sender to a step's entry, waiting a little for the entry.
    async fn join(
        &self,
        key: (u64, u32),
        node: &str,
        tx: mpsc::UnboundedSender<Frame>,
    ) -> Option<mpsc::UnboundedSender<Up>> {
        let deadline = tokio::time::Instant::now() + ENTRY_WAIT;
        loop {
            {
                let mut entries = self.lock();
                if let Some(e) = entries.get_mut(&key) {
                    for f in &e.sent {
                        let _ = tx.send(f.clone());
                    }
                    e.agents.push(tx);
                    let _ = e.up.send(Up::Attached(node.to_string()));
                    return Some(e.up.clone());
                }
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Writes the frames of `rx` to `wr`, with a ping whenever nothing else went for a
/// while; ends when `rx` closes (the write side is then shut) or the peer is gone.
async fn write_frames<W: AsyncWrite + Unpin>(mut wr: W, mut rx: mpsc::UnboundedReceiver<Frame>) {
    loop {
        let frame = match tokio::time::timeout(PING_EVERY, rx.recv()).await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(_) => Frame::Ping,
        };
        if wr.write_all(&frame.encode()).await.is_err() || wr.flush().await.is_err() {
            return;
        }
    }
    let _ = wr.shutdown().await;
}

/// Reads frames from `rd` into `each` until the stream ends or breaks (`Err`: words).
async fn read_frames<R: AsyncRead + Unpin>(
    mut rd: R,
    mut each: impl FnMut(Frame),
) -> Result<(), String> {
    let mut fb = FrameBuf::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = rd.read(&mut buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(());
        }
        fb.push(&buf[..n]);
        while let Some(f) = fb.next_frame().map_err(|e| e.to_string())? {
            each(f);
        }
    }
}

/// The client's side of step `key`: splices until the step ends, then records how.
pub async fn serve_client<IO>(
    app: App,
    key: (u64, u32),
    started: StepStarted,
    mut up: mpsc::UnboundedReceiver<Up>,
    io: IO,
) where
    IO: AsyncRead + AsyncWrite + Send + 'static,
{
    let (rd, wr) = tokio::io::split(io);
    let (to_client, client_rx) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_frames(wr, client_rx));
    let _ = to_client.send(Frame::Started {
        step: key.1,
        nodes: started.nodes.clone(),
    });
    // The client's frames, read on a task of their own (a read is not cancel-safe
    // mid-frame): forwarded to the agents; the task's end says the client left.
    let hub = app.steps.clone();
    let mut reader = tokio::spawn(async move {
        read_frames(rd, |f| match f {
            Frame::Stdin(_) | Frame::StdinEof | Frame::Resize { .. } | Frame::Signal(_) => {
                hub.to_agents(key, f)
            }
            _ => {}
        })
        .await
    });
    let mut ends: BTreeMap<u32, TaskEnd> = BTreeMap::new();
    let mut attached: BTreeSet<String> = BTreeSet::new();
    let mut errors: Vec<String> = Vec::new();
    let attach_by = tokio::time::sleep(ATTACH_WITHIN);
    tokio::pin!(attach_by);
    let end = loop {
        if ends.len() as u32 >= started.ntasks {
            let code = step_exit_code(&ends);
            break StepEnd {
                state: if code == 0 {
                    StepState::Completed
                } else {
                    StepState::Failed
                },
                exit_code: Some(code),
                reason: errors.first().cloned(),
            };
        }
        tokio::select! {
            r = &mut reader => {
                let why = match r {
                    Ok(Err(e)) => format!("the client's connection broke ({e})"),
                    _ => "the client (gpusched run) went away".to_string(),
                };
                break StepEnd { state: StepState::Cancelled, exit_code: None, reason: Some(why) };
            }
            _ = &mut attach_by, if attached.len() < started.nodes.len() => {
                let missing: Vec<&str> = started.nodes.iter()
                    .filter(|n| !attached.contains(*n)).map(String::as_str).collect();
                let why = format!(
                    "the agent on {} did not open the step's stream within {} s (is it \
                     reachable, and of this server's release?)",
                    missing.join(", "), ATTACH_WITHIN.as_secs());
                let _ = to_client.send(Frame::Error(why.clone()));
                break StepEnd { state: StepState::Failed, exit_code: None, reason: Some(why) };
            }
            msg = up.recv() => match msg {
                Some(Up::Attached(node)) => { attached.insert(node); }
                Some(Up::Frame(_, Frame::Exit { rank, end })) => { ends.insert(rank, end); }
                Some(Up::Frame(node, Frame::Error(m))) => {
                    let m = format!("{node}: {m}");
                    let _ = to_client.send(Frame::Error(m.clone()));
                    errors.push(m);
                }
                Some(Up::Frame(_, f @ (Frame::Stdout { .. } | Frame::Stderr { .. }))) => {
                    let _ = to_client.send(f);
                }
                Some(Up::Frame(..)) => {}
                Some(Up::Gone(node)) => {
                    // Its tasks' ends come before its stream closes; one missing means
                    // the stream was cut under them.
                    let why = format!(
                        "the stream from the agent on {node} was cut before the step's tasks \
                         there ended (the agent stopped, or lost its connection)");
                    let per_node = started.ntasks / started.nodes.len().max(1) as u32;
                    let at = started.nodes.iter().position(|n| *n == node).unwrap_or(0) as u32;
                    if (at * per_node..(at + 1) * per_node).all(|r| ends.contains_key(&r)) {
                        continue;
                    }
                    let _ = to_client.send(Frame::Error(why.clone()));
                    break StepEnd { state: StepState::Failed, exit_code: None, reason: Some(why) };
                }
                None => {}
            }
        }
    };
    let code = end.exit_code.unwrap_or(match end.state {
        StepState::Cancelled => 130,
        _ => 255,
    });
    // The agents' streams close with the entry: whatever still runs is killed.
    app.steps.close(key);
    reader.abort();
    let recorded = app.ask(|r| Cmd::EndStep(key.0, key.1, end, r)).await;
    if let Err(e) = recorded {
        tracing::warn!(job = key.0, step = key.1, "recording a step's end: {}", e.1);
    }
    let _ = to_client.send(Frame::Done { code });
    drop(to_client);
    let _ = writer.await;
}

/// An agent's side of step `key` on `node`: its frames up, the client's down.
pub async fn serve_agent<IO>(app: App, key: (u64, u32), node: String, io: IO)
where
    IO: AsyncRead + AsyncWrite + Send + 'static,
{
    let (rd, wr) = tokio::io::split(io);
    let (tx, rx) = mpsc::unbounded_channel();
    let Some(up) = app.steps.join(key, &node, tx).await else {
        // The step ended (or was never opened here): closing tells the agent to stop it.
        let mut wr = wr;
        let _ = wr
            .write_all(&Frame::Error("the step is not running".into()).encode())
            .await;
        let _ = wr.shutdown().await;
        return;
    };
    let writer = tokio::spawn(write_frames(wr, rx));
    let up2 = up.clone();
    let n = node.clone();
    let read = read_frames(rd, move |f| {
        if f != Frame::Ping {
            let _ = up2.send(Up::Frame(n.clone(), f));
        }
    })
    .await;
    if let Err(e) = read {
        tracing::info!(job = key.0, step = key.1, node = %node, "a step's agent stream broke: {e}");
    }
    let _ = up.send(Up::Gone(node));
    writer.abort();
}
