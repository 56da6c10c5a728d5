#!/usr/bin/env python3
"""gpusched's services and gateway beside Ray Serve, the same model on both, one run.

The model is tests/serving/model_server.py's ToyModel (numpy: INPUT0 * 2 + 1 and the row
sums; each call sleeps --batch-ms plus --item-ms a row under one lock, one "GPU"). gpusched
runs it as a service (`gpusched up` with fake GPUs, `gpusched gateway` in front); Ray Serve
runs the same class in a deployment (CPU only) with `@serve.batch` at the same max batch
size and wait, behind its HTTP proxy. Both take the same Open Inference Protocol JSON
request (`POST /v2/models/toy/infer`, INPUT0 FP32 [1, D]) and answer the same JSON.

The load is open-loop: Poisson arrivals at a fixed offered rate (asyncio + aiohttp), each
request's latency counted from its scheduled arrival (so a slow server cannot slow the
arrivals down: no coordinated omission). Per offered rate: achieved throughput (answers
completed inside the measured window / window), p50/p95/p99 latency, errors.

Parts (--parts, default all):
  load      batching off and on, at each --rates, one replica, both systems
  step      autoscaling: --step-low rps, then --step-high: seconds from the step to the
            first answer from a new replica (answers name their replica), both systems
  overhead  gpusched's gateway against calling the replica directly: trivial model (0 ms),
            unbatched, sequential requests; latency, and the gateway's CPU per request
            (/proc/PID/stat utime+stime)

Prints a markdown table, writes JSON (--out).

Usage:
  scripts/bench_serving.py --install          # the venv: ray[serve], aiohttp, numpy (pinned)
  scripts/bench_serving.py --gpusched target/release/gpusched [--parts load,step,overhead]
      [--systems gpusched,ray] [--rates 20,40,80,160] [--duration 20] [--out FILE]
The script re-runs itself in the venv ($BENCH_SERVING_VENV, default
~/.cache/gpusched-bench-serving-venv) when it is started by another Python.
"""

import argparse
import asyncio
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests", "serving")
REQS = os.path.join(ROOT, "scripts", "bench_serving_requirements.txt")
VENV = os.environ.get("BENCH_SERVING_VENV", os.path.join(os.path.expanduser("~"), ".cache",
                                                          "gpusched-bench-serving-venv"))
VPY = os.path.join(VENV, "bin", "python")


def reqs_hash():
    return hashlib.sha256(open(REQS, "rb").read()).hexdigest()[:16]


def install():
    stamp = os.path.join(VENV, ".requirements-hash")
    if os.path.exists(stamp) and open(stamp).read().strip() == reqs_hash() and os.path.exists(VPY):
        print(f"{VENV} is up to date")
        return
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.check_call([sys.executable, "-m", "venv", VENV])
    subprocess.check_call([VPY, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", REQS])
    open(stamp, "w").write(reqs_hash())
    print(f"installed {REQS} into {VENV}")


if __name__ == "__main__" and "--install" in sys.argv[1:]:
    install()
    sys.exit(0)
if __name__ == "__main__" and os.path.realpath(sys.prefix) != os.path.realpath(VENV):
    if not os.path.exists(VPY):
        sys.exit(f"no venv at {VENV}: run scripts/bench_serving.py --install first")
    os.execv(VPY, [VPY, os.path.abspath(__file__), *sys.argv[1:]])

import aiohttp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, TESTS)

D = 16  # the row width of every request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def body_for(d=D, seed=0):
    x = np.random.default_rng(seed).standard_normal((1, d)).astype(np.float32)
    return json.dumps({"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1, d],
                                   "data": x.flatten().tolist()}]}).encode()


def wait_until(what, fn, timeout, interval=0.25):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            v = fn()
            if v:
                return v
            last = v
        except Exception as e:  # noqa: BLE001
            last = e
        time.sleep(interval)
    raise RuntimeError(f"gave up after {timeout:.0f}s waiting for {what} (last: {last!r})")


