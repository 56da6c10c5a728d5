#!/usr/bin/env python3
"""Live-cluster benchmarks of docs/benchmarks.md (issue 3).

Starts `gpusched server` and one `gpusched agent` declaring 8 GPUs on loopback (separate
processes, so each one's peak RSS can be read), then measures:
  (a) end-to-end throughput of trivial 1-GPU jobs (/bin/true): N submitted in one batch
      call, and M submitted by a loop of single `gpusched submit` CLI calls;
  (b) submit -> start and submit -> finish latency, median and p99, over 200 jobs
      submitted one at a time on an idle cluster;
  (c) utilisation while refilling: 80 jobs of `sleep 1` on 8 GPUs;
  (d) peak RSS (VmHWM) of the server and of the agent;
  (e) the floor: a plain sequential loop of Python's `os.posix_spawn` (glibc's, a
      clone(CLONE_VM|CLONE_VFORK)) + `os.waitpid` of the same /bin/true, before and after
      the cluster runs: the cost of the processes themselves on this machine today.
Agent and server CPU per job of (a) is utime+stime of each process (/proc/PID/stat)
over the batch, divided by the jobs; a section with a count of 0 is skipped.
The store is the default SQLite (WAL, synchronous=FULL: fsync on every commit).

With --array, (a) submits the N jobs as ONE array of N tasks (issue 14) instead of a batch:
one request, one stored job; its tasks become jobs as they start.

Usage: cargo build --release && python3 scripts/bench_live.py [--jobs 10000] [--cli-jobs 1000]
       [--latency-jobs 200] [--spawn-floor 3000] [--array] [--exe PATH (default: the release build)]
"""
import argparse, json, os, pwd, shutil, statistics, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def binary(exe=None):
    if exe:
        return os.path.abspath(exe)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    path = os.path.join(target, "release", "gpusched")
    if not os.path.exists(path):
        sys.exit(f"{path} not found; run `cargo build --release` first (or set CARGO_TARGET_DIR)")
    return path


TOKEN = None  # an admin token, made over the server's Unix socket at start


def auth():
    return {"Authorization": f"Bearer {TOKEN}"} if TOKEN else {}


def get(url):
    with urllib.request.urlopen(urllib.request.Request(url, headers=auth()), timeout=60) as r:
        return json.loads(r.read())


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **auth()})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def active(base):
    return len(get(f"{base}/api/jobs?state=active&limit=1")["jobs"])


def wait_idle(base, limit=600):
    t0 = time.time()
    while active(base) > 0:
        if time.time() - t0 > limit:
            sys.exit("jobs did not finish in time")
        time.sleep(0.02)


def jobs_between(base, first, last):
    """Jobs first..=last. Pages come newest first; `next_before` walks to older ones."""
    out = []
    before = last + 1
    while True:
        page = get(f"{base}/api/jobs?state=all&after={first - 1}&before={before}&limit=100000")
        out += page["jobs"]
        if page.get("next_before") is None or not page["jobs"]:
            break
        before = page["next_before"]
    return out


def check(ok, want, jobs):
    if ok != want:
        bad = [j for j in jobs if j["state"] != "succeeded"][:3]
        sys.exit(f"only {ok} of {want} jobs succeeded; e.g. {[(j['id'], j['state'], j['reason']) for j in bad]}")


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))]


