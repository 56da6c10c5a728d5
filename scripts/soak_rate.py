#!/usr/bin/env python3
"""Rate soak of the live cluster (issue 14, item 7): a fixed submission rate for a long
time, memory and CPU sampled throughout, nothing lost at the end.

One `gpusched server` (default SQLite store) and `--agents` agents declaring `--gpus`
GPUs each on loopback. A submitter posts trivial 1-GPU jobs (`/bin/true`) in batches of
`--batch` through the batch API on a fixed schedule (open loop: `--rate` jobs/s whatever
the cluster manages, so a cluster slower than the rate shows as a growing backlog, which
the CSV records beside memory; `--max-backlog N` instead pauses the submitter while more
than N jobs are pending, and the pauses are reported). Every `--sample` seconds a CSV row: elapsed time, jobs
accepted, the server's counts of pending/running/succeeded jobs (its /metrics), and RSS
(VmRSS), peak RSS (VmHWM) and CPU seconds (utime+stime) of the server and of each agent.
After `--duration` s submission stops, the cluster drains, and the run checks that every
accepted job is known, ended `succeeded`, and ran exactly once (attempt 1, no
preemptions); with `--ledger` each job also appends its id to a file through `sh -c`, and
an id written twice fails the run (an independent check, at the price of a shell per job).
It prints the achieved rate, the RSS slope of each process (least squares over the samples
of the submitting phase, MiB per hour) and PASSED or FAILED (exit status 0 or 1).

This is a separate script from soak_live.py: that one is a fault soak (kills and restarts
of a server and agents, cancels, quotas) over a fixed scenario of ~400 jobs; this one
holds a rate and measures growth, with no faults, so the two checks stay readable.

Usage: cargo build --release && python3 scripts/soak_rate.py [--rate 500] [--duration 3600]
       [--batch 50] [--agents 1] [--gpus 8] [--sample 10] [--csv soak_rate.csv] [--ledger]
       [--max-backlog N] [--drain-timeout S]
       [--exe PATH]
"""
import argparse, csv, os, pwd, shutil, signal, subprocess, sys, tempfile, time
from collections import Counter

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_live as B  # noqa: E402  (the HTTP helpers, /proc readers and the binary lookup)


def vm_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def job_counts(base):
    """Jobs per state from the server's /metrics (summed over queues)."""
    import urllib.request
    req = urllib.request.Request(f"{base}/metrics", headers=B.auth())
    with urllib.request.urlopen(req, timeout=60) as r:
        text = r.read().decode()
    out = Counter()
    for line in text.splitlines():
        if line.startswith("gpusched_jobs{"):
            state = line.split('state="', 1)[1].split('"', 1)[0]
            out[state] += float(line.rsplit(" ", 1)[1])
    return out


def slope_per_hour(ts, ys):
    n = len(ts)
    if n < 2:
        return float("nan")
    mt, my = sum(ts) / n, sum(ys) / n
    den = sum((t - mt) ** 2 for t in ts)
    return sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / den * 3600 if den else float("nan")


