//! Preemptive policies and priority preemption on the live cluster, with real jobs that
//! keep the checkpoint contract: on the signal they write a marker into
//! `GPUSCHED_CHECKPOINT_DIR` and exit; when they run again they find it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

/// A job that runs until told to checkpoint: it says which run it is and whether it
/// found its marker, and on SIGUSR1 writes the marker and exits 0.
const CHECKPOINTING: &str =
    "trap 'touch \"$GPUSCHED_CHECKPOINT_DIR/marker\"; echo got-usr1; exit 0' USR1; \
     if [ -f \"$GPUSCHED_CHECKPOINT_DIR/marker\" ]; then m=yes; else m=no; fi; \
     echo start restart=$GPUSCHED_RESTART_COUNT marker=$m; \
     while true; do sleep 0.2; done";

fn run_log(agent: &Path, id: u64, attempt: u32) -> String {
    std::fs::read_to_string(agent.join(format!("jobs/logs/{id}.{attempt}.stdout")))
        .unwrap_or_default()
}

fn attempt_started(v: &Value) -> u64 {
    v["start_ms"].as_u64().expect("a running job has a start")
}

/// The `victim` (a [`CHECKPOINTING`] job preempted once) resumes from its marker after
/// each of `before` succeeded, and each of them started before it resumed.
fn resumed_after(url: &str, agent_dir: &Path, victim: u64, before: &[u64]) {
    let ran: Vec<Value> = before.iter().map(|&id| wait_job(url, id, SLOW)).collect();
    for v in &ran {
        assert_eq!(v["state"], "succeeded", "{v}");
    }
    wait_until(SLOW, || {
        run_log(agent_dir, victim, 2).contains("start restart=1 marker=yes")
    });
    // The job's line in its log comes before its agent's report of the start reaches
    // the server: wait for that evidence too before reading the start.
    wait_until(SLOW, || {
        let l = job(url, victim);
        l["attempt"].as_u64() == Some(2) && l["start_ms"].is_u64()
    });
    let l = job(url, victim);
    assert_eq!(
        (l["attempt"].as_u64(), l["preemptions"].as_u64()),
        (Some(2), Some(1)),
        "{l}"
    );
    assert!(run_log(agent_dir, victim, 1).contains("got-usr1"), "{l}");
    let resumed = attempt_started(&l);
    for v in &ran {
        assert!(
            attempt_started(v) < resumed,
            "the new jobs ran before the preempted one resumed: {v} {l}"
        );
    }
}

/// A server with `args` and a 20 s preemption grace (time enough to checkpoint), and
/// one agent `n1` with `gpus` declared GPUs: (server, its URL, the agent's state
/// directory, where the job logs are, agent).
fn preempting_cluster(dir: &Path, args: &[&str], gpus: u32) -> (Proc, String, PathBuf, Proc) {
    let args = [args, &["--preempt-grace", "20s"]].concat();
    let (server, url) = server(&dir.join("data"), 0, &args);
    let agent_dir = dir.join("agent");
    let agent = agent(&url, "n1", &agent_dir, Gpus::Declared(gpus));
    (server, url, agent_dir, agent)
}

#[test]
fn tiresias_preempts_a_long_job_for_a_new_short_one_and_resumes_it_with_its_service() {
    let (_d, dir) = scratch();
    // Queue 0 ends at 2 GPU-seconds of service.
    let args = [
        "--policy",
        "tiresias",
        "--las-limits",
        "2s",
        "--min-runtime",
        "1s",
    ];
    let (_server, url, agent_dir, _agent) = preempting_cluster(&dir, &args, 1);
    let long = submit(&url, &["--", "sh", "-c", CHECKPOINTING]);
    wait_until(SLOW, || job(&url, long)["state"] == "running");
    wait_until(SLOW, || {
        run_log(&agent_dir, long, 1).contains("start restart=0 marker=no")
    });
    // The long job has attained more than the first queue's 2 s: the new job (queue 0)
    // goes first, and the long one gets the checkpoint signal.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let short = submit(&url, &["--", "sleep", "3"]);
    wait_until(SLOW, || job(&url, short)["state"] == "running");
    // Another new job while the short one runs: queue 0 as well, so it goes before the
    // long job, whose service (kept over its requeue) put it in queue 1.
    let again = submit(&url, &["--", "true"]);
    resumed_after(&url, &agent_dir, long, &[short, again]);
    cli(&url, &["cancel", &long.to_string()]);
}

