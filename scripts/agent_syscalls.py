#!/usr/bin/env python3
"""The agent's system calls per trivial task (issue 14 item 1, docs/benchmarks-log.md (y)).

Starts `gpusched server` and one `gpusched agent` declaring 8 GPUs on loopback
(scripts/history_scale.py's `Cluster`), warms up with an array of 100 `/bin/true` tasks, then attaches
`strace -ff` to every thread of the agent and runs an array of --tasks more. The started
processes are traced too (strace follows clone), so every trace file that shows an
`execve` is a job's and is left out: what remains is the agent's own calls, counted by
name and divided by the tasks. strace slows the agent several-fold, so only the counts
mean anything, not the rates.

Usage: cargo build --release -p gpusched && python3 scripts/agent_syscalls.py
       [--tasks 2000] [--exe PATH (default: the release build)] [--top 25]
"""
import argparse, collections, glob, os, re, shutil, signal, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_live as B  # noqa: E402  (the HTTP helpers and the binary lookup)
from history_scale import Cluster  # noqa: E402  (a server and one agent, started and stopped)


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
    c = Cluster(exe, tmp, 16451)
    base = c.base
    tracer = None
    try:
        c.start_server()
        c.start_agent()
        array(base, 100)  # warm: the first jobs grow the agent's tables and caches
        threads = os.listdir(f"/proc/{c.agent.pid}/task")
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
        c.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    total = sum(calls.values())
    print(f"{args.tasks} tasks ({jobs} job processes left out): {total / args.tasks:.1f} agent system calls "
          f"per task, over {len(threads)} threads at the start")
    for name, n in calls.most_common(args.top):
        print(f"  {name:18s} {n / args.tasks:6.2f}")


if __name__ == "__main__":
    main()