def interrupted(*_):
    raise KeyboardInterrupt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=500, help="target jobs per second")
    ap.add_argument("--duration", type=float, default=3600, help="seconds of submission")
    ap.add_argument("--batch", type=int, default=50, help="jobs per batch call")
    ap.add_argument("--agents", type=int, default=1)
    ap.add_argument("--gpus", type=int, default=8, help="declared GPUs per agent")
    ap.add_argument("--sample", type=float, default=10, help="seconds between CSV rows")
    ap.add_argument("--csv", default="soak_rate.csv", help="where the samples go")
    ap.add_argument("--ledger", action="store_true", help="each job appends its id to a file (via sh -c)")
    ap.add_argument("--max-backlog", type=int, default=0,
                    help="pause submitting while more than this many jobs are pending (0: never pause)")
    ap.add_argument("--drain-timeout", type=float, default=1800, help="seconds to wait for the backlog at the end")
    ap.add_argument("--exe", help="the gpusched binary (default: the release build)")
    args = ap.parse_args()
    if args.rate <= 0 or args.batch <= 0 or args.duration <= 0:
        sys.exit("--rate, --batch and --duration must be positive")
    exe = B.binary(args.exe)
    signal.signal(signal.SIGTERM, interrupted)
    tmp = tempfile.mkdtemp(prefix="gpusched-soak-rate-")
    port = 16470
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=base)
    procs = []
    ok = False
    try:
        server = subprocess.Popen([exe, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{tmp}/data"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/server.log", "w"))
        procs.append(server)
        t0 = time.time()
        while True:
            try:
                B.get(f"{base}/api/health")
                break
            except Exception:
                if time.time() - t0 > 60 or server.poll() is not None:
                    sys.exit(f"the server did not start; see {tmp}/server.log")
                time.sleep(0.05)
        user = pwd.getpwuid(os.getuid()).pw_name
        B.TOKEN = subprocess.run([exe, "token", "create", user, "--admin"], check=True, capture_output=True,
                                 text=True, env=dict(env, GPUSCHED_SERVER=f"unix:{tmp}/data/gpusched.sock")
                                 ).stdout.strip()
        agents = []
        for i in range(args.agents):
            a = subprocess.Popen([exe, "agent", "--server", base, "--name", f"soak{i}", "--state-dir",
                                  f"{tmp}/agent{i}", "--join-token-file", f"{tmp}/data/join-token",
                                  "--allow-root-jobs", "--gpus", str(args.gpus), "--gpu-backend", "declared"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/agent{i}.log", "w"))
            procs.append(a)
            agents.append(a)
        t0 = time.time()
        while len([n for n in B.get(f"{base}/api/nodes")["nodes"] if n["state"] == "online"]) < args.agents:
            if time.time() - t0 > 60:
                sys.exit(f"the agents did not come online; see {tmp}/agent*.log")
            time.sleep(0.05)

        ledger = f"{tmp}/ledger"
        command = ["sh", "-c", f'echo "$GPUSCHED_JOB_ID" >> {ledger}'] if args.ledger else ["/bin/true"]
        job = {"command": command, "gpus": 1, "cwd": "/tmp"}
        header = ["t_s", "accepted", "pending", "running", "succeeded", "other_ended",
                  "server_rss_mib", "server_hwm_mib", "server_cpu_s"]
        for i in range(args.agents):
            header += [f"agent{i}_rss_mib", f"agent{i}_hwm_mib", f"agent{i}_cpu_s"]
        out = open(args.csv, "w", newline="")
        w = csv.writer(out)
        w.writerow(header)
        samples = []  # (t, server rss, agent rss...)

        def sample(t, accepted):
            c = job_counts(base)
            other = sum(v for k, v in c.items() if k not in ("pending", "starting", "running", "succeeded"))
            row = [f"{t:.1f}", accepted, int(c["pending"]), int(c["starting"] + c["running"]), int(c["succeeded"]),
                   int(other)]
            rss = []
            for p in [server] + agents:
                r = vm_rss_mib(p.pid)
                rss.append(r)
                row += [f"{r:.2f}", f"{B.vm_hwm_mib(p.pid):.2f}", f"{B.cpu_s(p.pid):.2f}"]
            w.writerow(row)
            out.flush()
            samples.append((t, rss))
            print(" ".join(f"{h}={v}" for h, v in zip(header, row)), flush=True)

        ids = []
        cpu0 = [B.cpu_s(p.pid) for p in [server] + agents]
        start = time.time()
        next_post = start
        next_sample = start
        max_lag = 0.0
        paused_s = 0.0  # time the submitter held back for --max-backlog
        backlog_checked = 0.0
        sample(0.0, 0)
        next_sample += args.sample
        interval = args.batch / args.rate
        while True:
            now = time.time()
            if now - start >= args.duration:
                break
            if now >= next_sample:
                sample(now - start, len(ids))
                next_sample += args.sample
            if args.max_backlog and now >= next_post and now - backlog_checked >= 1.0:
                backlog_checked = now
                if job_counts(base)["pending"] > args.max_backlog:
                    time.sleep(0.5)
                    paused_s += time.time() - now
                    next_post = time.time()  # resume on schedule from here, no burst
                    continue
            if now >= next_post:
                max_lag = max(max_lag, now - next_post)
                ids += B.post(f"{base}/api/jobs/batch", {"jobs": [dict(job) for _ in range(args.batch)]})["ids"]
                next_post += interval
            else:
                time.sleep(min(next_post, next_sample) - now)
        submit_s = time.time() - start
        accepted = len(ids)
        sample(submit_s, accepted)
        phase = list(samples)
        # Drain: wait for the backlog, sampling on.
        drain0 = time.time()
        while True:
            c = job_counts(base)
            if c["pending"] + c["starting"] + c["running"] == 0:
                break
            if time.time() - drain0 > args.drain_timeout:
                print(f"the backlog did not drain within {args.drain_timeout:.0f} s", flush=True)
                break
            if time.time() >= next_sample:
                sample(time.time() - start, accepted)
                next_sample += args.sample
            time.sleep(0.5)
        end_s = time.time() - start
        sample(end_s, accepted)
        cpu = [B.cpu_s(p.pid) - c0 for p, c0 in zip([server] + agents, cpu0)]

        # Every accepted job: known, succeeded, attempt 1, never preempted.
        jobs = {j["id"]: j for j in B.jobs_between(base, ids[0], ids[-1])} if ids else {}
        missing = [i for i in ids if i not in jobs]
        bad = [(i, jobs[i]["state"], jobs[i].get("reason")) for i in ids
               if i in jobs and jobs[i]["state"] != "succeeded"]
        rerun = [i for i in ids if i in jobs and (jobs[i]["attempt"] != 1 or jobs[i].get("preemptions", 0))]
        twice = []
        if args.ledger:
            runs = Counter(int(line) for line in open(ledger) if line.strip())
            twice = [i for i, n in runs.items() if n > 1]
            missing += [i for i in ids if i in jobs and runs[i] == 0 and i not in missing]
        print(f"accepted {accepted} jobs in {submit_s:.0f} s: {accepted / submit_s:.1f} jobs/s submitted "
              f"(target {args.rate:g}; the submitter fell behind its schedule by at most {max_lag:.2f} s "
              f"and paused {paused_s:.0f} s for --max-backlog)")
        print(f"all ended after {end_s:.0f} s: {accepted / end_s:.1f} jobs/s end to end; drain took "
              f"{end_s - submit_s:.0f} s")
        names = ["server"] + [f"agent{i}" for i in range(args.agents)]
        for k, name in enumerate(names):
            ts = [t for t, _ in phase]
            ys = [r[k] for _, r in phase]
            print(f"{name}: RSS {ys[0]:.1f} -> {ys[-1]:.1f} MiB over the submitting phase, slope "
                  f"{slope_per_hour(ts, ys):+.1f} MiB/hour; peak {B.vm_hwm_mib(procs[k].pid):.1f} MiB; "
                  f"CPU {cpu[k] / max(accepted, 1) * 1e6:.0f} us per job")
        print(f"missing {len(missing)} {missing[:5]}; not succeeded {len(bad)} {bad[:5]}; "
              f"attempt > 1 or preempted {len(rerun)} {rerun[:5]}; ran twice (ledger) {len(twice)} {twice[:5]}")
        ok = accepted > 0 and not missing and not bad and not rerun and not twice
        print(f"samples in {args.csv}")
        print("SOAK", "PASSED" if ok else "FAILED", flush=True)
    finally:
        for p in reversed(procs):
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
