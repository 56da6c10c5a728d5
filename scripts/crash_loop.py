#!/usr/bin/env python3
"""Crash loop: SIGKILL the server N times at random moments while clients submit jobs
without pause and jobs keep completing; then check that nothing was lost, duplicated or
run twice.

Setup: one server (heartbeat timeout 30 s; the agent keeps its jobs for the node lease,
5 minutes by default, which outlasts every restart), one agent with 8 declared GPUs, K submitter threads each running
`gpusched submit --json --name sT-N` through the Unix socket in a loop. Every job appends
"JOB_ID ATTEMPT NAME" to a ledger and sleeps 0.05-1 s. An id counts as accepted only
when the CLI printed it. After each kill the server is restarted at once on the same
port and data directory; the next kill comes 0.1-1.5 s (random) after it listens.

Checks (exit 1 if any fails):
- every accepted id is known to the server (lost = 0);
- no id twice, and no submission (its unique name) stored twice (duplicated = 0);
- no (job, attempt) ran twice, and no job ran more than once (ran twice = 0; a job
  whose run was lost with an agent would legitimately run again: counted apart);
- every job reached an end state (succeeded), none left pending or running.

Usage: python3 scripts/crash_loop.py [--kills 100] [--submitters 2] [--seed 1]
                                    [--bin PATH]   (default: target/{release,debug}/gpusched)
Prints one JSON line of figures at the end.
"""
import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_bin():
    tgt = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    for profile in ("release", "debug"):
        p = os.path.join(tgt, profile, "gpusched")
        if os.path.exists(p):
            return p
    sys.exit("no gpusched binary: run `cargo build --release` (or pass --bin PATH)")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--submitters", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default=None)
    ap.add_argument("--dir", default=None, help="work directory (default: a new temp dir)")
    args = ap.parse_args()
    g = args.bin or default_bin()
    d = args.dir or tempfile.mkdtemp(prefix="gpusched-crash-")
    os.makedirs(d, exist_ok=True)
    rng = random.Random(args.seed)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, GPUSCHED_LOG="warn")
    sock = f"unix:{d}/data/gpusched.sock"
    ledger = f"{d}/ledger"
    log = open(f"{d}/server.log", "a")

    def server():
        p = subprocess.Popen(
            [g, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{d}/data",
             "--heartbeat-timeout", "30s", "--grace", "1s"],
            env=env, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.time() + 60
        while time.time() < deadline:
            if p.poll() is not None:
                sys.exit(f"the server exited with {p.returncode}; see {d}/server.log")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return p
            except OSError:
                time.sleep(0.02)
        sys.exit("the server did not listen within 60 s")

    def cli(*a, timeout=60):
        return subprocess.run([g, *a], env=dict(env, GPUSCHED_SERVER=sock),
                              capture_output=True, text=True, timeout=timeout)

    srv = server()
    agent = subprocess.Popen(
        [g, "agent", "--server", base, "--name", "n1", "--state-dir", f"{d}/agent",
         "--join-token-file", f"{d}/data/join-token", "--allow-root-jobs", "--gpus", "8",
         "--gpu-backend", "declared"],
        env=env, stdout=subprocess.DEVNULL, stderr=open(f"{d}/agent.log", "a"))

    accepted = []  # (id, name)
    refused = Counter()
    stop = threading.Event()
    lock = threading.Lock()

    def submitter(t):
        r = random.Random(args.seed * 1000 + t)
        n = 0
        while not stop.is_set():
            n += 1
            name = f"s{t}-{n}"
            dur = r.choice([0.05, 0.1, 0.3, 0.6, 1.0])
            script = f"echo $GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT {name} >> {ledger}; sleep {dur}"
            try:
                o = cli("submit", "--json", "--name", name, "--", "sh", "-c", script)
            except subprocess.TimeoutExpired:
                refused["timeout"] += 1
                continue
            if o.returncode == 0:
                with lock:
                    accepted.append((json.loads(o.stdout)["ids"][0], name))
            else:
                refused[o.returncode] += 1
                time.sleep(0.02)

    threads = [threading.Thread(target=submitter, args=(t,)) for t in range(args.submitters)]
    t0 = time.time()
    for th in threads:
        th.start()
    for k in range(args.kills):
        time.sleep(rng.uniform(0.1, 1.5))
        srv.kill()
        srv.wait()
        srv = server()
        if (k + 1) % 10 == 0:
            print(f"{k + 1} kills, {len(accepted)} accepted", file=sys.stderr, flush=True)
    time.sleep(1)
    stop.set()
    for th in threads:
        th.join()
    kill_time = time.time() - t0

    # Every job ends: wait (bounded) until nothing is active.
    deadline = time.time() + 600
    while time.time() < deadline:
        o = cli("queue", "--json")
        if o.returncode == 0 and not json.loads(o.stdout)["jobs"]:
            break
        time.sleep(1)
    o = cli("queue", "--all", "--json", "--limit", "100000")
    jobs = json.loads(o.stdout)["jobs"]
    srv.kill()
    agent.kill()

    by_id = Counter(j["id"] for j in jobs)
    by_name = Counter(j["name"] for j in jobs)
    known = {j["id"]: j for j in jobs}
    lost = [i for i, _ in accepted if i not in known]
    wrong_name = [(i, n) for i, n in accepted if i in known and known[i]["name"] != n]
    dup_ids = [i for i, c in by_id.items() if c > 1]
    dup_subs = [n for n, c in by_name.items() if c > 1]
    runs = Counter()
    per_job = Counter()
    for line in open(ledger):
        jid, att, _name = line.split()
        runs[(int(jid), int(att))] += 1
        per_job[int(jid)] += 1
    attempt_twice = [k for k, c in runs.items() if c > 1]
    rerun_after_loss = [j for j, c in per_job.items() if c > 1 and known.get(j, {}).get("attempt", 1) > 1]
    ran_twice = [j for j, c in per_job.items() if c > 1 and j not in rerun_after_loss]
    unknown_runs = [j for j in per_job if j not in known]
    not_ended = [(j["id"], j["state"]) for j in jobs if j["state"] != "succeeded"]
    never_ran = [j["id"] for j in jobs if j["state"] == "succeeded" and per_job[j["id"]] == 0]
    figures = {
        "kills": args.kills,
        "submitters": args.submitters,
        "seed": args.seed,
        "jobs_accepted": len(accepted),
        "jobs_known": len(jobs),
        "answer_lost_but_kept": len(jobs) - len(accepted),
        "refused_while_down": sum(refused.values()),
        "lost": len(lost) + len(wrong_name),
        "duplicated": len(dup_ids) + len(dup_subs),
        "attempt_ran_twice": len(attempt_twice),
        "ran_twice": len(ran_twice) + len(unknown_runs),
        "rerun_after_lost_run": len(rerun_after_loss),
        "not_succeeded": len(not_ended),
        "succeeded_without_run": len(never_ran),
        "kill_phase_s": round(kill_time, 1),
        "total_s": round(time.time() - t0, 1),
        "dir": d,
    }
    print(json.dumps(figures))
    bad = (lost or wrong_name or dup_ids or dup_subs or attempt_twice or ran_twice
           or unknown_runs or not_ended or never_ran)
    if bad:
        print("FAIL:", json.dumps({"lost": lost[:10], "dup_ids": dup_ids[:10],
                                   "dup_submissions": dup_subs[:10],
                                   "attempt_twice": attempt_twice[:10],
                                   "ran_twice": ran_twice[:10], "not_ended": not_ended[:10],
                                   "never_ran": never_ran[:10]}), file=sys.stderr)
        sys.exit(1)
    print("PASS", file=sys.stderr)


if __name__ == "__main__":
    main()
