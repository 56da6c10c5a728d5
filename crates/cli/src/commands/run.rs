//! `gpusched run`: Slurm's `srun`. A step inside a running job of yours (`--jobid`), or
//! a job of its own made for one step: its output streams back live, its input is
//! forwarded, and `gpusched run` exits with the step's exit code (the first non-zero
//! of its tasks; 128+N for a death by signal N). `--pty` runs it in a pseudo-terminal
//! on the node, with this terminal in raw mode (`run_term.rs`), so `run --pty -- bash`
//! is an interactive shell on the job's node with its GPUs (docs/interactive.md).

use std::io::Write;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use gpusched_wire::step::{Frame, FrameBuf, StepRequest};
use gpusched_wire::JobState;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

use super::run_term::{window_size, RawMode};
use crate::client::Client;

#[derive(ClapArgs, Debug)]
pub struct RunArgs {
    /// Run the step inside this running job of yours (an allocation from `gpusched
    /// alloc`, or any running job), on its nodes, with its GPUs. Without it, a job is
    /// submitted with the options below, the step runs in it once it starts, and the
    /// job ends with the step.
    #[arg(long, value_name = "ID")]
    pub jobid: Option<u64>,
    /// Run the step in a pseudo-terminal on the node (one task): this terminal goes
    /// raw, and its size, Ctrl-C and Ctrl-Z reach the step (`srun --pty`).
    #[arg(long)]
    pub pty: bool,
    /// The job's options as `submit` takes them (without --jobid); `-N` is the step's
    /// nodes (the first N of the job's; for a new job, its nodes too) and
    /// `--tasks-per-node` the step's tasks on each.
    #[command(flatten)]
    pub job: super::submit::Args,
}

pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let code = run_code(args).await?;
    std::process::exit(code);
}

async fn run_code(mut args: RunArgs) -> anyhow::Result<i32> {
    if args.job.command.is_empty() {
        bail!("no command given: put it after `--` (gpusched run --jobid ID -- nvidia-smi)");
    }
    let client = args.job.conn.client()?;
    let tasks_per_node = args.job.tasks_per_node.take().unwrap_or(1);
    let command = args.job.command.clone();
    let (cols, rows) = if args.pty {
        window_size().unwrap_or((0, 0))
    } else {
        (0, 0)
    };
    let mut req = StepRequest {
        command,
        pty: args.pty,
        nodes: args.job.nodes,
        tasks_per_node,
        cols,
        rows,
        term: args.pty.then(|| std::env::var("TERM").ok()).flatten(),
    };
    if let Some(id) = args.jobid {
        return stream(&client, id, &req).await;
    }
    // A job of its own, holding its GPUs without a process (an interactive
    // allocation), for this one step.
    let mut jobs = super::submit::build(&args.job)?;
    for j in &mut jobs {
        j.interactive = true;
        j.command = vec!["sleep".into(), "infinity".into()];
    }
    let id = *client
        .submit(jobs)
        .await?
        .ids
        .first()
        .context("the server accepted no job")?;
    eprintln!("gpusched run: job {id} submitted; waiting for it to start (Ctrl-C cancels it)");
    if let Err(e) = wait_running(&client, id).await {
        let _ = client.cancel_many(&[id]).await;
        return Err(e);
    }
    // The step runs on all of the job's nodes (they are the ones asked for).
    req.nodes = None;
    let code = stream(&client, id, &req).await;
    // The job was made for the step: it ends with it.
    if let Err(e) = client.cancel_many(&[id]).await {
        eprintln!("gpusched run: could not end job {id}: {e:#}; `gpusched cancel {id}` ends it");
    }
    code
}

