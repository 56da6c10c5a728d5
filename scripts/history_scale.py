#!/usr/bin/env python3
"""History at scale (issue 14 item 3, docs/benchmarks-log.md (q)): the server with 1,000,000
ended jobs in its store and 10,000 pending.

1. A real server and one agent declaring 8 GPUs (`--gpu-backend declared`, as
   scripts/bench_live.py) run a batch of --jobs trivial jobs (/bin/true): the server's
   CPU per job (utime+stime from /proc/PID/stat over the batch) with that many jobs of
   history.
2. Both stop; the store is grown to --history ended jobs with SQL: `INSERT INTO jobs
   SELECT` of the real rows with new ids (and NULL client tokens, which are UNIQUE), so
   the rows are real ones, copied. Their timelines (job_events) are not copied.
3. The server starts on it: time until /api/health answers, then --pending jobs are
   submitted with no agent running (they wait), and the server's VmRSS and VmHWM
   (/proc/PID/status) are read at once and again after --settle seconds (the server
   gives free heap pages back every 30 s: the first reading holds the batch call's
   transient buffers, the second what the pending jobs keep).
4. Latency (median and max of --repeat runs, each a fresh CLI process, wall time) of
   `gpusched queue` (the active jobs), `gpusched queue --all` (the first page, ended jobs
   included), `gpusched show` of the oldest job, and `gpusched usage` (all time); the
   server's memory is read right after them and again --settle seconds later.
5. The pending jobs are cancelled, the agent starts again, and another batch of --jobs
   runs: the server's CPU per job with --history jobs of history.

Usage: cargo build --release -p gpusched && nice -n 19 python3 scripts/history_scale.py
       [--jobs 10000] [--history 1000000] [--pending 10000] [--settle 35] [--repeat 5] [--exe PATH]
"""
import argparse, json, os, pwd, shutil, sqlite3, statistics, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_live as B  # noqa: E402  (the HTTP helpers, /proc readers and the binary lookup)
from bench_live import binary, cpu_s, get, post  # noqa: E402