def http_json(url, data=None, method=None, timeout=10, headers=None):
    h = {"Content-Type": "application/json", **(headers or {})}
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        raw = r.read()
        return json.loads(raw) if raw else None


# ---------------------------------------------------------------- load generation

def pct(sorted_xs, q):
    if not sorted_xs:
        return float("nan")
    i = min(len(sorted_xs) - 1, max(0, int(round(q * (len(sorted_xs) - 1)))))
    return sorted_xs[i]


async def open_loop(url, rate, duration, warmup=3.0, seed=1, body=None, want_replica=False,
                    timeout=30.0, on_answer=None, conns=512):
    """Poisson arrivals at `rate`/s for warmup+duration seconds; stats of the window."""
    body = body or body_for()
    rng = random.Random(seed)
    loop = asyncio.get_running_loop()
    results = []  # (sched, done, ok, replica, err)
    conn = aiohttp.TCPConnector(limit=conns, force_close=False)
    to = aiohttp.ClientTimeout(total=timeout)
    async with aiohttp.ClientSession(connector=conn, timeout=to) as sess:
        async def one(sched):
            ok, rep, err = False, None, None
            try:
                async with sess.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
                    raw = await r.read()
                    ok = r.status == 200
                    if not ok:
                        err = f"{r.status} {raw[:200]!r}"
                    elif want_replica:
                        rep = (json.loads(raw).get("parameters") or {}).get("replica")
            except Exception as e:  # noqa: BLE001
                err = f"{type(e).__name__}: {e}"
            done = loop.time()
            results.append((sched, done, ok, rep, err))
            if on_answer:
                on_answer(sched, done, ok, rep)

        t0 = loop.time()
        end = t0 + warmup + duration
        nxt = t0
        tasks = []
        while True:
            nxt += rng.expovariate(rate)
            if nxt >= end:
                break
            delay = nxt - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.ensure_future(one(nxt)))
        await asyncio.gather(*tasks)
    w0, w1 = t0 + warmup, end
    window = [r for r in results if w0 <= r[0] < w1]
    lat = sorted((r[1] - r[0]) * 1000 for r in window if r[2])
    done_in = sum(1 for r in results if r[2] and w0 <= r[1] < w1)
    errors = [r[4] for r in window if not r[2]]
    return {
        "offered_rps": rate,
        "sent": len(window),
        "achieved_rps": round(done_in / duration, 1),
        "p50_ms": round(pct(lat, 0.50), 1),
        "p95_ms": round(pct(lat, 0.95), 1),
        "p99_ms": round(pct(lat, 0.99), 1),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "raw": results,
        "t0": t0,
    }


def strip(r):
    return {k: v for k, v in r.items() if k not in ("raw", "t0")}


async def sequential(url, n, body):
    """n requests one after another: latencies (ms)."""
    lat = []
    async with aiohttp.ClientSession() as sess:
        for _ in range(n):
            t = time.perf_counter()
            async with sess.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
                await r.read()
                if r.status != 200:
                    raise RuntimeError(f"{url}: {r.status}")
            lat.append((time.perf_counter() - t) * 1000)
    return sorted(lat)


def cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


