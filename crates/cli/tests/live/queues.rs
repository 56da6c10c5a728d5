//! Queues from a TOML file: caps that do not block other queues, access, priorities,
//! the reason a capped job waits, and reload on SIGHUP without losing jobs.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

const QUEUES: &str =
    "[queues.a]\nquota = 1\nmax = 2\nusers = [\"root\"]\nmax_priority = 5\n\n[queues.b]\n";

#[test]
fn queue_caps_access_priorities_and_reload() {
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(&file, QUEUES).unwrap();
    let (server, url) = server(&dir.join("data"), 0, &["--queues", file.to_str().unwrap()]);
    // Five GPUs: queue a's cap (2), not a lack of GPUs, holds its third job.
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(5));

    let in_a: Vec<u64> = (0..3)
        .map(|_| submit(&url, &["-q", "a", "--", "sleep", "30"]))
        .collect();
    let in_b = submit(&url, &["--queue", "b", "--gpus", "2", "--", "sleep", "30"]);
    wait_until(SLOW, || job(&url, in_b)["state"] == "running");
    wait_until(SLOW, || job(&url, in_a[1])["state"] == "running");
    let third = job(&url, in_a[2]);
    assert_eq!(third["state"], "pending", "{third}");
    assert!(
        third["reason"]
            .as_str()
            .unwrap()
            .contains("queue `a` is at its limit: its jobs hold 2 of its 2 GPUs"),
        "{third}"
    );
    let q: Value = serde_json::from_str(&stdout(&cli(&url, &["queues", "--json"]))).unwrap();
    assert_eq!(q["queues"][0]["used_gpus"], 2);
    assert_eq!(q["queues"][0]["pending"], 1);

    // Refusals that say what to do.
    let o = cli(&url, &["submit", "-q", "c", "--", "true"]);
    assert!(
        stderr(&o).contains("no queue named `c`; the queues are: a, b"),
        "{}",
        stderr(&o)
    );
    let o = cli(
        &url,
        &["submit", "-q", "a", "--priority", "9", "--", "true"],
    );
    assert!(
        stderr(&o).contains("above queue `a`'s max_priority 5"),
        "{}",
        stderr(&o)
    );
    let alice = stdout(&cli_as(&socket(&url), None, &["token", "create", "alice"]))
        .trim()
        .to_string();
    let o = cli_as(&url, Some(&alice), &["submit", "-q", "a", "--", "true"]);
    assert!(
        stderr(&o).contains("alice may not submit to queue `a`"),
        "{}",
        stderr(&o)
    );

    // A reload that raises the cap starts the third job; one that drops a busy queue is
    // refused and changes nothing.
    std::fs::write(&file, QUEUES.replace("max = 2", "max = 3")).unwrap();
    hangup(&server);
    wait_until(SLOW, || job(&url, in_a[2])["state"] == "running");
    std::fs::write(&file, "[queues.b]\n").unwrap();
    hangup(&server);
    std::thread::sleep(Duration::from_millis(500));
    let q = stdout(&cli(&url, &["queues"]));
    assert!(q.lines().any(|l| l.starts_with("a ")), "{q}");
    for id in in_a.iter().chain([&in_b]) {
        assert_eq!(job(&url, *id)["state"], "running");
    }
}

/// A queue open to a Unix group: the server looks up the submitter's groups (before the
/// command reaches its state task), and for an admin's submission on behalf of another
/// user, that user's groups, not the admin's.
#[test]
fn a_queue_open_to_a_group_takes_its_members_and_refuses_others() {
    let id_gn = Command::new("id").arg("-gn").output().expect("run id -gn");
    let mine = String::from_utf8_lossy(&id_gn.stdout).trim().to_string();
    assert!(!mine.is_empty(), "id -gn printed no group");
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(
        &file,
        format!(
            "[queues.mine]\ngroups = [\"{mine}\"]\n\n\
             [queues.theirs]\ngroups = [\"gpusched-test-no-such-group\"]\n"
        ),
    )
    .unwrap();
    let (_server, url) = server(&dir.join("data"), 0, &["--queues", file.to_str().unwrap()]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));

    // No queue named: the first one this user's group may use.
    let id = submit(&url, &["--", "true"]);
    assert_eq!(job(&url, id)["queue"], "mine");
    let o = cli(&url, &["submit", "-q", "theirs", "--", "true"]);
    assert!(
        stderr(&o).contains("may not submit to queue `theirs`"),
        "{}",
        stderr(&o)
    );
    // This uid is an admin over the socket; submitting for a user outside the group is
    // judged by that user's groups.
    let body = r#"{"command":["true"],"user":"gpusched-test-nobody","queue":"mine"}"#;
    let (code, answer) = http_unix(&url, "POST", "/api/jobs", Some(body));
    assert_eq!(code, 403, "{answer}");
    assert!(
        answer.contains("gpusched-test-nobody may not submit to queue `mine`"),
        "{answer}"
    );
}

