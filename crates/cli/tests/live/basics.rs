//! Jobs that really run: output, environment, exit states, cancel.

use std::time::Duration;

use crate::support::*;

#[test]
fn a_job_runs_with_its_gpus_environment_and_logs() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "gpu-a", &dir.join("agent"), Gpus::Fake(4));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let script = "echo visible=$CUDA_VISIBLE_DEVICES; echo order=$CUDA_DEVICE_ORDER; \
                  echo id=$GPUSCHED_JOB_ID; echo mine=$MINE; pwd; echo oops >&2";
    let id = submit(
        &url,
        &[
            "--gpus",
            "2",
            "--name",
            "envcheck",
            "-D",
            work.to_str().unwrap(),
            "-e",
            "MINE=yes",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["node"], "gpu-a");
    assert_eq!(v["gpu_indices"].as_array().unwrap().len(), 2);

    let out = stdout(&cli(&url, &["logs", &id.to_string()]));
    let visible = out.lines().find(|l| l.starts_with("visible=")).unwrap();
    let uuids: Vec<&str> = visible["visible=".len()..].split(',').collect();
    assert_eq!(uuids.len(), 2, "{out}");
    assert!(
        uuids.iter().all(|u| u.starts_with("GPU-")),
        "UUIDs, not indices: {out}"
    );
    assert!(out.contains("order=PCI_BUS_ID"), "{out}");
    assert!(out.contains(&format!("id={id}")), "{out}");
    assert!(out.contains("mine=yes"), "{out}");
    assert!(
        out.contains(work.to_str().unwrap()),
        "ran in its cwd: {out}"
    );
    let err = stdout(&cli(&url, &["logs", "--stderr", &id.to_string()]));
    assert_eq!(err, "oops\n");

    // The human views.
    let show = stdout(&cli(&url, &["show", &id.to_string()]));
    assert!(
        show.contains("succeeded") && show.contains("envcheck"),
        "{show}"
    );
    let q = stdout(&cli(&url, &["queue", "--all"]));
    assert!(q.lines().next().unwrap().starts_with("ID"), "{q}");
    assert!(q.contains("envcheck"), "{q}");
    let nodes = stdout(&cli(&url, &["nodes"]));
    assert!(
        nodes.contains("gpu-a") && nodes.contains("online") && nodes.contains("fake"),
        "{nodes}"
    );
}

#[test]
fn exit_codes_signals_and_walltime_end_in_the_right_state() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(4));
    let failed = submit(&url, &["--", "sh", "-c", "exit 3"]);
    let killed = submit(&url, &["--", "sh", "-c", "kill -9 $$"]);
    let slow = submit(&url, &["--walltime", "1", "--", "sleep", "30"]);
    let missing = submit(&url, &["--", "/no/such/program"]);

    let v = wait_job(&url, failed, SLOW);
    assert_eq!(
        (v["state"].as_str(), v["exit_code"].as_i64()),
        (Some("failed"), Some(3)),
        "{v}"
    );
    assert!(
        v["reason"].as_str().unwrap().contains("exited with code 3"),
        "{v}"
    );

    let v = wait_job(&url, killed, SLOW);
    assert_eq!(
        (v["state"].as_str(), v["signal"].as_i64()),
        (Some("failed"), Some(9)),
        "{v}"
    );
    assert!(v["reason"].as_str().unwrap().contains("SIGKILL"), "{v}");

    let v = wait_job(&url, slow, SLOW);
    assert_eq!(v["state"], "timed_out", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("walltime of 1 s"),
        "{v}"
    );
    let ran = v["end_ms"].as_u64().unwrap() - v["start_ms"].as_u64().unwrap();
    assert!(
        (900..5000).contains(&ran),
        "stopped near its walltime, ran {ran} ms"
    );

    let v = wait_job(&url, missing, SLOW);
    assert_eq!(v["state"], "failed", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("/no/such/program"),
        "{v}"
    );

    // `wait` exits non-zero when a job did not succeed.
    let o = cli(&url, &["wait", &failed.to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("failed"));
}

#[test]
fn cancel_stops_a_running_job_and_ends_a_pending_one() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // The job leaves a grandchild behind to prove the whole process group is stopped.
    let running = submit(
        &url,
        &[
            "-D",
            work.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "sleep 60 & echo $! > child.pid; wait",
        ],
    );
    let pending = submit(&url, &["--", "sleep", "60"]);
    wait_until(SLOW, || job(&url, running)["state"] == "running");
    // The grandchild's pid, completely written, is the evidence it was started.
    let child_pid = wait_for_text(&work.join("child.pid"), SLOW, |t| full_lines(t).len() == 1);
    let q = stdout(&cli(&url, &["queue"]));
    assert!(
        q.contains("waiting for 1 free GPU on one node"),
        "the pending job says why: {q}"
    );

    let o = cli(
        &url,
        &["cancel", &pending.to_string(), &running.to_string()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("cancelling"), "{}", stdout(&o));
    let v = wait_job(&url, running, SLOW);
    assert_eq!(v["state"], "cancelled", "{v}");
    assert_eq!(job(&url, pending)["state"], "cancelled");
    let pid: i32 = child_pid.trim().parse().unwrap();
    wait_until(SLOW, || !pid_alive(pid));

    // Cancelling again says so instead of failing.
    let o = cli(&url, &["cancel", &running.to_string()]);
    assert!(stdout(&o).contains("already ended"), "{}", stdout(&o));
}