async def step_load(url, low, high, t_low, t_high, seed=3):
    """low rps for t_low s, then high rps for t_high s; seconds from the step to the
    first answer from a replica not seen before the step."""
    seen_before, first_new = set(), {}
    step_at = {}

    def on_answer(sched, done, ok, rep):
        if not ok or rep is None:
            return
        if "t" not in step_at or sched < step_at["t"]:
            seen_before.add(rep)
        elif rep not in seen_before and rep not in first_new:
            first_new[rep] = done - step_at["t"]

    loop = asyncio.get_running_loop()
    step_at["t"] = loop.time() + t_low
    low_task = asyncio.ensure_future(open_loop(url, low, t_low, 0, seed, want_replica=True, on_answer=on_answer))
    await asyncio.sleep(t_low)
    high = await open_loop(url, high, t_high, 0, seed + 1, want_replica=True, on_answer=on_answer)
    lowr = await low_task
    firsts = sorted(first_new.values())
    lat = sorted((r[1] - r[0]) * 1000 for r in high["raw"] if r[2])
    return {
        "low_rps": low, "high_rps": high["offered_rps"],
        "replicas_before": len(seen_before),
        "new_replicas": len(firsts),
        "first_new_replica_s": round(firsts[0], 2) if firsts else None,
        "all_new_replicas_s": [round(f, 2) for f in firsts],
        "high_p50_ms": round(pct(lat, 0.5), 1), "high_p99_ms": round(pct(lat, 0.99), 1),
        "errors": high["errors"] + lowr["errors"],
    }


# ---------------------------------------------------------------- gpusched