#[test]
fn a_bad_queue_file_stops_the_server_with_the_line() {
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(&file, "[queues.a]\nquota = 2\nmax = 1\n").unwrap();
    let o = Command::new(BIN)
        .args(["server", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--queues")
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("max = 1 is below quota = 2"),
        "{}",
        stderr(&o)
    );
    std::fs::write(&file, "[queues.a]\nqouta = 2\n").unwrap();
    let o = Command::new(BIN)
        .args(["server", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--queues")
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("line 2") && stderr(&o).contains("qouta"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn usage_half_life_is_for_drf_only() {
    let (_d, dir) = scratch();
    let o = Command::new(BIN)
        .args([
            "server",
            "--listen",
            "127.0.0.1:0",
            "--usage-half-life",
            "7d",
            "--data-dir",
        ])
        .arg(dir.join("data"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--policy drf only"), "{}", stderr(&o));
    let (_server, url) = server(
        &dir.join("data2"),
        0,
        &["--policy", "drf", "--usage-half-life", "7d"],
    );
    assert!(url.starts_with("http://"));
}

fn hangup(p: &Proc) {
    let _ = Command::new("kill")
        .args(["-HUP", &p.child.id().to_string()])
        .status();
}

#[test]
fn pending_jobs_get_an_estimated_start_from_walltimes() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(2));
    let first = submit(&url, &["--gpus", "2", "-t", "1h", "--", "sleep", "60"]);
    wait_until(SLOW, || job(&url, first)["state"] == "running");
    let second = submit(&url, &["--gpus", "1", "-t", "30m", "--", "true"]);
    let blind = submit(&url, &["--gpus", "2", "--", "true"]);
    let after = submit(&url, &["--gpus", "2", "--", "true"]);
    let started = job(&url, first)["start_ms"].as_u64().unwrap();
    let est = job(&url, second)["est_start_ms"].as_u64().unwrap();
    assert!(
        est.abs_diff(started + 3_600_000) < 5_000,
        "{est} vs {started}"
    );
    // `blind` starts when `second` ends; `after` waits for `blind`, which has no walltime.
    let est_blind = job(&url, blind)["est_start_ms"].as_u64().unwrap();
    assert!(est_blind.abs_diff(started + 3_600_000 + 1_800_000) < 5_000);
    assert!(job(&url, after)["est_start_ms"].is_null());
    let q = stdout(&cli(&url, &["queue", "--start"]));
    assert!(q.contains("EST. START") && q.contains("unknown"), "{q}");
    cli(
        &url,
        &[
            "cancel",
            &first.to_string(),
            &second.to_string(),
            &blind.to_string(),
            &after.to_string(),
        ],
    );
}

/// Backfill on real nodes and models: the blocked head job (A100s) reserves the node
/// where it fits first, from walltimes; the H100 node that frees sooner is no use to it
/// (a cluster-wide count would take those GPUs as spare and let anything in). A job
/// without a walltime does not backfill onto the reserved node's GPUs, a job whose
/// walltime ends before the reservation does, and the head starts as soon as its node
/// frees.
#[test]
fn backfill_reserves_the_head_jobs_node_and_jobs_without_walltime_wait() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &["--policy", "backfill"]);
    let _a1 = agent(&url, "a100", &dir.join("a1"), Gpus::Declared(2));
    let _a2 = agent_with(
        &url,
        "h100",
        &dir.join("a2"),
        Gpus::Declared(2),
        &["--gpu-model", "H100"],
    );
    let stop = dir.join("stop");
    let until_stop = format!(
        "while [ ! -e {} ]; do sleep 0.2; done",
        stop.to_str().unwrap()
    );
    // The H100 node is full for 5 minutes by its walltime; half the A100 node until
    // `stop` (10 minutes by its walltime).
    let h100 = &["--gpu-model", "H100", "--gpus", "2", "-t", "5m"];
    let full = submit(&url, &[&h100[..], &["--", "sleep", "600"]].concat());
    let a100 = |gpus: &'static str| ["--gpu-model", "A100", "--gpus", gpus];
    let run = ["--", "sh", "-c", until_stop.as_str()];
    let half = submit(&url, &[&a100("1")[..], &["-t", "10m"], &run].concat());
    wait_until(SLOW, || {
        job(&url, full)["state"] == "running" && job(&url, half)["state"] == "running"
    });
    assert_eq!(job(&url, half)["node"], "a100");
    let head = submit(&url, &[&a100("2")[..], &["--", "true"]].concat());
    let long = submit(&url, &[&a100("1")[..], &["--", "sleep", "600"]].concat());
    let short = submit(
        &url,
        &[&a100("1")[..], &["-t", "5m", "--", "true"]].concat(),
    );
    let done = wait_job(&url, short, SLOW);
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(done["node"], "a100", "{done}");
    let l = job(&url, long);
    assert_eq!(
        l["state"], "pending",
        "no walltime: it must not backfill: {l}"
    );
    let why = l["reason"].as_str().unwrap();
    assert!(
        why.contains(&format!(
            "job {head} reserved them on a100 under `backfill`"
        )),
        "{why}"
    );
    assert_eq!(job(&url, head)["state"], "pending");
    // The head's node frees: the head goes first, not the long job.
    std::fs::write(&stop, "").unwrap();
    let h = wait_job(&url, head, SLOW);
    assert_eq!(h["state"], "succeeded", "{h}");
    assert_eq!(h["node"], "a100", "{h}");
    let l = job(&url, long);
    let head_started = h["start_ms"].as_u64().unwrap();
    assert!(
        l["start_ms"].as_u64().is_none_or(|s| s >= head_started),
        "the long job started before the head: {l} {h}"
    );
    cli(&url, &["cancel", &full.to_string(), &long.to_string()]);
}

/// Quota reclaim with the checkpoint contract: queue `a` borrows queue `b`'s idle quota;
/// when `b` needs it back, the borrower that loses the least work (it checkpointed
/// recently) gets SIGUSR1 and the deadline, saves, is requeued with its restart count,
/// and `b`'s job takes its GPU.
#[test]
fn a_queue_reclaims_its_quota_by_preempting_the_cheapest_borrower() {
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(&file, "[queues.a]\nquota = 1\n\n[queues.b]\nquota = 1\n").unwrap();
    let (_server, url) = server(
        &dir.join("data"),
        0,
        &[
            "--queues",
            file.to_str().unwrap(),
            "--min-runtime",
            "0s",
            "--preempt-grace",
            "5s",
        ],
    );
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(2));
    let body =
        |checkpoints: bool| {
            format!(
            "trap 'echo got-usr1 deadline=$(cat $GPUSCHED_PREEMPT_DEADLINE_FILE); exit 0' USR1; \
             echo start restart=$GPUSCHED_RESTART_COUNT; {} \
             while true; do {} sleep 0.2; done",
            if checkpoints {
                // A planted link must not make the root agent write through it.
                "ln -sf $PLANTED $GPUSCHED_CHECKPOINT_DIR/.preempt_deadline;"
            } else {
                ""
            },
            if checkpoints { "touch $GPUSCHED_CHECKPOINT_DIR/checkpoint;" } else { "" }
        )
        };
    let old = submit(&url, &["-q", "a", "--", "sh", "-c", &body(false)]);
    let planted = dir.join("planted");
    std::fs::write(&planted, "untouched\n").unwrap();
    let env = format!("PLANTED={}", planted.display());
    let saver = submit(
        &url,
        &["-q", "a", "-e", &env, "--", "sh", "-c", &body(true)],
    );
    wait_until(SLOW, || job(&url, old)["state"] == "running");
    wait_until(SLOW, || !job(&url, saver)["last_checkpoint_ms"].is_null());

    let claimant = submit(&url, &["-q", "b", "--", "sleep", "30"]);
    wait_until(SLOW, || job(&url, claimant)["state"] == "running");
    let v = job(&url, saver);
    assert_eq!(
        (
            v["state"].as_str(),
            v["attempt"].as_u64(),
            v["preemptions"].as_u64()
        ),
        (Some("pending"), Some(2), Some(1)),
        "{v}"
    );
    assert!(v["reason"].as_str().unwrap().contains("preempted"), "{v}");
    assert_eq!(
        job(&url, old)["attempt"],
        1,
        "the job without a checkpoint kept running"
    );
    let first_run =
        std::fs::read_to_string(dir.join(format!("agent/jobs/logs/{saver}.1.stdout"))).unwrap();
    assert!(
        first_run.contains("start restart=0") && first_run.contains("got-usr1 deadline="),
        "{first_run}"
    );
    assert_eq!(
        std::fs::read_to_string(&planted).unwrap(),
        "untouched\n",
        "the agent followed a planted link"
    );

    // When the GPU frees, the preempted job resumes knowing it restarted.
    cli(&url, &["cancel", &claimant.to_string()]);
    wait_until(SLOW, || job(&url, saver)["state"] == "running");
    wait_until(SLOW, || {
        stdout(&cli(&url, &["logs", &saver.to_string()])).contains("start restart=1")
    });
    cli(&url, &["cancel", &old.to_string(), &saver.to_string()]);
}

#[test]
fn a_job_held_by_the_policy_order_says_how_many_come_first() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(2));
    let one = submit(&url, &["--", "sleep", "30"]);
    wait_until(SLOW, || job(&url, one)["state"] == "running");
    let two = submit(&url, &["--gpus", "2", "--", "true"]);
    let small = submit(&url, &["--", "true"]);
    // The reasons are written by the next pass: wait for them, not for a fixed time.
    wait_until(SLOW, || {
        job(&url, two)["reason"]
            .as_str()
            .unwrap()
            .contains("waiting for 2 free GPUs on one node (at most 1 free")
    });
    // One GPU is free, but strict FIFO keeps the small job behind the big one.
    let r = job(&url, small)["reason"].as_str().unwrap().to_string();
    assert!(
        r.contains("behind 1 job that comes first under the `fifo` policy"),
        "{r}"
    );
    cli(
        &url,
        &[
            "cancel",
            &one.to_string(),
            &two.to_string(),
            &small.to_string(),
        ],
    );
}

