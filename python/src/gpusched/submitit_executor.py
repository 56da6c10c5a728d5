"""A submitit executor for gpusched, found by submitit through its plugin entry point
(`[project.entry-points.submitit]` in python/pyproject.toml):

    import submitit
    ex = submitit.AutoExecutor(folder="runs/%j", cluster="gpusched")
    ex.update_parameters(gpus_per_node=1, cpus_per_task=4, mem_gb=16, timeout_min=60)
    job = ex.submit(train, cfg)          # a gpusched job running `train(cfg)`
    print(job.result())
    jobs = ex.map_array(score, seeds)    # one gpusched array

How it maps onto gpusched (docs/python.md has the table):

- a submission is one gpusched job (`map_array`/`batch()`: one array, `array_parallelism`
  its `%K`) running `python -m gpusched._submitit_run FOLDER` with the submitter's
  interpreter (`sys.executable`), working directory and `PYTHONPATH`; the folder must be
  on storage the job's node shares with the submitter (as for submitit on Slurm);
- the job's stdout and stderr go to submitit's log files in the folder (`job.stdout()`);
- results and exceptions come back through submitit's pickles, as on Slurm;
- preemption: gpusched sends `--preempt-signal` (SIGUSR1 by default) and requeues the job
  itself (docs/preemption.md). The job environment below catches SIGUSR1 and SIGUSR2, runs
  submitit's checkpointing (a `submitit.helpers.Checkpointable`'s `checkpoint()`, whose
  new submission replaces the pickle), touches `$GPUSCHED_CHECKPOINT_DIR/checkpoint` to
  tell the scheduler it saved, and exits; the next attempt resumes from that pickle.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import typing as tp
import uuid
from pathlib import Path

from submitit.core import core, job_environment, logger, utils

from . import _target
from .client import TERMINAL, Client, job_submit
from .errors import GpuschedError

#: gpusched's job states as submitit (Slurm's words) knows them.
STATES = {
    "pending": "PENDING",
    "starting": "RUNNING",
    "running": "RUNNING",
    "succeeded": "COMPLETED",
    "failed": "FAILED",
    "cancelled": "CANCELLED",
    "timed_out": "TIMEOUT",
}

_client: tp.Optional[Client] = None


def _get_client() -> Client:
    global _client
    if _client is None:
        _client = Client()
    return _client


def _split(job_id: str) -> tp.Tuple[int, tp.Optional[int]]:
    """`"12"` -> (12, None); an array task `"12_3"` -> (12, 3)."""
    if "_" in job_id:
        a, i = job_id.split("_", 1)
        return int(a), int(i)
    return int(job_id), None


class GpuschedInfoWatcher(core.InfoWatcher):
    """Asks the gpusched API (not a command) for the state of every job still running,
    at most every `delay_s` (and often at first, as submitit's Slurm watcher)."""

    def _make_command(self) -> tp.Optional[tp.List[str]]:
        return None

    def read_info(self, string: tp.Union[bytes, str]) -> tp.Dict[str, tp.Dict[str, str]]:
        return {}

    def get_state(self, job_id: str, mode: str = "standard") -> str:
        info = self.get_info(job_id, mode=mode)
        return info.get("State") or "UNKNOWN"

    def update(self) -> None:
        todo = sorted(self._registered - self._finished)
        if not todo:
            return
        self._num_calls += 1
        client = _get_client()
        arrays: tp.Dict[int, tp.Dict[int, tp.Any]] = {}
        try:
            for job_id in todo:
                jid, index = _split(job_id)
                if index is None:
                    v = client.job(jid).view()
                    self._info_dict[job_id] = {"State": STATES.get(str(v.state), "UNKNOWN"), "Reason": v.reason}
                    continue
                if jid not in arrays:
                    array = client.job(jid).view()
                    tasks = {int(t.array_task.index): t for t in client.call(_list_tasks(), id=jid).jobs}
                    arrays[jid] = {"array": array, "tasks": tasks}
                task = arrays[jid]["tasks"].get(index)
                if task is not None:
                    state, reason = str(task.state), task.reason
                else:
                    # Not started: waiting, unless the array ended without running it.
                    array = arrays[jid]["array"]
                    state = "cancelled" if str(array.state) in TERMINAL else "pending"
                    reason = array.reason
                self._info_dict[job_id] = {"State": STATES.get(state, "UNKNOWN"), "Reason": reason}
        except GpuschedError as e:
            logger.get_logger().warning(f"Call #{self.num_calls} - gpusched state query failed ({e}); status may be stale.")
        self._last_status_check = core._time.time()
        for job_id in self._registered - self._finished:
            if self.is_done(job_id, mode="cache"):
                self._finished.add(job_id)


def _list_tasks() -> tp.Any:
    from .openapi.api.arrays import list_tasks

    return list_tasks


class GpuschedJob(core.Job[core.R]):
    watcher = GpuschedInfoWatcher(delay_s=30)

    def cancel(self, check: bool = True) -> None:
        jid, index = _split(self.job_id)
        try:
            if index is None:
                _get_client().job(jid).cancel()
            else:
                _get_client().call(_cancel_task(), id=jid, index=index)
        except GpuschedError:
            if check:
                raise


def _cancel_task() -> tp.Any:
    from .openapi.api.arrays import cancel_task

    return cancel_task


class _SignalHandler(job_environment.SignalHandler):
    """submitit's handler, told that a signal is never a timeout: gpusched sends the
    preemption signal only to preempt (at its walltime a job gets SIGTERM and ends
    `timed_out`), whereas submitit guesses from the time run against `timeout_min`
    (and, for a timeout under 10 minutes, always guesses a timeout, using up
    `max_num_timeout`)."""

    def has_timed_out(self) -> bool:
        return False


class GpuschedJobEnvironment(job_environment.JobEnvironment):
    """The environment of a job that gpusched runs for submitit."""

    _env = {
        "job_id": "GPUSCHED_JOB_ID",
        "array_job_id": "GPUSCHED_ARRAY_ID",
        "array_task_id": "GPUSCHED_ARRAY_INDEX",
        "num_tasks": "WORLD_SIZE",
        "num_nodes": "GPUSCHED_NUM_NODES",
        "node": "GPUSCHED_NODE_RANK",
        "global_rank": "RANK",
        "local_rank": "LOCAL_RANK",
    }

    def _handle_signals(self, paths: utils.JobPaths, submission: utils.DelayedSubmission) -> None:
        handler = _SignalHandler(self, paths, submission)
        # gpusched's --preempt-signal is SIGUSR1 by default; submitit's own default is
        # SIGUSR2 ($SUBMITIT_PREEMPT_SIGNAL). Either starts the checkpoint.
        sigs = {signal.SIGUSR1, signal.SIGUSR2, self._usr_sig()}
        for sig in sigs:
            signal.signal(sig, handler.checkpoint_and_try_requeue)

    def _requeue(self, countdown: int) -> None:
        """gpusched requeues a preempted job itself; this tells it the job saved (the
        checkpoint contract: a recent checkpoint makes a cheaper victim next time)."""
        ckpt = os.environ.get("GPUSCHED_CHECKPOINT_DIR")
        if ckpt:
            try:
                Path(ckpt, "checkpoint").touch()
            except OSError as e:
                logger.get_logger().warning(f"could not touch {ckpt}/checkpoint: {e}")
        logger.get_logger().warning(
            f"Job {self.job_id} checkpointed; gpusched puts it back in the queue ({countdown} timeouts left)"
        )


class GpuschedExecutor(core.PicklingExecutor):
    """Runs pickled Python functions as gpusched jobs. `server`, `token`: as
    `gpusched.Client` (default: found as the CLI finds them); `python`: the interpreter
    the job runs (default: this one)."""

    job_class = GpuschedJob

    def __init__(
        self,
        folder: tp.Union[str, Path],
        max_num_timeout: int = 3,
        max_pickle_size_gb: float = 1.0,
        server: tp.Optional[str] = None,
        token: tp.Optional[str] = None,
        python: tp.Optional[str] = None,
    ) -> None:
        super().__init__(folder, max_num_timeout=max_num_timeout, max_pickle_size_gb=max_pickle_size_gb)
        global _client
        self.client = Client(server=server, token=token)
        _client = self.client
        self.python = python or sys.executable

    @classmethod
    def affinity(cls) -> int:
        # Chosen by AutoExecutor without `cluster=` only where a gpusched server is named.
        if os.environ.get("GPUSCHED_SERVER") or _target.default_socket().exists():
            return 2
        return -1

    @classmethod
    def _valid_parameters(cls) -> tp.Set[str]:
        return set(_DEFAULTS)

    def _internal_update_parameters(self, **kwargs: tp.Any) -> None:
        unknown = sorted(set(kwargs) - set(_DEFAULTS))
        if unknown:
            valid = "\n  - ".join(f"{k} (default: {v!r})" for k, v in sorted(_DEFAULTS.items()))
            raise ValueError(f"Unavailable parameter(s) for gpusched: {unknown}\nValid parameters are:\n  - {valid}")
        for k in ("nodes", "tasks_per_node"):
            if kwargs.get(k, 1) not in (None, 1):
                raise ValueError(
                    f"{k}={kwargs[k]}: the gpusched submitit executor runs one task on one node; "
                    "for multi-node training submit a gang with gpusched.Client().submit(..., nodes=N, "
                    "gpus_per_node=G), which gives torchrun its launch environment (docs/distributed.md)"
                )
        super()._internal_update_parameters(**kwargs)

    def _job_body(self, array: tp.Optional[tp.Dict[str, int]]) -> tp.Any:
        p = {**_DEFAULTS, **self.parameters}
        env = {str(k): str(v) for k, v in (p["env"] or {}).items()}
        env["SUBMITIT_EXECUTOR"] = "gpusched"
        if os.environ.get("PYTHONPATH"):
            env.setdefault("PYTHONPATH", os.environ["PYTHONPATH"])
        if p["stderr_to_stdout"]:
            env["GPUSCHED_SUBMITIT_STDERR_TO_STDOUT"] = "1"
        opts: tp.Dict[str, tp.Any] = {
            "gpus": int(p["gpus_per_node"] or 0),
            "name": p["name"],
            "env": env,
            "queue": p["queue"],
            "priority": p["priority"],
            "account": p["account"],
            "gpu_model": p["gpu_model"],
        }
        if p["cpus_per_task"]:
            opts["cpus"] = p["cpus_per_task"]
        if p["mem_gb"]:
            opts["mem"] = max(1, int(round(float(p["mem_gb"]) * 1024)))
        if p["timeout_min"]:
            opts["walltime"] = int(round(float(p["timeout_min"]) * 60))
        if p["partition"]:
            # Slurm's comma-separated list: the first partition that can hold it.
            opts["partitions"] = [x.strip() for x in str(p["partition"]).split(",") if x.strip()]
        if p["constraint"]:
            opts["constraint"] = p["constraint"]
        for key in ("exclude", "nodelist"):
            if p[key]:
                v = p[key]
                opts[key] = [x.strip() for x in v.split(",")] if isinstance(v, str) else list(v)
        if array is not None:
            opts["array"] = array
        extra = dict(p["additional_parameters"] or {})
        command = [self.python, "-u", "-m", "gpusched._submitit_run", str(self.folder)]
        return job_submit(command, **opts, **extra)

    def _submit_body(self, body: tp.Any) -> int:
        from .openapi.api.jobs import submit_job

        return int(self.client.call(submit_job, body=body).ids[0])

    def _submit_command(self, command: str) -> core.Job[tp.Any]:
        body = self._job_body(None)
        job_id = str(self._submit_body(body))
        job: core.Job[tp.Any] = self.job_class(folder=self.folder, job_id=job_id, tasks=[0])
        self._write_submission(job, body)
        return job

    def _write_submission(self, job: core.Job[tp.Any], body: tp.Any) -> None:
        # What was asked of gpusched, beside submitit's files (Slurm's sbatch file).
        tmp = utils.JobPaths.get_first_id_independent_folder(self.folder) / f".submission_{uuid.uuid4().hex}.json"
        tmp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(body.to_dict(), indent=2, sort_keys=True) + "\n")
        job.paths.move_temporary_file(tmp, "submission_file", keep_as_symlink=True)

    def _internal_process_submissions(
        self, delayed_submissions: tp.List[utils.DelayedSubmission]
    ) -> tp.List[core.Job[tp.Any]]:
        if len(delayed_submissions) == 1:
            return super()._internal_process_submissions(delayed_submissions)
        # Several: one gpusched array, task i running submission i.
        folder = utils.JobPaths.get_first_id_independent_folder(self.folder)
        folder.mkdir(parents=True, exist_ok=True)
        timeout_min = self.parameters.get("timeout_min") or 5
        pickles = []
        for d in delayed_submissions:
            path = folder / f"{uuid.uuid4().hex}.pkl"
            d.set_timeout(timeout_min, self.max_num_timeout)
            d.dump(path)
            pickles.append(path)
        array: tp.Dict[str, int] = {"first": 0, "last": len(pickles) - 1}
        if self.parameters.get("array_parallelism"):
            array["max_running"] = int(self.parameters["array_parallelism"])
        self._throttle()
        body = self._job_body(array)
        array_id = self._submit_body(body)
        self._last_job_submitted = core._time.time()
        jobs: tp.List[core.Job[tp.Any]] = []
        for i, path in enumerate(pickles):
            job = self.job_class(folder=self.folder, job_id=f"{array_id}_{i}", tasks=[0])
            job.paths.move_temporary_file(path, "submitted_pickle")
            jobs.append(job)
        return jobs

    @property
    def _submitit_command_str(self) -> str:
        return " ".join([shlex.quote(self.python), "-u -m gpusched._submitit_run", shlex.quote(str(self.folder))])

    def _num_tasks(self) -> int:
        return 1

    def _make_submission_file_text(self, command: str, uid: str) -> str:
        return json.dumps(self._job_body(None).to_dict(), indent=2, sort_keys=True) + "\n"

    def _make_submission_command(self, submission_file_path: Path) -> tp.List[str]:
        raise NotImplementedError("gpusched jobs are submitted through the API, not a command")

    @staticmethod
    def _get_job_id_from_submission_command(string: tp.Union[bytes, str]) -> str:
        raise NotImplementedError("gpusched jobs are submitted through the API, not a command")


#: The executor's parameters and their defaults. `AutoExecutor` passes its generic ones
#: (timeout_min, mem_gb, cpus_per_task, gpus_per_node, nodes, tasks_per_node, name,
#: stderr_to_stdout) and `gpusched_<name>` for the rest.
_DEFAULTS: tp.Dict[str, tp.Any] = {
    "timeout_min": None,
    "mem_gb": None,
    "cpus_per_task": None,
    "gpus_per_node": 0,
    "nodes": 1,
    "tasks_per_node": 1,
    "name": "submitit",
    "stderr_to_stdout": False,
    "queue": None,
    "priority": None,
    "account": None,
    "gpu_model": None,
    "partition": None,
    "constraint": None,
    "exclude": None,
    "nodelist": None,
    "array_parallelism": None,
    "env": None,
    "additional_parameters": None,
}
