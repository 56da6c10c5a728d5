#!/usr/bin/env python3
"""gpusched's inference services end to end, through `gpusched gateway`, with real clients.

Starts `gpusched up` (node n1) and a second `gpusched agent` (node n2), 2 fake GPUs each,
and a gateway with a token of role `gateway`; then runs the scenarios below in order,
each on its own services, and goes on after a failure so one run reports them all:

  oip_batching   a service of tests/serving/model_server.py (2 replicas, dynamic batching)
                 called with tritonclient (binary and JSON tensors) through the gateway:
                 every answer right, and the replicas saw batches of more than one
  openai         a service of tests/serving/openai_standin.py (`protocol = "openai"`, made
                 with `gpusched service create FILE.toml`): the openai client through the
                 gateway, plain and streamed
  readiness      one replica's readiness fails: it leaves the endpoints (no request
                 reaches it, none fails), then comes back
  liveness       one replica's liveness fails: the agent stops it, the service starts another
  kill           a replica killed (SIGKILL) under load: no request fails (the gateway
                 retries), the service restarts it with backoff (`failures`, status)
  rollout        `PUT /api/services/NAME` with a new replica template under load: every
                 replica replaced by the new version, no request fails
  drain          `gpusched drain NODE` under load: its replicas move one at a time (never
                 more than max_surge starting), no request fails
  autoscale      a training job that checkpoints runs beside an autoscaled service; a
                 step of load scales the service up until a new replica preempts the
                 training job; load stops, the service scales down, and the training job
                 resumes from its checkpoint
  zero           a service with min 0 scales to zero when idle; a request then is held
                 while a replica starts, and answered (the cold start is printed)

Usage: e2e.py PATH/TO/gpusched [--only a,b] [--keep]  (in tests/serving/requirements.txt's
venv; scripts/serving_test.sh runs it). Exit status 1 when any scenario failed.
Environment: SERVING_TIME_SCALE multiplies every wait (default 1; the waits are already
generous for 2 busy cores).
"""

import argparse
import concurrent.futures as cf
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from clients import (Failure, Fatal, UnixAPI, check, free_port, http_get, openai_checks,  # noqa: E402
                     triton_infer, wait_until)

SCALE = float(os.environ.get("SERVING_TIME_SCALE", "1"))
PY = sys.executable


def T(s):
    return s * SCALE


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------- the cluster

