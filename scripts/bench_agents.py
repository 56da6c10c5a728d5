#!/usr/bin/env python3
"""One server, N agents: how fast the server drives many nodes (issue 39, item 3).

For each N of `--agents` (default 1,4,16,64) a fresh `gpusched server` (default SQLite
store in a temporary directory: fsync on every commit) and N `gpusched agent`s on
loopback, each declaring 8 GPUs, run ONE array of `--tasks` 1-GPU tasks of `/bin/true`;
the figures are tasks/s from the submit call to the array's end, the server's CPU per
task and the agents' CPU per task (summed over agents), and the server's peak RSS.

By default the agents run with `--bench-instant-jobs`: NO PROCESS IS STARTED; each launch
is recorded by the agent as usual and reported started and exited 0 at once. That is
what isolates the server (on a 2-core machine 64 agents starting real processes measure
the process starts); `--real-jobs` runs `/bin/true` for real. The tables say which.

With `--hq PATH`, the same N on HyperQueue in the same run: one `hq server` and N `hq
worker`s of 8 GPUs and 8 CPUs each (scripts/bench_hq.py), one `hq submit --array` of the
same size. For a like-for-like server measure PATH should be HyperQueue built in its
zero-worker mode (`RUSTFLAGS="--cfg zero_worker" cargo build --release`), where a worker
finishes each task without running it; say `--hq-zero-worker` so the table says so.
HyperQueue's server keeps no journal by default (nothing on disk); `--hq-journal` gives it
one (`hq server start --journal`), which it flushes periodically, not per acknowledgement.
`--hq-first` runs HyperQueue before gpusched at each N.

Usage: cargo build --release && python3 scripts/bench_agents.py [--agents 1,4,16,64]
       [--tasks 20000] [--exe PATH] [--real-jobs] [--hq PATH [--hq-zero-worker]
       [--hq-journal] [--hq-first]] [--out FILE.json]
"""
import argparse, json, os, pwd, shutil, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_live as bl  # noqa: E402  (get/post with its token, cpu_s, vm_hwm_mib)


