#!/usr/bin/env python3
"""Full disks, for real: the server's data directory and the agent's state directory
each on a small tmpfs (needs root: mount -t tmpfs), filled until writes fail.

Phase 1, the agent's log disk fills: a job prints far more than the agent's 1 MiB disk
holds. Expected: the job keeps running and succeeds, the agent says the output is
dropped (agent.log), its log ends with what fitted, and the agent keeps working.

Phase 2, the server's disk fills: six 2 s jobs are submitted, then a filler file takes
the rest of the 8 MiB data disk and clients submit until the server refuses; the disk
stays full for 30 s (twice the agent's lease), while those jobs end. Expected: 503 with a message that names
the disk ("could not save this change ... free space"), the server keeps answering reads
and polls (no agent fences its jobs), nothing accepted is lost; once the filler is
deleted, submissions succeed again with no restart, and every accepted job runs once.

Usage: sudo python3 scripts/full_disk.py [--bin PATH]
Prints one JSON line of figures; exit 0 when every expectation held, 1 otherwise,
77 when tmpfs cannot be mounted here (not root, or no mount permission).
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_bin():
    tgt = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    for profile in ("release", "debug"):
        p = os.path.join(tgt, profile, "gpusched")
        if os.path.exists(p):
            return p
    sys.exit("no gpusched binary: run `cargo build --release` (or pass --bin PATH)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=None)
    args = ap.parse_args()
    g = args.bin or default_bin()
    d = tempfile.mkdtemp(prefix="gpusched-full-")
    data, state = f"{d}/data", f"{d}/agent"
    os.makedirs(data)
    os.makedirs(state)
    mounted = []
    try:
        for path, size in ((data, "8m"), (state, "1m")):
            r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"SKIP: cannot mount a tmpfs ({r.stderr.strip()}); run as root",
                      file=sys.stderr)
                sys.exit(77)
            mounted.append(path)
        run(g, d, data, state)
    finally:
        for path in reversed(mounted):
            subprocess.run(["umount", "-l", path])


def run(g, d, data, state):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    env = dict(os.environ, GPUSCHED_LOG="warn")
    sock = f"unix:{data}/gpusched.sock"
    figures = {}
    failures = []

    def expect(ok, what):
        if not ok:
            failures.append(what)
            print("FAILED:", what, file=sys.stderr)

    def cli(*a):
        return subprocess.run([g, *a], env=dict(env, GPUSCHED_SERVER=sock),
                              capture_output=True, text=True, timeout=120)

    srv = subprocess.Popen([g, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", data,
                            "--grace", "1s"],
                           env=env, stdout=subprocess.DEVNULL, stderr=open(f"{d}/server.log", "w"))
    deadline = time.time() + 60
    while not os.path.exists(f"{data}/join-token") or cli("nodes").returncode != 0:
        assert time.time() < deadline, "the server did not start"
        time.sleep(0.1)
    agent = subprocess.Popen([g, "agent", "--server", f"http://127.0.0.1:{port}", "--name", "n1",
                              "--state-dir", state, "--join-token-file", f"{data}/join-token",
                              "--allow-root-jobs", "--gpus", "2", "--gpu-backend", "declared"],
                             env=env, stdout=subprocess.DEVNULL,
                             stderr=open(f"{d}/agent.log", "w"))
    while "online" not in cli("nodes").stdout:
        assert time.time() < deadline, "the agent did not join"
        time.sleep(0.1)

    def wait_end(jid, limit=120):
        end = time.time() + limit
        while time.time() < end:
            o = cli("show", "--json", str(jid))
            if o.returncode == 0:
                v = json.loads(o.stdout)
                if v["state"] in ("succeeded", "failed", "cancelled", "timed_out"):
                    return v
            time.sleep(0.2)
        return None

    try:
        # Phase 1: 4 MiB of output onto the agent's 1 MiB disk.
        o = cli("submit", "--json", "--", "sh", "-c",
                "head -c 4194304 /dev/zero | tr '\\0' x; echo; echo done >&2")
        jid = json.loads(o.stdout)["ids"][0]
        v = wait_end(jid)
        agent_log = open(f"{d}/agent.log").read()
        figures["agent_full_job_state"] = v and v["state"]
        expect(v is not None and v["state"] == "succeeded",
               f"the job on a full log disk succeeded: {v}")
        expect("output is dropped until there is space" in agent_log,
               "the agent said the job's output is dropped")
        expect(agent.poll() is None, "the agent kept running")
        # Space back (the operator removes the big log): the next job runs and logs.
        for f in os.listdir(f"{state}/jobs/logs"):
            os.remove(f"{state}/jobs/logs/{f}")
        o = cli("submit", "--json", "--", "echo", "after")
        jid2 = json.loads(o.stdout)["ids"][0]
        v2 = wait_end(jid2)
        expect(v2 is not None and v2["state"] == "succeeded", f"a job after the agent's disk was freed: {v2}")
        expect(cli("logs", str(jid2)).stdout == "after\n", "its log was written")

        # Phase 2: jobs running and waiting across the outage (their ends are reported
        # while the disk is full), then fill the server's disk and submit until refused.
        accepted = []
        for i in range(6):
            o = cli("submit", "--json", "--name", f"across-{i}", "--", "sleep", "2")
            accepted.append(json.loads(o.stdout)["ids"][0])
        with open(f"{data}/filler", "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        refusal = None
        big = "x" * 3000
        for i in range(3000):
            o = cli("submit", "--json", "-e", f"PAD={big}", "--name", f"fill-{i}", "--", "true")
            if o.returncode == 0:
                accepted.append(json.loads(o.stdout)["ids"][0])
            else:
                refusal = o.stderr.strip()
                break
        figures["accepted_before_refusal"] = len(accepted)
        figures["refusal"] = refusal
        expect(refusal is not None and "HTTP 503" in refusal and "free space" in refusal,
               f"a 503 that says to free space: {refusal}")
        expect(srv.poll() is None, "the server kept running")
        o = cli("queue", "--all", "--json", "--limit", "100000")
        expect(o.returncode == 0, f"reads answered on a full disk: {o.stderr}")
        refusals = 0
        for _ in range(5):
            o = cli("submit", "--json", "--", "true")
            refusals += o.returncode != 0
        figures["refused_while_full"] = refusals
        # Held full for twice the agent's default lease (15 s): polls go on, so the agent
        # must not fence its jobs (they would come back with attempt 2).
        time.sleep(30)
        # Space back: no restart, the server takes work again.
        os.remove(f"{data}/filler")
        start = time.time()
        after = None
        while time.time() - start < 30:
            o = cli("submit", "--json", "--name", "after-free", "--", "true")
            if o.returncode == 0:
                after = json.loads(o.stdout)["ids"][0]
                break
            time.sleep(0.5)
        figures["recovered_after_s"] = round(time.time() - start, 1)
        expect(after is not None, "a submission succeeded after space was freed")
        accepted += [after] if after else []
        o = cli("queue", "--all", "--json", "--limit", "100000")
        known = {j["id"]: j for j in json.loads(o.stdout)["jobs"]}
        lost = [i for i in accepted if i not in known]
        figures["lost"] = len(lost)
        expect(not lost, f"nothing accepted was lost: {lost[:10]}")
        ends = [wait_end(i, 300) for i in accepted]
        bad = [e for e in ends if e is None or e["state"] != "succeeded"]
        figures["not_succeeded"] = len(bad)
        expect(not bad, f"every accepted job ran: {bad[:3]}")
        figures["attempts_above_1"] = sum(1 for e in ends if e and e["attempt"] > 1)
        expect(figures["attempts_above_1"] == 0, "no job was fenced or lost during the outage")
        expect(srv.poll() is None and agent.poll() is None, "both still running")
    finally:
        srv.kill()
        agent.kill()
        srv.wait()
        agent.wait()
    figures["dir"] = d
    print(json.dumps(figures))
    if failures:
        sys.exit(1)
    print("PASS", file=sys.stderr)


if __name__ == "__main__":
    main()
