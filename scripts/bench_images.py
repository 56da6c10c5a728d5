#!/usr/bin/env python3
"""Container start cost per job (docs/benchmarks.md, issue 32).

Starts `gpusched server` and one root `gpusched agent --image-runtime podman` on loopback,
then runs N trivial jobs one at a time on the idle cluster, first on the host
(`/bin/true`), then in an image (`true` in gpusched-test/busybox:1, imported from
busybox-static's /bin/busybox if missing, as the live test does), and prints for each the
median and worst of submit -> start (the agent's `Started`: for an image job, once the
runtime's process is started, after the agent checked the image is on the node) and
submit -> end (the job's end as the server recorded it: the container made, run and
removed). The difference of the ends is what a container costs a job here.

Usage: python3 scripts/bench_images.py [--jobs 20] [--exe PATH (default: the debug build)]
Needs root, podman, runc (on hybrid cgroup hosts) and /bin/busybox.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGE = "gpusched-test/busybox:1"


def call(base, method, path, body=None):
    req = urllib.request.Request(base + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"content-type": "application/json", "authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def ensure_image(tmp):
    if subprocess.run(["podman", "image", "exists", IMAGE]).returncode == 0:
        return
    root = os.path.join(tmp, "rootfs")
    for d in ["bin", "etc", "tmp", "proc", "sys", "dev"]:
        os.makedirs(os.path.join(root, d))
    shutil.copy("/bin/busybox", os.path.join(root, "bin/busybox"))
    for a in ["sh", "ls", "id", "cat", "sleep", "true", "test", "pwd", "echo"]:
        os.symlink("busybox", os.path.join(root, "bin", a))
    tar = subprocess.run(["tar", "-C", root, "-c", "."], check=True, capture_output=True).stdout
    subprocess.run(["podman", "import", "-", IMAGE], input=tar, check=True, capture_output=True)


def run(base, job, n):
    starts, ends = [], []
    for _ in range(n):
        i = call(base, "POST", "/api/jobs", job)["ids"][0]
        v = call(base, "GET", f"/api/jobs/{i}/wait?timeout_s=60")
        if v["state"] != "succeeded":
            sys.exit(f"job {i} {v['state']}: {v['reason']}")
        starts.append(v["start_ms"] - v["submit_ms"])
        ends.append(v["end_ms"] - v["submit_ms"])
    return dict(start_p50=statistics.median(starts), start_max=max(starts),
                end_p50=statistics.median(ends), end_max=max(ends))


def main():
    global TOKEN
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--exe", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                                                  "debug", "gpusched"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gpusched-bench-images-")
    ensure_image(tmp)
    port = 16460
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, GPUSCHED_LOG="warn")
    server = subprocess.Popen([args.exe, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", f"{tmp}/data"],
                              env=env, stdout=subprocess.DEVNULL)
    agent = None
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/api/health", timeout=1)
                break
            except Exception:
                time.sleep(0.05)
        TOKEN = subprocess.run([args.exe, "token", "create", "root", "--admin"], check=True, capture_output=True,
                               text=True, env=dict(env, GPUSCHED_SERVER=f"unix:{tmp}/data/gpusched.sock")).stdout.strip()
        agent = subprocess.Popen([args.exe, "agent", "--server", base, "--name", "bench", "--state-dir", f"{tmp}/agent",
                                  "--join-token-file", f"{tmp}/data/join-token", "--allow-root-jobs",
                                  "--gpus", "8", "--gpu-model", "A100-SXM4-80GB", "--gpu-backend", "declared",
                                  "--image-runtime", "podman"], env=env, stdout=subprocess.DEVNULL)
        while not [n for n in call(base, "GET", "/api/nodes")["nodes"] if n["state"] == "online"]:
            time.sleep(0.05)
        node = call(base, "GET", "/api/nodes")["nodes"][0]
        runtime = node["containment"]["image_runtime"]
        host = run(base, {"command": ["/bin/true"], "gpus": 1, "cwd": "/tmp"}, args.jobs)
        image = run(base, {"command": ["true"], "gpus": 1, "cwd": "/tmp", "image": IMAGE}, args.jobs)
        print(f"{args.jobs} jobs each, one at a time, runtime {runtime}:")
        for name, r in [("host", host), ("image", image)]:
            print(f"  {name:5}: submit->start median {r['start_p50']:.0f} ms (max {r['start_max']:.0f}); "
                  f"submit->end median {r['end_p50']:.0f} ms (max {r['end_max']:.0f})")
        print(f"  a container costs a trivial job {image['end_p50'] - host['end_p50']:.0f} ms (medians of submit->end)")
        print(json.dumps(dict(runtime=runtime, jobs=args.jobs, host=host, image=image)))
    finally:
        for p in [agent, server]:
            if p:
                p.terminate()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
