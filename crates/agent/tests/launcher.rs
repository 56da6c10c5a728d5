//! The launcher against real processes. Every test bounds its waits, and every process
//! it starts ends: by itself, by the test's cancel or walltime, or at the latest when
//! its launcher is dropped (the leaders' parent-death signal).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use gpusched_agent::jobdir::Stream;
use gpusched_agent::launcher::{channel_sink, LaunchError, Launcher, LOST_ON_RESTART};
use gpusched_wire::{
    AttemptRef, DistHost, DistLaunch, GpuInfo, GpuSource, Launch, Outcome, RunEvent, RunEventKind,
};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};

#[path = "contain/mod.rs"]
mod contain;
#[path = "serve/mod.rs"]
mod serve;
use tokio::time::timeout;

/// Bounds every wait generously: CI runs these on two busy cores.
const WAIT: Duration = Duration::from_secs(60);

fn launch(job: u64, command: &[&str]) -> Launch {
    Launch {
        // Tests run as root (CI) or as a normal user; either way the job runs as the
        // agent's own user: as root only because these launchers allow root jobs.
        user: "root".into(),
        job,
        attempt: 1,
        name: format!("test-{job}"),
        command: command.iter().map(|s| s.to_string()).collect(),
        cwd: "/".into(),
        env: BTreeMap::new(),
        gpus: vec![],
        walltime_s: None,
        grace_s: 1,
        slice: None,
        resources: Default::default(),
        dist: None,
        cpu_milli: 0,
        mem_mib: 0,
        pids_max: None,
        image: None,
        serve: None,
        hold: false,
    }
}

fn sh(job: u64, script: &str) -> Launch {
    launch(job, &["sh", "-c", script])
}

fn setup() -> (tempfile::TempDir, Launcher, UnboundedReceiver<RunEvent>) {
    let state = tempfile::tempdir().unwrap();
    let (tx, rx) = unbounded_channel();
    let launcher = Launcher::with_root_jobs(&state.path().join("jobs"), channel_sink(tx)).unwrap();
    (state, launcher, rx)
}

async fn next_event(rx: &mut UnboundedReceiver<RunEvent>) -> RunEvent {
    timeout(WAIT, rx.recv())
        .await
        .expect("no run event in time")
        .expect("event channel closed")
}

async fn expect_started(rx: &mut UnboundedReceiver<RunEvent>) -> u32 {
    match next_event(rx).await.event {
        RunEventKind::Started { pid, .. } => pid,
        other => panic!("expected Started, got {other:?}"),
    }
}

async fn expect_ended(rx: &mut UnboundedReceiver<RunEvent>) -> Outcome {
    match next_event(rx).await.event {
        RunEventKind::Ended { outcome, .. } => outcome,
        other => panic!("expected Ended, got {other:?}"),
    }
}

/// Runs `l` to its end and returns the outcome.
async fn run(launcher: &Launcher, rx: &mut UnboundedReceiver<RunEvent>, l: &Launch) -> Outcome {
    launcher.start(l, &[]).unwrap();
    expect_started(rx).await;
    expect_ended(rx).await
}

/// Alive and not a zombie (zombies have ended; they only wait to be reaped).
fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) => false,
    }
}

