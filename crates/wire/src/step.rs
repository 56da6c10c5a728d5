//! Job steps (`gpusched run`, Slurm's `srun`): a command run inside a running job, on
//! its nodes, with its GPUs, whose output streams back live and whose input is
//! forwarded. The CLI asks `POST /api/jobs/{id}/steps` with a [`StepRequest`] and an
//! HTTP/1.1 upgrade to [`STEP_UPGRADE`]; each agent of the job's nodes learns of the
//! step in its desired state ([`StepLaunch`], agent protocol 6) and opens its own
//! upgraded connection to `GET /api/agent/steps/{job}/{step}`; the server splices
//! [`Frame`]s between them. This module holds the messages and the frame codec, no I/O.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The `Upgrade` protocol name of a step's stream (CLI to server, agent to server).
pub const STEP_UPGRADE: &str = "gpusched-step";

/// `POST /api/jobs/{id}/steps`: a step to run in the job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StepRequest {
    /// The program and its arguments (no shell).
    #[schema(min_items = 1, max_items = 4096)]
    pub command: Vec<String>,
    /// Run it in a pseudo-terminal (one task, on the first node unless `nodes` says
    /// otherwise); `cols`/`rows` its first size.
    #[serde(default)]
    pub pty: bool,
    /// On the first N of the job's nodes (all of them when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1)]
    pub nodes: Option<u32>,
    /// Processes per node (Slurm's `--ntasks-per-node`); 1 by default.
    #[serde(default = "one")]
    #[schema(minimum = 1, maximum = 256)]
    pub tasks_per_node: u32,
    #[serde(default)]
    pub cols: u16,
    #[serde(default)]
    pub rows: u16,
    /// `TERM` for a pseudo-terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 64)]
    pub term: Option<String>,
}

fn one() -> u32 {
    1
}

impl StepRequest {
    /// What is wrong with the request itself, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.command.is_empty() || self.command[0].is_empty() {
            return Some("a step needs a command: gpusched run --jobid ID -- CMD...".into());
        }
        if self.nodes == Some(0) {
            return Some("-N must be at least 1".into());
        }
        if !(1..=256).contains(&self.tasks_per_node) {
            return Some("--tasks-per-node must be 1 to 256".into());
        }
        if self.pty && (self.tasks_per_node != 1 || self.nodes.is_some_and(|n| n > 1)) {
            return Some(
                "--pty runs one task: drop -N and --tasks-per-node (or set them to 1)".into(),
            );
        }
        None
    }
}

/// Where a step stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    Running,
    /// Every task exited 0.
    Completed,
    /// A task exited non-zero or died of a signal, or the stream was cut.
    Failed,
    /// The client went away, or the job ended under it.
    Cancelled,
}

impl StepState {
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::Running => "running",
            StepState::Completed => "completed",
            StepState::Failed => "failed",
            StepState::Cancelled => "cancelled",
        }
    }
}

/// What the steps that ended in a job used (`JobView::step_use`; `usage` sums it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StepUse {
    /// Steps that ended.
    pub steps: u32,
    /// Their GPU-seconds: each step's GPUs (the job's on the step's nodes) x its run time.
    pub gpu_s: u64,
}

/// One step of a job, as `show` lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct StepView {
    /// The step's number in its job (0, 1, ...: `JOB.STEP`).
    pub step: u32,
    pub command: Vec<String>,
    pub nodes: Vec<String>,
    pub tasks_per_node: u32,
    pub pty: bool,
    pub state: StepState,
    /// Srun's rule: the first non-zero exit of its tasks (128+N for a signal death).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why it ended as it did, in words (none while it runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub started_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
}

/// A step the server wants a node to run (agent protocol 6, [`crate::Desired::steps`]):
/// the agent starts its tasks once, with the job's environment, identity and GPUs,
/// opens the step's stream, and kills them when the step is no longer listed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StepLaunch {
    pub step: u32,
    /// The job's launch on this node (its user, directory, environment, GPUs).
    pub launch: crate::Launch,
    pub command: Vec<String>,
    pub pty: bool,
    /// Tasks on this node, ranked `first_rank..first_rank + tasks` of `ntasks`.
    pub tasks: u32,
    pub first_rank: u32,
    pub ntasks: u32,
    #[serde(default)]
    pub cols: u16,
    #[serde(default)]
    pub rows: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term: Option<String>,
}