class Cluster:
    def __init__(self, binary, scratch):
        self.bin = binary
        self.dir = scratch
        self.data = os.path.join(scratch, "data")
        self.sock = os.path.join(self.data, "gpusched.sock")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.gw_port = free_port()
        self.gw = f"http://127.0.0.1:{self.gw_port}"
        self.procs = {}
        self.api = UnixAPI(self.sock)

    def spawn(self, name, cmd, env=None):
        out = open(os.path.join(self.dir, f"{name}.log"), "ab")
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                             env={**os.environ, **(env or {})})
        self.procs[name] = p
        return p

    def cli(self, *args, timeout=60, check_rc=True):
        # GPUSCHED_SERVER, not --server: some subcommands take it before theirs
        # (`token --server S create`), and after `submit --` it would be the job's.
        r = subprocess.run([self.bin, *args], capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "GPUSCHED_SERVER": "unix:" + self.sock})
        if check_rc and r.returncode != 0:
            raise Failure(f"`gpusched {' '.join(args)}` exited {r.returncode}:\n{r.stdout}{r.stderr}")
        return r

    def alive(self, name):
        p = self.procs.get(name)
        if p is None or p.poll() is not None:
            raise Fatal(f"{name} exited ({None if p is None else p.returncode}); its log: "
                          f"{os.path.join(self.dir, name + '.log')}\n{self.tail(name)}")

    def tail(self, name, n=3000):
        try:
            return open(os.path.join(self.dir, f"{name}.log"), errors="replace").read()[-n:]
        except OSError:
            return ""

    def start(self):
        common = ["--gpu-backend", "fake", "--gpus", "2", "--allow-root-jobs"]
        # --min-runtime 1s: the training job may be preempted soon after it starts.
        self.spawn("up", [self.bin, "up", "--data-dir", self.data, "--listen", f"127.0.0.1:{self.port}",
                          "--name", "n1", "--grace", "3s", "--min-runtime", "1s", "--preempt-grace", "10s",
                          *common])
        wait_until("`gpusched up` to answer on its socket",
                   lambda: (self.alive("up"), self.cli("nodes", check_rc=False).returncode == 0)[1], T(120))
        self.spawn("agent-n2", [self.bin, "agent", "--server", self.url, "--name", "n2", "--state-dir",
                                os.path.join(self.dir, "n2"), "--join-token-file",
                                os.path.join(self.data, "join-token"), *common])
        wait_until("both nodes to join", lambda: (self.alive("agent-n2"),
                                                  self.node_names() >= {"n1", "n2"})[1], T(120))
        # The gateway's own token (role gateway), as an operator would run it.
        auth = os.environ.get("SERVING_GATEWAY_AUTH", "token")
        env = {}
        server = self.url
        if auth == "token":
            r = self.cli("token", "create", "--role", "gateway", "gw-e2e")
            token = r.stdout.strip().split()[-1] if r.stdout.strip() else ""
            check(token, f"`gpusched token create --role gateway` printed no token: {r.stdout!r} {r.stderr!r}")
            tf = os.path.join(self.dir, "gateway-token")
            with open(tf, "w") as f:
                f.write(token + "\n")
            os.chmod(tf, 0o600)
            args = ["--token-file", tf]
        else:
            server = "unix:" + self.sock
            args = []
        self.spawn("gateway", [self.bin, "gateway", "--server", server, "--listen",
                               f"127.0.0.1:{self.gw_port}", *args], env=env)
        wait_until("the gateway's /metrics", lambda: (self.alive("gateway"),
                                                     http_get(self.gw + "/metrics")[0] == 200)[1], T(60))

    def node_names(self):
        nodes = self.api.get("/api/nodes")
        nodes = nodes.get("nodes", nodes) if isinstance(nodes, dict) else nodes
        return {n.get("name") for n in nodes}

    def stop(self):
        # The gateway first, then the agent, then `up` (which stops its jobs).
        for name in ("gateway", "agent-n2", "up"):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            try:
                p.wait(T(30))
            except subprocess.TimeoutExpired:
                log(f"{name} did not stop within {T(30):.0f}s of SIGTERM: killing it")
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    # -- services
    def svc(self, name):
        return self.api.get(f"/api/services/{name}")

    def create(self, spec):
        self.api.call("POST", "/api/services", spec)

    def delete(self, name, wait=True):
        st, _ = self.api.call("DELETE", f"/api/services/{name}", ok=None)
        if st == 404 or not wait:
            return
        check(st < 300, f"DELETE /api/services/{name} answered {st}")

        def gone():
            s, _ = self.api.call("GET", f"/api/services/{name}", ok=None)
            return s == 404

        wait_until(f"service {name} to be deleted", gone, T(90))
        # Its replicas' jobs end.
        wait_until(f"service {name}'s replicas to end", lambda: not self.running_jobs(name), T(60))

    def running_jobs(self, service):
        r = self.api.get("/api/jobs?state=active")
        jobs = r.get("jobs", r) if isinstance(r, dict) else r
        return [j for j in jobs if (j.get("service") or {}).get("service") == service]

    def ready(self, name, n, version=None, timeout=120, exact=True):
        """Waits until `n` replicas are ready (all of `version`, none other, when given)."""
        def ok():
            v = self.svc(name)
            reps = v["replicas_list"]
            ready = [r for r in reps if r["phase"] == "ready"]
            if version is not None:
                if v["version"] != version or any(r["version"] != version for r in reps):
                    return False
            if exact and len(reps) != n:
                return False
            return v if len(ready) >= n else False
        try:
            return wait_until(f"{n} ready replicas of {name}" + (f" at version {version}" if version else ""), ok,
                              T(timeout))
        except Failure as e:
            raise Failure(f"{e}\nlast view: {json.dumps(self.svc(name), indent=1)[:3000]}")

    def ready_replicas(self, name):
        return [r for r in self.svc(name)["replicas_list"] if r["phase"] == "ready"]


