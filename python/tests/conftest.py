"""A live `gpusched up` (2 fake GPUs, loopback only) for the Python package's tests.

The binary is $GPUSCHED_BIN (scripts/python_test.sh sets it). Without it the live tests
are skipped, except under CI=true, where they fail: CI must not pass without them.
Every process started here is stopped at the end of the session.
"""

from __future__ import annotations

import getpass
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# The submitit tests' functions are pickled by reference: the jobs import them from here
# (the executor passes PYTHONPATH on to its jobs).
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH")) if p)
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def _interrupt(signum, frame):
    # `timeout` (scripts/python_test.sh) sends SIGTERM: unwind as for Ctrl-C, so the
    # session's finalizers stop `gpusched up` and its jobs.
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _interrupt)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout: float, proc=None, log: Path = None):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what}: the process exited ({proc.returncode}):\n{log.read_text() if log else ''}")
        try:
            got = check()
            if got:
                return got
        except Exception as e:  # noqa: BLE001 - kept to show below
            last = e
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last error: {last!r})")


class Cluster:
    def __init__(self, binary: str, root: Path) -> None:
        self.bin = binary
        self.root = root
        # XDG_DATA_HOME=root/xdg-data finds this socket as the CLI's default would.
        self.data = root / "xdg-data" / "gpusched"
        self.socket = self.data / "gpusched.sock"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = root / "up.log"
        self.proc = None
        self.token = ""

    def cli(self, *args: str) -> str:
        env = {**os.environ, "GPUSCHED_SERVER": f"unix:{self.socket}"}
        r = subprocess.run([self.bin, *args], capture_output=True, text=True, timeout=60, env=env)
        if r.returncode != 0:
            raise AssertionError(f"gpusched {' '.join(args)} failed: {r.stderr}")
        return r.stdout

    def start(self) -> None:
        self.data.mkdir(parents=True)
        self.proc = subprocess.Popen(
            [
                self.bin, "up", "--data-dir", str(self.data), "--listen", f"127.0.0.1:{self.port}",
                "--gpu-backend", "fake", "--gpus", "2", "--allow-root-jobs", "--max-wait", "10s",
            ],
            stdout=self.log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
        )
        # Evidence, not a state: the node is registered with its 2 GPUs.
        def node_up():
            out = subprocess.run([self.bin, "nodes", "--server", f"unix:{self.socket}"],
                                 capture_output=True, text=True, timeout=10)
            return out.returncode == 0 and "online" in out.stdout and "/2 " in out.stdout
        wait_for("gpusched up's node", node_up, 60, self.proc, self.log)
        # A token of this Unix user: its jobs run as this user over TCP too.
        self.token = self.cli("token", "create", getpass.getuser()).strip()
        assert self.token, "gpusched token create printed no token"

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    binary = os.environ.get("GPUSCHED_BIN")
    if not binary or not os.access(binary, os.X_OK):
        msg = f"GPUSCHED_BIN ({binary!r}) is not an executable gpusched: run scripts/python_test.sh PATH/TO/gpusched"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    c = Cluster(binary, tmp_path_factory.mktemp("gpusched"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.fixture()
def sock_env(cluster, monkeypatch):
    """The environment of a user of this cluster's socket."""
    monkeypatch.setenv("GPUSCHED_SERVER", f"unix:{cluster.socket}")
    monkeypatch.delenv("GPUSCHED_TOKEN", raising=False)
    return cluster