def mem_mib(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k = line.split(":")[0]
            if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
                out[k] = int(line.split()[1]) / 1024
    return out


def wait_health(base, limit=600):
    t0 = time.time()
    while True:
        try:
            get(f"{base}/api/health")
            return time.time() - t0
        except Exception:
            if time.time() - t0 > limit:
                sys.exit("the server did not answer in time")
            time.sleep(0.01)


class Cluster:
    def __init__(self, exe, tmp, port):
        self.exe, self.tmp, self.port = exe, tmp, port
        self.base = f"http://127.0.0.1:{port}"
        self.env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=self.base)
        self.server = self.agent = None

    def start_server(self):
        t0 = time.time()
        self.server = subprocess.Popen([self.exe, "server", "--listen", f"127.0.0.1:{self.port}",
                                        "--data-dir", f"{self.tmp}/data"], env=self.env,
                                       stdout=subprocess.DEVNULL)
        wait_health(self.base)
        up = time.time() - t0
        if B.TOKEN is None:
            user = pwd.getpwuid(os.getuid()).pw_name
            sock = dict(self.env, GPUSCHED_SERVER=f"unix:{self.tmp}/data/gpusched.sock")
            B.TOKEN = subprocess.run([self.exe, "token", "create", user, "--admin"], check=True,
                                     capture_output=True, text=True, env=sock).stdout.strip()
        self.env["GPUSCHED_TOKEN"] = B.TOKEN
        return up

    def start_agent(self):
        self.agent = subprocess.Popen(
            [self.exe, "agent", "--server", self.base, "--name", "bench", "--state-dir", f"{self.tmp}/agent",
             "--join-token-file", f"{self.tmp}/data/join-token", "--allow-root-jobs", "--gpus", "8",
             "--gpu-model", "A100-SXM4-80GB", "--gpu-backend", "declared"], env=self.env,
            stdout=subprocess.DEVNULL)
        while not [n for n in get(f"{self.base}/api/nodes")["nodes"] if n["state"] == "online"]:
            time.sleep(0.05)

    def stop(self):
        for p in (self.agent, self.server):
            if p:
                p.terminate()
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.agent = self.server = None

    def batch(self, n):
        """n trivial jobs in one call, run to the end: the server's CPU us per job."""
        job = {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp"}
        c0 = cpu_s(self.server.pid)
        t0 = time.time()
        post(f"{self.base}/api/jobs/batch", {"jobs": [dict(job) for _ in range(n)]})
        B.wait_idle(self.base, limit=1800)
        wall = time.time() - t0
        return dict(jobs=n, wall_s=wall, server_cpu_us_per_job=(cpu_s(self.server.pid) - c0) / n * 1e6)

    def cli_ms(self, args, repeat):
        times = []
        for _ in range(repeat):
            t0 = time.time()
            subprocess.run([self.exe, *args], env=self.env, check=True, stdout=subprocess.DEVNULL)
            times.append((time.time() - t0) * 1000)
        return dict(median_ms=statistics.median(times), max_ms=max(times))


def grow(db, target):
    """Copies the store's ended rows with new ids until it holds `target` ended jobs."""
    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute("PRAGMA table_info(jobs)")]
    ended = "state IN ('succeeded', 'failed', 'cancelled', 'timed_out')"
    t0 = time.time()
    while True:
        have = con.execute(f"SELECT COUNT(*) FROM jobs WHERE {ended}").fetchone()[0]
        if have >= target:
            break
        top = con.execute("SELECT MAX(id) FROM jobs").fetchone()[0]
        sel = ", ".join(f"id + {top}" if c == "id" else ("NULL" if c == "client_token" else c) for c in cols)
        con.execute(f"INSERT INTO jobs ({', '.join(cols)}) SELECT {sel} FROM jobs "
                    f"WHERE {ended} ORDER BY id LIMIT {target - have}")
        con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return have, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--history", type=int, default=1_000_000)
    ap.add_argument("--pending", type=int, default=10000)
    ap.add_argument("--settle", type=float, default=35, help="seconds before the second memory reading")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--exe")
    args = ap.parse_args()
    exe = binary(args.exe)
    tmp = tempfile.mkdtemp(prefix="gpusched-history-")
    c = Cluster(exe, tmp, 16460)
    res = {}
    try:
        c.start_server()
        c.start_agent()
        res["small"] = c.batch(args.jobs)
        print(f"batch of {args.jobs} with {args.jobs} jobs of history: "
              f"{res['small']['server_cpu_us_per_job']:.0f} us server CPU per job "
              f"({res['small']['wall_s']:.1f} s)", flush=True)
        c.stop()
        have, took = grow(f"{tmp}/data/gpusched.db", args.history)
        size = os.path.getsize(f"{tmp}/data/gpusched.db") / 2**20
        res["store"] = dict(ended_jobs=have, grow_s=took, db_mib=size)
        print(f"store grown to {have} ended jobs in {took:.0f} s ({size:.0f} MiB)", flush=True)

        res["startup_s"] = c.start_server()
        res["startup_mem_mib"] = mem_mib(c.server.pid)
        print(f"startup with {have} ended jobs: {res['startup_s']:.2f} s to /api/health; "
              f"{res['startup_mem_mib']}", flush=True)
        job = {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp"}
        t0 = time.time()
        pending = post(f"{c.base}/api/jobs/batch", {"jobs": [dict(job) for _ in range(args.pending)]})["ids"]
        res["submit_pending_s"] = time.time() - t0
        res["pending_mem_mib"] = mem_mib(c.server.pid)
        time.sleep(args.settle)
        res["settled_mem_mib"] = mem_mib(c.server.pid)
        print(f"with {have} ended and {args.pending} pending: {res['pending_mem_mib']} at once, "
              f"{res['settled_mem_mib']} after {args.settle:.0f} s", flush=True)
        oldest = get(f"{c.base}/api/jobs?state=all&before=2&limit=1")["jobs"][0]["id"]
        res["latency"] = {
            "queue": c.cli_ms(["queue"], args.repeat),
            "queue --all": c.cli_ms(["queue", "--all"], args.repeat),
            "show oldest": c.cli_ms(["show", str(oldest)], args.repeat),
            "usage": c.cli_ms(["usage"], args.repeat),
        }
        res["mem_mib"] = mem_mib(c.server.pid)
        for k, v in res["latency"].items():
            print(f"  {k}: median {v['median_ms']:.0f} ms, max {v['max_ms']:.0f} ms", flush=True)
        print(f"with {have} ended and {args.pending} pending, after the CLI calls: {res['mem_mib']}",
              flush=True)
        time.sleep(args.settle)
        res["reads_settled_mem_mib"] = mem_mib(c.server.pid)
        print(f"... and {args.settle:.0f} s later: {res['reads_settled_mem_mib']}", flush=True)
        for i in range(0, len(pending), 10000):
            post(f"{c.base}/api/jobs/cancel", {"ids": pending[i:i + 10000]})
        c.start_agent()
        res["large"] = c.batch(args.jobs)
        res["large_mem_mib"] = mem_mib(c.server.pid)
        print(f"batch of {args.jobs} with {have + args.pending} jobs of history: "
              f"{res['large']['server_cpu_us_per_job']:.0f} us server CPU per job "
              f"({res['large']['wall_s']:.1f} s); {res['large_mem_mib']}", flush=True)
    finally:
        c.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