# ---------------------------------------------------------------- load

def oip_body(x):
    return json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": list(x.shape),
                                   "data": x.flatten().tolist()}]}).encode()


class Load:
    """Steady load through the gateway: `workers` threads, each at `rate/workers` requests
    a second (0: back to back), each answer checked."""

    def __init__(self, base, model, rate=30.0, workers=4, timeout=60.0):
        self.host = base.split("://", 1)[1]
        self.path = f"/v2/models/{model}/infer"
        self.rate, self.workers, self.timeout = rate, workers, timeout
        self.stop_ev = threading.Event()
        self.lock = threading.Lock()
        self.ok = 0
        self.failed = []
        self.replicas = {}
        self.threads = []
        self.latencies = []

    def _worker(self, i):
        x = np.full((1, 4), float(i), dtype=np.float32)
        body = oip_body(x)
        want = float((x * 2 + 1).sum())
        conn = None
        period = self.workers / self.rate if self.rate else 0
        nxt = time.time()
        while not self.stop_ev.is_set():
            if period:
                nxt += period
                d = nxt - time.time()
                if d > 0:
                    time.sleep(d)
            t = time.time()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(self.host, timeout=self.timeout)
                conn.request("POST", self.path, body=body, headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                raw = r.read()
                if r.status != 200:
                    raise Failure(f"status {r.status}: {raw[:300]!r}")
                js = json.loads(raw)
                o0 = [o for o in js["outputs"] if o["name"] == "OUTPUT0"][0]
                if abs(sum(o0["data"]) - want) > 1e-3:
                    raise Failure(f"wrong answer {o0['data']}")
                rep = (js.get("parameters") or {}).get("replica")
                with self.lock:
                    self.ok += 1
                    self.latencies.append(time.time() - t)
                    self.replicas[rep] = self.replicas.get(rep, 0) + 1
            except Exception as e:  # noqa: BLE001 - every failure is reported
                with self.lock:
                    self.failed.append(f"{time.strftime('%H:%M:%S')} {type(e).__name__}: {e}")
                if conn is not None:
                    conn.close()
                conn = None
                time.sleep(0.05)
        if conn is not None:
            conn.close()

    def __enter__(self):
        for i in range(self.workers):
            t = threading.Thread(target=self._worker, args=(i,), daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def __exit__(self, *exc):
        self.stop_ev.set()
        for t in self.threads:
            t.join(self.timeout + 5)

    def summary(self):
        lat = sorted(self.latencies)
        p99 = lat[int(0.99 * (len(lat) - 1))] * 1000 if lat else float("nan")
        return f"{self.ok} answered, {len(self.failed)} failed, p99 {p99:.0f} ms, by replica {self.replicas}"

    def check_no_failure(self, what):
        check(self.ok > 0, f"{what}: no request was answered")
        check(not self.failed, f"{what}: {len(self.failed)} of {self.ok + len(self.failed)} requests failed; "
                               f"first: {self.failed[:5]}")


# ---------------------------------------------------------------- services

def toy_spec(c, name, replicas=2, batching=True, version_env=None, extra_args=(), autoscale=None, gpus=1):
    cmd = [PY, os.path.join(HERE, "model_server.py"), "--model", "toy" if name == "toy" else name,
           "--batch-ms", "20", "--item-ms", "1",
           "--unready-file", os.path.join(c.dir, "unready-{job}"), "--dead-file", os.path.join(c.dir, "dead-{job}"),
           *extra_args]
    model = {"name": "toy" if name == "toy" else name}
    if batching:
        model["batching"] = {"max_batch_size": 8, "preferred_batch_sizes": [4, 8], "max_queue_delay_us": 5000}
    spec = {
        "name": name,
        "replica": {"command": cmd, "gpus": gpus, "cwd": c.dir, "env": {"VERSION": version_env or "1"}},
        "replicas": replicas,
        "protocol": "oip",
        "models": [model],
        "readiness": {"path": "/v2/health/ready", "period_s": 1, "timeout_s": 1, "failure_threshold": 1},
        # As in Kubernetes, liveness counts from the start: a replica that takes seconds
        # to listen (--start-delay, python's imports on a busy machine) needs a delay.
        "liveness": {"path": "/healthz", "period_s": 1, "timeout_s": 2, "failure_threshold": 3,
                     "initial_delay_s": 8},
        "rollout": {"max_surge": 1, "max_unavailable": 0, "drain_s": 2},
    }
    if autoscale:
        spec["autoscale"] = autoscale
    return spec


def replica_stats(url):
    st, raw = http_get(url + "/stats")
    check(st == 200, f"{url}/stats answered {st}")
    return json.loads(raw)


def gateway_routes(c, model, timeout=60):
    """Waits until the gateway answers an inference for `model` (its sync saw a replica)."""
    x = np.ones((1, 4), np.float32)
    wait_until(f"the gateway to route {model}",
               lambda: triton_infer(c.gw, model, x, timeout=10) is not None, T(timeout))


# ---------------------------------------------------------------- scenarios

def s_oip_batching(c):
    c.create(toy_spec(c, "toy"))
    v = c.ready("toy", 2)
    log(f"toy ready: {[(r['job'], r['node'], r['url']) for r in v['replicas_list']]}")
    gateway_routes(c, "toy")
    import tritonclient.http as httpclient

    host = c.gw.split("://", 1)[1]
    client = httpclient.InferenceServerClient(host, concurrency=1, network_timeout=60)
    check(client.is_server_live(), "gateway: /v2/health/live is not live")
    check(client.is_model_ready("toy"), "gateway: model toy is not ready")
    md = client.get_model_metadata("toy")
    check(md.get("name") == "toy", f"gateway: metadata of toy: {md}")
    client.close()
    before = {r["url"]: replica_stats(r["url"]) for r in c.ready_replicas("toy")}
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal((int(rng.integers(1, 4)), 4)).astype(np.float32) for _ in range(96)]

    def one(i):
        return triton_infer(c.gw, "toy", xs[i], binary_in=i % 2 == 0, binary_out=i % 3 != 0)

    with cf.ThreadPoolExecutor(24) as ex:
        list(ex.map(one, range(len(xs))))  # each answer checked in triton_infer
    after = {r["url"]: replica_stats(r["url"]) for r in c.ready_replicas("toy")}
    items = sum(a["items"] - before.get(u, {"items": 0})["items"] for u, a in after.items())
    batches = sum(a["batches"] - before.get(u, {"batches": 0})["batches"] for u, a in after.items())
    want = sum(x.shape[0] for x in xs)
    check(items == want, f"the replicas served {items} rows for {want} sent")
    check(batches < len(xs), f"{len(xs)} concurrent requests went as {batches} calls: no batching")
    mx = max(a["max_batch"] for a in after.values())
    check(mx <= 8, f"a batch of {mx} rows: above max_batch_size 8")
    log(f"96 concurrent requests ({want} rows) reached the replicas as {batches} batches "
        f"(largest {mx}); per replica: {[(a['replica'], a['sizes']) for a in after.values()]}")
    st, metrics = http_get(c.gw + "/metrics")
    check(st == 200 and metrics, "gateway /metrics")


def s_openai(c):
    toml = f"""
name = "llm"
protocol = "openai"
replicas = 1

[replica]
command = {json.dumps([PY, os.path.join(HERE, "openai_standin.py"), "--model", "tiny-llm", "--token-ms", "5"])}
gpus = 0
cwd = {json.dumps(c.dir)}

[readiness]
path = "/health"
period = "1s"

[[model]]
name = "tiny-llm"
"""
    path = os.path.join(c.dir, "llm.toml")
    with open(path, "w") as f:
        f.write(toml)
    c.cli("service", "create", path)
    c.ready("llm", 1)
    wait_until("the gateway to route tiny-llm",
               lambda: http_get(c.gw + "/v1/models")[0] == 200 and b"tiny-llm" in http_get(c.gw + "/v1/models")[1],
               T(60))
    openai_checks(c.gw, "tiny-llm")
    c.delete("llm")


def s_readiness(c):
    reps = c.ready_replicas("toy")
    check(len(reps) == 2, f"toy has {len(reps)} ready replicas, not 2")
    a = reps[0]
    flag = os.path.join(c.dir, f"unready-{a['job']}")
    open(flag, "w").close()
    try:
        wait_until(f"replica {a['job']} to leave the ready set",
                   lambda: all(r["job"] != a["job"] for r in c.ready_replicas("toy")), T(30))
        time.sleep(2)  # a gateway sync or two
        n0 = replica_stats(a["url"])["requests"]
        for i in range(30):
            triton_infer(c.gw, "toy", np.full((1, 4), i, np.float32))
        n1 = replica_stats(a["url"])["requests"]
        check(n1 == n0, f"replica {a['job']} (not ready) still got {n1 - n0} of 30 requests")
    finally:
        os.unlink(flag)
    wait_until(f"replica {a['job']} to be ready again",
               lambda: any(r["job"] == a["job"] for r in c.ready_replicas("toy")), T(30))
    time.sleep(2)
    n0 = replica_stats(a["url"])["requests"]
    with cf.ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda i: triton_infer(c.gw, "toy", np.full((1, 4), i, np.float32)), range(60)))
    check(replica_stats(a["url"])["requests"] > n0, f"replica {a['job']} is ready again but gets no request")


