"""submitit (the real package, pinned by scripts/python_test.sh) through its plugin
entry point, against a live `gpusched up`: a function, an array, an exception, and a
checkpointable function preempted (a node drained with --now) and resumed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import submitit

import gpusched
import submitit_funcs as funcs
from conftest import wait_for


def finished(job, timeout: float = 90):
    """The job, once submitit sees it done (bounded: submitit's own result() waits forever)."""
    wait_for(f"job {job.job_id} to finish", job.done, timeout)
    return job


@pytest.fixture()
def executor(sock_env, tmp_path):
    ex = submitit.AutoExecutor(folder=tmp_path / "runs" / "%j", cluster="gpusched")
    ex.update_parameters(timeout_min=5, gpus_per_node=1, cpus_per_task=1, mem_gb=0.5, name="submitit-test")
    return ex


def test_the_plugin_is_found_through_the_entry_point():
    from submitit.core import plugins

    assert "gpusched" in plugins.get_executors()
    assert "gpusched" in plugins.get_job_environments()


def test_a_function_runs_as_a_gpusched_job(executor, sock_env):
    job = executor.submit(funcs.environment)
    got = finished(job).result()
    assert got["cluster"] == "gpusched" and got["job_id"] == job.job_id
    assert got["env"]["GPUSCHED_JOB_ID"] == job.job_id
    assert got["env"]["CUDA_VISIBLE_DEVICES"] not in (None, "")
    # The result pickle comes before the process ends; the state follows.
    wait_for("COMPLETED", lambda: job.get_info(mode="force").get("State") == "COMPLETED", 30)
    # The parameters as gpusched got them.
    v = gpusched.Client().job(int(job.job_id)).view()
    assert (v.gpus, v.walltime_s, v.mem_mib, v.name) == (1, 300, 512, "submitit-test")
    assert v.cpu_milli == 1000
    body = json.loads(Path(job.paths.submission_file).read_text())
    assert body["gpus"] == 1 and body["walltime_s"] == 300


def test_an_array_through_map_array(executor, sock_env):
    executor.update_parameters(gpus_per_node=0, gpusched_array_parallelism=2)
    jobs = executor.map_array(funcs.square_and_print, [1, 2, 3, 4])
    array_ids = {j.job_id.split("_")[0] for j in jobs}
    assert len(array_ids) == 1, "map_array must make one gpusched array"
    assert [j.job_id.split("_")[1] for j in jobs] == ["0", "1", "2", "3"]
    assert [finished(j).result() for j in jobs] == [1, 4, 9, 16]
    assert "square of 3" in jobs[2].stdout()
    array_id = int(array_ids.pop())
    # The result pickles come before the processes end; the tasks' states follow.
    wait_for(
        "every task succeeded",
        lambda: gpusched.Client().job(array_id).view().array_counts.succeeded == 4,
        30,
    )
    v = gpusched.Client().job(array_id).view()
    assert v.array is not None and v.array.max_running == 2 and v.array_counts.succeeded == 4


def test_an_exception_comes_back_as_submitits(executor):
    job = finished(executor.submit(funcs.fail, 7))
    with pytest.raises(submitit.core.utils.FailedJobError, match="refusing 7: this is the test's exception"):
        job.result()
    assert isinstance(job.exception(), submitit.core.utils.FailedJobError)
    wait_for("FAILED", lambda: job.get_info(mode="force").get("State") == "FAILED", 30)


def test_a_checkpointable_function_is_preempted_and_resumed(executor, sock_env, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    client = gpusched.Client()
    job = executor.submit(funcs.Counter(), 50, str(marks))
    wait_for("the first attempt to reach 10", lambda: (marks / "waiting").exists(), 60)
    # The process runs before its agent's report of the start reaches the server.
    first = wait_for(
        "the server to see it running",
        lambda: (v := client.job(int(job.job_id)).view()) and str(v.state) == "running" and v,
        30,
    )
    assert first.attempt == 1 and str(first.state) == "running"
    # Preempt it: drain its node now (SIGUSR1, the checkpoint, back to the queue).
    client.drain(first.node, "submitit preemption test", now=True)
    try:
        requeued = wait_for(
            "the job to be requeued",
            lambda: (lambda v: v if v.attempt == 2 and str(v.state) == "pending" else None)(
                client.job(int(job.job_id)).view()
            ),
            60,
        )
        assert "drained" in requeued.reason
    finally:
        client.resume(first.node)
    got = finished(job, 120).result()
    # The second attempt started from the checkpoint (10), not from 0.
    assert got == {"starts": [(0, 0), (1, 10)], "done": 50}
    log = job.stderr()
    assert "SIGUSR1" in log and "checkpointed" in log, log
    assert client.job(int(job.job_id)).view().attempt == 2


def test_cancel_a_job_and_an_array_task(executor, sock_env):
    job = executor.submit(time.sleep, 120)
    job.cancel()
    wait_for("CANCELLED", lambda: job.get_info(mode="force").get("State") == "CANCELLED", 30)
    executor.update_parameters(gpus_per_node=0, gpusched_array_parallelism=1)
    tasks = executor.map_array(time.sleep, [120, 120])
    tasks[1].cancel()  # not started yet (one at a time): cancelled before it runs
    tasks[0].cancel()
    for t in tasks:
        wait_for(f"{t.job_id} CANCELLED", lambda t=t: t.get_info(mode="force").get("State") == "CANCELLED", 30)


def test_slurm_like_parameters_reach_gpusched(executor, sock_env):
    executor.update_parameters(gpus_per_node=0, gpusched_exclude="no-such-node", gpusched_priority=3,
                               gpusched_additional_parameters={"max_retries": 1})
    job = executor.submit(funcs.add, 1, 2)
    assert finished(job).result() == 3
    v = gpusched.Client().job(int(job.job_id)).view()
    assert v.priority == 3 and v.max_retries == 1 and v.gpus == 0


def test_unsupported_parameters_are_refused_saying_what_to_do(sock_env, tmp_path):
    ex = submitit.AutoExecutor(folder=tmp_path, cluster="gpusched")
    with pytest.raises(ValueError, match="gang"):
        ex.update_parameters(nodes=2)
    with pytest.raises(NameError, match="gpusched"):
        ex.update_parameters(gpusched_partitoin="a")
