"""Functions the submitit tests run as gpusched jobs. They live in a module of their
own (not a test module) so that the jobs import them by reference from PYTHONPATH,
as a user's code would be imported on the cluster."""

from __future__ import annotations

import os
import time
from pathlib import Path

import submitit


def add(a: int, b: int) -> int:
    return a + b


def environment() -> dict:
    keys = ("GPUSCHED_JOB_ID", "CUDA_VISIBLE_DEVICES", "SUBMITIT_EXECUTOR", "GPUSCHED_ARRAY_INDEX")
    env = submitit.JobEnvironment()
    return {"env": {k: os.environ.get(k) for k in keys}, "job_id": env.job_id, "cluster": env.cluster}


def square_and_print(x: int) -> int:
    print(f"square of {x}", flush=True)
    return x * x


def fail(x: int) -> None:
    raise ValueError(f"refusing {x}: this is the test's exception")


class Counter(submitit.helpers.Checkpointable):
    """Counts to `total`, resumable. The first attempt (GPUSCHED_RESTART_COUNT 0) stops
    at 10, says so in MARKS/waiting, and waits to be preempted: it never finishes by
    itself (after 120 s it fails), so a result proves a later attempt resumed it."""

    def __init__(self) -> None:
        self.done = 0
        self.starts: list = []

    def __call__(self, total: int, marks: str) -> dict:
        restart = int(os.environ.get("GPUSCHED_RESTART_COUNT", "0"))
        self.starts.append((restart, self.done))
        while self.done < total:
            if restart == 0 and self.done >= 10:
                Path(marks, "waiting").write_text(str(self.done))
                deadline = time.time() + 120
                while time.time() < deadline:
                    time.sleep(0.1)
                raise RuntimeError("the first attempt was never preempted")
            time.sleep(0.01)
            self.done += 1
        return {"starts": self.starts, "done": self.done}