def s_liveness(c):
    reps = c.ready_replicas("toy")
    a = reps[0]
    flag = os.path.join(c.dir, f"dead-{a['job']}")
    open(flag, "w").close()
    try:
        with Load(c.gw, "toy", rate=20, workers=2) as load:
            wait_until(f"replica {a['job']} (liveness failing) to be replaced",
                       lambda: a["job"] not in [r["job"] for r in c.svc("toy")["replicas_list"]], T(60))
            c.ready("toy", 2, timeout=90)
            time.sleep(2)
        log(f"liveness: {load.summary()}")
    finally:
        if os.path.exists(flag):
            os.unlink(flag)
    j = c.api.get(f"/api/jobs/{a['job']}")
    log(f"the unhealthy replica's job ended: state {j.get('state')}, {j.get('reason') or j.get('message') or ''}")
    load.check_no_failure("liveness")


def s_kill(c):
    reps = c.ready_replicas("toy")
    check(len(reps) == 2, f"toy has {len(reps)} ready replicas, not 2")
    a = reps[0]
    pid = replica_stats(a["url"])["pid"]
    seen_failures, seen_backoff, statuses = 0, False, set()
    with Load(c.gw, "toy", rate=40, workers=6) as load:
        time.sleep(3)
        log(f"kill -9 replica job {a['job']} (pid {pid}) under load")
        os.kill(pid, signal.SIGKILL)
        deadline = time.time() + T(120)
        while time.time() < deadline:
            v = c.svc("toy")
            seen_failures = max(seen_failures, v["failures"])
            seen_backoff = seen_backoff or v.get("backoff_until_ms") is not None
            statuses.add(v["status"])
            jobs = [r["job"] for r in v["replicas_list"]]
            if a["job"] not in jobs and v["ready"] >= 2 and all(r["phase"] == "ready" for r in v["replicas_list"]):
                break
            time.sleep(0.2)
        else:
            raise Failure(f"toy did not get back to 2 ready replicas without job {a['job']}: {c.svc('toy')}")
        time.sleep(3)
    log(f"kill: {load.summary()}; failures seen {seen_failures}, backoff seen {seen_backoff}")
    log(f"kill: statuses seen: {sorted(statuses)}")
    load.check_no_failure("a replica killed under load")
    check(seen_failures >= 1 or seen_backoff,
          f"the service never counted the killed replica as a failure (failures 0, no backoff); statuses {statuses}")
    j = c.api.get(f"/api/jobs/{a['job']}")
    check(j.get("state") not in ("running", "pending"), f"the killed replica's job is {j.get('state')}")