class Gpusched:
    def __init__(self, binary, scratch, args):
        self.bin = os.path.abspath(binary)
        self.dir = os.path.join(scratch, "gpusched")
        os.makedirs(self.dir, exist_ok=True)
        self.args = args
        self.procs = []
        self.port = free_port()
        self.gw_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.gw = f"http://127.0.0.1:{self.gw_port}"
        self.sock = os.path.join(self.dir, "data", "gpusched.sock")
        self.gw_proc = None

    def spawn(self, name, cmd):
        log = open(os.path.join(self.dir, name + ".log"), "ab")
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(p)
        return p

    def cli(self, *a, input=None):
        return subprocess.run([self.bin, *a], input=input, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "GPUSCHED_SERVER": "unix:" + self.sock})

    def start(self):
        self.spawn("up", [self.bin, "up", "--data-dir", os.path.join(self.dir, "data"), "--listen",
                          f"127.0.0.1:{self.port}", "--gpus", str(self.args.gpus), "--gpu-backend", "fake",
                          "--name", "n1", "--allow-root-jobs", "--grace", "2s", "--min-runtime", "1s",
                          "--preempt-grace", "5s"])
        wait_until("gpusched up", lambda: self.cli("nodes").returncode == 0 and "n1" in self.cli("nodes").stdout, 90)
        self.gw_proc = self.spawn("gateway", [self.bin, "gateway", "--server", "unix:" + self.sock, "--listen",
                                              f"127.0.0.1:{self.gw_port}"])
        wait_until("the gateway", lambda: urllib.request.urlopen(self.gw + "/metrics", timeout=2).status == 200, 60)

    def api(self, method, path, obj=None):
        """The API over the Unix socket (local root: no token)."""
        import http.client

        class UnixConn(http.client.HTTPConnection):
            def connect(s):
                s.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.sock.connect(self.sock)

        c = UnixConn("localhost", timeout=30)
        body = json.dumps(obj).encode() if obj is not None else None
        c.request(method, path, body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        raw = r.read()
        c.close()
        if r.status >= 300:
            raise RuntimeError(f"{method} {path}: {r.status} {raw[:500]!r}")
        return json.loads(raw) if raw else None

    def service(self, name, batching, batch_ms, item_ms, replicas=1, autoscale=None):
        spec = {
            "name": name,
            "replica": {"command": [sys.executable, os.path.join(TESTS, "model_server.py"), "--model", "toy",
                                    "--batch-ms", str(batch_ms), "--item-ms", str(item_ms)],
                        "gpus": 1, "cwd": TESTS},
            "replicas": replicas,
            "protocol": "oip",
            "models": [{"name": "toy", **({"batching": batching} if batching else {})}],
            "readiness": {"path": "/v2/health/ready", "period_s": 1},
            "rollout": {"drain_s": 1},
        }
        if autoscale:
            spec["autoscale"] = autoscale
        self.api("POST", "/api/services", spec)
        wait_until(f"service {name} ready", lambda: self.api("GET", f"/api/services/{name}")["ready"] >= replicas, 120)
        # The gateway routes once its sync saw the replica.
        url = self.gw + "/v2/models/toy/infer"
        wait_until("the gateway to route", lambda: http_json(url, body_for()) is not None, 60)
        return url

    def delete(self, name):
        self.api("DELETE", f"/api/services/{name}")
        wait_until(f"service {name} gone", lambda: name not in [s["spec"]["name"] for s in
                                                               self.api("GET", "/api/services")["services"]], 60)

    def replica_url(self, name):
        v = self.api("GET", f"/api/services/{name}")
        return [r["url"] for r in v["replicas_list"] if r["phase"] == "ready"][0]

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


# ---------------------------------------------------------------- Ray Serve

def ray_app(name, batch_ms, item_ms, batched, max_batch, wait_s, autoscale=None, max_ongoing=256):
    from ray import serve
    from starlette.responses import JSONResponse

    tests = TESTS

    opts = {"name": name, "max_ongoing_requests": max_ongoing, "ray_actor_options": {"num_cpus": 0.1}}
    if autoscale:
        opts["autoscaling_config"] = autoscale
    else:
        opts["num_replicas"] = 1

    @serve.deployment(**opts)
    class Toy:
        def __init__(self):
            import concurrent.futures
            import os as _os
            import sys as _sys

            _sys.path.insert(0, tests)
            from model_server import ToyModel

            self.model = ToyModel("toy", batch_ms, item_ms)
            self.pool = concurrent.futures.ThreadPoolExecutor(8)
            self.replica = f"ray-{_os.getpid()}"

        async def run(self, x):
            import asyncio as _a

            return await _a.get_running_loop().run_in_executor(self.pool, self.model, x)

        @serve.batch(max_batch_size=max_batch, batch_wait_timeout_s=wait_s)
        async def batch(self, xs):
            import numpy as _np

            sizes = [x.shape[0] for x in xs]
            o0, o1 = await self.run(_np.concatenate(xs))
            out, at = [], 0
            for n in sizes:
                out.append((o0[at:at + n], o1[at:at + n]))
                at += n
            return out

        async def __call__(self, request):
            import numpy as _np

            req = await request.json()
            inp = req["inputs"][0]
            x = _np.asarray(inp["data"], dtype=_np.float32).reshape(inp["shape"])
            o0, o1 = await (self.batch(x) if batched else self.run(x))
            return JSONResponse({"model_name": "toy", "model_version": "1", "parameters": {"replica": self.replica},
                                 "outputs": [
                                     {"name": "OUTPUT0", "datatype": "FP32", "shape": list(o0.shape),
                                      "data": o0.flatten().tolist()},
                                     {"name": "OUTPUT1", "datatype": "FP32", "shape": list(o1.shape),
                                      "data": o1.flatten().tolist()}]})

    return Toy.bind()


class Ray:
    def __init__(self, scratch):
        self.port = free_port()
        self.dir = os.path.join(scratch, "ray")
        os.makedirs(self.dir, exist_ok=True)

    def start(self):
        import ray
        from ray import serve

        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False,
                 _temp_dir=self.dir, configure_logging=False)
        serve.start(http_options={"host": "127.0.0.1", "port": self.port}, logging_config={"log_level": "WARNING"})

    def deploy(self, name, app):
        from ray import serve

        serve.run(app, name=name, route_prefix="/v2/models/toy/infer", blocking=False)
        url = f"http://127.0.0.1:{self.port}/v2/models/toy/infer"
        wait_until(f"ray deployment {name}", lambda: http_json(url, body_for()) is not None, 180)
        return url

    def delete(self, name):
        from ray import serve

        serve.delete(name)

    def stop(self):
        import ray
        from ray import serve

        try:
            serve.shutdown()
        finally:
            ray.shutdown()


# ---------------------------------------------------------------- the parts

def batching_cfg(a):
    return {"max_batch_size": a.max_batch, "max_queue_delay_us": int(a.wait_ms * 1000)}


