#!/usr/bin/env python3
"""Where the server's CPU per job goes (issue 14, item 2: measure first).

Starts `gpusched server` under `valgrind --tool=callgrind` (instruction counts: repeatable
on a busy machine, unlike time) and one native agent declaring 8 GPUs, submits `--jobs`
trivial 1-GPU jobs in one batch call, waits for all to end, and keeps only that window in
the profile (`callgrind_control --zero` before the batch, `--dump` after), then writes
`callgrind_annotate` reports (inclusive and self) next to the profile. With `--native` the
server runs without valgrind and the script prints its CPU per job (utime+stime from
/proc/PID/stat over the same window) instead.

Build with line tables so the report names functions and lines:
  CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release -p gpusched

Usage: python3 scripts/profile_server.py [--jobs 2000] [--array] [--out DIR] [--native [--perf]] [--exe PATH]
"""
import argparse, os, pwd, shutil, signal, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_live as B  # noqa: E402


def interrupted(*_):
    raise KeyboardInterrupt


def sys_s(pid):
    """System CPU seconds of a process so far (/proc/PID/stat field 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[12]) / os.sysconf("SC_CLK_TCK")


def round_counts(base):
    """Commits and scheduling passes so far, from the server's /metrics (admin token),
    and the reports the agent had acknowledged, from its own /metrics (on the next port)."""
    out = {}
    agent = base.rsplit(":", 1)[0] + ":" + str(int(base.rsplit(":", 1)[1]) + 1)
    for url, auth, names in ((base, B.auth(), (("commits", "gpusched_store_commit_seconds_count"),
                                               ("passes", "gpusched_schedule_pass_seconds_count"))),
                             (agent, {}, (("reports", "gpusched_agent_reports_total"),))):
        req = B.urllib.request.Request(f"{url}/metrics", headers=auth)
        with B.urllib.request.urlopen(req, timeout=60) as r:
            text = r.read().decode()
        for line in text.splitlines():
            for key, name in names:
                if line.startswith(name):
                    out[key] = out.get(key, 0) + float(line.split()[-1])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--out", default="callgrind-server", help="directory for the profile and the reports")
    ap.add_argument("--native", action="store_true", help="no valgrind: print the server's CPU per job")
    ap.add_argument("--perf", action="store_true",
                    help="with --native: `perf record -g` the server over the window (cpu-clock samples, "
                         "kernel included) into OUT/perf.data and write OUT/perf-report.txt")
    ap.add_argument("--exe", help="the gpusched binary (default: the release build)")
    ap.add_argument("--array", action="store_true", help="the jobs as ONE array of --jobs tasks, not a batch")
    args = ap.parse_args()
    exe = B.binary(args.exe)
    if not args.native and not shutil.which("valgrind"):
        sys.exit("valgrind not found: install it (apt-get install valgrind) or pass --native")
    signal.signal(signal.SIGTERM, interrupted)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    profile = os.path.join(out, "callgrind.out")
    tmp = tempfile.mkdtemp(prefix="gpusched-profile-")
    port = 16490
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=base)
    cmd = [exe, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{tmp}/data"]
    if not args.native:
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}", "--dump-instr=no"] + cmd
    procs = []
    try:
        server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(f"{out}/server.log", "w"))
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
        agent = subprocess.Popen([exe, "agent", "--server", base, "--name", "prof", "--state-dir", f"{tmp}/agent",
                                  "--join-token-file", f"{tmp}/data/join-token", "--allow-root-jobs",
                                  "--gpus", "8", "--gpu-backend", "declared",
                                  "--metrics-listen", f"127.0.0.1:{port + 1}"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=open(f"{out}/agent.log", "w"))
        procs.append(agent)
        t0 = time.time()
        while not [n for n in B.get(f"{base}/api/nodes")["nodes"] if n["state"] == "online"]:
            if time.time() - t0 > 120:
                sys.exit(f"the agent did not come online; see {out}/agent.log")
            time.sleep(0.1)
        job = {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp"}
        # The server's pid is valgrind's own (valgrind runs the program in its process).
        if not args.native:
            subprocess.run(["callgrind_control", "--zero", str(server.pid)], check=True, capture_output=True)
        cpu0 = B.cpu_s(server.pid)
        sys0 = sys_s(server.pid)
        t0 = time.time()
        counts0 = round_counts(base)
        perf = None
        if args.native and args.perf:
            perf = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-e", "cpu-clock", "-p", str(server.pid),
                                     "-o", os.path.join(out, "perf.data")],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        if args.array:
            aid = B.post(f"{base}/api/jobs", dict(job, array={"first": 0, "last": args.jobs - 1}))["ids"][0]
            while True:
                v = B.get(f"{base}/api/jobs/{aid}/wait?timeout_s=30")
                if v["state"] in ("succeeded", "failed", "cancelled", "timed_out"):
                    break
        else:
            ids = B.post(f"{base}/api/jobs/batch", {"jobs": [dict(job) for _ in range(args.jobs)]})["ids"]
            B.wait_idle(base, limit=3600)
        wall = time.time() - t0
        cpu = B.cpu_s(server.pid) - cpu0
        kernel = sys_s(server.pid) - sys0
        if not args.native:
            subprocess.run(["callgrind_control", "--dump=batch", str(server.pid)], check=True, capture_output=True)
        counts = {k: v - counts0.get(k, 0) for k, v in round_counts(base).items()}
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=120)
            with open(os.path.join(out, "perf-report.txt"), "w") as f:
                subprocess.run(["perf", "report", "-i", os.path.join(out, "perf.data"), "--no-children",
                                "--sort", "comm,dso,symbol", "--stdio", "-g", "none", "--percent-limit", "0.3"],
                               stdout=f, stderr=subprocess.DEVNULL, check=False)
            print(f"perf profile: {out}/perf-report.txt")
        if args.array:
            ok = v["array_counts"]["succeeded"]
            if ok != args.jobs:
                sys.exit(f"array {aid}: {ok} of {args.jobs} tasks succeeded: {v['array_counts']}")
        else:
            done = B.jobs_between(base, ids[0], ids[-1])
            ok = sum(j["state"] == "succeeded" for j in done)
            B.check(ok, args.jobs, done)
        what = "tasks" if args.array else "jobs"
        print(f"{args.jobs} {what} in {wall:.1f} s ({ok} succeeded); server CPU {cpu:.2f} s = "
              f"{cpu / args.jobs * 1e6:.0f} us per {what[:-1]} ({kernel / args.jobs * 1e6:.0f} us of it in the kernel)"
              f"{' (under valgrind)' if not args.native else ''}; "
              + ", ".join(f"{k} {v / args.jobs:.2f}" for k, v in sorted(counts.items())) + f" per {what[:-1]}",
              flush=True)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if not args.native:
        # The dump of the batch window is PROFILE.N (N > 0); the final dump at exit has the rest.
        dumps = sorted((f for f in os.listdir(out) if f.startswith("callgrind.out.")),
                       key=lambda f: int(f.rsplit(".", 1)[1]) if f.rsplit(".", 1)[1].isdigit() else 0)
        batch = os.path.join(out, dumps[0]) if dumps else profile
        for kind, flag in (("inclusive", "--inclusive=yes"), ("self", "--inclusive=no")):
            with open(os.path.join(out, f"annotate-{kind}.txt"), "w") as f:
                subprocess.run(["callgrind_annotate", flag, "--threshold=99", batch], stdout=f, check=True)
        print(f"profile of the batch: {batch}; reports: {out}/annotate-inclusive.txt, {out}/annotate-self.txt")


if __name__ == "__main__":
    main()