def s_rollout(c):
    old = {r["job"] for r in c.svc("toy")["replicas_list"]}
    v0 = c.svc("toy")["version"]
    spec = toy_spec(c, "toy", version_env="2")
    with Load(c.gw, "toy", rate=40, workers=6) as load:
        time.sleep(2)
        t = time.time()
        c.api.call("PUT", "/api/services/toy", spec)
        v = c.ready("toy", 2, version=v0 + 1, timeout=180)
        took = time.time() - t
        time.sleep(3)
    new = {r["job"] for r in v["replicas_list"]}
    log(f"rollout to version {v0 + 1} in {took:.1f}s: jobs {sorted(old)} -> {sorted(new)}; {load.summary()}")
    check(not (old & new), f"replicas {old & new} of the old version are still there")
    check(v["updated_ready"] == 2, f"updated_ready {v['updated_ready']}")
    load.check_no_failure("a rolling update under load")
    # A PUT that changes only the replica count rolls nothing.
    spec["replicas"] = 2
    c.api.call("PUT", "/api/services/toy", spec)
    time.sleep(3)
    check({r["job"] for r in c.svc("toy")["replicas_list"]} == new, "an unchanged template rolled the replicas")


def s_drain(c):
    v = c.svc("toy")
    nodes = [r["node"] for r in v["replicas_list"]]
    node = nodes[0]
    other = "n2" if node == "n1" else "n1"
    moving = [r["job"] for r in v["replicas_list"] if r["node"] == node]
    log(f"drain {node}: replicas there {moving}, placement {list(zip([r['job'] for r in v['replicas_list']], nodes))}")
    most_starting, least_ready = 0, 99
    with Load(c.gw, "toy", rate=40, workers=6) as load:
        time.sleep(2)
        c.cli("drain", node, "--reason", "serving e2e")
        try:
            deadline = time.time() + T(180)
            while time.time() < deadline:
                v = c.svc("toy")
                reps = v["replicas_list"]
                starting = [r for r in reps if r["phase"] in ("starting", "waiting")]
                most_starting = max(most_starting, len(starting))
                least_ready = min(least_ready, v["ready"])
                if reps and all(r["node"] == other and r["phase"] == "ready" for r in reps) and len(reps) == 2:
                    break
                time.sleep(0.2)
            else:
                raise Failure(f"the replicas did not leave drained node {node}: {json.dumps(c.svc('toy'))[:2000]}")
            time.sleep(3)
        finally:
            c.cli("resume", node, check_rc=False)
    log(f"drain: {load.summary()}; most replicas starting at once {most_starting}, fewest ready {least_ready}")
    load.check_no_failure("a node drain under load")
    check(most_starting <= 1, f"{most_starting} replicas were starting at once (max_surge 1): not one at a time")
    check(least_ready >= 2, f"ready replicas fell to {least_ready} during the drain (max_unavailable 0)")


