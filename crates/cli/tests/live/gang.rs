//! Jobs on several nodes at once (gangs) with real processes: two or three agents with
//! fake GPUs on loopback. The parts rendezvous over TCP at MASTER_ADDR:MASTER_PORT, a
//! failing part brings the others down, a killed agent requeues the whole gang once, a
//! gang waits for whole nodes while small jobs backfill around it, `--tasks-per-node`
//! gives every process its own rank and GPUs, and cancel and walltime reach every part.
//!
//! Every check waits for the evidence the job itself wrote (a JSON file, a ledger line, a
//! pid file), never for a state and then the evidence.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::support::*;

/// Rendezvous of one part: rank 0 listens on MASTER_ADDR:MASTER_PORT, the others
/// connect and say `NODE_RANK WORLD_SIZE`, rank 0 answers `welcome WORLD_SIZE`; every
/// part then writes its environment, its hostfile and what it heard to `part-R.json`.
const RENDEZVOUS: &str = r#"
import json, os, socket, sys, time
out = sys.argv[1]
keys = ["MASTER_ADDR", "MASTER_PORT", "NNODES", "NODE_RANK", "GPUS_PER_NODE",
        "WORLD_SIZE", "CUDA_VISIBLE_DEVICES", "RANK", "LOCAL_RANK", "GPUSCHED_ATTEMPT"]
env = {k: os.environ.get(k) for k in keys}
with open(os.environ["GPUSCHED_HOSTFILE"]) as f:
    hostfile = f.read()
addr, port = env["MASTER_ADDR"], int(env["MASTER_PORT"])
nnodes, rank = int(env["NNODES"]), int(env["NODE_RANK"])
heard = []
deadline = time.time() + 90
if rank == 0:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(nnodes)
    srv.settimeout(90)
    for _ in range(nnodes - 1):
        conn, _ = srv.accept()
        with conn, conn.makefile("rw") as f:
            heard.append(f.readline().strip())
            f.write("welcome %s\n" % env["WORLD_SIZE"])
            f.flush()
else:
    while True:
        try:
            conn = socket.create_connection((addr, port), timeout=5)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)
    with conn, conn.makefile("rw") as f:
        f.write("%d %s\n" % (rank, env["WORLD_SIZE"]))
        f.flush()
        heard.append(f.readline().strip())
print("node rank %d of %d heard %s" % (rank, nnodes, heard), flush=True)
tmp = os.path.join(out, "part-%d.tmp" % rank)
with open(tmp, "w") as f:
    json.dump({"env": env, "hostfile": hostfile, "heard": heard}, f)
os.rename(tmp, os.path.join(out, "part-%d.json" % rank))
"#;

/// The part's JSON once its process wrote it.
fn part_file(dir: &Path, rank: u32) -> Value {
    let text = wait_for_text(&dir.join(format!("part-{rank}.json")), SLOW, |t| {
        serde_json::from_str::<Value>(t).is_ok()
    });
    serde_json::from_str(&text).expect("checked above")
}

fn env_of(part: &Value, key: &str) -> String {
    part["env"][key].as_str().unwrap_or("").to_string()
}

fn lines(out: &std::process::Output) -> String {
    format!("{}{}", stdout(out), stderr(out))
}

