#!/usr/bin/env python3
"""The agent's system calls per trivial task (issue 14 item 1, docs/benchmarks.md (y)).

Starts `gpusched server` and one `gpusched agent` declaring 8 GPUs on loopback (as
scripts/bench_live.py), warms up with an array of 100 `/bin/true` tasks, then attaches
`strace -ff` to every thread of the agent and runs an array of --tasks more. The started
processes are traced too (strace follows clone), so every trace file that shows an
`execve` is a job's and is left out: what remains is the agent's own calls, counted by
name and divided by the tasks. strace slows the agent several-fold, so only the counts
mean anything, not the rates.

Usage: cargo build --release -p gpusched && python3 scripts/agent_syscalls.py
       [--tasks 2000] [--exe PATH (default: the release build)] [--top 25]
"""
import argparse, collections, glob, os, pwd, re, shutil, signal, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_live as B  # noqa: E402  (the HTTP helpers and the binary lookup)


def array(base, tasks):
    job = {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp", "array": {"first": 0, "last": tasks - 1}}
    aid = B.post(f"{base}/api/jobs", job)["ids"][0]
    t0 = time.time()
    while True:
        v = B.get(f"{base}/api/jobs/{aid}/wait?timeout_s=30")
        if v["state"] in ("succeeded", "failed", "cancelled", "timed_out"):
            break
        if time.time() - t0 > 1200:
            sys.exit(f"array {aid} did not end in 20 minutes")
    if v["array_counts"]["succeeded"] != tasks:
        sys.exit(f"array {aid}: {v['array_counts']}")


def count(trace_dir):
    calls, jobs = collections.Counter(), 0
    for path in glob.glob(f"{trace_dir}/trace.*"):
        with open(path, errors="replace") as f:
            text = f.read()
        if "execve(" in text:
            jobs += 1
            continue
        for line in text.splitlines():
            m = re.match(r"(\w+)\(", line)
            if m:
                calls[m.group(1)] += 1
    return calls, jobs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--exe", help="the gpusched binary (default: the release build)")
    ap.add_argument("--top", type=int, default=25, help="system calls listed")
    args = ap.parse_args()
    if not shutil.which("strace"):
        sys.exit("strace is not installed (apt-get install strace)")
    exe = B.binary(args.exe)
    signal.signal(signal.SIGTERM, B.interrupted)
    tmp = tempfile.mkdtemp(prefix="gpusched-syscalls-")
    port = 16451
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=base)
    server = subprocess.Popen([exe, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{tmp}/data"],
                              env=env, stdout=subprocess.DEVNULL)
    agent = tracer = None
    try:
        for _ in range(200):
            try:
                B.get(f"{base}/api/health")
                break
            except Exception:
                time.sleep(0.05)
        user = pwd.getpwuid(os.getuid()).pw_name
        B.TOKEN = subprocess.run([exe, "token", "create", user, "--admin"], check=True, capture_output=True,
                                 text=True, env=dict(env, GPUSCHED_SERVER=f"unix:{tmp}/data/gpusched.sock")
                                 ).stdout.strip()
        env["GPUSCHED_TOKEN"] = B.TOKEN
        agent = subprocess.Popen([exe, "agent", "--server", base, "--name", "bench", "--state-dir", f"{tmp}/agent",
                                  "--join-token-file", f"{tmp}/data/join-token", "--allow-root-jobs",
                                  "--gpus", "8", "--gpu-model", "A100-SXM4-80GB", "--gpu-backend", "declared"],
                                 env=env, stdout=subprocess.DEVNULL)
        t0 = time.time()
        while not [n for n in B.get(f"{base}/api/nodes")["nodes"] if n["state"] == "online"]:
            if time.time() - t0 > 60:
                sys.exit("the agent did not come online in 60 s")
            time.sleep(0.05)
        array(base, 100)  # warm: the first jobs grow the agent's tables and caches
        threads = os.listdir(f"/proc/{agent.pid}/task")
        os.makedirs(f"{tmp}/trace")
        tracer = subprocess.Popen(["strace", "-ff", "-qq", "-o", f"{tmp}/trace/trace"] +
                                  [a for t in threads for a in ("-p", t)], stderr=subprocess.DEVNULL)
        time.sleep(1.5)  # strace attaches to each thread in turn
        array(base, args.tasks)
        time.sleep(0.5)
        tracer.terminate()
        tracer.wait()
        tracer = None
        calls, jobs = count(f"{tmp}/trace")
    finally:
        if tracer:
            tracer.kill()
            tracer.wait()
        for p in (agent, server):
            if p:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    total = sum(calls.values())
    print(f"{args.tasks} tasks ({jobs} job processes left out): {total / args.tasks:.1f} agent system calls "
          f"per task, over {len(threads)} threads at the start")
    for name, n in calls.most_common(args.top):
        print(f"  {name:18s} {n / args.tasks:6.2f}")


if __name__ == "__main__":
    main()