#[test]
fn a_batch_and_a_job_file_submit_many_jobs() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(8));
    let file = dir.join("job.toml");
    std::fs::write(
        &file,
        "name = \"arr\"\ncommand = [\"sh\", \"-c\", \"echo $GPUSCHED_ARRAY_INDEX\"]\ngpus = 1\ncpus = 1\nmem = \"1G\"\nwalltime = \"5m\"\narray = 20\n",
    )
    .unwrap();
    let o = cli(
        &url,
        &["submit", "--json", "--wait", "-f", file.to_str().unwrap()],
    );
    assert!(o.status.success(), "{} {}", stdout(&o), stderr(&o));
    let first: serde_json::Value =
        serde_json::from_str(stdout(&o).lines().next().unwrap()).unwrap();
    // The file's `array = 20` is one submission: one id, the array's.
    let ids: Vec<u64> = first["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 1);
    let array = ids[0];
    // Each task, reached as ARRAY.INDEX, printed its own index.
    for i in 0..20 {
        let r = format!("{array}.{i}");
        let printed = stdout(&cli(&url, &["logs", &r])).trim().to_string();
        assert_eq!(printed, i.to_string(), "task {r}");
    }
    let task = job(&url, array + 1);
    assert_eq!(task["walltime_s"], 300);
    assert_eq!(
        (task["cpu_milli"].as_u64(), task["mem_mib"].as_u64()),
        (Some(1000), Some(1024))
    );
    assert_eq!(job(&url, array)["array_counts"]["succeeded"], 20);

    // A typo in the job file is named, with its line.
    std::fs::write(&file, "command = [\"true\"]\ngpu = 1\n").unwrap();
    let o = cli(&url, &["submit", "-f", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("unknown field `gpu`") && e.contains("line 2"),
        "{e}"
    );
}

#[test]
fn logs_follow_a_running_job_until_it_ends() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(1));
    let id = submit(
        &url,
        &["--", "sh", "-c", "echo first; sleep 1; echo second"],
    );
    wait_until(SLOW, || job(&url, id)["state"] == "running");
    let started = std::time::Instant::now();
    let o = cli(&url, &["logs", "-f", &id.to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "first\nsecond\n");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(job(&url, id)["state"], "succeeded");

    // The machine-readable views.
    let q: serde_json::Value =
        serde_json::from_str(&stdout(&cli(&url, &["queue", "--all", "--json"]))).unwrap();
    assert_eq!(q["jobs"][0]["id"], id);
    let n: serde_json::Value =
        serde_json::from_str(&stdout(&cli(&url, &["nodes", "--json"]))).unwrap();
    assert_eq!(n["nodes"][0]["gpus"][0]["source"], "declared");
}

#[test]
fn usage_reports_gpu_hours_per_user() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Declared(4));
    let a = submit(&url, &["--gpus", "2", "--", "sleep", "1"]);
    let b = submit(&url, &["--", "sh", "-c", "exit 1"]);
    let va = wait_job(&url, a, SLOW);
    wait_job(&url, b, SLOW);
    let o = cli(&url, &["usage", "--json", "--since", "1d"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let row = &r["rows"][0];
    assert_eq!(row["key"], va["user"]);
    assert_eq!(
        (
            row["jobs"].as_u64(),
            row["succeeded"].as_u64(),
            row["failed"].as_u64()
        ),
        (Some(2), Some(1), Some(1))
    );
    let ran_h = (va["end_ms"].as_u64().unwrap() - va["start_ms"].as_u64().unwrap()) as f64 / 3.6e6;
    let gpu_h = row["gpu_hours"].as_f64().unwrap();
    assert!(
        gpu_h >= 2.0 * ran_h && gpu_h < 2.0 * ran_h + 0.001,
        "{gpu_h} vs {ran_h}"
    );
    let table = stdout(&cli(&url, &["usage"]));
    assert!(
        table.contains("GPU-HOURS") && table.contains(va["user"].as_str().unwrap()),
        "{table}"
    );
    let o = cli(&url, &["usage", "--since", "whenever"]);
    assert_eq!(o.status.code(), Some(2));
}