def train_log(c):
    path = os.path.join(c.dir, "train.log")
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path) if line.strip()]


def s_autoscale(c):
    c.delete("toy")
    auto = {"min": 1, "max": 3, "target_in_flight": 2, "up_window_s": 0, "down_window_s": 15, "idle_to_zero_s": 600}
    c.create(toy_spec(c, "auto", replicas=1, batching=False, autoscale=auto))
    c.ready("auto", 1)
    gateway_routes(c, "auto")
    # The training job takes 2 GPUs of one node: 1 replica + 2 = 3 of the 4 GPUs.
    shared = os.path.join(c.dir, "shared-ckpt")
    os.makedirs(shared, exist_ok=True)
    r = c.cli("submit", "--gpus", "2", "--name", "train", "--env", f"TRAIN_LOG={os.path.join(c.dir, 'train.log')}",
              "--env", f"TRAIN_SHARED={shared}",
              "--", PY, os.path.join(HERE, "train.py"), "--step-s", "0.2")
    job = int(r.stdout.strip().split()[-1])
    wait_until("the training job to start", lambda: any(e["event"] == "start" for e in train_log(c)), T(60))
    time.sleep(2)
    log(f"training job {job} running; step load on auto (closed loop, 10 at a time)")
    t0 = time.time()
    ups = {}
    with Load(c.gw, "auto", rate=0, workers=10) as load:
        deadline = time.time() + T(180)
        while time.time() < deadline:
            v = c.svc("auto")
            for k in (2, 3):
                if v["ready"] >= k and k not in ups:
                    ups[k] = time.time() - t0
                    log(f"auto: {k} replicas ready {ups[k]:.1f}s after the step (desired {v['desired']}, "
                        f"in flight {v['in_flight']})")
            if v["ready"] >= 3:
                break
            time.sleep(0.3)
        else:
            raise Failure(f"auto did not scale to 3 ready replicas under load: {json.dumps(c.svc('auto'))[:2000]}\n"
                          f"training job: {c.api.get(f'/api/jobs/{job}')}")
        time.sleep(2)
    log(f"autoscale up: {load.summary()}")
    load.check_no_failure("a step of load while scaling up")
    stops = [e for e in train_log(c) if e["event"] == "stop"]
    check(stops, f"the third replica is ready but the training job was never preempted: {train_log(c)}")
    log(f"training preempted at step {stops[0]['step']} ({stops[0]['signal']})")
    # Load gone: down to min after down_window_s; then the training job comes back.
    t1 = time.time()
    wait_until("auto to scale down to 1", lambda: c.svc("auto")["desired"] == 1 and
               len(c.svc("auto")["replicas_list"]) == 1, T(120))
    log(f"auto scaled down to 1 {time.time() - t1:.1f}s after the load stopped")

    def resumed():
        starts = [e for e in train_log(c) if e["event"] == "start"]
        return starts[-1] if len(starts) >= 2 else None

    s = wait_until("the training job to resume", resumed, T(120))
    check(s["from_step"] >= stops[0]["step"] > 0,
          f"the training job restarted from step {s['from_step']}, not its checkpoint ({stops[0]['step']})")
    check(s["restart"] >= 1, f"GPUSCHED_RESTART_COUNT is {s['restart']} after a preemption")
    log(f"training job resumed from its checkpoint at step {s['from_step']} (restart {s['restart']}, "
        f"read from the {s['source']} copy)")
    c.cli("cancel", str(job), check_rc=False)
    c.delete("auto")