#[test]
fn a_two_node_gang_rendezvous_at_the_master_and_agrees_on_ranks() {
    // The parts run a Python script.
    let Some(_python) = gpusched_store::testing::require_program(
        "a_two_node_gang_rendezvous_at_the_master_and_agrees_on_ranks",
        "python3",
        "python3",
    ) else {
        return;
    };
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent_with(
        &url,
        "n1",
        &dir.join("a1"),
        Gpus::Fake(2),
        &["--switch", "s1", "--rack", "r1", "--fake-topology", "dgx"],
    );
    let _b = agent_with(
        &url,
        "n2",
        &dir.join("a2"),
        Gpus::Fake(2),
        &["--switch", "s1", "--rack", "r2", "--fake-topology", "pcie"],
    );
    let script = dir.join("rendezvous.py");
    std::fs::write(&script, RENDEZVOUS).unwrap();
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    let id = submit(
        &url,
        &[
            "--nodes",
            "2",
            "--gpus-per-node",
            "2",
            "-t",
            "5m",
            "--",
            "python3",
            script.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
    );
    let (p0, p1) = (part_file(&out, 0), part_file(&out, 1));
    // Both parts saw one master, the same port, and their own NODE_RANK.
    for (p, rank) in [(&p0, "0"), (&p1, "1")] {
        assert_eq!(env_of(p, "MASTER_ADDR"), "127.0.0.1", "{p}");
        assert_eq!(env_of(p, "NNODES"), "2", "{p}");
        assert_eq!(env_of(p, "GPUS_PER_NODE"), "2", "{p}");
        assert_eq!(env_of(p, "WORLD_SIZE"), "4", "{p}");
        assert_eq!(env_of(p, "NODE_RANK"), rank, "{p}");
        assert_eq!(
            env_of(p, "CUDA_VISIBLE_DEVICES").split(',').count(),
            2,
            "{p}"
        );
        // One process per node: the launcher (torchrun) sets the per-process ranks.
        assert_eq!(p["env"]["RANK"], Value::Null, "{p}");
        assert_eq!(
            p["hostfile"].as_str().unwrap(),
            "127.0.0.1 slots=2\n127.0.0.1 slots=2\n",
            "{p}"
        );
    }
    let port = env_of(&p0, "MASTER_PORT");
    assert_eq!(port, env_of(&p1, "MASTER_PORT"));
    // They really met there: rank 0 heard rank 1, and rank 1 was welcomed.
    assert_eq!(p0["heard"], serde_json::json!(["1 4"]), "{p0}");
    assert_eq!(p1["heard"], serde_json::json!(["welcome 4"]), "{p1}");

    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(
        (v["nodes"].as_u64(), v["gpus_per_node"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(v["gpus"], 4, "{v}");
    assert_eq!(v["master_port"].to_string(), port, "{v}");
    let parts = v["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 2, "{v}");
    let nodes: BTreeSet<&str> = parts.iter().map(|p| p["node"].as_str().unwrap()).collect();
    assert_eq!(
        nodes,
        BTreeSet::from(["n1", "n2"]),
        "one part per node: {v}"
    );
    for (i, p) in parts.iter().enumerate() {
        assert_eq!(p["rank"], i, "{v}");
        assert_eq!(p["state"], "done", "{v}");
        assert_eq!(p["exit_code"], 0, "{v}");
        assert_eq!(p["addr"], "127.0.0.1", "{v}");
        assert_eq!(p["gpu_indices"].as_array().unwrap().len(), 2, "{v}");
    }

    // What a user sees: every part and the master in `show`, either part's output in
    // `logs --node`.
    let shown = stdout(&cli(&url, &["show", &id.to_string()]));
    assert!(
        shown.contains(&format!("master: 127.0.0.1:{port}")),
        "{shown}"
    );
    assert!(shown.contains("nodes: 2 x 2 GPUs"), "{shown}");
    let rows: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("127.0.0.1") && l.contains("done"))
        .collect();
    assert_eq!(rows.len(), 2, "one row per part: {shown}");
    let second = parts[1]["node"].as_str().unwrap();
    let o = cli(&url, &["logs", &id.to_string(), "--node", second]);
    assert!(
        stdout(&o).contains("node rank 1 of 2 heard ['welcome 4']"),
        "{}",
        lines(&o)
    );
    let o = cli(&url, &["logs", &id.to_string()]);
    assert!(
        stdout(&o).contains("node rank 0 of 2 heard ['1 4']"),
        "{}",
        lines(&o)
    );
    let o = cli(&url, &["logs", &id.to_string(), "--node", "nowhere"]);
    assert!(
        !o.status.success(),
        "a node the job never ran on: {}",
        lines(&o)
    );
    assert!(stderr(&o).contains("nowhere"), "{}", lines(&o));

    // `--split`: the scheduler cuts 4 GPUs into 2 x 2, as no node has 4.
    let split = submit(
        &url,
        &[
            "--gpus",
            "4",
            "--split",
            "--",
            "sh",
            "-c",
            "echo $NNODES x $GPUS_PER_NODE",
        ],
    );
    let v = wait_job(&url, split, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(
        (v["nodes"].as_u64(), v["gpus_per_node"].as_u64()),
        (Some(2), Some(2)),
        "{v}"
    );
    let o = cli(&url, &["logs", &split.to_string()]);
    assert_eq!(stdout(&o).trim(), "2 x 2", "{}", lines(&o));

    // Where the nodes sit, as `nodes --gpus` shows it.
    let table = stdout(&cli(&url, &["nodes", "--gpus"]));
    assert!(
        table.contains("n1  addr 127.0.0.1  switch s1  rack r1"),
        "{table}"
    );
    assert!(
        table.contains("n2  addr 127.0.0.1  switch s1  rack r2"),
        "{table}"
    );
    // Each node's link matrix as its agent reported it (nvidia-smi topo -m style).
    let after = |node: &str| -> Vec<String> {
        let from = table
            .find(&format!("{node}  addr"))
            .expect("the node's line");
        table[from..]
            .lines()
            .skip(1)
            // What the node enforces comes first (tested in contain.rs).
            .filter(|l| !l.trim_start().starts_with("enforces:"))
            .take(3)
            .map(|l| l.trim().to_string())
            .collect()
    };
    assert_eq!(
        after("n1"),
        ["GPU0  GPU1", "GPU0  X     NVS", "GPU1  NVS   X"],
        "{table}"
    );
    assert_eq!(
        after("n2"),
        ["GPU0  GPU1", "GPU0  X     PIX", "GPU1  PIX   X"],
        "{table}"
    );
    assert!(
        table.contains("NVS = NVLink through an NVSwitch"),
        "{table}"
    );
}

/// The ledger's complete lines `attempt rank pid`.
fn ledger(text: &str) -> Vec<(u32, u32, i32)> {
    full_lines(text)
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            match f[..] {
                [a, r, p] => Some((a.parse().ok()?, r.parse().ok()?, p.parse().ok()?)),
                _ => None,
            }
        })
        .collect()
}

/// Waits until the ledger holds a line for every (attempt, rank) asked and returns the
/// pid of each.
fn wait_ledger(path: &Path, want: &[(u32, u32)]) -> BTreeMap<(u32, u32), i32> {
    let text = wait_for_text(path, SLOW, |t| {
        let runs = ledger(t);
        want.iter()
            .all(|w| runs.iter().any(|&(a, r, _)| (a, r) == *w))
    });
    ledger(&text)
        .into_iter()
        .map(|(a, r, p)| ((a, r), p))
        .collect()
}

/// `sh -c` body: appends `attempt rank pid` to the ledger, then becomes `rest`
/// (`exec`, so the pid written is the process the agent must stop).
fn ledger_body(ledger: &Path, rest: &str) -> String {
    format!(
        "echo \"$GPUSCHED_ATTEMPT $NODE_RANK $$\" >> {}; {rest}",
        ledger.display()
    )
}

#[test]
fn a_part_that_exits_1_brings_the_others_down_and_the_job_fails_once() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a: Vec<Proc> = ["n1", "n2", "n3"]
        .iter()
        .map(|n| agent(&url, n, &dir.join(n), Gpus::Fake(1)))
        .collect();
    let book = dir.join("ledger");
    let gate = dir.join("gate");
    // Ranks 0 and 1 sleep, ignoring SIGTERM (exec keeps that), so they outlive the stop
    // order by the server's grace; rank 2 exits 1 when the test opens the gate.
    let body = ledger_body(
        &book,
        &format!(
            "if [ \"$NODE_RANK\" = 2 ]; then \
               while [ ! -e {g} ]; do sleep 0.05; done; exit 1; \
             fi; trap '' TERM; exec sleep 300",
            g = gate.display()
        ),
    );
    let id = submit(
        &url,
        &[
            "--nodes",
            "3",
            "--gpus-per-node",
            "1",
            "--max-retries",
            "3",
            "--",
            "sh",
            "-c",
            &body,
        ],
    );
    let pids = wait_ledger(&book, &[(1, 0), (1, 1), (1, 2)]);
    // A job of one GPU waits behind the gang; once rank 2 fails it must still wait until
    // every part has ended: the GPUs of the parts still stopping stay theirs.
    let small_out = dir.join("small");
    let small = submit(
        &url,
        &[
            "--gpus",
            "1",
            "--",
            "sh",
            "-c",
            &format!("echo ran > {}", small_out.display()),
        ],
    );
    std::fs::write(&gate, "").unwrap();
    let (p0, p1) = (pids[&(1, 0)], pids[&(1, 1)]);
    wait_until(SLOW, || {
        // The evidence first, then the pids: a run seen while a part lives is an overlap.
        let ran = small_out.exists();
        let alive = pid_alive(p0) || pid_alive(p1);
        assert!(
            !(ran && alive),
            "job {small} started while a part of the failed gang still ran"
        );
        !alive
    });
    assert_eq!(wait_job(&url, small, SLOW)["state"], "succeeded");
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "failed", "{v}");
    assert_eq!(v["exit_code"], 1, "the first failure's outcome: {v}");
    assert_eq!(v["attempt"], 1, "a non-zero exit is not requeued: {v}");
    let parts = v["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 3, "{v}");
    // Rank 2 failed; gpusched stopped the other two because of it.
    assert_eq!(parts[2]["state"], "failed", "{v}");
    assert_eq!(parts[2]["exit_code"], 1, "{v}");
    for p in &parts[..2] {
        assert_eq!(
            (&p["state"], &p["signal"]),
            (&"stopped".into(), &15.into()),
            "{v}"
        );
    }
    // Once: one run per rank, all of attempt 1.
    let runs = ledger(&std::fs::read_to_string(&book).unwrap());
    let mut seen: Vec<(u32, u32)> = runs.iter().map(|&(a, r, _)| (a, r)).collect();
    seen.sort_unstable();
    assert_eq!(seen, vec![(1, 0), (1, 1), (1, 2)], "{runs:?}");

    let shown = stdout(&cli(&url, &["show", &id.to_string()]));
    assert_eq!(
        shown.lines().filter(|l| l.contains(" failed ")).count(),
        1,
        "only rank 2 listed as failed: {shown}"
    );
    assert_eq!(
        shown
            .lines()
            .filter(|l| l.contains(" stopped ") && l.ends_with("signal 15"))
            .count(),
        2,
        "ranks 0 and 1 listed as stopped by SIGTERM: {shown}"
    );
}

#[test]
fn a_killed_agent_requeues_the_whole_gang_once() {
    killed_agent_gang(false);
}

/// The shared design holds every part's GPUs until every part has ended. Here the
/// surviving part ignores SIGTERM, so it lives through the server's grace after the stop
/// order: attempt 2 must not start on its node (its GPUs) before it is gone.
#[test]
fn a_lost_gangs_surviving_part_keeps_its_gpus_until_it_has_ended() {
    killed_agent_gang(true);
}

/// A 2 x 2 gang on n1 and n2; n3 joins; the agent of rank 1's node is SIGKILLed. The
/// whole gang runs again once, on the surviving node and n3. `check_overlap`: attempt 1
/// ignores SIGTERM, and the test fails if attempt 2 starts while the survivor lives.
fn killed_agent_gang(check_overlap: bool) {
    let (_d, dir) = scratch();
    // A short heartbeat timeout: the test waits for the killed node to be declared lost.
    let (_server, url) = server(&dir.join("data"), 0, &["--heartbeat-timeout", "5s"]);
    let mut agents: BTreeMap<&str, Proc> = ["n1", "n2"]
        .iter()
        .map(|&n| (n, agent(&url, n, &dir.join(n), Gpus::Fake(2))))
        .collect();
    let book = dir.join("ledger");
    // Attempt 1 runs until stopped (with `check_overlap`, until killed: SIGTERM ignored,
    // which exec keeps, so the surviving part outlives the stop order by the server's
    // grace); attempt 2 succeeds.
    let body = ledger_body(
        &book,
        &format!(
            "if [ \"$GPUSCHED_ATTEMPT\" = 1 ]; then {}exec sleep 300; fi; exit 0",
            if check_overlap { "trap '' TERM; " } else { "" }
        ),
    );
    let id = submit(
        &url,
        &[
            "-N",
            "2",
            "--gpus-per-node",
            "2",
            "--max-retries",
            "2",
            "--",
            "sh",
            "-c",
            &body,
        ],
    );
    let first = wait_ledger(&book, &[(1, 0), (1, 1)]);
    // A third node for the second attempt, then the agent of rank 1's node dies.
    agents.insert("n3", agent(&url, "n3", &dir.join("n3"), Gpus::Fake(2)));
    let v = job(&url, id);
    let rank1 = v["parts"][1]["node"]
        .as_str()
        .expect("part 1's node")
        .to_string();
    let rank0 = v["parts"][0]["node"]
        .as_str()
        .expect("part 0's node")
        .to_string();
    agents.get_mut(rank1.as_str()).expect("an agent").kill();
    // Its process dies with it; the surviving part is stopped by the server, and until
    // it is gone its GPUs are not given to attempt 2 (the ledger is read before the pid
    // is looked at: a line of attempt 2 seen while the survivor still lives is an overlap).
    wait_until(SLOW, || !pid_alive(first[&(1, 1)]));
    let survivor = first[&(1, 0)];
    wait_until(SLOW, || {
        let runs = ledger(&std::fs::read_to_string(&book).unwrap_or_default());
        let alive = pid_alive(survivor);
        assert!(
            !(check_overlap && alive && runs.iter().any(|&(a, _, _)| a == 2)),
            "attempt 2 started while attempt 1's part on {rank0} still ran: {runs:?}"
        );
        !alive
    });

    wait_ledger(&book, &[(2, 0), (2, 1)]);
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["attempt"], 2, "requeued once, as one unit: {v}");
    let nodes: BTreeSet<String> = v["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["node"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(nodes.len(), 2, "{v}");
    assert!(
        !nodes.contains(&rank1),
        "attempt 2 avoided the lost node: {v}"
    );
    assert!(nodes.contains(&rank0) && nodes.contains("n3"), "{v}");
    let runs = ledger(&std::fs::read_to_string(&book).unwrap());
    let mut seen: Vec<(u32, u32)> = runs.iter().map(|&(a, r, _)| (a, r)).collect();
    seen.sort_unstable();
    assert_eq!(
        seen,
        vec![(1, 0), (1, 1), (2, 0), (2, 1)],
        "every part once per attempt: {runs:?}"
    );
}

#[test]
fn a_gang_waits_for_whole_nodes_while_small_jobs_backfill_without_delaying_it() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &["--policy", "backfill"]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(2));
    let _b = agent(&url, "n2", &dir.join("a2"), Gpus::Fake(2));
    let gate = dir.join("gate");
    let until_gate = format!("while [ ! -e {} ]; do sleep 0.1; done", gate.display());
    // One GPU of n1 taken for up to 10 minutes (by its walltime), until the gate opens.
    let blocker = submit(
        &url,
        &["--gpus", "1", "-t", "10m", "--", "sh", "-c", &until_gate],
    );
    wait_until(SLOW, || job(&url, blocker)["state"] == "running");
    let gang = submit(
        &url,
        &["-N", "2", "--gpus-per-node", "2", "-t", "5m", "--", "true"],
    );
    // A small job that ends (by its walltime) before the gang could start goes first;
    // one without a walltime must not take a GPU the gang will need.
    let short = submit(&url, &["--gpus", "1", "-t", "2m", "--", "true"]);
    let long = submit(&url, &["--gpus", "1", "--", "sleep", "600"]);
    let s = wait_job(&url, short, SLOW);
    assert_eq!(s["state"], "succeeded", "backfilled: {s}");
    let g = job(&url, gang);
    assert_eq!(g["state"], "pending", "n1 has one GPU free, not two: {g}");
    assert!(g["parts"].as_array().is_none_or(|p| p.is_empty()), "{g}");
    assert!(
        g["reason"]
            .as_str()
            .unwrap_or("")
            .contains("2 nodes with 2 GPUs each"),
        "the reason says what the gang waits for: {g}"
    );
    let l = job(&url, long);
    assert_eq!(
        l["state"], "pending",
        "no walltime: it would delay the gang: {l}"
    );
    assert!(!l["reason"].as_str().unwrap_or("").is_empty(), "{l}");

    // n1's GPU frees: the gang starts, ahead of the long job.
    std::fs::write(&gate, "").unwrap();
    let g = wait_job(&url, gang, SLOW);
    assert_eq!(g["state"], "succeeded", "{g}");
    let b = job(&url, blocker);
    let gang_start = g["start_ms"].as_u64().unwrap();
    assert!(gang_start >= b["end_ms"].as_u64().unwrap(), "{g} {b}");
    let l = job(&url, long);
    assert!(
        l["start_ms"].as_u64().is_none_or(|t| t >= gang_start),
        "the long job started before the gang: {l} {g}"
    );
    cli(&url, &["cancel", &long.to_string()]);
}

