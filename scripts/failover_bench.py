#!/usr/bin/env python3
"""Leader failover time (issue 15), docs/benchmarks-log.md (v).

Starts three `gpusched server`s on one store with one join token file: a shared SQLite
file (WAL; several processes on one host), or with `--store postgres` a throwaway
PostgreSQL (scripts/throwaway_pg.py: its own cluster on loopback, fsync=on, default
synchronous_commit; stopped and deleted at the end), then N times:
finds the leader (GET /api/health), SIGKILLs it, and measures the time until another
server's health says it leads with a higher epoch; then restarts the killed server on
its data directory and port (it comes back as a follower) and waits for it before the
next kill, plus a random pause of 1 s to 1 s + the lease (seeded), so kills land at any
moment of the leader's renewal cycle. Prints each failover, the median and the worst.

What a failover costs with the default lease L = 4 s: the lease runs out between
L - L/3 and L after the kill (it was renewed at most L/3 before), and a follower tries
every L/8, so about 2.7 to 4.5 s.

Usage: python3 scripts/failover_bench.py [--kills 20] [--lease 4s (whole seconds)] [--seed 1] [--exe PATH (default: the release build)]
       [--store sqlite|postgres] [--json FILE] [--keep]

The temporary directory (the servers' data directories and logs, the shared SQLite file,
the join token) is deleted at the end, also after an error, Ctrl-C or SIGTERM; --keep
keeps it and prints where it is (the servers' logs, to see why a run failed).
"""
import argparse, json, os, random, shutil, signal, socket, statistics, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_live import binary  # noqa: E402
import throwaway_pg  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health(url):
    try:
        with urllib.request.urlopen(url + "/api/health", timeout=2) as r:
            return json.loads(r.read())
    except Exception:
        return None


def start(exe, data, port, store, join, lease):
    # The child keeps its own descriptor: ours is closed at once, not left open per start.
    with open(os.path.join(data + ".log"), "ab") as log:
        return subprocess.Popen(
            [exe, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", data, "--store", store,
             "--join-token-file", join, "--lease", lease],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
            env={**os.environ, "GPUSCHED_LOG": "warn"})


def wait(cond, limit, what):
    t = time.monotonic()
    while not cond():
        if time.monotonic() - t > limit:
            sys.exit(f"{what} did not happen within {limit} s")
        time.sleep(0.005)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--lease", default="4s")
    ap.add_argument("--exe")
    ap.add_argument("--json")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store", choices=["sqlite", "postgres"], default="sqlite")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (logs)")
    args = ap.parse_args()
    # A SIGTERM stops the servers and the throwaway PostgreSQL too (the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped by SIGTERM"))
    exe = binary(args.exe)
    tmp = tempfile.mkdtemp(prefix="gpusched-failover-")
    try:
        if args.store == "postgres":
            with throwaway_pg.cluster() as (url, version):
                print(f"store: a throwaway {version} at {url}", flush=True)
                run(args, exe, tmp, url, version)
        else:
            run(args, exe, tmp, "sqlite:" + os.path.join(tmp, "shared.db"), None)
    finally:
        # The servers are stopped by now (run's finally): nothing writes here any more.
        if args.keep:
            print(f"kept {tmp} (the servers' data directories and logs)", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run(args, exe, tmp, store, pg_version):
    rng = random.Random(args.seed)
    lease_s = float(args.lease.rstrip("s"))
    join = os.path.join(tmp, "join-token")
    ports = [free_port() for _ in range(3)]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    dirs = [os.path.join(tmp, f"s{i}") for i in range(3)]
    procs = [None, None, None]
    try:
        for i in range(3):
            procs[i] = start(exe, dirs[i], ports[i], store, join, args.lease)
            # One at a time: the first makes the schema.
            wait(lambda: health(urls[i]) is not None, 60, f"server {i} answering")
        times = []
        for k in range(args.kills):
            lead = None

            def found():
                nonlocal lead
                for i, u in enumerate(urls):
                    h = health(u)
                    if h and h.get("role") == "leader":
                        lead = (i, h["epoch"])
                        return True
                return False
            wait(found, 60, "a leader")
            i, epoch = lead
            # A crash comes at any moment of the renewal cycle: right after a takeover
            # the lease is fresh, which would make every failover the longest.
            time.sleep(rng.uniform(1.0, 1.0 + lease_s))
            procs[i].send_signal(signal.SIGKILL)
            t0 = time.monotonic()
            procs[i].wait()
            others = [u for j, u in enumerate(urls) if j != i]

            def taken():
                for u in others:
                    h = health(u)
                    if h and h.get("role") == "leader" and h["epoch"] > epoch:
                        return True
                return False
            wait(taken, 60, "a takeover")
            dt = time.monotonic() - t0
            times.append(dt)
            print(f"kill {k + 1}: server {i} (epoch {epoch}) -> a follower led after {dt:.2f} s", flush=True)
            procs[i] = start(exe, dirs[i], ports[i], store, join, args.lease)
            wait(lambda: (health(urls[i]) or {}).get("role") == "follower", 60, "the restart")
        res = {
            "store": args.store,
            "postgres": pg_version,
            "kills": len(times),
            "lease": args.lease,
            "median_s": round(statistics.median(times), 3),
            "worst_s": round(max(times), 3),
            "best_s": round(min(times), 3),
            "times_s": [round(t, 3) for t in times],
        }
        print(f"failover over {len(times)} kills ({args.store}, lease {args.lease}): median {res['median_s']} s, "
              f"worst {res['worst_s']} s, best {res['best_s']} s")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
    finally:
        for p in procs:
            if p and p.poll() is None:
                p.kill()
                p.wait()


if __name__ == "__main__":
    main()
