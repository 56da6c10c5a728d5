#!/usr/bin/env python3
"""Whether the cost of a job grows with history, in instructions (issue 39, item 4).

Starts `gpusched server` and one `gpusched agent` (8 declared GPUs), one of them (`--valgrind
server` or `agent`) under `valgrind --tool=callgrind` (instruction counts: repeatable on a
busy machine, unlike CPU time, which moved by 30 % between runs of the same binary here),
and runs `--batches`
batches of trivial 1-GPU jobs (`/bin/true`), each submitted in ONE batch call as separate
jobs; for each batch it zeroes both profiles, waits for every job to end, dumps both, and
prints the instructions per job of that process and the CPU time per job of both. The
last batch against the first says whether a job costs more with the history of the ones
before (the aim: within 10 %). `--valgrind none` runs both natively (CPU time only).
Both under valgrind at once ran 10,000 jobs in 13 minutes here, and the slower the
system, the more of each job's count is its share of timers and passes: one process at
a time keeps the other at its native speed.
With `--instant` the agent runs no process (`--bench-instant-jobs`).

The jobs' processes run natively either way (valgrind does not follow the agent's
children); what the agent does to start, watch and record them is counted.

Usage: cargo build --release && python3 scripts/history_cost.py [--batches 10000,20000,10000]
       [--out DIR] [--valgrind server|agent|none] [--instant] [--exe PATH]
"""
import argparse, os, pwd, re, shutil, signal, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_live as B  # noqa: E402


def interrupted(*_):
    raise KeyboardInterrupt


def total_ir(path):
    """The instruction count of one callgrind dump (its `totals:` or `summary:` line)."""
    with open(path) as f:
        for line in f:
            m = re.match(r"(?:totals|summary):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    raise RuntimeError(f"no totals in {path}")


def dumps(out, who):
    return {f for f in os.listdir(out) if f.startswith(f"callgrind.{who}.")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batches", default="10000,20000,10000", help="comma-separated batch sizes, in order")
    ap.add_argument("--out", default="callgrind-history", help="directory for the profiles")
    ap.add_argument("--valgrind", choices=["server", "agent", "none"], default="server",
                    help="which process runs under callgrind")
    ap.add_argument("--instant", action="store_true", help="the agent runs no process (--bench-instant-jobs)")
    ap.add_argument("--exe", help="the gpusched binary (default: the release build)")
    ap.add_argument("--port", type=int, default=16500)
    args = ap.parse_args()
    exe = B.binary(args.exe)
    sizes = [int(x) for x in args.batches.split(",")]
    if args.valgrind != "none" and not shutil.which("valgrind"):
        sys.exit("valgrind not found: install it (apt-get install valgrind) or pass --valgrind none")
    signal.signal(signal.SIGTERM, interrupted)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.startswith("callgrind."):
            os.unlink(os.path.join(out, f))
    tmp = tempfile.mkdtemp(prefix="gpusched-history-")
    base = f"http://127.0.0.1:{args.port}"
    env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=base)

    def wrap(who, cmd):
        if args.valgrind != who:
            return cmd
        return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/callgrind.{who}", "--dump-instr=no"] + cmd

    procs = []
    rows = []
    try:
        server = subprocess.Popen(wrap("server", [exe, "server", "--listen", f"127.0.0.1:{args.port}",
                                                  "--data-dir", f"{tmp}/data"]),
                                  env=env, stdout=subprocess.DEVNULL, stderr=open(f"{out}/server.log", "w"))
        procs.append(server)
        t0 = time.time()
        while True:
            try:
                B.get(f"{base}/api/health")
                break
            except Exception:
                if time.time() - t0 > 300 or server.poll() is not None:
                    sys.exit(f"the server did not start; see {out}/server.log")
                time.sleep(0.2)
        user = pwd.getpwuid(os.getuid()).pw_name
        B.TOKEN = subprocess.run([exe, "token", "create", user, "--admin"], check=True, capture_output=True,
                                 text=True, env=dict(env, GPUSCHED_SERVER=f"unix:{tmp}/data/gpusched.sock")
                                 ).stdout.strip()
        agent = subprocess.Popen(wrap("agent", [exe, "agent", "--server", base, "--name", "hist", "--state-dir",
                                                f"{tmp}/agent", "--join-token-file", f"{tmp}/data/join-token",
                                                "--allow-root-jobs", "--gpus", "8", "--gpu-backend", "declared",
                                                *(["--bench-instant-jobs"] if args.instant else [])]),
                                 env=env, stdout=subprocess.DEVNULL, stderr=open(f"{out}/agent.log", "w"))
        procs.append(agent)
        t0 = time.time()
        while not [n for n in B.get(f"{base}/api/nodes")["nodes"] if n["state"] == "online"]:
            if time.time() - t0 > 300:
                sys.exit(f"the agent did not come online; see {out}/agent.log")
            time.sleep(0.2)
        job = {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp"}
        done_before = 0
        for k, n in enumerate(sizes, 1):
            traced = {"server": server, "agent": agent}.get(args.valgrind)
            if traced:
                subprocess.run(["callgrind_control", "--zero", str(traced.pid)], check=True, capture_output=True)
            cpu0 = (B.cpu_s(server.pid), B.cpu_s(agent.pid))
            t0 = time.time()
            ids = []
            for at in range(0, n, 10000):  # the API's batch limit
                ids += B.post(f"{base}/api/jobs/batch",
                              {"jobs": [dict(job) for _ in range(min(10000, n - at))]})["ids"]
            B.wait_idle(base, limit=7200)
            wall = time.time() - t0
            cpu = (B.cpu_s(server.pid) - cpu0[0], B.cpu_s(agent.pid) - cpu0[1])
            row = dict(batch=k, jobs=n, history=done_before, wall_s=wall,
                       server_cpu_us=cpu[0] / n * 1e6, agent_cpu_us=cpu[1] / n * 1e6)
            if traced:
                who = args.valgrind
                before = dumps(out, who)
                subprocess.run(["callgrind_control", f"--dump=batch{k}", str(traced.pid)], check=True,
                               capture_output=True)
                new = sorted(dumps(out, who) - before)
                row[f"{who}_ir"] = total_ir(os.path.join(out, new[-1])) / n if new else float("nan")
            rows.append(row)
            done_before += n
            print(f"batch {k}: {n} jobs after {row['history']} of history in {wall:.1f} s; CPU per job: server "
                  f"{row['server_cpu_us']:.0f} us, agent {row['agent_cpu_us']:.0f} us"
                  + (f" ({args.valgrind} under valgrind); {args.valgrind} instructions per job: "
                     f"{row[args.valgrind + '_ir'] / 1e3:.0f} k" if traced else ""),
                  flush=True)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        keys = [f"{w}_cpu_us" for w in ("server", "agent") if w != args.valgrind]
        if args.valgrind != "none":
            keys.insert(0, f"{args.valgrind}_ir")
        for key in keys:
            print(f"{key}: batch {last['batch']} against batch 1: x{last[key] / first[key]:.3f} per job")


if __name__ == "__main__":
    main()