/// How one task of a step ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskEnd {
    /// Its exit status, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
}

impl TaskEnd {
    /// The shell's rule: the exit status, or 128+N for a death by signal N.
    pub fn exit_code(self) -> i32 {
        match (self.code, self.signal) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            (None, None) => 255,
        }
    }
}

/// One message of a step's stream. stdin, resizes and signals flow from the CLI to the
/// tasks; output, ends and errors back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    Stdin(Vec<u8>),
    /// The CLI's stdin ended: the tasks' stdin closes (not sent for a terminal).
    StdinEof,
    Stdout {
        rank: u32,
        data: Vec<u8>,
    },
    Stderr {
        rank: u32,
        data: Vec<u8>,
    },
    /// The terminal's new size.
    Resize {
        cols: u16,
        rows: u16,
    },
    /// A signal for every task's process group.
    Signal(i32),
    /// A task ended.
    Exit {
        rank: u32,
        end: TaskEnd,
    },
    /// Something went wrong that the user must read (the step then ends).
    Error(String),
    /// Keeps an idle stream's connections open.
    Ping,
    /// The server accepted the step: its number and nodes (first frame to the CLI).
    Started {
        step: u32,
        nodes: Vec<String>,
    },
    /// Every task ended: the step's exit code (last frame to the CLI).
    Done {
        code: i32,
    },
}

/// The largest payload of one frame.
pub const MAX_FRAME: usize = 1 << 20;
/// A frame's header: kind (1 byte), rank (4), payload length (4), big-endian.
const HEADER: usize = 9;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    #[error("a step frame of unknown kind {0}")]
    Kind(u8),
    #[error("a step frame of {0} bytes, over the limit of {MAX_FRAME}")]
    TooLong(usize),
    #[error("a step frame's payload is malformed: {0}")]
    Payload(String),
}

#[derive(Serialize, Deserialize)]
struct StartedBody {
    step: u32,
    nodes: Vec<String>,
}

impl Frame {
    /// The frame as bytes on the stream.
    pub fn encode(&self) -> Vec<u8> {
        let (kind, rank, payload): (u8, u32, Vec<u8>) = match self {
            Frame::Stdin(d) => (0, 0, d.clone()),
            Frame::StdinEof => (1, 0, Vec::new()),
            Frame::Stdout { rank, data } => (2, *rank, data.clone()),
            Frame::Stderr { rank, data } => (3, *rank, data.clone()),
            Frame::Resize { cols, rows } => {
                let mut p = cols.to_be_bytes().to_vec();
                p.extend(rows.to_be_bytes());
                (4, 0, p)
            }
            Frame::Signal(s) => (5, 0, s.to_be_bytes().to_vec()),
            Frame::Exit { rank, end } => (6, *rank, serde_json::to_vec(end).unwrap_or_default()),
            Frame::Error(m) => (7, 0, m.as_bytes().to_vec()),
            Frame::Ping => (8, 0, Vec::new()),
            Frame::Started { step, nodes } => (
                9,
                0,
                serde_json::to_vec(&StartedBody {
                    step: *step,
                    nodes: nodes.clone(),
                })
                .unwrap_or_default(),
            ),
            Frame::Done { code } => (10, 0, code.to_be_bytes().to_vec()),
        };
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.push(kind);
        out.extend(rank.to_be_bytes());
        out.extend((payload.len() as u32).to_be_bytes());
        out.extend(payload);
        out
    }