#[test]
fn srtf_preempts_the_longer_remaining_estimate_and_min_runtime_blocks_a_loop() {
    let (_d, dir) = scratch();
    let args = ["--policy", "srtf", "--min-runtime", "6s"];
    let (_server, url, agent_dir, _agent) = preempting_cluster(&dir, &args, 1);
    let long = submit(&url, &["--walltime", "1h", "--", "sh", "-c", CHECKPOINTING]);
    wait_until(SLOW, || job(&url, long)["state"] == "running");
    let first_start = attempt_started(&job(&url, long));
    let short = submit(&url, &["--walltime", "5m", "--", "sleep", "1"]);
    let s = wait_job(&url, short, SLOW);
    assert_eq!(s["state"], "succeeded", "{s}");
    let waited = attempt_started(&s) - first_start;
    assert!(
        waited >= 6_000,
        "preempted {waited} ms after it started: {s}"
    );
    wait_until(SLOW, || {
        job(&url, long)["state"] == "running" && job(&url, long)["attempt"] == 2
    });
    let l = job(&url, long);
    assert_eq!(l["preemptions"], 1, "{l}");
    assert!(run_log(&agent_dir, long, 1).contains("got-usr1"), "{l}");
    // The long job was protected for its first 6 s, and is again after it restarts: a
    // shorter job arriving now waits out the minimum instead of bouncing it at once.
    let restarted = attempt_started(&l);
    let next = submit(&url, &["--walltime", "5m", "--", "true"]);
    let n = wait_job(&url, next, SLOW);
    assert_eq!(n["state"], "succeeded", "{n}");
    let ran_for = attempt_started(&n) - restarted;
    assert!(
        ran_for >= 6_000,
        "preempted {ran_for} ms after it restarted: {n}"
    );
    wait_until(SLOW, || {
        run_log(&agent_dir, long, 3).contains("restart=2 marker=yes")
    });
    cli(&url, &["cancel", &long.to_string()]);
}

/// Queue `a` preempts lower priority tiers, queue `b` does not: a high-tier job of `a`
/// takes a low-tier `a` job's GPU (which checkpoints and resumes later), never a `b` job's;
/// a high-priority `b` job just waits.
#[test]
fn a_high_tier_job_preempts_a_low_tier_one_of_its_own_queue_only() {
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(
        &file,
        "[queues.a]\npreempt_lower_priority = true\npriority_tiers = [100]\n\n[queues.b]\n",
    )
    .unwrap();
    let args = ["--queues", file.to_str().unwrap(), "--min-runtime", "1s"];
    let (_server, url, agent_dir, _agent) = preempting_cluster(&dir, &args, 2);
    let low_a = submit(&url, &["-q", "a", "--", "sh", "-c", CHECKPOINTING]);
    let low_b = submit(&url, &["-q", "b", "--", "sh", "-c", CHECKPOINTING]);
    wait_until(SLOW, || {
        job(&url, low_a)["state"] == "running" && job(&url, low_b)["state"] == "running"
    });
    let high_b = submit(&url, &["-q", "b", "--priority", "500", "--", "true"]);
    let high_a = submit(&url, &["-q", "a", "--priority", "100", "--", "sleep", "1"]);
    let h = wait_job(&url, high_a, SLOW);
    assert_eq!(h["state"], "succeeded", "{h}");
    let la = job(&url, low_a);
    assert_eq!(la["preemptions"], 1, "{la}");
    assert!(run_log(&agent_dir, low_a, 1).contains("got-usr1"));
    // The preempted job resumes from its checkpoint on the GPU the short job left
    // (fifo: it was submitted first). The `b` job of high priority still waits: it
    // preempts nobody, and the low `b` job was never touched.
    wait_until(SLOW, || {
        run_log(&agent_dir, low_a, 2).contains("start restart=1 marker=yes")
    });
    let hb = job(&url, high_b);
    assert_eq!(
        (hb["state"].as_str(), hb["attempt"].as_u64()),
        (Some("pending"), Some(1)),
        "{hb}"
    );
    let lb = job(&url, low_b);
    assert_eq!(
        (lb["attempt"].as_u64(), lb["preemptions"].as_u64()),
        (Some(1), Some(0)),
        "{lb}"
    );
    cli(
        &url,
        &[
            "cancel",
            &low_a.to_string(),
            &low_b.to_string(),
            &high_b.to_string(),
        ],
    );
}

