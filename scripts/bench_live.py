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
The store is the default SQLite (WAL, synchronous=FULL: fsync on every commit), or the one
`--store URL` names, or (`--postgres`) a throwaway PostgreSQL of the run's own
(scripts/throwaway_pg.py: loopback, fsync on, default synchronous_commit), stopped at the end.

With `--hq PATH` (an `hq` binary of HyperQueue, built elsewhere) the same workload also
runs on one HyperQueue server and worker declaring 8 GPUs (scripts/bench_hq.py), in the
same run, one system after the other (`--hq-first` swaps the order), and a table gives
every figure for both. The spawn floor is measured before the first and after the last.

With --array, (a) submits the N jobs as ONE array of N tasks (issue 14) instead of a batch:
one request, one stored job; its tasks become jobs as they start.

Usage: cargo build --release && python3 scripts/bench_live.py [--jobs 10000] [--cli-jobs 1000]
       [--latency-jobs 200] [--spawn-floor 3000] [--array] [--exe PATH (default: the release build)]
       [--hq PATH [--hq-first]] [--store URL | --postgres]
"""
import argparse, json, os, pwd, shutil, signal, statistics, subprocess, sys, tempfile, time, urllib.error, urllib.request

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


def get(url, tries=20):
    """GET as JSON; a 503 (the server sheds load: its inbox is full, as under valgrind)
    is tried again after its Retry-After, up to `tries` times."""
    for left in range(tries - 1, -1, -1):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=auth()), timeout=60) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            if e.code != 503 or not left:
                raise
            time.sleep(float(e.headers.get("Retry-After") or 1))


def post(url, body, tries=20):
    """POST as JSON; a 503 is tried again as `get` does (a refused call changed nothing)."""
    data = json.dumps(body).encode()
    for left in range(tries - 1, -1, -1):
        req = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json", **auth()})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            if e.code != 503 or not left:
                raise
            time.sleep(float(e.headers.get("Retry-After") or 1))


def wait_idle(base, limit=600):
    """Until no job is active: the newest active job's own long-poll `wait`, then a look
    for any other. Listing active jobs every few milliseconds instead made the server
    work out every pending job's estimated start at each look (the list shows a pending
    job's reason), so the measurement itself cost the server more as the queue grew."""
    t0 = time.time()
    while True:
        page = get(f"{base}/api/jobs?state=active&limit=1")["jobs"]
        if not page:
            return
        if time.time() - t0 > limit:
            sys.exit("jobs did not finish in time")
        get(f"{base}/api/jobs/{page[0]['id']}/wait?timeout_s=30")


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


def interrupted(*_):
    raise KeyboardInterrupt


# Extra arguments of `gpusched agent` (--agent-arg).
AGENT_ARGS = []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--cli-jobs", type=int, default=1000)
    ap.add_argument("--latency-jobs", type=int, default=200)
    ap.add_argument("--spawn-floor", type=int, default=3000, help="spawns of /bin/true in the floor loop")
    ap.add_argument("--no-refill", action="store_true", help="skip (c)")
    ap.add_argument("--exe", help="the gpusched binary to measure (default: the release build)")
    ap.add_argument("--hq", metavar="PATH", help="also run the same workload on HyperQueue (this `hq` binary) "
                    "in the same run, and print both side by side")
    ap.add_argument("--hq-first", action="store_true", help="with --hq: run HyperQueue before gpusched")
    ap.add_argument("--array", action="store_true", help="(a) as one array of --jobs tasks, not a batch")
    ap.add_argument("--agent-arg", action="append", default=[], metavar="ARG",
                    help="an extra argument of `gpusched agent` (repeatable), e.g. --agent-arg=--cgroup=none")
    ap.add_argument("--store", metavar="URL", help="the server's --store (default: SQLite in the run's data dir)")
    ap.add_argument("--postgres", action="store_true",
                    help="run on a throwaway PostgreSQL of this run's own (scripts/throwaway_pg.py)")
    args = ap.parse_args()
    global AGENT_ARGS
    AGENT_ARGS = args.agent_arg
    if args.postgres:
        if args.store:
            sys.exit("--postgres and --store: give one (--postgres starts a PostgreSQL of its own)")
        import throwaway_pg
        with throwaway_pg.cluster() as (url, version):
            args.store = url
            print(f"store: a throwaway {version} on 127.0.0.1 (fsync on, default synchronous_commit)",
                  flush=True)
            return measure(args)
    return measure(args)