def autoscale_cfg_gpusched(a):
    return {"min": 1, "max": a.max_replicas, "target_in_flight": a.target, "up_window_s": 0,
            "down_window_s": 600, "idle_to_zero_s": 600}


def autoscale_cfg_ray(a):
    # Ray's defaults (upscale_delay_s 30, look_back_period_s 30) would make it far slower
    # than gpusched's up_window_s 0: the comparable settings are asked for instead.
    return {"min_replicas": 1, "max_replicas": a.max_replicas, "target_ongoing_requests": a.target,
            "upscale_delay_s": 0.0, "downscale_delay_s": 600.0, "look_back_period_s": 2.0,
            "metrics_interval_s": 0.5}


def run_load(system, a, results):
    rates = [float(r) for r in a.rates.split(",")]
    for batched in (False, True):
        name = f"toy-{'b' if batched else 'u'}"
        if system.__class__ is Gpusched:
            url = system.service(name, batching_cfg(a) if batched else None, a.batch_ms, a.item_ms)
        else:
            url = system.deploy(name, ray_app(name, a.batch_ms, a.item_ms, batched, a.max_batch, a.wait_ms / 1000))
        for rate in rates:
            r = asyncio.run(open_loop(url, rate, a.duration, a.warmup))
            row = {"part": "load", "system": sysname(system), "batching": batched, **strip(r)}
            print(json.dumps(row), flush=True)
            results.append(row)
        system.delete(name)
        time.sleep(2)


def run_step(system, a, results):
    name = "toy-step"
    if system.__class__ is Gpusched:
        url = system.service(name, None, a.batch_ms, a.item_ms, 1, autoscale_cfg_gpusched(a))
    else:
        url = system.deploy(name, ray_app(name, a.batch_ms, a.item_ms, False, a.max_batch, a.wait_ms / 1000,
                                          autoscale=autoscale_cfg_ray(a)))
    r = asyncio.run(step_load(url, a.step_low, a.step_high, a.step_low_s, a.step_high_s))
    row = {"part": "step", "system": sysname(system), **r}
    print(json.dumps(row), flush=True)
    results.append(row)
    system.delete(name)
    time.sleep(2)


def run_overhead(g, a, results):
    name = "toy-zero"
    gw_url = g.service(name, None, 0, 0)
    direct = g.replica_url(name) + "/v2/models/toy/infer"
    body = body_for()
    n = a.overhead_n
    asyncio.run(sequential(direct, 50, body))  # warm both paths
    asyncio.run(sequential(gw_url, 50, body))
    for label, url in (("direct", direct), ("gateway", gw_url)):
        c0 = cpu_s(g.gw_proc.pid)
        t = time.time()
        lat = asyncio.run(sequential(url, n, body))
        el = time.time() - t
        c1 = cpu_s(g.gw_proc.pid)
        row = {"part": "overhead", "system": "gpusched", "path": label, "requests": n,
               "p50_ms": round(pct(lat, 0.5), 3), "p99_ms": round(pct(lat, 0.99), 3),
               "rps": round(n / el, 1), "gateway_cpu_us_per_req": round((c1 - c0) / n * 1e6, 1)}
        print(json.dumps(row), flush=True)
        results.append(row)
    g.delete(name)


def sysname(s):
    return "gpusched" if s.__class__ is Gpusched else "ray-serve"


