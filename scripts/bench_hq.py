"""HyperQueue driven with bench_live.py's workload (issue 14, item 7).

Imported by bench_live.py when `--hq PATH` is given; HyperQueue itself is not built or
shipped by this repository. One `hq server` and one `hq worker` (or `workers` of them) declaring 8 GPUs each
(`gpus/nvidia=range(0-7)`, resource detection off so the host's GPUs and cores do not
count) and 8 CPUs (every task asks HyperQueue's default of one CPU, so with 8 CPUs the
GPUs are what limits: 8 tasks at a time, as on gpusched's agent). The server and worker
directories live in the caller's temporary directory; `stop` ends both processes.

HyperQueue's defaults are kept except task output: `--stdout none --stderr none`, since
gpusched creates a job's log file only on its first byte and `/bin/true` prints nothing
(HyperQueue's default would create two files per task). The server runs without a
journal (HyperQueue's default: nothing is written to disk), while gpusched's SQLite store
fsyncs every commit; the tables say so.

Times: a task's `started_at` is set by the HyperQueue server when the worker reports the
task running, its `finished_at` when it reports the end; the job's submission time by the
server at submit. gpusched's start and end are the agent's. Both are the systems' own
clocks on one machine.
"""
import datetime, json, os, signal, subprocess, time


def parse_time(s):
    """HyperQueue's RFC 3339 times (nanoseconds, `Z`) as seconds since the epoch."""
    s = s.rstrip("Z").replace("+00:00", "")
    whole, _, frac = s.partition(".")
    t = datetime.datetime.fromisoformat(whole).replace(tzinfo=datetime.timezone.utc).timestamp()
    return t + (float("0." + frac) if frac else 0.0)


class HyperQueue:
    def __init__(self, hq, tmp, log_dir, workers=1, journal=False):
        self.workers = workers
        self.journal = os.path.join(tmp, "hq-journal") if journal else None
        self.hq = os.path.abspath(hq)
        self.dir = os.path.join(tmp, "hq-server")
        self.work = os.path.join(tmp, "hq-worker")
        self.cwd = os.path.join(tmp, "hq-cwd")
        for d in (self.dir, self.work, self.cwd):
            os.makedirs(d, exist_ok=True)
        self.env = dict(os.environ, HQ_SERVER_DIR=self.dir, RUST_LOG="warn")
        self.log_dir = log_dir
        self.server = self.worker = None

    def run(self, *args, check=True):
        r = subprocess.run([self.hq, "--output-mode", "json", *args], env=self.env, capture_output=True,
                           text=True, cwd=self.cwd)
        if check and r.returncode != 0:
            raise RuntimeError(f"`hq {' '.join(args)}` failed ({r.returncode}): {r.stderr.strip()[:500]}")
        return r

    def json(self, *args):
        out = self.run(*args).stdout
        return json.loads(out) if out.strip() else None

    def version(self):
        return subprocess.run([self.hq, "--version"], capture_output=True, text=True).stdout.strip()

    def start(self):
        log = open(os.path.join(self.log_dir, "hq-server.log"), "a")
        # Own session: a Ctrl-C in the terminal reaches only this script, whose `finally`
        # then stops the server and worker in order.
        self.server = subprocess.Popen([self.hq, "server", "start", "--host", "127.0.0.1",
                                        *(["--journal", self.journal] if self.journal else [])], env=self.env,
                                       stdout=log, stderr=log, cwd=self.cwd, start_new_session=True)
        t0 = time.time()
        while self.run("server", "info", check=False).returncode != 0:
            if self.server.poll() is not None or time.time() - t0 > 60:
                raise RuntimeError(f"hq server did not start; see {log.name}")
            time.sleep(0.1)
        # Each worker declares 8 GPUs and 8 CPUs under its own name and directory.
        self.worker_procs = []
        for i in range(self.workers):
            name = "bench" if self.workers == 1 else f"bench-{i}"
            log = open(os.path.join(self.log_dir, f"hq-worker-{i}.log"), "a")
            work = self.work if self.workers == 1 else os.path.join(self.work, str(i))
            self.worker_procs.append(subprocess.Popen(
                [self.hq, "worker", "start", "--detect-resources", "none", "--cpus", "8",
                 "--resource", "gpus/nvidia=range(0-7)", "--manager", "none", "--work-dir", work,
                 "--hostname", name],
                env=self.env, stdout=log, stderr=log, cwd=self.cwd, start_new_session=True))
        self.worker = self.worker_procs[0]
        t0 = time.time()
        while len([w for w in (self.json("worker", "list") or [])
                   if w.get("state", "RUNNING") == "RUNNING"]) < self.workers:
            if any(w.poll() is not None for w in self.worker_procs) or time.time() - t0 > 120:
                raise RuntimeError(f"not every hq worker connected; see {self.log_dir}/hq-worker-*.log")
            time.sleep(0.1)

    def pids(self):
        return self.server.pid, self.worker.pid

    def worker_pids(self):
        return [w.pid for w in self.worker_procs]

    def submit(self, *args, cmd=("/bin/true",)):
        return self.json("submit", "--resource", "gpus/nvidia=1", "--stdout", "none", "--stderr", "none",
                         "--cwd", self.cwd, *args, "--", *cmd)["id"]

    def wait(self, job):
        self.run("job", "wait", str(job))

    def info(self, job):
        return self.json("job", "info", str(job))[0]

    def succeeded(self, job):
        return self.info(job)["info"]["task_stats"]["finished"]

    def stop(self):
        if self.server and self.server.poll() is None:
            self.run("server", "stop", check=False)  # stops the worker too
        for p in [*getattr(self, "worker_procs", []), self.server]:
            if p is None:
                continue
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