def measure(args):
    exe = binary(args.exe)
    if args.hq and not os.access(args.hq, os.X_OK):
        sys.exit(f"--hq {args.hq}: not an executable file; give the path of a built `hq` binary")
    # A SIGTERM ends the run like a Ctrl-C does: through the `finally`s that stop every process.
    signal.signal(signal.SIGTERM, interrupted)
    floor0 = floor1 = None
    if args.spawn_floor:
        floor0 = spawn_floor(args.spawn_floor)
        print(f"(e) floor before: sequential posix_spawn+waitpid of /bin/true: {floor0:.0f}/s", flush=True)
    order = ["gpusched"] + (["hq"] if args.hq else [])
    if args.hq_first:
        order.reverse()
    runs = {}
    for system in order:
        runs[system] = run_gpusched(args, exe) if system == "gpusched" else run_hq(args)
    if args.spawn_floor:
        floor1 = spawn_floor(args.spawn_floor)
        for res in runs.values():
            res["spawn_floor_per_s"] = dict(before=floor0, after=floor1)
            if "batch" in res:
                res["batch"]["vs_floor"] = res["batch"]["jobs_per_s"] / max(floor0, floor1)
            if "array" in res:
                res["array"]["vs_floor"] = res["array"]["tasks_per_s"] / max(floor0, floor1)
        if "batch" in runs["gpusched"]:
            rate = runs["gpusched"]["batch"]["jobs_per_s"]
            print(f"(e) floor after: {floor1:.0f}/s; the batch ran at {rate / max(floor0, floor1):.2f}x the "
                  f"better floor", flush=True)
    if args.hq:
        print(side_by_side(args, runs["gpusched"], runs["hq"], order), flush=True)
        print(json.dumps(runs))
    else:
        print(json.dumps(runs["gpusched"]))