/// Waits for job `id` to run, saying on stderr why it waits; Ctrl-C cancels it.
async fn wait_running(client: &Client, id: u64) -> anyhow::Result<()> {
    let mut int = signal(SignalKind::interrupt())?;
    let mut said = String::new();
    loop {
        let v = client.get(id).await?;
        match v.state {
            JobState::Running => return Ok(()),
            s if s.is_terminal() => bail!(
                "job {id} ended before it started: {} ({})",
                s.name(),
                v.reason
            ),
            _ => {}
        }
        let now = format!("{}: {}", v.state.name(), v.reason);
        if now != said {
            eprintln!("gpusched run: job {id} is {now}");
            said = now;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(300)) => {}
            _ = int.recv() => bail!("interrupted: job {id} is cancelled"),
        }
    }
}

/// Runs the step and streams it; its exit code.
async fn stream(client: &Client, id: u64, req: &StepRequest) -> anyhow::Result<i32> {
    let io = client.open_step(id, req).await?;
    // Raw only once the server accepted it: its refusal is printed as usual.
    let raw = if req.pty { RawMode::enter() } else { None };
    let code = splice(io, req.pty, raw.is_some()).await;
    drop(raw);
    code
}

async fn splice(io: Box<dyn crate::client::StepIo>, pty: bool, raw: bool) -> anyhow::Result<i32> {
    let (mut rd, mut wr) = tokio::io::split(io);
    let (tx, mut rx) = mpsc::unbounded_channel::<Frame>();
    let writer = tokio::spawn(async move {
        while let Some(f) = rx.recv().await {
            if wr.write_all(&f.encode()).await.is_err() || wr.flush().await.is_err() {
                return;
            }
        }
    });
    // stdin, as it comes (a terminal's bytes include Ctrl-C and Ctrl-Z in raw mode).
    // Read on a thread of its own: a blocking read the runtime need not wait for.
    let stdin_tx = tx.clone();
    std::thread::spawn(move || {
        use std::io::Read;
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => {
                    if !pty {
                        let _ = stdin_tx.send(Frame::StdinEof);
                    }
                    return;
                }
                Ok(n) => {
                    if stdin_tx.send(Frame::Stdin(buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    });
    // Signals of this process: the window's size goes to the pty; SIGINT and SIGTERM
    // (on pipes, or a pty not driven from a raw terminal) go to the tasks, as srun.
    let sig_tx = tx.clone();
    let mut winch = signal(SignalKind::window_change())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        // A second Ctrl-C within a second kills the tasks (srun's rule).
        let mut last_int: Option<std::time::Instant> = None;
        loop {
            let f = tokio::select! {
                _ = winch.recv() => match window_size() {
                    Some((cols, rows)) if pty => Frame::Resize { cols, rows },
                    _ => continue,
                },
                _ = int.recv() => {
                    let again = last_int.is_some_and(|t| t.elapsed() < Duration::from_secs(1));
                    last_int = Some(std::time::Instant::now());
                    if again {
                        eprintln!("gpusched run: killing the step (a second Ctrl-C)");
                        Frame::Signal(libc::SIGKILL)
                    } else {
                        Frame::Signal(libc::SIGINT)
                    }
                }
                _ = term.recv() => Frame::Signal(libc::SIGTERM),
                _ = hup.recv() => Frame::Signal(libc::SIGHUP),
            };
            if sig_tx.send(f).is_err() {
                return;
            }
        }
    });
    drop(tx);
    let nl = if raw { "\r\n" } else { "\n" };
    let mut fb = FrameBuf::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    loop {
        let n = rd
            .read(&mut buf)
            .await
            .context("the step's stream from the server broke")?;
        if n == 0 {
            bail!("the server closed the step's stream before the step ended");
        }
        fb.push(&buf[..n]);
        while let Some(f) = fb.next_frame()? {
            match f {
                Frame::Stdout { data, .. } => {
                    out.write_all(&data)?;
                    out.flush()?;
                }
                Frame::Stderr { data, .. } => {
                    err.write_all(&data)?;
                    err.flush()?;
                }
                Frame::Error(m) => {
                    let m = gpusched_wire::terminal_safe(&m).into_owned();
                    write!(err, "gpusched run: {m}{nl}")?;
                }
                Frame::Done { code } => {
                    writer.abort();
                    return Ok(code);
                }
                _ => {}
            }
        }
    }
}