#[test]
fn tasks_per_node_gives_every_process_its_own_rank_and_gpus() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(4));
    let _b = agent(&url, "n2", &dir.join("a2"), Gpus::Fake(4));
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    let body = format!(
        "f={o}/rank-$RANK; \
         echo \"$RANK $LOCAL_RANK $LOCAL_WORLD_SIZE $WORLD_SIZE $NODE_RANK $CUDA_VISIBLE_DEVICES\" > $f.tmp \
         && cat $GPUSCHED_HOSTFILE >> $f.tmp && mv $f.tmp $f; echo I am rank $RANK",
        o = out.display()
    );
    let id = submit(
        &url,
        &[
            "-N",
            "2",
            "--gpus-per-node",
            "4",
            "--tasks-per-node",
            "2",
            "--",
            "sh",
            "-c",
            &body,
        ],
    );
    // rank -> (local rank, node rank, GPUs)
    let mut seen: BTreeMap<u32, (u32, u32, Vec<String>)> = BTreeMap::new();
    for rank in 0..4u32 {
        let text = wait_for_text(&out.join(format!("rank-{rank}")), SLOW, |t| {
            t.lines().count() >= 3
        });
        let mut lines = text.lines();
        let f: Vec<&str> = lines.next().unwrap().split(' ').collect();
        assert_eq!(f.len(), 6, "{text}");
        assert_eq!(f[0], rank.to_string(), "{text}");
        assert_eq!(
            (f[2], f[3]),
            ("2", "4"),
            "LOCAL_WORLD_SIZE, WORLD_SIZE: {text}"
        );
        let (local, node): (u32, u32) = (f[1].parse().unwrap(), f[4].parse().unwrap());
        assert_eq!(
            rank,
            node * 2 + local,
            "RANK = NODE_RANK * K + LOCAL_RANK: {text}"
        );
        let hosts: Vec<&str> = lines.collect();
        assert_eq!(hosts, ["127.0.0.1 slots=2", "127.0.0.1 slots=2"], "{text}");
        let gpus: Vec<String> = f[5].split(',').map(String::from).collect();
        assert_eq!(gpus.len(), 2, "{text}");
        seen.insert(rank, (local, node, gpus));
    }
    for node in 0..2 {
        let mine: Vec<&String> = seen
            .values()
            .filter(|(_, n, _)| *n == node)
            .flat_map(|(_, _, g)| g)
            .collect();
        let distinct: BTreeSet<&String> = mine.iter().copied().collect();
        assert_eq!(
            (mine.len(), distinct.len()),
            (4, 4),
            "node rank {node}'s processes share no GPU: {seen:?}"
        );
    }
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["tasks_per_node"], 2, "{v}");
    // Every process's own output, by global rank.
    for rank in ["3", "2", "1"] {
        let o = cli(&url, &["logs", &id.to_string(), "--rank", rank]);
        assert_eq!(
            stdout(&o).trim(),
            format!("I am rank {rank}"),
            "{}",
            lines(&o)
        );
    }
    let o = cli(&url, &["logs", &id.to_string()]);
    assert_eq!(stdout(&o).trim(), "I am rank 0", "{}", lines(&o));
}