def table(results):
    out = []
    load = [r for r in results if r["part"] == "load"]
    if load:
        out += ["| system | batching | offered rps | achieved rps | p50 ms | p95 ms | p99 ms | errors |",
                "|---|---|---:|---:|---:|---:|---:|---:|"]
        for r in load:
            out.append(f"| {r['system']} | {'on' if r['batching'] else 'off'} | {r['offered_rps']:g} | "
                       f"{r['achieved_rps']} | {r['p50_ms']} | {r['p95_ms']} | {r['p99_ms']} | {r['errors']} |")
        out.append("")
    step = [r for r in results if r["part"] == "step"]
    if step:
        out += ["| system | step rps | new replicas | step to first new replica serving (s) | p50 / p99 ms after | errors |",
                "|---|---|---:|---:|---|---:|"]
        for r in step:
            out.append(f"| {r['system']} | {r['low_rps']:g} -> {r['high_rps']:g} | {r['new_replicas']} | "
                       f"{r['first_new_replica_s']} | {r['high_p50_ms']} / {r['high_p99_ms']} | {r['errors']} |")
        out.append("")
    ov = [r for r in results if r["part"] == "overhead"]
    if ov:
        out += ["| path (0 ms model, sequential) | p50 ms | p99 ms | rps | gateway CPU us/request |",
                "|---|---:|---:|---:|---:|"]
        for r in ov:
            out.append(f"| {r['path']} | {r['p50_ms']} | {r['p99_ms']} | {r['rps']} | {r['gateway_cpu_us_per_req']} |")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpusched", help="the gpusched binary (needed for --systems gpusched)")
    p.add_argument("--systems", default="gpusched,ray")
    p.add_argument("--parts", default="load,step,overhead")
    p.add_argument("--rates", default="20,40,80,160")
    p.add_argument("--duration", type=float, default=20.0)
    p.add_argument("--warmup", type=float, default=3.0)
    p.add_argument("--batch-ms", type=float, default=20.0)
    p.add_argument("--item-ms", type=float, default=1.0)
    p.add_argument("--max-batch", type=int, default=16)
    p.add_argument("--wait-ms", type=float, default=5.0)
    p.add_argument("--max-replicas", type=int, default=3)
    p.add_argument("--target", type=float, default=4.0, help="in-flight requests per replica (both autoscalers)")
    p.add_argument("--step-low", type=float, default=10.0)
    p.add_argument("--step-high", type=float, default=70.0)
    p.add_argument("--step-low-s", type=float, default=15.0)
    p.add_argument("--step-high-s", type=float, default=40.0)
    p.add_argument("--overhead-n", type=int, default=2000)
    p.add_argument("--gpus", type=int, default=4, help="fake GPUs of gpusched's node")
    p.add_argument("--out", default="bench_serving.json")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory (logs)")
    a = p.parse_args()
    systems = a.systems.split(",")
    parts = a.parts.split(",")
    if "gpusched" in systems and not a.gpusched:
        p.error("--gpusched PATH is needed for the gpusched runs (or --systems ray)")
    scratch = tempfile.mkdtemp(prefix="gpusched-bench-serving.")
    os.chmod(scratch, 0o755)
    results = []
    meta = {"cpus": os.cpu_count(), "model": {"batch_ms": a.batch_ms, "item_ms": a.item_ms, "D": D},
            "batching": batching_cfg(a), "duration_s": a.duration, "warmup_s": a.warmup,
            "autoscale": {"gpusched": autoscale_cfg_gpusched(a), "ray": autoscale_cfg_ray(a)}}
    try:
        if "ray" in systems and ("load" in parts or "step" in parts):
            import ray

            meta["ray_version"] = ray.__version__
            r = Ray(scratch)
            r.start()
            try:
                if "load" in parts:
                    run_load(r, a, results)
                if "step" in parts:
                    run_step(r, a, results)
            finally:
                r.stop()
        if "gpusched" in systems:
            g = Gpusched(a.gpusched, scratch, a)
            try:
                g.start()
                if "load" in parts:
                    run_load(g, a, results)
                if "step" in parts:
                    run_step(g, a, results)
                if "overhead" in parts:
                    run_overhead(g, a, results)
            except Exception:
                print(f"gpusched logs in {g.dir}", file=sys.stderr)
                a.keep = True
                raise
            finally:
                g.stop()
    finally:
        json.dump({"meta": meta, "results": results}, open(a.out, "w"), indent=1)
        print(f"\nwrote {a.out}\n")
        print(table(results))
        if a.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
