"""The Kubernetes manifests (issue 38), checked offline:

1. the Helm chart (deploy/helm/gpusched) is linted and rendered by Helm's own engine
   (helm-python-sdk: the Helm v4 Go SDK through ctypes, pinned in
   python/tests/requirements.txt), with the default values and with the other choices
   (gpuMode hostDriver, an existing Secret);
2. every rendered object, and deploy/kubernetes/gpusched.yaml, is validated against the
   Kubernetes OpenAPI schemas (kubernetes-validate, strict: an unknown field fails) for
   each Kubernetes version in VERSIONS;
3. deploy/kubernetes/gpusched.yaml must be the chart rendered with its defaults
   (--write regenerates it), and the chart's copy of the Grafana dashboard must equal
   deploy/grafana/gpusched.json;
4. given a gpusched binary: every flag the manifests pass to `gpusched server` and
   `gpusched agent` is one that command takes, and the queue file of the ConfigMap is
   loaded by a real `gpusched server` (started on loopback, then stopped).

Usage: python scripts/k8s_manifests.py [--write] [PATH/TO/gpusched]
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import helm_python as helm
import kubernetes_validate
import yaml
from helm_python import chart as helm_chart

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "deploy" / "helm" / "gpusched"
PLAIN = ROOT / "deploy" / "kubernetes" / "gpusched.yaml"
VERSIONS = ["1.29.0", "1.33.0", "1.37.0"]
# helm install's order of kinds, so the plain file applies in one `kubectl apply -f`.
KIND_ORDER = ["Secret", "ConfigMap", "Service", "DaemonSet", "Deployment", "PodDisruptionBudget"]
HEADER = """\
# gpusched on Kubernetes, as plain YAML: deploy/helm/gpusched rendered with its default
# values (release `gpusched`, namespace `gpusched`) by scripts/k8s_manifests.py --write.
# Do not edit: change the chart and regenerate. Replace the Secret's placeholders first.
# NOT RUN ON A REAL CLUSTER YET: validated offline against the Kubernetes schemas only
# (docs/kubernetes.md).
"""


def render(values: dict) -> list:
    with helm_chart.Chart.load(str(CHART)) as c:
        files = c.render(values, name="gpusched", namespace="gpusched", is_install=True)
    docs = []
    for name in sorted(files):
        if not name.endswith(".yaml"):
            continue
        for text in re.split(r"^---\s*$", files[name], flags=re.M):
            if yaml.safe_load(text):
                docs.append((name, text.strip("\n")))
    docs.sort(key=lambda d: (KIND_ORDER.index(yaml.safe_load(d[1])["kind"]), d[0]))
    return docs


def plain_text(docs: list) -> str:
    parts = [f"# Source: {name.split('/', 1)[1]}\n{text}\n" for name, text in docs]
    return HEADER + "---\n" + "---\n".join(parts)


def validate(label: str, objects: list) -> int:
    n = 0
    for obj in objects:
        for v in VERSIONS:
            try:
                kubernetes_validate.validate(obj, v, strict=True)
            except kubernetes_validate.ValidationError as e:
                sys.exit(f"{label}: {obj['kind']} {obj['metadata']['name']} is invalid for Kubernetes {v}: "
                         f"{e.message} at {'/'.join(str(p) for p in e.path)}")
            n += 1
    return n


def flags_of(binary: str, sub: str) -> set:
    out = subprocess.run([binary, sub, "--help"], capture_output=True, text=True, timeout=30, check=True).stdout
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", out))


def check_with_binary(binary: str, objects: list) -> None:
    have = {"server": flags_of(binary, "server"), "agent": flags_of(binary, "agent")}
    for obj in objects:
        if obj["kind"] not in ("Deployment", "DaemonSet"):
            continue
        for c in obj["spec"]["template"]["spec"]["containers"]:
            sub, *args = c["args"]
            for a in args:
                flag = a.split("=", 1)[0]
                if flag.startswith("--") and flag not in have[sub]:
                    sys.exit(f"{obj['kind']} {obj['metadata']['name']}: `gpusched {sub}` takes no {flag}")
    queues = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-queues"))
    with tempfile.TemporaryDirectory() as tmp:
        qfile = Path(tmp, "queues.toml")
        qfile.write_text(queues["data"]["queues.toml"])
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        log = Path(tmp, "server.log")
        p = subprocess.Popen([binary, "server", "--data-dir", f"{tmp}/data", "--listen", f"127.0.0.1:{port}",
                              "--queues", str(qfile)], stdout=log.open("wb"), stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 30
            while True:
                if p.poll() is not None:
                    sys.exit(f"gpusched server refused the chart's queue file:\n{log.read_text()}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as r:
                        if b'"leader"' in r.read():
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    sys.exit(f"gpusched server did not come up with the chart's queue file:\n{log.read_text()}")
                time.sleep(0.1)
        finally:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    print(f"flags: every one is taken by gpusched server/agent; the queue file loads ({binary})")


def main() -> None:
    args = sys.argv[1:]
    write = "--write" in args
    args = [a for a in args if a != "--write"]
    binary = args[0] if args else None

    dash = (ROOT / "deploy" / "grafana" / "gpusched.json").read_bytes()
    if (CHART / "files" / "grafana-dashboard.json").read_bytes() != dash:
        sys.exit("deploy/helm/gpusched/files/grafana-dashboard.json differs from deploy/grafana/gpusched.json: "
                 "copy it (cp deploy/grafana/gpusched.json deploy/helm/gpusched/files/grafana-dashboard.json)")

    lint = helm.lint(str(CHART), strict=True)
    if lint["errors"] or any(m["severity"] > 1 for m in lint["messages"]):
        sys.exit(f"helm lint: {lint}")
    print(f"helm lint (Helm SDK {helm.helm_sdk_version()}): no error, no warning")

    variants = {
        "defaults": {},
        "hostDriver + existing Secret": {
            "agent": {"gpuMode": "hostDriver"},
            "secrets": {"create": False, "existingSecret": "my-gpusched"},
            "server": {"extraArgs": ["--policy=drf"], "metricsPublic": False},
        },
    }
    checked = 0
    default_docs = None
    for label, values in variants.items():
        docs = render(values)
        objects = [yaml.safe_load(t) for _, t in docs]
        kinds = sorted(o["kind"] for o in objects)
        checked += validate(f"chart ({label})", objects)
        if label == "defaults":
            default_docs = docs
            assert "Secret" in kinds, kinds
            if binary:
                check_with_binary(binary, objects)
        else:
            assert "Secret" not in kinds, "secrets.create=false must render no Secret"
            ds = next(o for o in objects if o["kind"] == "DaemonSet")
            assert ds["spec"]["template"]["spec"]["containers"][0]["securityContext"].get("privileged") is True
        print(f"chart ({label}): {', '.join(kinds)}")

    text = plain_text(default_docs)
    if write:
        PLAIN.parent.mkdir(parents=True, exist_ok=True)
        PLAIN.write_text(text)
        print(f"wrote {PLAIN.relative_to(ROOT)}")
    elif not PLAIN.exists() or PLAIN.read_text() != text:
        sys.exit("deploy/kubernetes/gpusched.yaml is not the chart rendered with its defaults: "
                 "run scripts/k8s_manifests.sh --write and commit it")
    plain = [o for o in yaml.safe_load_all(PLAIN.read_text()) if o]
    checked += validate("deploy/kubernetes/gpusched.yaml", plain)
    print(f"kubernetes-validate (strict): {checked} object checks against Kubernetes {', '.join(VERSIONS)}: all valid")


if __name__ == "__main__":
    main()