def s_zero(c):
    auto = {"min": 0, "max": 1, "target_in_flight": 4, "up_window_s": 0, "down_window_s": 5, "idle_to_zero_s": 5}
    c.create(toy_spec(c, "cold", replicas=1, batching=False, autoscale=auto, extra_args=("--start-delay", "2")))
    c.ready("cold", 1)
    gateway_routes(c, "cold")
    t = time.time()
    wait_until("cold to scale to zero", lambda: c.svc("cold")["desired"] == 0 and not c.svc("cold")["replicas_list"],
               T(120))
    log(f"cold scaled to zero {time.time() - t:.1f}s after its last request")
    time.sleep(3)  # the gateways learn there is no endpoint
    t = time.time()
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    triton_infer(c.gw, "cold", x, timeout=T(180))
    cold = time.time() - t
    log(f"cold start: a request to a service at zero answered in {cold:.2f}s (the model server sleeps 2 s "
        f"before listening)")
    check(c.svc("cold")["ready"] == 1, "a replica answered but the service shows none ready")
    c.delete("cold")


def ensure_toy(c):
    """The 2-replica toy service the middle scenarios share, as oip_batching leaves it
    (made again when a scenario before failed and left it otherwise)."""
    st, v = c.api.call("GET", "/api/services/toy", ok=None)
    if st == 404:
        log("(re)creating the toy service")
        c.create(toy_spec(c, "toy"))
    elif st != 200:
        raise Failure(f"GET /api/services/toy answered {st}: {v}")
    c.ready("toy", 2)
    gateway_routes(c, "toy")