#[test]
fn dependencies_wait_for_success_and_fail_with_their_dependency() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(2));
    // `first` runs until the test opens the gate, however slow the machine, so `then`
    // is seen waiting for it.
    let gate = dir.join("gate");
    let hold = format!("while [ ! -e {} ]; do sleep 0.05; done", gate.display());
    let first = submit(&url, &["--", "sh", "-c", &hold]);
    let then = submit(
        &url,
        &["--after", &first.to_string(), "--", "echo", "second"],
    );
    let doomed_dep = submit(&url, &["--", "sh", "-c", "sleep 1; exit 1"]);
    let never = submit(&url, &["--after", &doomed_dep.to_string(), "--", "true"]);
    let r = job(&url, then)["reason"].as_str().unwrap().to_string();
    assert!(
        r.contains(&format!("dependency: waiting for job {first} to succeed")),
        "{r}"
    );
    assert_eq!(job(&url, then)["state"], "pending");
    std::fs::write(&gate, "").unwrap();
    let v = wait_job(&url, then, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert!(v["start_ms"].as_u64() >= job(&url, first)["end_ms"].as_u64());
    let v = wait_job(&url, never, SLOW);
    assert_eq!(v["state"], "failed", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("dependency job {doomed_dep} ended failed")),
        "{v}"
    );
    let o = cli(
        &url,
        &["submit", "--after", &doomed_dep.to_string(), "--", "true"],
    );
    assert!(
        stderr(&o).contains("already ended failed"),
        "{}",
        stderr(&o)
    );
    let o = cli(&url, &["submit", "--after", "9999", "--", "true"]);
    assert!(
        stderr(&o).contains("there is no job 9999"),
        "{}",
        stderr(&o)
    );
}