    /// The first frame of `buf` and the bytes it took, or `None` while it is incomplete.
    pub fn decode(buf: &[u8]) -> Result<Option<(Frame, usize)>, FrameError> {
        if buf.len() < HEADER {
            return Ok(None);
        }
        let kind = buf[0];
        let rank = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]);
        let len = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) as usize;
        if len > MAX_FRAME {
            return Err(FrameError::TooLong(len));
        }
        if buf.len() < HEADER + len {
            return Ok(None);
        }
        let p = &buf[HEADER..HEADER + len];
        let bad = |what: &str| FrameError::Payload(what.to_string());
        let int = |p: &[u8]| -> Result<i32, FrameError> {
            let b: [u8; 4] = p.try_into().map_err(|_| bad("not a 4-byte integer"))?;
            Ok(i32::from_be_bytes(b))
        };
        let frame = match kind {
            0 => Frame::Stdin(p.to_vec()),
            1 => Frame::StdinEof,
            2 => Frame::Stdout {
                rank,
                data: p.to_vec(),
            },
            3 => Frame::Stderr {
                rank,
                data: p.to_vec(),
            },
            4 => {
                if p.len() != 4 {
                    return Err(bad("a resize is two 2-byte sizes"));
                }
                Frame::Resize {
                    cols: u16::from_be_bytes([p[0], p[1]]),
                    rows: u16::from_be_bytes([p[2], p[3]]),
                }
            }
            5 => Frame::Signal(int(p)?),
            6 => Frame::Exit {
                rank,
                end: serde_json::from_slice(p).map_err(|e| bad(&e.to_string()))?,
            },
            7 => Frame::Error(String::from_utf8_lossy(p).into_owned()),
            8 => Frame::Ping,
            9 => {
                let b: StartedBody = serde_json::from_slice(p).map_err(|e| bad(&e.to_string()))?;
                Frame::Started {
                    step: b.step,
                    nodes: b.nodes,
                }
            }
            10 => Frame::Done { code: int(p)? },
            k => return Err(FrameError::Kind(k)),
        };
        Ok(Some((frame, HEADER + len)))
    }
}

/// Frames read from a byte stream as it arrives.
#[derive(Default)]
pub struct FrameBuf {
    buf: Vec<u8>,
}

impl FrameBuf {
    /// Adds bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, if one has arrived.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        match Frame::decode(&self.buf)? {
            Some((f, used)) => {
                self.buf.drain(..used);
                Ok(Some(f))
            }
            None => Ok(None),
        }
    }
}

/// A step's exit code as srun gives it: the first non-zero of its tasks by rank (0 when
/// all exited 0).
pub fn step_exit_code(ends: &BTreeMap<u32, TaskEnd>) -> i32 {
    ends.values()
        .map(|e| e.exit_code())
        .find(|&c| c != 0)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_round_trips_even_when_split() {
        let frames = vec![
            Frame::Stdin(b"hello\n".to_vec()),
            Frame::StdinEof,
            Frame::Stdout {
                rank: 3,
                data: vec![0, 255, 10],
            },
            Frame::Stderr {
                rank: 1,
                data: b"oops".to_vec(),
            },
            Frame::Resize {
                cols: 120,
                rows: 40,
            },
            Frame::Signal(2),
            Frame::Exit {
                rank: 2,
                end: TaskEnd {
                    code: None,
                    signal: Some(9),
                },
            },
            Frame::Error("no".into()),
            Frame::Ping,
            Frame::Started {
                step: 4,
                nodes: vec!["a".into(), "b".into()],
            },
            Frame::Done { code: 137 },
        ];
        let bytes: Vec<u8> = frames.iter().flat_map(|f| f.encode()).collect();
        let mut fb = FrameBuf::default();
        let mut got = Vec::new();
        for chunk in bytes.chunks(5) {
            fb.push(chunk);
            while let Some(f) = fb.next_frame().unwrap() {
                got.push(f);
            }
        }
        assert_eq!(got, frames);
    }

    #[test]
    fn an_oversized_or_unknown_frame_is_refused() {
        let mut b = vec![2, 0, 0, 0, 0];
        b.extend(((MAX_FRAME + 1) as u32).to_be_bytes());
        assert_eq!(Frame::decode(&b), Err(FrameError::TooLong(MAX_FRAME + 1)));
        assert_eq!(
            Frame::decode(&[99, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(FrameError::Kind(99))
        );
    }

    #[test]
    fn the_step_exit_is_the_first_non_zero_and_a_signal_is_128_plus_n() {
        let mut ends = BTreeMap::new();
        ends.insert(
            0,
            TaskEnd {
                code: Some(0),
                signal: None,
            },
        );
        assert_eq!(step_exit_code(&ends), 0);
        ends.insert(
            2,
            TaskEnd {
                code: None,
                signal: Some(15),
            },
        );
        ends.insert(
            1,
            TaskEnd {
                code: Some(3),
                signal: None,
            },
        );
        assert_eq!(step_exit_code(&ends), 3);
        ends.remove(&1);
        assert_eq!(step_exit_code(&ends), 143);
    }
}