/// The run-time predictor learns from a job that ends, gives a job without a walltime a
/// predicted estimate, and keeps what it learnt over a server restart (the store's meta).
#[test]
fn the_predictor_learns_from_an_ended_job_and_survives_a_restart() {
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let (mut server1, url) = server(&data, 0, &["--policy", "sjf"]);
    let mut agent1 = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    let first = submit(&url, &["-J", "train", "--", "sleep", "2"]);
    // `wait` answers once the round that ended the job is committed, the predictor with it.
    let f = wait_job(&url, first, SLOW);
    assert_eq!(f["state"], "succeeded", "{f}");
    agent1.kill();
    server1.kill();

    // No agent now: the next job waits, and says what its run time is predicted to be.
    let (_server2, url) = server(&data, 0, &["--policy", "sjf"]);
    let next = submit(&url, &["-J", "train", "--", "sleep", "2"]);
    // About 2 s (a histogram bucket's middle; more on a busy machine).
    wait_until(SLOW, || {
        let r = job(&url, next)["reason"].as_str().unwrap_or("").to_string();
        r.contains("; run time predicted ") && r.contains("s from every past job")
    });
    // A job with a walltime keeps it: no prediction.
    let timed = submit(&url, &["-J", "train", "--walltime", "1m", "--", "true"]);
    wait_until(SLOW, || job(&url, timed)["state"] == "pending");
    let r = job(&url, timed)["reason"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert!(!r.contains("predicted"), "{r}");
    // `show` of the running job still says where its estimate came from.
    let _agent2 = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    wait_until(SLOW, || {
        let v = job(&url, next);
        v["state"] == "running" && v["reason"].as_str().unwrap_or("").contains("predicted")
    });
    let shown = stdout(&cli(&url, &["show", &next.to_string()]));
    assert!(shown.contains("run time predicted"), "{shown}");
    cli(&url, &["cancel", &next.to_string(), &timed.to_string()]);
}

/// `blend` on the live predictor's beliefs: a job that has run well past every job like
/// it is preempted for a new one believed to need less GPU-service; it checkpoints,
/// resumes from its marker, and keeps its service: a second new job believed short
/// starts before it resumes (with its service lost, the victim would be believed short
/// again, and on fewer GPUs, so it would go first).
#[test]
fn blend_preempts_a_job_past_its_belief_and_it_resumes_with_its_checkpoint_and_service() {
    let (_d, dir) = scratch();
    let args = ["--policy", "blend", "--min-runtime", "1s"];
    let (_server, url, agent_dir, _agent) = preempting_cluster(&dir, &args, 4);
    // History: ten `mid` jobs of about 2 s (beliefs need ten ended jobs), in waves that
    // fit the node, so none of them waits (or is preempted).
    for wave in [4, 4, 2] {
        let ids: Vec<u64> = (0..wave)
            .map(|_| submit(&url, &["-J", "mid", "--", "sleep", "2"]))
            .collect();
        for id in ids {
            let v = wait_job(&url, id, SLOW);
            assert_eq!(v["state"], "succeeded", "{v}");
        }
    }
    // A `mid` job on two GPUs that runs on: by 10 s it has outlived its belief (about
    // 2 s) and ranks by its attained GPU-service, 20 GPU-seconds.
    let long = submit(
        &url,
        &["-J", "mid", "-G", "2", "--", "sh", "-c", CHECKPOINTING],
    );
    wait_until(SLOW, || {
        run_log(&agent_dir, long, 1).contains("start restart=0 marker=no")
    });
    std::thread::sleep(std::time::Duration::from_secs(10));
    // Two new `mid` jobs on four GPUs, each believed to need about 2 s x 4: the first
    // takes the node (the long one is asked to stop), the second waits for it.
    let first = submit(&url, &["-J", "mid", "-G", "4", "--", "sleep", "1"]);
    let second = submit(&url, &["-J", "mid", "-G", "4", "--", "true"]);
    resumed_after(&url, &agent_dir, long, &[first, second]);
    let events = stdout(&cli(&url, &["show", "--events", &long.to_string()]));
    assert!(events.contains("preempted by policy `blend`"), "{events}");
    cli(&url, &["cancel", &long.to_string()]);
}

/// `edf` and `--deadline` end to end (docs/deadlines.md): the answer at submission,
/// a job due soon overtaking a best-effort one (which checkpoints and resumes), how
/// `show` and `queue` tell a deadline met, and an answer at risk.
#[test]
fn a_job_with_a_deadline_overtakes_a_best_effort_one_under_edf() {
    let (_d, dir) = scratch();
    let args = ["--policy", "edf", "--min-runtime", "1s"];
    let (_server, url, agent_dir, _agent) = preempting_cluster(&dir, &args, 1);
    let best_effort = submit(&url, &["--", "sh", "-c", CHECKPOINTING]);
    wait_until(SLOW, || {
        run_log(&agent_dir, best_effort, 1).contains("start restart=0 marker=no")
    });
    // Due in an hour, a minute of walltime: on track, said at submission.
    let o = cli(
        &url,
        &[
            "submit",
            "--deadline",
            "+1h",
            "--walltime",
            "1m",
            "--",
            "sleep",
            "1",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("deadline ") && out.contains(": on track, expected to finish"),
        "{out}"
    );
    let due: u64 = out
        .split_whitespace()
        .nth(2)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("an id in {out}"));
    // It runs first: the best-effort job is preempted through the checkpoint contract
    // and resumes after it.
    resumed_after(&url, &agent_dir, best_effort, &[due]);
    let d = job(&url, due);
    assert_eq!(d["deadline"]["status"], "met", "{d}");
    let o = cli(&url, &["show", &due.to_string()]);
    assert!(stdout(&o).contains(": met, ended "), "{}", stdout(&o));
    // Due in 10 s with an hour of work: at risk, in the answer and in `queue` (it can
    // no longer make it, so edf puts it behind the best-effort job, which has no
    // estimate: no finish is known).
    let o = cli(
        &url,
        &[
            "submit",
            "--json",
            "--deadline",
            "+10s",
            "--walltime",
            "1h",
            "--",
            "true",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["deadline"]["status"], "at_risk", "{v}");
    assert!(
        v["deadline"]["slack_s"].as_i64().is_none_or(|s| s < 0),
        "{v}"
    );
    let o = cli(&url, &["queue"]);
    assert!(
        stdout(&o).contains("DEADLINE") && stdout(&o).contains("at risk"),
        "{}",
        stdout(&o)
    );
    // A deadline already past is refused, naming the forms.
    let o = cli(
        &url,
        &["submit", "--deadline", "2020-01-01T00:00:00Z", "--", "true"],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("a deadline must be ahead"),
        "{}",
        stderr(&o)
    );
    cli(&url, &["cancel", &best_effort.to_string()]);
    cli(&url, &["cancel", &v["ids"][0].to_string()]);
}

/// `rr` (docs/preemption.md): two jobs on one GPU take turns of `--quantum`, each
/// preempted through the checkpoint contract and resumed from its marker.
#[test]
fn rr_gives_two_jobs_on_one_gpu_turns_through_checkpoints() {
    let (_d, dir) = scratch();
    let args = ["--policy", "rr", "--quantum", "3s", "--min-runtime", "1s"];
    let (_server, url, agent_dir, _agent) = preempting_cluster(&dir, &args, 1);
    let a = submit(&url, &["--", "sh", "-c", CHECKPOINTING]);
    wait_until(SLOW, || {
        run_log(&agent_dir, a, 1).contains("start restart=0 marker=no")
    });
    let b = submit(&url, &["--", "sh", "-c", CHECKPOINTING]);
    // While b waits, its estimated start is the end of a's turn, though a has no
    // walltime (core `plan.rs`); a `fifo` plan would give none.
    let v = job(&url, b);
    if v["state"] == "pending" {
        let est = v["est_start_ms"].as_u64();
        let a_submit = job(&url, a)["submit_ms"].as_u64().unwrap();
        assert!(est.is_some_and(|e| e + 1 >= a_submit + 3_000), "{v}");
    }
    // b's turn comes when a's quantum is over: a checkpoints, b runs, then b makes way
    // and a resumes from its marker; then b resumes from its own.
    wait_until(SLOW, || {
        run_log(&agent_dir, b, 1).contains("start restart=0 marker=no")
    });
    assert!(run_log(&agent_dir, a, 1).contains("got-usr1"));
    wait_until(SLOW, || {
        run_log(&agent_dir, a, 2).contains("start restart=1 marker=yes")
    });
    wait_until(SLOW, || {
        run_log(&agent_dir, b, 2).contains("start restart=1 marker=yes")
    });
    assert!(
        run_log(&agent_dir, b, 1).contains("got-usr1"),
        "{} {}",
        run_log(&agent_dir, b, 1),
        job(&url, b)
    );
    // The saves were measured, and the turn in force is at least the quantum asked
    // (docs/preemption.md: `--quantum-floor` times the slowest save).
    let (code, metrics) = http(&url, "GET", "/metrics", None);
    assert_eq!(code, 200, "{metrics}");
    let gauge = |name: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in\n{metrics}"))
    };
    let save = gauge("gpusched_checkpoint_save_seconds");
    let turn = gauge("gpusched_rr_quantum_seconds");
    assert!(save > 0.0, "{metrics}");
    assert!(
        (turn - f64::max(3.0, 10.0 * save)).abs() < 1e-6,
        "{metrics}"
    );
    for id in [a, b] {
        let v = job(&url, id);
        assert!(v["preemptions"].as_u64().unwrap_or(0) >= 1, "{v}");
        cli(&url, &["cancel", &id.to_string()]);
    }
}

/// `--time-slice` under `fifo` (docs/preemption.md): the second job gets the GPU when
/// the first one's turn is over, through the checkpoint contract, and the first is told
/// why.
#[test]
fn fifo_with_time_slicing_stops_a_job_whose_turn_is_over() {
    let (_d, dir) = scratch();
    let args = [
        "--policy",
        "fifo",
        "--time-slice",
        "--quantum",
        "3s",
        "--min-runtime",
        "1s",
    ];
    let (_server, url, agent_dir, _agent) = preempting_cluster(&dir, &args, 1);
    let a = submit(&url, &["--", "sh", "-c", CHECKPOINTING]);
    wait_until(SLOW, || {
        run_log(&agent_dir, a, 1).contains("start restart=0 marker=no")
    });
    let b = submit(&url, &["--", "sh", "-c", CHECKPOINTING]);
    wait_until(SLOW, || {
        run_log(&agent_dir, b, 1).contains("start restart=0 marker=no")
    });
    assert!(run_log(&agent_dir, a, 1).contains("got-usr1"));
    let events = stdout(&cli(&url, &["show", "--events", &a.to_string()]));
    assert!(
        events.contains("preempted by policy `fifo` taking turns"),
        "{events}"
    );
    for id in [a, b] {
        cli(&url, &["cancel", &id.to_string()]);
    }
}

/// An elastic toy job: at each start it appends how many GPUs it was given (from
/// `CUDA_VISIBLE_DEVICES`) to the ledger at `ledger`; on SIGUSR1 it exits 0, as a job
/// that saved would.
fn elastic_job(ledger: &Path) -> String {
    format!(
        "trap 'echo got-usr1; exit 0' USR1; \
         n=$(echo \"$CUDA_VISIBLE_DEVICES\" | tr ',' '\\n' | grep -c .); \
         echo $n >> {}; echo start gpus=$n; \
         while true; do sleep 0.2; done",
        ledger.display()
    )
}

/// Elastic jobs (docs/elastic.md): `--gpus 1-4` alone on a 4-GPU node starts on all 4;
/// a rigid 2-GPU job arriving takes 2 back (the elastic job checkpoints and restarts on
/// 2); when that job ends the elastic one grows back to 4, through the checkpoint
/// contract each time. The ledger the job writes at each start is the evidence.
#[test]
fn an_elastic_job_grows_into_idle_gpus_and_shrinks_for_a_rigid_one() {
    let (_d, dir) = scratch();
    let args = ["--min-runtime", "1s", "--resize-cost", "300ms"];
    let (_server, url, agent_dir, _agent) = preempting_cluster(&dir, &args, 4);
    // A malformed range is refused before anything is stored.
    let o = cli(
        &url,
        &["submit", "--gpus", "2-4", "--nodes", "2", "--", "true"],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("gpus_max"), "{}", stderr(&o));
    let ledger = dir.join("ledger");
    let e = submit(
        &url,
        &["--gpus", "1-4", "--", "sh", "-c", &elastic_job(&ledger)],
    );
    wait_until(SLOW, || run_log(&agent_dir, e, 1).contains("start gpus=4"));
    let v = job(&url, e);
    assert_eq!(
        (v["gpus"].as_u64(), v["elastic"]["gpus_max"].as_u64()),
        (Some(1), Some(4)),
        "{v}"
    );
    // A rigid job of 2 GPUs: the elastic one gives 2 back through a checkpoint.
    let gate = dir.join("rigid-may-end");
    let script = format!(
        "echo rigid; while [ ! -e {} ]; do sleep 0.2; done",
        gate.display()
    );
    let r = submit(&url, &["--gpus", "2", "--", "sh", "-c", &script]);
    wait_until(SLOW, || run_log(&agent_dir, e, 2).contains("start gpus=2"));
    assert!(run_log(&agent_dir, e, 1).contains("got-usr1"));
    wait_until(SLOW, || job(&url, r)["state"] == "running");
    // The rigid job ends: after its cooldown (10 x 300 ms) the elastic one grows to 4.
    std::fs::write(&gate, "").unwrap();
    assert_eq!(wait_job(&url, r, SLOW)["state"], "succeeded");
    wait_until(SLOW, || run_log(&agent_dir, e, 3).contains("start gpus=4"));
    assert!(run_log(&agent_dir, e, 2).contains("got-usr1"));
    let v = job(&url, e);
    assert_eq!(v["preemptions"].as_u64(), Some(2), "{v}");
    assert_eq!(std::fs::read_to_string(&ledger).unwrap(), "4\n2\n4\n");
    // Why, in its history.
    let o = cli(&url, &["show", &e.to_string(), "--events"]);
    let events = stdout(&o);
    assert!(
        events.contains("elastic resize: giving GPUs back") && events.contains("growing"),
        "{events}"
    );
    cli(&url, &["cancel", &e.to_string()]);
}