fn wait_dead(pid: u32) -> bool {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Waits until the log has a complete first line and returns it.
async fn first_line(path: &Path) -> String {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        let text = fs::read_to_string(path).unwrap_or_default();
        if let Some((line, _)) = text.split_once('\n') {
            return line.to_string();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{} got no line in time", path.display());
}

fn attempt(job: u64) -> AttemptRef {
    AttemptRef { job, attempt: 1 }
}

#[tokio::test]
async fn exit_code_is_reported_and_recorded() {
    let (_state, launcher, mut rx) = setup();
    let l = sh(1, "exit 3");
    launcher.start(&l, &[]).unwrap();
    assert!(launcher.seen(attempt(1)));
    let pid = expect_started(&mut rx).await;
    assert!(pid > 1);
    assert_eq!(expect_ended(&mut rx).await, Outcome::Exited { code: 3 });
    assert!(launcher.running().is_empty());
    let stored = launcher
        .records()
        .read_outcome(attempt(1))
        .unwrap()
        .unwrap();
    assert_eq!(stored.outcome, Outcome::Exited { code: 3 });
    let pid_record = launcher.records().read_pid(attempt(1)).unwrap().unwrap();
    assert_eq!(pid_record.pgid, pid);
}

/// `--bench-instant-jobs`: nothing runs (the command would leave a file), yet the attempt
/// is recorded, started with no process, ended 0, and never started twice.
#[tokio::test]
async fn instant_jobs_run_nothing_and_end_zero() {
    let (state, mut launcher, mut rx) = setup();
    launcher.set_instant_jobs();
    let mark = state.path().join("ran");
    let l = sh(1, &format!("touch {}; exit 3", mark.display()));
    launcher.start(&l, &[]).unwrap();
    assert_eq!(expect_started(&mut rx).await, 0);
    assert_eq!(expect_ended(&mut rx).await, Outcome::Exited { code: 0 });
    assert!(launcher.running().is_empty());
    let stored = launcher.records().read_outcome(attempt(1)).unwrap();
    assert_eq!(stored.unwrap().outcome, Outcome::Exited { code: 0 });
    assert!(matches!(
        launcher.start(&l, &[]),
        Err(LaunchError::AlreadySeen(_))
    ));
    assert!(!mark.exists(), "an instant job ran its command");
}

#[tokio::test]
async fn death_by_an_outside_signal_is_signaled() {
    let (_state, launcher, mut rx) = setup();
    let outcome = run(&launcher, &mut rx, &sh(2, "kill -9 $$")).await;
    assert_eq!(outcome, Outcome::Signaled { signal: 9 });
}

#[tokio::test]
async fn walltime_stops_the_job_quickly() {
    let (_state, launcher, mut rx) = setup();
    let mut l = launch(3, &["sleep", "30"]);
    l.walltime_s = Some(1);
    // A long grace, so "no grace spent" is told apart from a slow machine.
    l.grace_s = 30;
    let began = Instant::now();
    launcher.start(&l, &[]).unwrap();
    let pid = expect_started(&mut rx).await;
    assert_eq!(launcher.running(), vec![attempt(3)]);
    assert_eq!(
        expect_ended(&mut rx).await,
        Outcome::TimedOut { walltime_s: 1 }
    );
    // sleep dies at SIGTERM, so no grace is spent.
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "{:?}",
        began.elapsed()
    );
    assert!(wait_dead(pid));
    assert!(launcher.running().is_empty());
}

/// An interactive allocation (`Launch::hold`): running with no process (pid 0) until
/// cancelled, journalled as any attempt; its walltime ends it too; the label in
/// `command` is never run.
#[tokio::test]
async fn a_held_allocation_runs_without_a_process_until_cancelled_or_its_walltime() {
    let (_state, launcher, mut rx) = setup();
    let mut l = launch(31, &["no-such-program-is-run"]);
    l.hold = true;
    launcher.start(&l, &[]).unwrap();
    assert!(launcher.seen(attempt(31)));
    assert_eq!(expect_started(&mut rx).await, 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(launcher.running(), vec![attempt(31)]);
    launcher.cancel(attempt(31));
    assert_eq!(expect_ended(&mut rx).await, Outcome::Cancelled);
    assert!(launcher.running().is_empty());
    let stored = launcher
        .records()
        .read_outcome(attempt(31))
        .unwrap()
        .unwrap();
    assert_eq!(stored.outcome, Outcome::Cancelled);
    assert!(matches!(
        launcher.start(&l, &[]),
        Err(LaunchError::AlreadySeen(_))
    ));

    let mut timed = launch(32, &["bash"]);
    timed.hold = true;
    timed.walltime_s = Some(1);
    let began = Instant::now();
    launcher.start(&timed, &[]).unwrap();
    assert_eq!(expect_started(&mut rx).await, 0);
    assert_eq!(
        expect_ended(&mut rx).await,
        Outcome::TimedOut { walltime_s: 1 }
    );
    assert!(began.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn cancel_of_a_job_that_exits_on_term_is_quick() {
    let (_state, launcher, mut rx) = setup();
    let mut l = sh(
        4,
        "trap 'exit 0' TERM; echo ready; while true; do sleep 0.1; done",
    );
    l.grace_s = 40;
    launcher.start(&l, &[]).unwrap();
    let pid = expect_started(&mut rx).await;
    first_line(&launcher.log_path(attempt(4), Stream::Stdout)).await;
    let began = Instant::now();
    launcher.cancel(attempt(4));
    assert_eq!(expect_ended(&mut rx).await, Outcome::Cancelled);
    // Well under the grace, with room for a busy machine.
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "{:?}",
        began.elapsed()
    );
    assert!(wait_dead(pid));
    // A second cancel, or one for an attempt not running, does nothing.
    launcher.cancel(attempt(4));
    launcher.cancel(attempt(999));
}

#[tokio::test]
async fn cancel_of_a_job_that_ignores_term_kills_it_after_the_grace() {
    let (_state, launcher, mut rx) = setup();
    let mut l = sh(
        5,
        "trap '' TERM; echo ready; while true; do sleep 0.1; done",
    );
    l.grace_s = 1;
    launcher.start(&l, &[]).unwrap();
    let pid = expect_started(&mut rx).await;
    first_line(&launcher.log_path(attempt(5), Stream::Stdout)).await;
    let began = Instant::now();
    launcher.cancel(attempt(5));
    assert_eq!(expect_ended(&mut rx).await, Outcome::Cancelled);
    let took = began.elapsed();
    assert!(
        took >= Duration::from_secs(1),
        "stopped before the grace: {took:?}"
    );
    // Then SIGKILL: bounded, with room for a busy machine.
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(wait_dead(pid));
}

#[tokio::test]
async fn cancel_kills_background_grandchildren() {
    let (_state, launcher, mut rx) = setup();
    launcher
        .start(&sh(6, "sleep 60 & echo $!; sleep 60"), &[])
        .unwrap();
    let leader = expect_started(&mut rx).await;
    let grandchild: u32 = first_line(&launcher.log_path(attempt(6), Stream::Stdout))
        .await
        .parse()
        .unwrap();
    assert!(alive(grandchild));
    launcher.cancel(attempt(6));
    assert_eq!(expect_ended(&mut rx).await, Outcome::Cancelled);
    assert!(wait_dead(leader));
    assert!(
        wait_dead(grandchild),
        "grandchild {grandchild} survived the cancel"
    );
}

#[tokio::test]
async fn stragglers_are_killed_when_the_leader_exits() {
    let (_state, launcher, mut rx) = setup();
    let outcome = run(&launcher, &mut rx, &sh(7, "sleep 60 & echo $!; exit 0")).await;
    assert_eq!(outcome, Outcome::Exited { code: 0 });
    let grandchild: u32 = first_line(&launcher.log_path(attempt(7), Stream::Stdout))
        .await
        .parse()
        .unwrap();
    assert!(
        wait_dead(grandchild),
        "straggler {grandchild} outlived its job"
    );
}

fn gpu(index: u32, uuid: Option<&str>) -> GpuInfo {
    GpuInfo {
        index,
        uuid: uuid.map(str::to_string),
        model: "A100-SXM4-80GB".into(),
        mem_mib: 81920,
        source: GpuSource::Fake,
        mig: None,
    }
}

async fn env_of(l: &Launch, gpus: &[GpuInfo]) -> BTreeMap<String, String> {
    let (_state, launcher, mut rx) = setup();
    launcher.start(l, gpus).unwrap();
    expect_started(&mut rx).await;
    assert_eq!(expect_ended(&mut rx).await, Outcome::Exited { code: 0 });
    let text = fs::read_to_string(launcher.log_path(l.attempt_ref(), Stream::Stdout)).unwrap();
    text.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn environment_carries_gpus_and_job_identity() {
    let node = [
        gpu(0, Some("GPU-aaaa")),
        gpu(1, Some("GPU-bbbb")),
        gpu(2, Some("GPU-cccc")),
    ];
    let mut l = launch(8, &["env"]);
    l.gpus = vec![2, 0];
    l.env.insert("FOO".into(), "bar baz".into());
    // gpusched's own variables win over the job's.
    l.env.insert("CUDA_VISIBLE_DEVICES".into(), "7".into());
    let env = env_of(&l, &node).await;
    assert_eq!(env["CUDA_VISIBLE_DEVICES"], "GPU-cccc,GPU-aaaa");
    assert_eq!(env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
    assert_eq!(env["GPUSCHED_JOB_ID"], "8");
    assert_eq!(env["GPUSCHED_ATTEMPT"], "1");
    assert_eq!(env["GPUSCHED_JOB_NAME"], "test-8");
    assert_eq!(env["FOO"], "bar baz");
    // The agent's own environment is inherited.
    assert_eq!(env.get("PATH"), std::env::var("PATH").ok().as_ref());
}

#[tokio::test]
async fn gpus_without_uuids_are_named_by_index_and_no_gpus_hide_all() {
    let node = [gpu(0, None), gpu(1, None)];
    let mut l = launch(9, &["env"]);
    l.gpus = vec![1];
    assert_eq!(env_of(&l, &node).await["CUDA_VISIBLE_DEVICES"], "1");
    let none = launch(10, &["env"]);
    assert_eq!(env_of(&none, &node).await["CUDA_VISIBLE_DEVICES"], "");
}

#[tokio::test]
async fn stdout_and_stderr_are_captured_separately() {
    let (_state, launcher, mut rx) = setup();
    let outcome = run(
        &launcher,
        &mut rx,
        &sh(11, "echo out; echo err >&2; echo out2"),
    )
    .await;
    assert_eq!(outcome, Outcome::Exited { code: 0 });
    let read = |s| fs::read_to_string(launcher.log_path(attempt(11), s)).unwrap();
    assert_eq!(read(Stream::Stdout), "out\nout2\n");
    assert_eq!(read(Stream::Stderr), "err\n");
}

#[tokio::test]
async fn stdin_is_empty() {
    let (_state, launcher, mut rx) = setup();
    let outcome = run(&launcher, &mut rx, &sh(12, "cat; echo done")).await;
    assert_eq!(outcome, Outcome::Exited { code: 0 });
    let out = fs::read_to_string(launcher.log_path(attempt(12), Stream::Stdout)).unwrap();
    assert_eq!(out, "done\n");
}

/// Starts `l`, expects it to fail to spawn without a Started event, returns the message.
async fn spawn_failure(l: &Launch, gpus: &[GpuInfo]) -> String {
    let (_state, launcher, mut rx) = setup();
    launcher.start(l, gpus).unwrap();
    assert!(launcher.seen(l.attempt_ref()));
    let outcome = expect_ended(&mut rx).await;
    let stored = launcher
        .records()
        .read_outcome(l.attempt_ref())
        .unwrap()
        .unwrap();
    assert_eq!(stored.outcome, outcome);
    assert!(launcher.running().is_empty());
    match outcome {
        Outcome::SpawnFailed { message } => message,
        other => panic!("expected SpawnFailed, got {other:?}"),
    }
}

#[tokio::test]
async fn missing_program_fails_to_spawn_with_a_helpful_message() {
    let msg = spawn_failure(&launch(13, &["gpusched-test-no-such-program", "x"]), &[]).await;
    assert!(msg.contains("gpusched-test-no-such-program"), "{msg}");
    assert!(msg.contains("PATH"), "{msg}");
    let msg = spawn_failure(&launch(14, &["/no/such/bin/prog"]), &[]).await;
    assert!(
        msg.contains("/no/such/bin/prog") && msg.contains("does not exist"),
        "{msg}"
    );
}

#[tokio::test]
async fn missing_cwd_fails_to_spawn_naming_the_directory() {
    let mut l = launch(15, &["true"]);
    l.cwd = "/gpusched-test/no/such/dir".into();
    let msg = spawn_failure(&l, &[]).await;
    assert!(msg.contains("/gpusched-test/no/such/dir"), "{msg}");
    assert!(
        msg.contains("working directory") && msg.contains("does not exist"),
        "{msg}"
    );
}

#[tokio::test]
async fn program_that_is_not_executable_fails_to_spawn() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    let mut l = launch(16, &["./run.sh"]);
    l.cwd = dir.path().to_str().unwrap().into();
    let msg = spawn_failure(&l, &[]).await;
    assert!(
        msg.contains("./run.sh") && msg.contains("chmod +x"),
        "{msg}"
    );
}

#[tokio::test]
async fn empty_command_and_unknown_gpu_fail_to_spawn() {
    let msg = spawn_failure(&launch(17, &[]), &[]).await;
    assert!(msg.contains("no command"), "{msg}");
    let mut l = launch(18, &["true"]);
    l.gpus = vec![3];
    let msg = spawn_failure(&l, &[gpu(0, None)]).await;
    assert!(msg.contains("GPU 3"), "{msg}");
}

#[tokio::test]
async fn an_attempt_is_never_started_twice() {
    let (_state, launcher, mut rx) = setup();
    let l = sh(19, "exit 0");
    assert!(!launcher.seen(attempt(19)));
    launcher.start(&l, &[]).unwrap();
    assert!(matches!(
        launcher.start(&l, &[]),
        Err(LaunchError::AlreadySeen(a)) if a == attempt(19)
    ));
    expect_started(&mut rx).await;
    expect_ended(&mut rx).await;
    assert!(timeout(Duration::from_millis(200), rx.recv())
        .await
        .is_err());
}

#[test]
fn start_needs_a_runtime() {
    let (_state, launcher, _rx) = setup();
    assert!(matches!(
        launcher.start(&sh(20, "exit 0"), &[]),
        Err(LaunchError::NoRuntime)
    ));
    assert!(!launcher.seen(attempt(20)));
}

/// An agent dies with a job running; the next agent stops what is left and reports it lost.
#[test]
fn recovery_stops_and_reports_a_job_of_a_dead_agent() {
    let state = tempfile::tempdir().unwrap();
    let first_life = tokio::runtime::Runtime::new().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let launcher = Launcher::with_root_jobs(&state.path().join("jobs"), channel_sink(tx)).unwrap();
    let (leader, grandchild) = first_life.block_on(async {
        launcher
            .start(&sh(21, "sleep 60 & echo $!; sleep 60"), &[])
            .unwrap();
        let leader = expect_started(&mut rx).await;
        let line = first_line(&launcher.log_path(attempt(21), Stream::Stdout)).await;
        (leader, line.parse::<u32>().unwrap())
    });
    // The agent dies: its tasks vanish without stopping anything, and its threads end.
    drop(first_life);
    drop(launcher);
    assert!(wait_dead(leader), "the leader outlived the agent");
    assert!(
        alive(grandchild),
        "the grandchild should be left for recovery to find"
    );

    let (tx, _rx) = unbounded_channel();
    let next = Launcher::with_root_jobs(&state.path().join("jobs"), channel_sink(tx)).unwrap();
    let events = next.recover().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    let lost = Outcome::Lost {
        message: LOST_ON_RESTART.to_string(),
    };
    assert_eq!((events[0].job, events[0].attempt), (21, 1));
    assert_eq!(
        events[0].event,
        RunEventKind::Ended {
            outcome: lost.clone(),
            usage: None,
        }
    );
    assert!(wait_dead(grandchild), "recovery left {grandchild} running");
    let stored = next.records().read_outcome(attempt(21)).unwrap().unwrap();
    assert_eq!(stored.outcome, lost);
}

#[tokio::test]
async fn recovery_reports_stored_outcomes_until_acknowledged() {
    let state = tempfile::tempdir().unwrap();
    {
        let (tx, mut rx) = unbounded_channel();
        let launcher =
            Launcher::with_root_jobs(&state.path().join("jobs"), channel_sink(tx)).unwrap();
        for (job, code) in [(22, 0), (23, 4)] {
            let outcome = run(&launcher, &mut rx, &sh(job, &format!("exit {code}"))).await;
            assert_eq!(outcome, Outcome::Exited { code });
        }
        launcher.mark_acked(attempt(22)).unwrap();
    }
    let (tx, _rx) = unbounded_channel();
    let next = Launcher::with_root_jobs(&state.path().join("jobs"), channel_sink(tx)).unwrap();
    let events = next.recover().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((events[0].job, events[0].attempt), (23, 1));
    assert_eq!(
        events[0].event,
        RunEventKind::Ended {
            outcome: Outcome::Exited { code: 4 },
            usage: None,
        }
    );
    assert!(events[0].at_ms > 0);
    // Recovery is repeatable until the server acknowledges.
    assert_eq!(next.recover().unwrap(), events);
    next.mark_acked(attempt(23)).unwrap();
    assert!(next.recover().unwrap().is_empty());
    // Acknowledged attempts leave the journal when it is next opened (the server never
    // asks for them again).
    assert!(next.seen(attempt(23)));
    assert!(!next.seen(attempt(22)));
}

#[test]
fn recovery_of_an_attempt_that_never_started_reports_it_lost() {
    let state = tempfile::tempdir().unwrap();
    let (tx, _rx) = unbounded_channel();
    let launcher = Launcher::with_root_jobs(&state.path().join("jobs"), channel_sink(tx)).unwrap();
    // As if the agent died between recording the launch and spawning it.
    launcher.records().create(&sh(24, "exit 0")).unwrap();
    let events = launcher.recover().unwrap();
    assert_eq!(events.len(), 1);
    assert!(matches!(
        &events[0].event,
        RunEventKind::Ended {
            outcome: Outcome::Lost { .. },
            ..
        }
    ));
}

// Distributed launches (issue 12): the environment of a part, its hostfile, and parts
// of several processes (`tasks_per_node`).

fn gang_dist(node_rank: u32, tasks: Option<u32>) -> DistLaunch {
    let slots = tasks.unwrap_or(2);
    DistLaunch {
        nnodes: 2,
        node_rank,
        gpus_per_node: 2,
        tasks_per_node: tasks,
        master_addr: Some("10.1.0.1".into()),
        master_port: Some(29512),
        hosts: vec![
            DistHost {
                addr: "10.1.0.1".into(),
                slots,
            },
            DistHost {
                addr: "10.1.0.2".into(),
                slots,
            },
        ],
    }
}

fn four_gpus() -> Vec<GpuInfo> {
    (0..4)
        .map(|i| gpu(i, Some(&format!("GPU-{i}{i}{i}{i}"))))
        .collect()
}

#[tokio::test]
async fn the_second_part_of_a_gang_gets_the_masters_environment_and_the_hostfile() {
    let mut l = sh(
        30,
        "env; echo HOSTFILE_TEXT=$(tr '\\n' ';' < \"$GPUSCHED_HOSTFILE\")",
    );
    l.gpus = vec![2, 3];
    l.dist = Some(gang_dist(1, None));
    let env = env_of(&l, &four_gpus()).await;
    assert_eq!(env["MASTER_ADDR"], "10.1.0.1");
    assert_eq!(env["MASTER_PORT"], "29512");
    assert_eq!(env["NNODES"], "2");
    assert_eq!(env["NODE_RANK"], "1");
    assert_eq!(env["GPUS_PER_NODE"], "2");
    assert_eq!(env["WORLD_SIZE"], "4");
    assert_eq!(env["CUDA_VISIBLE_DEVICES"], "GPU-2222,GPU-3333");
    assert_eq!(env["HOSTFILE_TEXT"], "10.1.0.1 slots=2;10.1.0.2 slots=2;");
    // One process per node without tasks_per_node: torchrun makes the ranks.
    for k in ["RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE"] {
        assert!(!env.contains_key(k), "{k} set: {env:?}");
    }
}

#[tokio::test]
async fn a_job_of_one_node_gets_its_own_address_and_a_port_freed_before_it_starts() {
    let (_state, launcher, mut rx) = setup();
    launcher.set_advertise_addr("127.0.0.1");
    let mut l = sh(
        31,
        "echo MASTER_ADDR=$MASTER_ADDR; echo MASTER_PORT=$MASTER_PORT; \
         echo HOSTS=$(cat \"$GPUSCHED_HOSTFILE\"); echo WORLD_SIZE=$WORLD_SIZE; sleep 30",
    );
    l.gpus = vec![0, 1, 2];
    launcher.start(&l, &four_gpus()).unwrap();
    expect_started(&mut rx).await;
    let path = launcher.log_path(attempt(31), Stream::Stdout);
    let deadline = Instant::now() + WAIT;
    let text = loop {
        let text = fs::read_to_string(&path).unwrap_or_default();
        if text.lines().count() >= 4 || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let env: BTreeMap<&str, &str> = text.lines().filter_map(|l| l.split_once('=')).collect();
    assert_eq!(env["MASTER_ADDR"], "127.0.0.1", "{text}");
    assert_eq!(env["HOSTS"], "127.0.0.1 slots=3");
    assert_eq!(env["WORLD_SIZE"], "3");
    let port: u16 = env["MASTER_PORT"].parse().unwrap();
    assert_ne!(port, 0);
    // The agent let go of it before the job started: the job can bind it.
    assert_eq!(launcher.ports().held(attempt(31)), None);
    std::net::TcpListener::bind(("127.0.0.1", port)).expect("MASTER_PORT is free for the job");
    launcher.cancel(attempt(31));
    assert_eq!(expect_ended(&mut rx).await, Outcome::Cancelled);
}

#[tokio::test]
async fn a_held_gang_port_is_released_when_its_first_part_starts() {
    let (_state, launcher, mut rx) = setup();
    let port = launcher.ports().reserve(attempt(32), "127.0.0.1").unwrap();
    let mut l = sh(32, "echo MASTER_PORT=$MASTER_PORT; sleep 30");
    l.gpus = vec![0, 1];
    let mut d = gang_dist(0, None);
    d.master_addr = Some("127.0.0.1".into());
    d.master_port = Some(port);
    l.dist = Some(d);
    launcher.start(&l, &four_gpus()).unwrap();
    expect_started(&mut rx).await;
    let line = first_line(&launcher.log_path(attempt(32), Stream::Stdout)).await;
    assert_eq!(line, format!("MASTER_PORT={port}"));
    assert_eq!(launcher.ports().held(attempt(32)), None);
    std::net::TcpListener::bind(("127.0.0.1", port)).expect("released for the job");
    launcher.cancel(attempt(32));
    assert_eq!(expect_ended(&mut rx).await, Outcome::Cancelled);
}

/// Reads `KEY=VALUE` lines of one rank's stdout.
async fn rank_env(launcher: &Launcher, a: AttemptRef, rank: u32) -> BTreeMap<String, String> {
    let text = fs::read_to_string(launcher.rank_log_path(a, rank, Stream::Stdout))
        .unwrap_or_else(|e| panic!("rank {rank} has no stdout: {e}"));
    text.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test]
async fn tasks_per_node_starts_k_processes_with_distinct_ranks_gpus_and_logs() {
    let (_state, launcher, mut rx) = setup();
    let mut l = sh(
        33,
        "echo RANK=$RANK; echo LOCAL_RANK=$LOCAL_RANK; echo LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE; \
         echo WORLD_SIZE=$WORLD_SIZE; echo CVD=$CUDA_VISIBLE_DEVICES; echo err$RANK >&2",
    );
    l.gpus = vec![0, 1, 2, 3];
    let mut d = gang_dist(1, Some(4));
    d.gpus_per_node = 4;
    l.dist = Some(d);
    launcher.start(&l, &four_gpus()).unwrap();
    expect_started(&mut rx).await;
    // One part, one end, after all four ended.
    assert_eq!(expect_ended(&mut rx).await, Outcome::Exited { code: 0 });
    assert!(timeout(Duration::from_millis(300), rx.recv())
        .await
        .is_err());
    assert_eq!(launcher.records().log_ranks(attempt(33)), vec![4, 5, 6, 7]);
    for local in 0..4u32 {
        let rank = 4 + local;
        let env = rank_env(&launcher, attempt(33), rank).await;
        assert_eq!(env["RANK"], rank.to_string());
        assert_eq!(env["LOCAL_RANK"], local.to_string());
        assert_eq!(env["LOCAL_WORLD_SIZE"], "4");
        assert_eq!(env["WORLD_SIZE"], "8");
        assert_eq!(env["CVD"], format!("GPU-{local}{local}{local}{local}"));
        let err =
            fs::read_to_string(launcher.rank_log_path(attempt(33), rank, Stream::Stderr)).unwrap();
        assert_eq!(err, format!("err{rank}\n"));
    }
}

#[tokio::test]
async fn two_tasks_share_the_gpus_in_contiguous_halves() {
    let (_state, launcher, mut rx) = setup();
    let mut l = sh(34, "echo CVD=$CUDA_VISIBLE_DEVICES");
    l.gpus = vec![3, 2, 1, 0];
    let mut d = gang_dist(0, Some(2));
    d.gpus_per_node = 4;
    l.dist = Some(d);
    launcher.start(&l, &four_gpus()).unwrap();
    expect_started(&mut rx).await;
    assert_eq!(expect_ended(&mut rx).await, Outcome::Exited { code: 0 });
    let halves = [
        rank_env(&launcher, attempt(34), 0).await["CVD"].clone(),
        rank_env(&launcher, attempt(34), 1).await["CVD"].clone(),
    ];
    assert_eq!(halves, ["GPU-3333,GPU-2222", "GPU-1111,GPU-0000"]);
}

#[tokio::test]
async fn a_failing_process_stops_its_siblings_and_is_the_parts_outcome() {
    let (_state, launcher, mut rx) = setup();
    // Rank 1 fails once its siblings have said they run; the others would sleep long.
    let ready = tempfile::tempdir().unwrap();
    let mut l = sh(
        35,
        "if [ \"$LOCAL_RANK\" = 1 ]; then \
           while [ ! -e \"$READY/0\" ] || [ ! -e \"$READY/2\" ]; do sleep 0.05; done; \
           exit 7; fi; \
         echo $$; touch \"$READY/$LOCAL_RANK\"; exec sleep 60",
    );
    l.env
        .insert("READY".into(), ready.path().to_str().unwrap().into());
    l.gpus = vec![0, 1, 2];
    l.grace_s = 30;
    let mut d = gang_dist(0, Some(3));
    d.gpus_per_node = 3;
    l.dist = Some(d);
    let began = Instant::now();
    launcher.start(&l, &four_gpus()).unwrap();
    expect_started(&mut rx).await;
    let mut pids = Vec::new();
    for r in [0u32, 2] {
        let path = launcher.rank_log_path(attempt(35), r, Stream::Stdout);
        pids.push(first_line(&path).await.parse::<u32>().unwrap());
    }
    assert_eq!(expect_ended(&mut rx).await, Outcome::Exited { code: 7 });
    // sleep dies at SIGTERM: no grace spent.
    assert!(
        began.elapsed() < Duration::from_secs(25),
        "{:?}",
        began.elapsed()
    );
    for pid in pids {
        assert!(wait_dead(pid), "sibling {pid} outlived the failed part");
    }
    assert!(launcher.running().is_empty());
}

#[tokio::test]
async fn cancel_stops_every_process_of_a_part() {
    let (_state, launcher, mut rx) = setup();
    let mut l = sh(36, "echo $$; exec sleep 60");
    l.gpus = vec![0, 1];
    let mut d = gang_dist(0, Some(2));
    l.dist = Some({
        d.master_addr = Some("127.0.0.1".into());
        d
    });
    launcher.start(&l, &four_gpus()).unwrap();
    expect_started(&mut rx).await;
    let mut pids = Vec::new();
    for r in [0u32, 1] {
        let path = launcher.rank_log_path(attempt(36), r, Stream::Stdout);
        pids.push(first_line(&path).await.parse::<u32>().unwrap());
    }
    launcher.cancel(attempt(36));
    assert_eq!(expect_ended(&mut rx).await, Outcome::Cancelled);
    for pid in pids {
        assert!(wait_dead(pid), "{pid} survived the cancel");
    }
}

#[tokio::test]
async fn tasks_that_do_not_divide_the_gpus_fail_to_spawn() {
    let mut l = launch(37, &["true"]);
    l.gpus = vec![0, 1, 2];
    let mut d = gang_dist(0, Some(2));
    d.gpus_per_node = 3;
    l.dist = Some(d);
    let msg = spawn_failure(&l, &four_gpus()).await;
    assert!(
        msg.contains("3 GPUs") && msg.contains("2 processes"),
        "{msg}"
    );
}

/// A part of several processes whose agent died is recovered as one unit: every
/// process is gone and the part is reported lost once.
#[test]
fn recovery_reports_a_part_of_several_processes_lost_once() {
    let state = tempfile::tempdir().unwrap();
    let first_life = tokio::runtime::Runtime::new().unwrap();
    let (tx, mut rx) = unbounded_channel();
    let launcher = Launcher::with_root_jobs(&state.path().join("jobs"), channel_sink(tx)).unwrap();
    let mut l = sh(38, "sleep 60 & echo $!; sleep 60");
    l.gpus = vec![0, 1];
    l.dist = Some(gang_dist(0, Some(2)));
    let background: Vec<u32> = first_life.block_on(async {
        launcher.start(&l, &four_gpus()).unwrap();
        expect_started(&mut rx).await;
        let mut pids = Vec::new();
        for r in [0u32, 1] {
            let path = launcher.rank_log_path(attempt(38), r, Stream::Stdout);
            pids.push(first_line(&path).await.parse::<u32>().unwrap());
        }
        pids
    });
    drop(first_life);
    drop(launcher);
    let (tx, _rx) = unbounded_channel();
    let next = Launcher::with_root_jobs(&state.path().join("jobs"), channel_sink(tx)).unwrap();
    let events = next.recover().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(matches!(
        &events[0].event,
        RunEventKind::Ended {
            outcome: Outcome::Lost { .. },
            ..
        }
    ));
    for pid in background {
        assert!(wait_dead(pid), "recovery left {pid} of the part running");
    }
}

#[tokio::test]
async fn preemption_signals_every_process_of_a_part() {
    let (_state, launcher, mut rx) = setup();
    // Each process saves on SIGUSR1 (writes its rank) and exits.
    let mut l = sh(
        39,
        "trap 'echo saved $RANK; exit 0' USR1; echo ready; while true; do sleep 0.1; done",
    );
    l.gpus = vec![0, 1];
    l.dist = Some(gang_dist(0, Some(2)));
    launcher.start(&l, &four_gpus()).unwrap();
    expect_started(&mut rx).await;
    for r in [0u32, 1] {
        first_line(&launcher.rank_log_path(attempt(39), r, Stream::Stdout)).await;
    }
    launcher.preempt(attempt(39), 10, Duration::from_secs(30));
    assert_eq!(expect_ended(&mut rx).await, Outcome::Preempted);
    for r in [0u32, 1] {
        let text =
            fs::read_to_string(launcher.rank_log_path(attempt(39), r, Stream::Stdout)).unwrap();
        assert!(text.contains(&format!("saved {r}")), "rank {r}: {text}");
    }
}

#[tokio::test]
async fn a_fence_cuts_short_the_grace_of_a_failed_parts_siblings() {
    let (_state, launcher, mut rx) = setup();
    // Rank 0 notes SIGTERM and carries on; rank 1 fails once rank 0 is ready.
    let ready = tempfile::tempdir().unwrap();
    let mut l = sh(
        40,
        "if [ \"$LOCAL_RANK\" = 1 ]; then \
           while [ ! -e \"$READY/0\" ]; do sleep 0.05; done; exit 3; fi; \
         trap 'echo term' TERM; echo $$; touch \"$READY/0\"; \
         while true; do sleep 0.1; done",
    );
    l.env
        .insert("READY".into(), ready.path().to_str().unwrap().into());
    l.gpus = vec![0, 1];
    l.grace_s = 600;
    l.dist = Some(gang_dist(0, Some(2)));
    launcher.start(&l, &four_gpus()).unwrap();
    expect_started(&mut rx).await;
    let pid: u32 = first_line(&launcher.rank_log_path(attempt(40), 0, Stream::Stdout))
        .await
        .parse()
        .unwrap();
    // Rank 1 has failed and rank 0 got SIGTERM, so it is in its (long) grace: the
    // agent fences.
    let path = launcher.rank_log_path(attempt(40), 0, Stream::Stdout);
    let deadline = Instant::now() + WAIT;
    while !fs::read_to_string(&path)
        .unwrap_or_default()
        .contains("term")
    {
        assert!(Instant::now() < deadline, "rank 0 got no SIGTERM");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    launcher.fence("lost contact");
    assert_eq!(expect_ended(&mut rx).await, Outcome::Exited { code: 3 });
    assert!(wait_dead(pid), "rank 0 outlived the fence");
}
