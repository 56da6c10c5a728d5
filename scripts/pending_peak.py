#!/usr/bin/env python3
"""The server's peak memory through one batch of pending jobs (issue 39, item 4).

Starts `gpusched server` (default SQLite store in a temporary directory), lets one agent
declaring 8 GPUs register and then stops it (so the batch is admitted and every job stays
pending: nothing runs), submits `--jobs` 1-GPU jobs of `/bin/true` in ONE batch call, and
prints the server's VmHWM (peak RSS) before and after. With `--massif` the server runs
under `valgrind --tool=massif` instead and the script prints where the heap's peak is
(`ms_print`'s largest entries naming gpusched code); RSS under valgrind means nothing.

RSS counts the binary's resident code (about 17 MiB of a release build at start, file
pages) as well as the heap; massif counts the heap alone, repeatably.

Usage: cargo build --release && python3 scripts/pending_peak.py [--jobs 10000] [--exe PATH]
       [--massif [--out FILE]]
"""
import argparse, os, pwd, re, shutil, subprocess, sys, tempfile, time

sys.dont_write_bytecode = True  # no __pycache__ in scripts/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_live as bl  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--exe", help="the gpusched binary (default: the release build)")
    ap.add_argument("--massif", action="store_true", help="run the server under valgrind's massif")
    ap.add_argument("--out", help="with --massif: keep the profile here")
    ap.add_argument("--port", type=int, default=16530)
    args = ap.parse_args()
    exe = bl.binary(args.exe)
    tmp = tempfile.mkdtemp(prefix="gpusched-pending-")
    base = f"http://127.0.0.1:{args.port}"
    env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=base)
    massif_out = args.out or os.path.join(tmp, "massif.out")
    wrap = ["valgrind", "--tool=massif", f"--massif-out-file={massif_out}", "--depth=40",
            "--threshold=0.5"] if args.massif else []
    server = subprocess.Popen([*wrap, exe, "server", "--listen", f"127.0.0.1:{args.port}", "--data-dir",
                               f"{tmp}/data"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t0 = time.time()
        while True:
            try:
                bl.get(f"{base}/api/health")
                break
            except Exception:
                if time.time() - t0 > 120 or server.poll() is not None:
                    sys.exit("the server did not start")
                time.sleep(0.1)
        user = pwd.getpwuid(os.getuid()).pw_name
        bl.TOKEN = subprocess.run([exe, "token", "create", user, "--admin"], check=True, capture_output=True,
                                  text=True, env=dict(env, GPUSCHED_SERVER=f"unix:{tmp}/data/gpusched.sock")
                                  ).stdout.strip()
        agent = subprocess.Popen([exe, "agent", "--server", base, "--name", "n0", "--state-dir", f"{tmp}/agent",
                                  "--join-token-file", f"{tmp}/data/join-token", "--allow-root-jobs", "--gpus", "8",
                                  "--gpu-model", "A100-SXM4-80GB", "--gpu-backend", "declared"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.time()
        while not [n for n in bl.get(f"{base}/api/nodes")["nodes"] if n["state"] == "online"]:
            if time.time() - t0 > 120:
                sys.exit("the agent did not register")
            time.sleep(0.1)
        agent.terminate()
        agent.wait(timeout=30)
        time.sleep(0.5)
        before = None if args.massif else bl.vm_hwm_mib(server.pid)
        t0 = time.time()
        job = {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp"}
        ids = bl.post(f"{base}/api/jobs/batch", {"jobs": [dict(job) for _ in range(args.jobs)]})["ids"]
        took = time.time() - t0
        if len(ids) != args.jobs:
            sys.exit(f"{len(ids)} of {args.jobs} jobs accepted")
        if args.massif:
            print(f"{args.jobs} pending jobs in one batch call ({took:.2f} s under valgrind)")
        else:
            print(f"{args.jobs} pending jobs in one batch call ({took:.3f} s): server VmHWM {before:.1f} MiB "
                  f"before, {bl.vm_hwm_mib(server.pid):.1f} MiB after")
    finally:
        server.terminate()
        server.wait(timeout=120)
    if args.massif:
        report = subprocess.run(["ms_print", massif_out], capture_output=True, text=True).stdout
        peak = int(re.search(r"(\d+) \(peak\)", report).group(1))
        # The peak snapshot's tree: from its row in the table to the next table.
        section = report[re.search(rf"^\s+{peak}\s+[\d,]+\s+[\d,]+", report, re.M).start():]
        total = int(section.split()[2].replace(",", ""))
        section = section.split("\n-------", 1)[0]
        print(f"heap at the peak {total / 2**20:.1f} MiB (useful + extra); the largest sites in gpusched code:")
        # The innermost gpusched frame of each allocation chain (its callers repeat its size).
        seen, last = set(), None
        for line in section.split("\n"):
            m = re.search(r"->\s*[\d.]+% \(([\d,]+)B\) 0x[0-9A-F]+: (gpusched_\w+::[^\s(]+)", line)
            if not m:
                continue
            size = int(m.group(1).replace(",", ""))
            if size != last and m.group(2) not in seen and len(seen) < 12:
                seen.add(m.group(2))
                print(f"  {size / 2**20:6.2f} MiB  {m.group(2)}")
            last = size
        if not args.out:
            print(f"(profile kept: {massif_out})")
            return
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