def run_gpusched(args, exe):
    global TOKEN
    res = {}
    tmp = tempfile.mkdtemp(prefix="gpusched-bench-")
    port = 16450
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=base)
    store = ["--store", args.store] if args.store else []
    server = subprocess.Popen([exe, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{tmp}/data", *store],
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
                                  "--gpus", "8", "--gpu-model", "A100-SXM4-80GB", "--gpu-backend", "declared",
                                  *AGENT_ARGS],
                                 env=env, stdout=subprocess.DEVNULL)
        while not [n for n in get(f"{base}/api/nodes")["nodes"] if n["state"] == "online"]:
            time.sleep(0.05)
        job = {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp"}

        if args.array:
            array_run(args, base, job, server, agent, res)
            res["rss_mib"] = dict(server=vm_hwm_mib(server.pid), agent=vm_hwm_mib(agent.pid))
            print(f"(d) peak RSS: server {res['rss_mib']['server']:.1f} MiB, agent "
                  f"{res['rss_mib']['agent']:.1f} MiB", flush=True)
            return res
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
        # The agent first, with SIGTERM: it removes its cgroup directories on the way out
        # (a SIGKILLed one leaves them, empty, for a next life that never comes here).
        if agent:
            agent.terminate()
            try:
                agent.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for p in (agent, server):
            if p:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return res


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


def run_hq(args):
    """The same workload on HyperQueue (scripts/bench_hq.py drives it): the batch is one
    `hq submit --array`, the loop single `hq submit` calls, latency and refill from the
    times HyperQueue's server records."""
    sys.dont_write_bytecode = True  # no __pycache__ in scripts/
    from bench_hq import HyperQueue, parse_time
    res = {}
    tmp = tempfile.mkdtemp(prefix="hq-bench-")
    hq = HyperQueue(args.hq, tmp, tmp)
    res["version"] = hq.version()
    print(f"HyperQueue ({res['version']}):", flush=True)
    try:
        hq.start()
        server, worker = hq.pids()
        if args.jobs:
            cpu0 = (cpu_s(server), cpu_s(worker))
            t0 = time.time()
            job = hq.submit("--array", f"0-{args.jobs - 1}")
            t_sub = time.time() - t0
            hq.wait(job)
            t = time.time() - t0
            ok = hq.succeeded(job)
            if ok != args.jobs:
                sys.exit(f"HyperQueue: only {ok} of {args.jobs} tasks finished")
            srv_us = (cpu_s(server) - cpu0[0]) / args.jobs * 1e6
            wrk_us = (cpu_s(worker) - cpu0[1]) / args.jobs * 1e6
            res["batch"] = dict(jobs=args.jobs, submit_s=t_sub, total_s=t, jobs_per_s=args.jobs / t, succeeded=ok,
                                server_cpu_us_per_job=srv_us, agent_cpu_us_per_job=wrk_us)
            print(f"(a) array of {args.jobs}: submit call {t_sub:.2f} s, all finished after {t:.2f} s -> "
                  f"{args.jobs / t:.0f} jobs/s end to end ({ok} finished); CPU per job: server {srv_us:.0f} us, "
                  f"worker {wrk_us:.0f} us", flush=True)
        if args.cli_jobs:
            t0 = time.time()
            jobs = []
            for _ in range(args.cli_jobs):
                out = subprocess.run([hq.hq, "--output-mode", "json", "submit", "--resource", "gpus/nvidia=1",
                                      "--stdout", "none", "--stderr", "none", "--cwd", hq.cwd, "--", "/bin/true"],
                                     env=hq.env, capture_output=True, text=True, check=True, cwd=hq.cwd).stdout
                jobs.append(json.loads(out)["id"])
            t_sub = time.time() - t0
            hq.run("job", "wait", f"{jobs[0]}-{jobs[-1]}")
            t = time.time() - t0
            ok = sum(1 for j in hq.json("job", "list", "--all") if j["task_stats"]["finished"] == 1
                     and jobs[0] <= j["id"] <= jobs[-1])
            if ok != args.cli_jobs:
                sys.exit(f"HyperQueue: only {ok} of {args.cli_jobs} CLI-submitted jobs finished")
            res["cli_loop"] = dict(jobs=args.cli_jobs, submit_s=t_sub, total_s=t, jobs_per_s=args.cli_jobs / t,
                                   succeeded=ok)
            print(f"(a) loop of {args.cli_jobs} CLI submits: {args.cli_jobs / t_sub:.0f} submits/s, all finished "
                  f"after {t:.2f} s -> {args.cli_jobs / t:.0f} jobs/s end to end ({ok} finished)", flush=True)
        if args.latency_jobs:
            starts, ends = [], []
            for _ in range(args.latency_jobs):
                job = hq.submit()
                hq.wait(job)
                info = hq.info(job)
                sub = parse_time(info["started_at"])  # the job's submission time
                task = info["tasks"][0]
                starts.append((parse_time(task["started_at"]) - sub) * 1000)
                ends.append((parse_time(task["finished_at"]) - sub) * 1000)
            res["latency_ms"] = dict(start_p50=statistics.median(starts), start_p99=pct(starts, 0.99),
                                     finish_p50=statistics.median(ends), finish_p99=pct(ends, 0.99))
            print(f"(b) {args.latency_jobs} jobs: submit->start median {statistics.median(starts):.1f} ms, "
                  f"p99 {pct(starts, 0.99):.1f} ms; submit->finish median {statistics.median(ends):.1f} ms, "
                  f"p99 {pct(ends, 0.99):.1f} ms", flush=True)
        if not args.no_refill:
            t0 = time.time()
            job = hq.submit("--array", "0-79", cmd=("sleep", "1"))
            hq.wait(job)
            wall = time.time() - t0
            info = hq.info(job)
            tasks = info["tasks"]
            span = max(parse_time(x["finished_at"]) for x in tasks) - parse_time(info["started_at"])
            busy = sum(parse_time(x["finished_at"]) - parse_time(x["started_at"]) for x in tasks)
            res["refill"] = dict(makespan_s=span, wall_s=wall, utilisation=busy / (8 * span))
            print(f"(c) 80 x sleep 1 on 8 GPUs: makespan {span:.2f} s (ideal 10 s), GPUs busy "
                  f"{100 * busy / (8 * span):.1f}%", flush=True)
        res["rss_mib"] = dict(server=vm_hwm_mib(server), agent=vm_hwm_mib(worker))
        print(f"(d) peak RSS: server {res['rss_mib']['server']:.1f} MiB, worker {res['rss_mib']['agent']:.1f} MiB",
              flush=True)
    finally:
        hq.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return res


def side_by_side(args, g, h, order):
    """A Markdown table, gpusched and HyperQueue in one column each."""
    rows = []
    if "array" in g and "batch" not in g:
        # --array: gpusched's one submission was an array, as HyperQueue's always is.
        a = g["array"]
        g = dict(g, batch=dict(jobs_per_s=a["tasks_per_s"], submit_s=a["submit_s"], vs_floor=a.get("vs_floor"),
                               server_cpu_us_per_job=a["server_cpu_us_per_task"],
                               agent_cpu_us_per_job=a["agent_cpu_us_per_task"]))

    def row(name, key, fmt):
        cells = []
        for res in (g, h):
            try:
                cells.append(fmt(res[key]))
            except (KeyError, TypeError, ZeroDivisionError):
                cells.append("-")
        rows.append(f"| {name} | {cells[0]} | {cells[1]} |")

    n, m, k = args.jobs, args.cli_jobs, args.latency_jobs
    row(f"{n:,} x `/bin/true`, 1 GPU each, one submission: jobs/s end to end", "batch",
        lambda b: f"{b['jobs_per_s']:.0f}")
    row("... the submission call itself", "batch", lambda b: f"{b['submit_s']:.2f} s")
    row("... as a multiple of the better spawn floor", "batch", lambda b: f"{b['vs_floor']:.2f}x")
    row("... server CPU per job (utime+stime)", "batch", lambda b: f"{b['server_cpu_us_per_job']:.0f} us")
    row("... agent / worker CPU per job", "batch", lambda b: f"{b['agent_cpu_us_per_job']:.0f} us")
    row(f"{m:,} single CLI submits in a loop: submits/s", "cli_loop", lambda c: f"{c['jobs'] / c['submit_s']:.0f}")
    row("... all finished: jobs/s end to end", "cli_loop", lambda c: f"{c['jobs_per_s']:.0f}")
    row(f"submit -> start over {k} single jobs, idle cluster: median / p99", "latency_ms",
        lambda l: f"{l['start_p50']:.1f} / {l['start_p99']:.1f} ms")
    row("submit -> finish: median / p99", "latency_ms", lambda l: f"{l['finish_p50']:.1f} / {l['finish_p99']:.1f} ms")
    row("refill, 80 x `sleep 1` on 8 GPUs: makespan (ideal 10 s), GPUs busy", "refill",
        lambda f: f"{f['makespan_s']:.2f} s, {100 * f['utilisation']:.1f}%")
    row("peak RSS (VmHWM): server", "rss_mib", lambda x: f"{x['server']:.1f} MiB")
    row("peak RSS (VmHWM): agent / worker", "rss_mib", lambda x: f"{x['agent']:.1f} MiB")
    fl = g.get("spawn_floor_per_s")
    head = [f"| run order: {' then '.join(order)} | gpusched | HyperQueue ({h.get('version', '?')}) |", "|---|---|---|"]
    tail = [f"spawn floor (sequential posix_spawn + waitpid of /bin/true): {fl['before']:.0f}/s before, "
            f"{fl['after']:.0f}/s after"] if fl else []
    return "\n".join(head + rows + [""] + tail)


if __name__ == "__main__":
    main()