SCENARIOS = [
    ("oip_batching", s_oip_batching),
    ("openai", s_openai),
    ("readiness", s_readiness),
    ("liveness", s_liveness),
    ("kill", s_kill),
    ("rollout", s_rollout),
    ("drain", s_drain),
    ("autoscale", s_autoscale),
    ("zero", s_zero),
]
NEEDS_TOY = {"readiness", "liveness", "kill", "rollout", "drain"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("gpusched")
    p.add_argument("--only", help="comma-separated scenarios (default all)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory (logs)")
    a = p.parse_args()
    binary = os.path.abspath(a.gpusched)
    only = set(a.only.split(",")) if a.only else None
    if only and only - {n for n, _ in SCENARIOS}:
        p.error(f"unknown scenarios {only - {n for n, _ in SCENARIOS}}")
    # SIGTERM (a CI timeout) unwinds like Ctrl-C, so the finally below stops everything.
    def on_term(signum, frame):
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, on_term)
    scratch = tempfile.mkdtemp(prefix="gpusched-serving.")
    os.chmod(scratch, 0o755)
    c = Cluster(binary, scratch)
    results = []
    keep = a.keep
    try:
        log(f"starting gpusched up + agent n2 + gateway in {scratch}")
        c.start()
        log(f"server {c.url}, gateway {c.gw}")
        for name, fn in SCENARIOS:
            if only and name not in only:
                continue
            t = time.time()
            log(f"== {name}")
            try:
                for proc in ("up", "agent-n2", "gateway"):
                    c.alive(proc)
                if name in NEEDS_TOY:
                    ensure_toy(c)
                fn(c)
                results.append((name, True))
                log(f"ok   {name} ({time.time() - t:.1f}s)")
            except Exception as e:  # noqa: BLE001 - reported, and the next scenario runs
                results.append((name, False))
                keep = True
                log(f"FAIL {name} ({time.time() - t:.1f}s): {e}")
                traceback.print_exc(file=sys.stdout)
    except BaseException as e:  # noqa: BLE001 - setup failed, or Ctrl-C / SIGTERM
        results.append(("setup" if not isinstance(e, KeyboardInterrupt) else "interrupted", False))
        keep = True
        log(f"FAIL setup: {e}")
        traceback.print_exc(file=sys.stdout)
    finally:
        c.stop()
        failed = [n for n, ok in results if not ok]
        if failed:
            for name in ("up", "agent-n2", "gateway"):
                print(f"--- last lines of {name}.log\n{c.tail(name, 2500)}", flush=True)
        print("\nserving e2e: " + ", ".join(f"{n} {'ok' if ok else 'FAILED'}" for n, ok in results), flush=True)
        if keep:
            print(f"kept {scratch} (logs of up, agent-n2, gateway; the replicas' logs: gpusched logs JOB)")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    sys.exit(1 if failed or not results else 0)


if __name__ == "__main__":
    main()