#[test]
fn cancel_and_walltime_stop_every_part_of_a_gang() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a1"), Gpus::Fake(1));
    let _b = agent(&url, "n2", &dir.join("a2"), Gpus::Fake(1));
    let book = dir.join("ledger");
    let body = ledger_body(&book, "exec sleep 300");
    let id = submit(
        &url,
        &["-N", "2", "--gpus-per-node", "1", "--", "sh", "-c", &body],
    );
    let pids = wait_ledger(&book, &[(1, 0), (1, 1)]);
    let table = stdout(&cli(&url, &["queue"]));
    assert!(
        table
            .lines()
            .any(|l| l.contains(" 2x1 ") && (l.contains(" n1,n2 ") || l.contains(" n2,n1 "))),
        "the queue names both nodes: {table}"
    );
    let o = cli(&url, &["cancel", &id.to_string()]);
    assert!(o.status.success(), "{}", lines(&o));
    for pid in pids.values() {
        wait_until(SLOW, || !pid_alive(*pid));
    }
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "cancelled", "{v}");
    assert_eq!(v["attempt"], 1, "{v}");
    // Both nodes' GPUs are free again, and a walltime stops every part too.
    let book2 = dir.join("ledger2");
    let body = ledger_body(&book2, "exec sleep 300");
    let timed = submit(
        &url,
        &[
            "-N",
            "2",
            "--gpus-per-node",
            "1",
            "-t",
            "3",
            "--",
            "sh",
            "-c",
            &body,
        ],
    );
    let pids = wait_ledger(&book2, &[(1, 0), (1, 1)]);
    for pid in pids.values() {
        wait_until(SLOW, || !pid_alive(*pid));
    }
    let v = wait_job(&url, timed, SLOW);
    assert_eq!(v["state"], "timed_out", "{v}");
}

#[test]
fn a_gang_takes_one_gpu_model_unless_mixed_models() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent_with(
        &url,
        "h100",
        &dir.join("a1"),
        Gpus::Fake(1),
        &["--gpu-model", "H100"],
    );
    let _b = agent_with(
        &url,
        "a100",
        &dir.join("a2"),
        Gpus::Fake(1),
        &["--gpu-model", "A100"],
    );
    let gang = ["-N", "2", "--gpus-per-node", "1"];
    let o = cli(&url, &[&["submit"][..], &gang, &["--", "true"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", lines(&o));
    assert!(stderr(&o).contains("mixed_models"), "{}", lines(&o));
    let id = submit(
        &url,
        &[
            &gang[..],
            &["--mixed-models", "--", "sh", "-c", "echo $NODE_RANK"],
        ]
        .concat(),
    );
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(v["mixed_models"], true, "{v}");
    let shown = stdout(&cli(&url, &["show", &id.to_string()]));
    assert!(shown.contains("mixed GPU models allowed"), "{shown}");
}
