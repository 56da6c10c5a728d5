#!/usr/bin/env python3
"""What one agent keeps as trivial jobs pile up: its RSS and its state directory.

Runs a server and one agent (8 declared GPUs) from the given binary, submits batches
of `/bin/true` 1-GPU jobs through the batch API, and after each checkpoint prints the
agent's RSS (VmRSS now, VmHWM peak), the state directory's size and files, the
journal's size and how many checkpoint directories are left. Not part of CI: it
takes minutes (issue 14 item 3; results in docs/benchmarks-log.md (n)).

    scripts/agent_growth.py --bin target/release/gpusched --at 20000,100000
"""

import argparse, json, os, pwd, shutil, subprocess, sys, tempfile, time, urllib.request

TOKEN = None


def call(url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST")
    req.add_header("Content-Type", "application/json")
    if TOKEN:
        req.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024  # MiB
    return 0.0


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def disk(path):
    """Bytes as `du` counts them (blocks), and the number of files and directories."""
    blocks, entries = 0, 0
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            try:
                blocks += os.lstat(os.path.join(root, n)).st_blocks * 512
            except FileNotFoundError:
                pass
            entries += 1
    return blocks, entries


def wait_idle(base, limit=3600):
    t0 = time.time()
    while time.time() - t0 < limit:
        if not call(f"{base}/api/jobs?state=active&limit=1")["jobs"]:
            return
        time.sleep(0.5)
    sys.exit("jobs did not finish in time")


def main():
    global TOKEN
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the gpusched binary (a release build)")
    ap.add_argument("--at", default="20000,100000", help="job counts to report at")
    ap.add_argument("--batch", type=int, default=10000)
    ap.add_argument("--port", type=int, default=16470)
    ap.add_argument("--command", default="/bin/true",
                    help="each job's command, e.g. 'echo hi' (run by sh -c unless /bin/true)")
    ap.add_argument("--agent-arg", action="append", default=[],
                    help="one more agent flag, e.g. --agent-arg=--log-retention=10s (repeatable)")
    args = ap.parse_args()
    marks = sorted(int(x) for x in args.at.split(","))
    tmp = tempfile.mkdtemp(prefix="gpusched-growth-")
    base = f"http://127.0.0.1:{args.port}"
    env = dict(os.environ, GPUSCHED_LOG="warn", GPUSCHED_SERVER=base)
    server = subprocess.Popen([args.bin, "server", "--listen", f"127.0.0.1:{args.port}", "--data-dir",
                               f"{tmp}/data"], env=env, stdout=subprocess.DEVNULL)
    agent = None
    try:
        for _ in range(400):
            try:
                call(f"{base}/api/health")
                break
            except Exception:
                time.sleep(0.05)
        user = pwd.getpwuid(os.getuid()).pw_name
        TOKEN = subprocess.run([args.bin, "token", "create", user, "--admin"], check=True, capture_output=True,
                               text=True, env=dict(env, GPUSCHED_SERVER=f"unix:{tmp}/data/gpusched.sock")
                               ).stdout.strip()
        agent = subprocess.Popen([args.bin, "agent", "--server", base, "--name", "growth", "--state-dir",
                                  f"{tmp}/agent", "--join-token-file", f"{tmp}/data/join-token",
                                  "--allow-root-jobs", "--gpus", "8", "--gpu-model", "A100-SXM4-80GB",
                                  "--gpu-backend", "declared", *args.agent_arg], env=env, stdout=subprocess.DEVNULL)
        while not [n for n in call(f"{base}/api/nodes")["nodes"] if n["state"] == "online"]:
            time.sleep(0.05)
        command = ["/bin/true"] if args.command == "/bin/true" else ["sh", "-c", args.command]
        job = {"command": command, "gpus": 1, "cwd": "/tmp"}
        done, t0, c0 = 0, time.time(), cpu_s(agent.pid)
        print(f"agent state dir {tmp}/agent; RSS at start {status(agent.pid, 'VmRSS'):.1f} MiB", flush=True)
        for mark in marks:
            while done < mark:
                n = min(args.batch, mark - done)
                call(f"{base}/api/jobs/batch", {"jobs": [dict(job) for _ in range(n)]})
                wait_idle(base)
                done += n
            # Acks ride on the next report; give the agent a moment to take them in.
            time.sleep(3)
            size, entries = disk(f"{tmp}/agent")
            journal = os.path.getsize(f"{tmp}/agent/jobs/attempts.jsonl")
            ckpt = f"{tmp}/agent/jobs/checkpoints"
            ckpts = len(os.listdir(ckpt)) if os.path.isdir(ckpt) else 0
            logs = len(os.listdir(f"{tmp}/agent/jobs/logs"))
            cpu = cpu_s(agent.pid) - c0
            print(json.dumps(dict(jobs=done, agent_rss_mib=round(status(agent.pid, "VmRSS"), 1),
                                  agent_hwm_mib=round(status(agent.pid, "VmHWM"), 1),
                                  state_dir_mb=round(size / 1e6, 2), state_entries=entries,
                                  journal_bytes=journal, checkpoint_dirs=ckpts, log_files=logs,
                                  agent_cpu_us_per_job=round(cpu / done * 1e6),
                                  wall_s=round(time.time() - t0, 1))), flush=True)
    finally:
        for p in (agent, server):
            if p is not None:
                p.terminate()
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