def vm_hwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid):
    """User + system CPU seconds a process has used so far (/proc/PID/stat fields 14, 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def spawn_floor(n):
    """Sequential posix_spawn + waitpid of /bin/true: spawns per second."""
    env = {"PATH": "/usr/bin:/bin"}
    t0 = time.time()
    for _ in range(n):
        pid = os.posix_spawn("/bin/true", ["/bin/true"], env)
        os.waitpid(pid, 0)
    return n / (time.time() - t0)


def main():
    global TOKEN
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--cli-jobs", type=int, default=1000)
    ap.add_argument("--latency-jobs", type=int, default=200)
    ap.add_argument("--spawn-floor", type=int, default=3000, help="spawns of /bin/true in the floor loop")
    ap.add_argument("--no-refill", action="store_true", help="skip (c)")
    ap.add_argument("--exe", help="the gpusched binary to measure (default: the release build)")
    ap.add_argument("--array", action="store_true", help="(a) as one array of --jobs tasks, not a batch")
    args = ap.parse_args()
    exe = binary(args.exe)
    res = {}
    if args.spawn_floor:
        floor0 = spawn_floor(args.spawn_floor)
        print(f"(e) floor before: sequential posix_spawn+waitpid of /bin/true: {floor0:.0f}/s", flush=True)
    tmp = tempfile.mkdtemp(prefix="gpusched-bench-")
    port = 16450
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=base)
    server = subprocess.Popen([exe, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{tmp}/data"],
                              env=env, stdout=subprocess.DEVNULL)
    agent = None
    try:
        for _ in range(200):
            try:
                get(f"{base}/api/health")  # public: no token needed
                break
            except Exception:
                time.sleep(0.05)
        # Jobs run as the submitting Unix user when the agent is root, so the token is
        # for the user running this script.
        user = pwd.getpwuid(os.getuid()).pw_name
        TOKEN = subprocess.run([exe, "token", "create", user, "--admin"], check=True, capture_output=True,
                               text=True, env=dict(env, GPUSCHED_SERVER=f"unix:{tmp}/data/gpusched.sock")).stdout.strip()
        env["GPUSCHED_TOKEN"] = TOKEN
        agent = subprocess.Popen([exe, "agent", "--server", base, "--name", "bench", "--state-dir", f"{tmp}/agent",
                                  "--join-token-file", f"{tmp}/data/join-token", "--allow-root-jobs",
                                  "--gpus", "8", "--gpu-model", "A100-SXM4-80GB", "--gpu-backend", "declared"],
                                 env=env, stdout=subprocess.DEVNULL)
        while not [n for n in get(f"{base}/api/nodes")["nodes"] if n["state"] == "online"]:
            time.sleep(0.05)
        job = {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp"}

        if args.array:
            array_run(args, base, job, server, agent, res)
            res["rss_mib"] = dict(server=vm_hwm_mib(server.pid), agent=vm_hwm_mib(agent.pid))
            print(f"(d) peak RSS: server {res['rss_mib']['server']:.1f} MiB, agent "
                  f"{res['rss_mib']['agent']:.1f} MiB", flush=True)
            return print(json.dumps(res))
        # (a) one batch call
        cpu0 = (cpu_s(server.pid), cpu_s(agent.pid))
        t0 = time.time()
        ids = post(f"{base}/api/jobs/batch", {"jobs": [dict(job) for _ in range(args.jobs)]})["ids"]
        t_sub = time.time() - t0
        wait_idle(base)
        t = time.time() - t0
        done = jobs_between(base, ids[0], ids[-1])
        ok = sum(j["state"] == "succeeded" for j in done)
        check(ok, args.jobs, done)
        # CPU per job is less sensitive to other work on the machine than throughput is.
        srv_us = (cpu_s(server.pid) - cpu0[0]) / args.jobs * 1e6
        agt_us = (cpu_s(agent.pid) - cpu0[1]) / args.jobs * 1e6
        res["batch"] = dict(jobs=args.jobs, submit_s=t_sub, total_s=t, jobs_per_s=args.jobs / t, succeeded=ok,
                            server_cpu_us_per_job=srv_us, agent_cpu_us_per_job=agt_us)
        print(f"(a) batch of {args.jobs}: submit call {t_sub:.2f} s, all finished after {t:.2f} s "
              f"-> {args.jobs / t:.0f} jobs/s end to end ({ok} succeeded); CPU per job: server "
              f"{srv_us:.0f} us, agent {agt_us:.0f} us", flush=True)

        # (a) a loop of single CLI calls
        cli_loop(args, exe, env, base, res)
        latency(args, base, job, res)
        refill(args, base, job, res)
        # (d) peak RSS
        res["rss_mib"] = dict(server=vm_hwm_mib(server.pid), agent=vm_hwm_mib(agent.pid))
        print(f"(d) peak RSS: server {res['rss_mib']['server']:.1f} MiB, agent {res['rss_mib']['agent']:.1f} MiB",
              flush=True)
    finally:
        for p in (agent, server):
            if p:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if args.spawn_floor:
        floor1 = spawn_floor(args.spawn_floor)
        rate = res["batch"]["jobs_per_s"]
        res["spawn_floor_per_s"] = dict(before=floor0, after=floor1)
        res["batch"]["vs_floor"] = rate / max(floor0, floor1)
        print(f"(e) floor after: {floor1:.0f}/s; the batch ran at {rate / max(floor0, floor1):.2f}x the "
              f"better floor", flush=True)
    print(json.dumps(res))


def array_run(args, base, job, server, agent, res):
    """(a) as one array: one request for --jobs tasks; the array's own counts say when
    every task ended and how."""
    cpu0 = (cpu_s(server.pid), cpu_s(agent.pid))
    t0 = time.time()
    aid = post(f"{base}/api/jobs", dict(job, array={"first": 0, "last": args.jobs - 1}))["ids"][0]
    t_sub = time.time() - t0
    while True:
        v = get(f"{base}/api/jobs/{aid}/wait?timeout_s=30")
        if v["state"] in ("succeeded", "failed", "cancelled", "timed_out"):
            break
    t = time.time() - t0
    ok = v["array_counts"]["succeeded"]
    if ok != args.jobs:
        sys.exit(f"array {aid}: {ok} of {args.jobs} tasks succeeded: {v['array_counts']} ({v['reason']})")
    srv_us = (cpu_s(server.pid) - cpu0[0]) / args.jobs * 1e6
    agt_us = (cpu_s(agent.pid) - cpu0[1]) / args.jobs * 1e6
    res["array"] = dict(tasks=args.jobs, submit_s=t_sub, total_s=t, tasks_per_s=args.jobs / t, succeeded=ok,
                        server_cpu_us_per_task=srv_us, agent_cpu_us_per_task=agt_us)
    print(f"(a) array of {args.jobs}: submit call {t_sub:.3f} s, all finished after {t:.2f} s "
          f"-> {args.jobs / t:.0f} tasks/s end to end ({ok} succeeded); CPU per task: server "
          f"{srv_us:.0f} us, agent {agt_us:.0f} us", flush=True)


def cli_loop(args, exe, env, base, res):
    if not args.cli_jobs:
        return
    t0 = time.time()
    first = last = None
    for _ in range(args.cli_jobs):
        out = subprocess.run([exe, "submit", "--json", "--cwd", "/tmp", "--", "/bin/true"], env=env,
                             capture_output=True, text=True, check=True).stdout
        i = json.loads(out)["ids"][0]
        first = first or i
        last = i
    t_sub = time.time() - t0
    wait_idle(base)
    t = time.time() - t0
    done = jobs_between(base, first, last)
    ok = sum(j["state"] == "succeeded" for j in done)
    check(ok, args.cli_jobs, done)
    res["cli_loop"] = dict(jobs=args.cli_jobs, submit_s=t_sub, total_s=t, jobs_per_s=args.cli_jobs / t, succeeded=ok)
    print(f"(a) loop of {args.cli_jobs} CLI submits: {args.cli_jobs / t_sub:.0f} submits/s, all finished after "
          f"{t:.2f} s -> {args.cli_jobs / t:.0f} jobs/s end to end ({ok} succeeded)", flush=True)


def latency(args, base, job, res):
    """(b) latency on an idle cluster, one job at a time"""
    if not args.latency_jobs:
        return
    starts, ends = [], []
    for _ in range(args.latency_jobs):
        i = post(f"{base}/api/jobs", job)["ids"][0]
        v = get(f"{base}/api/jobs/{i}/wait?timeout_s=30")
        starts.append(v["start_ms"] - v["submit_ms"])
        ends.append(v["end_ms"] - v["submit_ms"])
    res["latency_ms"] = dict(start_p50=statistics.median(starts), start_p99=pct(starts, 0.99),
                             finish_p50=statistics.median(ends), finish_p99=pct(ends, 0.99))
    print(f"(b) {args.latency_jobs} jobs: submit->start median {statistics.median(starts):.1f} ms, "
          f"p99 {pct(starts, 0.99):.1f} ms; submit->finish median {statistics.median(ends):.1f} ms, "
          f"p99 {pct(ends, 0.99):.1f} ms", flush=True)


def refill(args, base, job, res):
    """(c) refill: 80 x sleep 1 on 8 GPUs"""
    if args.no_refill:
        return
    t0 = time.time()
    ids = post(f"{base}/api/jobs/batch", {"jobs": [dict(job, command=["sleep", "1"]) for _ in range(80)]})["ids"]
    wait_idle(base)
    wall = time.time() - t0
    done = jobs_between(base, ids[0], ids[-1])
    first_submit = min(j["submit_ms"] for j in done)
    last_end = max(j["end_ms"] for j in done)
    busy = sum(j["end_ms"] - j["start_ms"] for j in done)
    span = last_end - first_submit
    util = busy / (8 * span)
    res["refill"] = dict(makespan_s=span / 1000, wall_s=wall, utilisation=util)
    print(f"(c) 80 x sleep 1 on 8 GPUs: makespan {span / 1000:.2f} s (ideal 10 s), GPUs busy {100 * util:.1f}%",
          flush=True)


if __name__ == "__main__":
    main()