def gpusched_run(exe, n, tasks, instant, port, prefix=()):
    tmp = tempfile.mkdtemp(prefix=f"gpusched-agents{n}-")
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=base)
    server = subprocess.Popen([*prefix, exe, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{tmp}/data"],
                              env=env, stdout=subprocess.DEVNULL)
    agents = []
    try:
        for _ in range(2400):
            try:
                bl.get(f"{base}/api/health")
                break
            except Exception:
                time.sleep(0.05)
        user = pwd.getpwuid(os.getuid()).pw_name
        bl.TOKEN = subprocess.run([exe, "token", "create", user, "--admin"], check=True, capture_output=True,
                                  text=True, env=dict(env, GPUSCHED_SERVER=f"unix:{tmp}/data/gpusched.sock")
                                  ).stdout.strip()
        for i in range(n):
            log = open(f"{tmp}/agent-{i}.log", "w")
            agents.append(subprocess.Popen(
                [exe, "agent", "--server", base, "--name", f"bench-{i}", "--state-dir", f"{tmp}/agent-{i}",
                 "--join-token-file", f"{tmp}/data/join-token", "--allow-root-jobs",
                 "--gpus", "8", "--gpu-model", "A100-SXM4-80GB", "--gpu-backend", "declared",
                 *(["--bench-instant-jobs"] if instant else [])],
                env=env, stdout=log, stderr=log))
        t0 = time.time()
        while len([x for x in bl.get(f"{base}/api/nodes")["nodes"] if x["state"] == "online"]) < n:
            if time.time() - t0 > 180 or any(a.poll() is not None for a in agents):
                sys.exit(f"not every agent came online; see {tmp}/agent-*.log")
            time.sleep(0.1)
        time.sleep(1.0)  # registrations' rounds settled
        pids = [a.pid for a in agents]
        cpu0 = (bl.cpu_s(server.pid), sum(bl.cpu_s(p) for p in pids))
        t0 = time.time()
        job = {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp", "array": {"first": 0, "last": tasks - 1}}
        aid = bl.post(f"{base}/api/jobs", job)["ids"][0]
        while True:
            v = bl.get(f"{base}/api/jobs/{aid}/wait?timeout_s=30")
            if v["state"] in ("succeeded", "failed", "cancelled", "timed_out"):
                break
        t = time.time() - t0
        ok = v["array_counts"]["succeeded"]
        if ok != tasks:
            sys.exit(f"array {aid}: {ok} of {tasks} tasks succeeded: {v['array_counts']} ({v['reason']})")
        srv = (bl.cpu_s(server.pid) - cpu0[0]) / tasks * 1e6
        agt = (sum(bl.cpu_s(p) for p in pids) - cpu0[1]) / tasks * 1e6
        return dict(agents=n, tasks=tasks, total_s=t, tasks_per_s=tasks / t, server_cpu_us_per_task=srv,
                    agents_cpu_us_per_task=agt, server_rss_mib=bl.vm_hwm_mib(server.pid))
    finally:
        for a in agents:
            a.terminate()
        for a in agents:
            try:
                a.wait(timeout=20)
            except subprocess.TimeoutExpired:
                a.kill()
                a.wait()
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def hq_run(path, n, tasks, journal):
    from bench_hq import HyperQueue
    tmp = tempfile.mkdtemp(prefix=f"hq-agents{n}-")
    hq = HyperQueue(path, tmp, tmp, workers=n, journal=journal)
    try:
        hq.start()
        server = hq.pids()[0]
        workers = hq.worker_pids()
        cpu0 = (bl.cpu_s(server), sum(bl.cpu_s(p) for p in workers))
        t0 = time.time()
        job = hq.submit("--array", f"0-{tasks - 1}")
        hq.wait(job)
        t = time.time() - t0
        ok = hq.succeeded(job)
        if ok != tasks:
            sys.exit(f"HyperQueue: only {ok} of {tasks} tasks finished")
        srv = (bl.cpu_s(server) - cpu0[0]) / tasks * 1e6
        wrk = (sum(bl.cpu_s(p) for p in workers) - cpu0[1]) / tasks * 1e6
        return dict(agents=n, tasks=tasks, total_s=t, tasks_per_s=tasks / t, server_cpu_us_per_task=srv,
                    agents_cpu_us_per_task=wrk, server_rss_mib=bl.vm_hwm_mib(server), version=hq.version())
    finally:
        hq.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", default="1,4,16,64", help="comma-separated agent counts")
    ap.add_argument("--tasks", type=int, default=20000)
    ap.add_argument("--exe", help="the gpusched binary (default: the release build)")
    ap.add_argument("--real-jobs", action="store_true", help="run /bin/true for real (no --bench-instant-jobs)")
    ap.add_argument("--hq", metavar="PATH", help="also run HyperQueue (this hq binary) at each N")
    ap.add_argument("--hq-zero-worker", action="store_true", help="say that --hq is a zero-worker build")
    ap.add_argument("--hq-journal", action="store_true", help="HyperQueue's server with a journal")
    ap.add_argument("--hq-first", action="store_true")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--server-prefix", default="", metavar="CMD",
                    help="run gpusched's server under this command, e.g. `valgrind --tool=callgrind "
                         "--callgrind-out-file=F` (its CPU figures then mean nothing)")
    args = ap.parse_args()
    exe = bl.binary(args.exe)
    counts = [int(x) for x in args.agents.split(",")]
    mode = "real /bin/true" if args.real_jobs else "instant jobs (--bench-instant-jobs: no process started)"
    hq_mode = ("zero-worker (no process started)" if args.hq_zero_worker else "real /bin/true") + \
        (", journal" if args.hq_journal else ", no journal")
    rows = []
    for i, n in enumerate(counts):
        order = ["hq", "gpusched"] if args.hq_first else ["gpusched", "hq"]
        for system in order:
            if system == "hq" and not args.hq:
                continue
            if system == "gpusched":
                r = gpusched_run(exe, n, args.tasks, not args.real_jobs, 16460 + i, args.server_prefix.split())
                r.update(system="gpusched", mode=mode)
            else:
                r = hq_run(args.hq, n, args.tasks, args.hq_journal)
                r.update(system="hyperqueue", mode=hq_mode)
            rows.append(r)
            print(f"{r['system']:10} N={n:3}: {r['tasks_per_s']:7.0f} tasks/s, server {r['server_cpu_us_per_task']:6.1f}"
                  f" us/task, agents {r['agents_cpu_us_per_task']:6.1f} us/task, server peak RSS "
                  f"{r['server_rss_mib']:.0f} MiB ({r['mode']})", flush=True)
    print()
    print("| system | agents | tasks/s | server CPU us/task | agents' CPU us/task | server peak RSS MiB | mode |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['system']} | {r['agents']} | {r['tasks_per_s']:.0f} | {r['server_cpu_us_per_task']:.1f} | "
              f"{r['agents_cpu_us_per_task']:.1f} | {r['server_rss_mib']:.0f} | {r['mode']} |")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
