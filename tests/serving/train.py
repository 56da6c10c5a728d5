#!/usr/bin/env python3
"""A checkpointing training job, the one a service's replica preempts in tests/serving/e2e.py.

Counts steps (one every --step-s), saving the step in $GPUSCHED_CHECKPOINT_DIR/checkpoint
after each; starts from the saved step when there is one. That directory is per node
(docs/live-cluster.md: shared storage is the way to resume on another node), so with
$TRAIN_SHARED the checkpoint is also kept there, as on a cluster's shared file system,
and read from there when this node has none. On the preemption signal
(SIGUSR1, gpusched's default) or SIGTERM it saves and exits 0. Each start and stop is
appended to $TRAIN_LOG (one JSON object a line) so a test can read where it resumed
without knowing which node ran it.
"""

import json
import os
import signal
import sys
import time

CKPT_DIR = os.environ.get("GPUSCHED_CHECKPOINT_DIR") or os.getcwd()
CKPT = os.path.join(CKPT_DIR, "checkpoint")
LOG = os.environ.get("TRAIN_LOG")
SHARED = os.environ.get("TRAIN_SHARED")
STEP_S = float(sys.argv[sys.argv.index("--step-s") + 1]) if "--step-s" in sys.argv else 0.2
STEPS = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 10**9


def note(**kv):
    kv.update(t=round(time.time(), 3), job=os.environ.get("GPUSCHED_JOB_ID"),
              restart=int(os.environ.get("GPUSCHED_RESTART_COUNT", "0")))
    line = json.dumps(kv)
    print(line, flush=True)
    if LOG:
        with open(LOG, "a") as f:
            f.write(line + "\n")


def save(step):
    for path in [CKPT] + ([os.path.join(SHARED, "checkpoint")] if SHARED else []):
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(step))
        os.replace(tmp, path)


step, source = 0, None
for path, where in ((CKPT, "node"), (os.path.join(SHARED or "", "checkpoint"), "shared")):
    if (where == "node" or SHARED) and os.path.exists(path):
        step, source = int(open(path).read().strip() or 0), where
        break
note(event="start", from_step=step, source=source)
stop = {"sig": None}


def on_signal(signum, frame):
    stop["sig"] = signal.Signals(signum).name


signal.signal(signal.SIGUSR1, on_signal)
signal.signal(signal.SIGTERM, on_signal)
while step < STEPS and stop["sig"] is None:
    time.sleep(STEP_S)
    step += 1
    save(step)
save(step)
note(event="stop", step=step, signal=stop["sig"])