/// Under strict FIFO a borrower's big job at the head must not hold back a job that is
/// within its queue's quota while GPUs are free.
#[test]
fn a_job_within_its_quota_is_not_held_behind_a_borrowers_head_of_line_job() {
    let (_d, dir) = scratch();
    let file = dir.join("queues.toml");
    std::fs::write(&file, "[queues.a]\n\n[queues.b]\nquota = 2\n").unwrap();
    let (_server, url) = server(&dir.join("data"), 0, &["--queues", file.to_str().unwrap()]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(4));
    let running = submit(&url, &["-q", "a", "--gpus", "2", "--", "sleep", "30"]);
    wait_until(SLOW, || job(&url, running)["state"] == "running");
    let head = submit(&url, &["-q", "a", "--gpus", "4", "--", "true"]);
    let mine = submit(&url, &["-q", "b", "--", "sleep", "30"]);
    wait_until(SLOW, || job(&url, mine)["state"] == "running");
    assert_eq!(job(&url, head)["state"], "pending");
    cli(
        &url,
        &[
            "cancel",
            &running.to_string(),
            &head.to_string(),
            &mine.to_string(),
        ],
    );
}

#[test]
fn a_job_reports_a_checkpoint_through_the_api() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    // The job itself reports, over the socket, as its own user.
    let sock = socket(&url);
    let script =
        format!("sleep 0.5; GPUSCHED_SERVER={sock} {BIN} checkpoint $GPUSCHED_JOB_ID; sleep 30");
    let id = submit(&url, &["--", "sh", "-c", &script]);
    wait_until(SLOW, || !job(&url, id)["last_checkpoint_ms"].is_null());
    let waiting = submit(&url, &["--", "true"]);
    let o = cli(&url, &["checkpoint", &waiting.to_string()]);
    assert!(stderr(&o).contains("not running"), "{}", stderr(&o));
    cli(&url, &["cancel", &id.to_string(), &waiting.to_string()]);
}
