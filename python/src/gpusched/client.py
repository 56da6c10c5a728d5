"""The hand-written layer over the generated client (`gpusched.openapi`).

    import gpusched
    client = gpusched.Client()                      # found as the CLI finds its server
    job = client.submit(["python", "train.py"], gpus=2, walltime="2h")
    print(job.wait().state)
    for chunk in job.logs(follow=True):
        ...

Every call goes through the generated functions, so the whole API is typed by the
server's OpenAPI document; `client.openapi` is the generated client itself, for any
operation this layer does not wrap (`gpusched.openapi.api.<resource>.<operation>`).
"""

from __future__ import annotations

import asyncio
import datetime
import os
import ssl
import time
import uuid
from dataclasses import dataclass, field
from typing import (
    Any,
    AsyncIterator,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Union,
)

import httpx

from . import _target, _units
from ._transport import AsyncFailoverTransport, FailoverTransport
from .errors import ConfigError, JobFailed, Unreachable, from_response
from .openapi import AuthenticatedClient
from .openapi import Client as _PlainClient
from .openapi.api.accounts import list_accounts
from .openapi.api.arrays import cancel_task, get_task, list_tasks
from .openapi.api.history import get_job_events
from .openapi.api.jobs import (
    cancel_job,
    cancel_jobs,
    checkpoint_job,
    get_job,
    get_job_logs,
    hold_job,
    list_jobs,
    release_job,
    submit_job,
    submit_jobs,
    update_job,
    wait_for_job,
)
from .openapi.api.nodes import drain_node, list_nodes, resume_node
from .openapi.api.queues import list_queues
from .openapi.api.server import health
from .openapi.api.tokens import whoami
from .openapi.api.workflows import submit_workflow
from .openapi.models import (
    BatchSubmit,
    CancelMany,
    DrainRequest,
    JobSubmit,
    JobUpdate,
    JobView,
    WorkflowSubmit,
)
from .openapi.types import UNSET

#: States after which a job never changes again.
TERMINAL = frozenset({"succeeded", "failed", "cancelled", "timed_out"})
#: How often a follower of logs asks for new output (the CLI's `logs -f`).
LOG_POLL_S = 0.25
#: Longest single long poll of `wait` (the server caps it at its --max-wait).
WAIT_POLL_S = 60

ArraySpecLike = Union[str, int, range, Mapping[str, int]]


def _array(spec: ArraySpecLike) -> Dict[str, int]:
    """`"0-9999%8"`, `"10-90:10"`, `100` (0..99), `range(0, 10, 2)`, or a dict with
    `first`, `last`, `step`, `max_running`."""
    if isinstance(spec, Mapping):
        return dict(spec)
    if isinstance(spec, bool):
        raise ConfigError(f"array {spec!r}: give a count, 'A-B[:S][%K]' or a range")
    if isinstance(spec, int):
        if spec < 1:
            raise ConfigError(f"array {spec}: an array has at least one task")
        return {"first": 0, "last": spec - 1}
    if isinstance(spec, range):
        if len(spec) == 0 or spec.step < 1:
            raise ConfigError(f"array {spec!r}: give a non-empty, ascending range")
        return {"first": spec.start, "last": spec[-1], "step": spec.step}
    if isinstance(spec, str):
        s, out = spec.strip(), {}
        try:
            if "%" in s:
                s, k = s.split("%", 1)
                out["max_running"] = int(k)
            if ":" in s:
                s, step = s.split(":", 1)
                out["step"] = int(step)
            if "-" in s:
                a, b = s.split("-", 1)
                out.update(first=int(a), last=int(b))
            else:
                n = int(s)
                if n < 1:
                    raise ValueError
                out.update(first=0, last=n - 1)
        except ValueError:
            raise ConfigError(
                f"array {spec!r} is not an array: write N, A-B or A-B:S, each with an optional %K"
            ) from None
        return out
    raise ConfigError(f"array {spec!r}: give a count, 'A-B[:S][%K]', a range or a dict")


def job_submit(
    command: Sequence[str],
    *,
    gpus: Optional[int] = None,
    walltime: Union[str, int, float, datetime.timedelta, None] = None,
    name: Optional[str] = None,
    queue: Optional[str] = None,
    priority: Optional[int] = None,
    cpus: Optional[float] = None,
    mem: Union[str, int, None] = None,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    array: Optional[ArraySpecLike] = None,
    after: Iterable[Union[int, "Job"]] = (),
    after_any: Iterable[Union[int, "Job"]] = (),
    after_notok: Iterable[Union[int, "Job"]] = (),
    gpu_model: Optional[str] = None,
    account: Optional[str] = None,
    max_retries: Optional[int] = None,
    hold: bool = False,
    client_token: Optional[str] = None,
    **fields: Any,
) -> JobSubmit:
    """The `JobSubmit` body for one job, from Python arguments. `fields` are any other
    `JobSubmit` field by its wire name (`gpu_share`, `mig`, `nodes`, `resources`, ...)."""
    if isinstance(command, (str, bytes)):
        raise ConfigError(
            f"command {command!r} is a string: give the program and its arguments as a list "
            '(["python", "train.py"]), or ["sh", "-c", LINE] for a shell line'
        )
    command = [str(c) for c in command]
    if not command or not command[0]:
        raise ConfigError("command is empty: give the program and its arguments as a list")
    body: Dict[str, Any] = {"command": command, "cwd": cwd or os.getcwd()}

    def ids(xs: Iterable[Union[int, "Job"]]) -> List[int]:
        return [x.id if isinstance(x, Job) else int(x) for x in xs]

    for key, value in (
        ("gpus", gpus),
        ("name", name),
        ("queue", queue),
        ("priority", priority),
        ("cpus", cpus),
        ("gpu_model", gpu_model),
        ("account", account),
        ("max_retries", max_retries),
    ):
        if value is not None:
            body[key] = value
    if walltime is not None:
        body["walltime_s"] = _units.seconds(walltime)
    if mem is not None:
        body["mem_mib"] = _units.mib(mem)
    if env:
        body["env"] = {str(k): str(v) for k, v in env.items()}
    if array is not None:
        body["array"] = _array(array)
    for key, xs in (("after", after), ("after_any", after_any), ("after_notok", after_notok)):
        got = ids(xs)
        if got:
            body[key] = got
    if hold:
        body["hold"] = True
    body["client_token"] = client_token or uuid.uuid4().hex
    body.update(fields)
    return JobSubmit.from_dict(body)


@dataclass
class Step:
    """One step of a workflow: a key, its job (the arguments of `Client.submit`) and
    the steps it waits for, by key."""

    key: str
    command: Sequence[str]
    after: Sequence[str] = ()
    after_any: Sequence[str] = ()
    after_notok: Sequence[str] = ()
    options: Dict[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        key: str,
        command: Sequence[str],
        *,
        after: Sequence[str] = (),
        after_any: Sequence[str] = (),
        after_notok: Sequence[str] = (),
        **options: Any,
    ) -> None:
        self.key, self.command = key, command
        self.after, self.after_any, self.after_notok = list(after), list(after_any), list(after_notok)
        self.options = options

    def to_dict(self) -> Dict[str, Any]:
        job = job_submit(self.command, **self.options).to_dict()
        # A workflow is one request: its steps take no client token of their own.
        job.pop("client_token", None)
        d: Dict[str, Any] = {"key": self.key, "job": job}
        for k in ("after", "after_any", "after_notok"):
            if getattr(self, k):
                d[k] = list(getattr(self, k))
        return d


def _ssl_context(ca_cert: Optional[str]) -> Union[bool, ssl.SSLContext]:
    if not ca_cert:
        return True
    try:
        ctx = ssl.create_default_context()
        ctx.load_verify_locations(cafile=ca_cert)
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"cannot use the CA certificate {ca_cert} ({e}): give a PEM file") from None
    return ctx


class _Base:
    def __init__(
        self,
        server: Optional[str],
        token: Optional[str],
        ca_cert: Optional[str],
        timeout: float,
        asynchronous: bool,
        failover_wait: float = 30.0,
    ) -> None:
        self.target = _target.resolve(server, token, ca_cert)
        t = self.target
        timeout_cfg = httpx.Timeout(timeout, connect=3.0)
        if t.socket is not None:
            bases = ["http://localhost"]
            inner: Any = (
                httpx.AsyncHTTPTransport(uds=str(t.socket)) if asynchronous else httpx.HTTPTransport(uds=str(t.socket))
            )
        else:
            bases = t.servers
            verify = _ssl_context(t.ca_cert)
            inner = httpx.AsyncHTTPTransport(verify=verify) if asynchronous else httpx.HTTPTransport(verify=verify)
        transport = (
            AsyncFailoverTransport(bases, inner, failover_wait)
            if asynchronous
            else FailoverTransport(bases, inner, failover_wait)
        )
        if t.token and t.socket is None:
            api: Any = AuthenticatedClient(base_url=bases[0], token=t.token, timeout=timeout_cfg)
            headers = {"Authorization": f"Bearer {t.token}"}
        else:
            api = _PlainClient(base_url=bases[0], timeout=timeout_cfg)
            headers = {}
        if asynchronous:
            api.set_async_httpx_client(
                httpx.AsyncClient(base_url=bases[0], transport=transport, timeout=timeout_cfg, headers=headers)
            )
        else:
            api.set_httpx_client(httpx.Client(base_url=bases[0], transport=transport, timeout=timeout_cfg, headers=headers))
        #: The generated client (gpusched.openapi), for every operation of the API.
        self.openapi = api

    def _unreachable(self, e: Exception) -> Unreachable:
        return Unreachable(
            f"cannot reach the gpusched server at {self.target.shown()} ({e}); start one with "
            "`gpusched up`, or point GPUSCHED_SERVER (or Client(server=...)) at it"
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(server={self.target.shown()!r})"


def _checked(resp: Any) -> Any:
    if 200 <= int(resp.status_code) < 300:
        return resp
    raise from_response(int(resp.status_code), resp.content, dict(resp.headers))


class Client(_Base):
    """A synchronous client. `server`: `unix:PATH`, or `http(s)://HOST:PORT`, several
    comma-separated for servers that fail over (default: as the CLI, see
    `gpusched._target`); `token` over TCP (default `$GPUSCHED_TOKEN`, else
    `~/.config/gpusched/token`); `ca_cert` a PEM file to trust; `timeout` per request
    (long polls included); `failover_wait`: how long to keep trying while no server
    leads (a 503 turned away is tried again; the CLI waits 30 s)."""

    def __init__(
        self,
        server: Optional[str] = None,
        token: Optional[str] = None,
        *,
        ca_cert: Optional[str] = None,
        timeout: float = 330.0,
        failover_wait: float = 30.0,
    ) -> None:
        super().__init__(server, token, ca_cert, timeout, asynchronous=False, failover_wait=failover_wait)

    def call(self, operation: Any, **kwargs: Any) -> Any:
        """Runs one generated operation (`gpusched.openapi.api.<resource>.<op>`) and
        returns its parsed answer; a refusal raises the `ApiError` of its status."""
        try:
            resp = operation.sync_detailed(client=self.openapi, **kwargs)
        except httpx.TransportError as e:
            raise self._unreachable(e) from e
        return _checked(resp).parsed

    def _raw(self, operation: Any, **kwargs: Any) -> Any:
        try:
            return _checked(operation.sync_detailed(client=self.openapi, **kwargs))
        except httpx.TransportError as e:
            raise self._unreachable(e) from e

    def close(self) -> None:
        self.openapi.get_httpx_client().close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- the server and the caller
    def health(self) -> Any:
        return self.call(health)

    def whoami(self) -> Any:
        return self.call(whoami)

    # --- jobs
    def submit(self, command: Sequence[str], **options: Any) -> "Job":
        """Submits one job (an array with `array=`); returns its `Job` (an `Array` for an
        array). Options: see `job_submit`."""
        body = job_submit(command, **options)
        ids = self.call(submit_job, body=body).ids
        return Array(self, ids[0]) if "array" in options and options["array"] is not None else Job(self, ids[0])

    def submit_many(self, jobs: Sequence[Mapping[str, Any]]) -> List["Job"]:
        """Submits several jobs in one request (all or none): each a dict of
        `command` and `submit`'s options."""
        bodies = [job_submit(**dict(j)) for j in jobs]
        ids = self.call(submit_jobs, body=BatchSubmit(jobs=bodies)).ids
        return [Job(self, i) for i in ids]

    def workflow(self, steps: Sequence[Step]) -> Dict[str, "Job"]:
        """Submits a workflow (a DAG of steps, all accepted or none); returns each step's
        job by key."""
        body = WorkflowSubmit.from_dict({"steps": [s.to_dict() for s in steps]})
        ids = self.call(submit_workflow, body=body).ids.additional_properties
        return {k: Job(self, int(v)) for k, v in ids.items()}

    def job(self, id: int) -> "Job":
        return Job(self, int(id))

    def jobs(self, state: str = "all", *, user: Optional[str] = None, limit: Optional[int] = None) -> List[JobView]:
        """Jobs, newest first (`state`: `all`, `active`, or comma-separated states)."""
        return list(
            self.call(list_jobs, state=state, user=user if user else UNSET, limit=limit if limit else UNSET).jobs
        )

    def queue(self, *, user: Optional[str] = None) -> List[JobView]:
        """The jobs that are not over yet (pending, starting, running), as `gpusched queue`."""
        return self.jobs("active", user=user)

    def cancel(self, *ids: Union[int, "Job"]) -> Any:
        """Cancels jobs (one transaction); returns what became of each."""
        return self.call(cancel_jobs, body=CancelMany(ids=[i.id if isinstance(i, Job) else int(i) for i in ids]))

    # --- the cluster
    def nodes(self) -> List[Any]:
        return list(self.call(list_nodes).nodes)

    def drain(self, node: str, reason: str, *, now: bool = False) -> Any:
        """Drains a node (admins); `now` also requeues its running jobs through preemption."""
        return self.call(drain_node, name=node, body=DrainRequest(reason=reason, now=now))

    def resume(self, node: str) -> Any:
        return self.call(resume_node, name=node)

    def queues(self) -> List[Any]:
        return list(self.call(list_queues).queues)

    def accounts(self) -> List[Any]:
        return list(self.call(list_accounts).accounts)


class Job:
    """A job by id, on a `Client`. `view()` reads it; `wait()`, `logs()`, `cancel()`..."""

    def __init__(self, client: Client, id: int) -> None:
        self.client = client
        self.id = id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Job) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def view(self) -> JobView:
        return self.client.call(get_job, id=self.id)

    @property
    def state(self) -> str:
        return str(self.view().state)

    def wait(self, timeout: Optional[float] = None, *, check: bool = False) -> JobView:
        """Waits until the job is over (long polls of `GET /api/jobs/{id}/wait`); returns
        it. `timeout` (seconds): returns it as it is then. `check`: raise `JobFailed` if it
        did not succeed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = WAIT_POLL_S if deadline is None else max(0, min(WAIT_POLL_S, deadline - time.monotonic()))
            v = self.client.call(wait_for_job, id=self.id, timeout_s=int(left))
            if str(v.state) in TERMINAL or (deadline is not None and time.monotonic() >= deadline):
                break
        if check and str(v.state) != "succeeded":
            raise JobFailed(self.id, str(v.state), v.reason or "", v.exit_code if isinstance(v.exit_code, int) else None)
        return v

    def _read(self, stream: str, offset: int, attempt: Optional[int]) -> Any:
        return self.client._raw(
            get_job_logs, id=self.id, stream=stream, offset=offset, attempt=attempt if attempt else UNSET
        )

    def logs(self, *, follow: bool = False, stream: str = "stdout", attempt: Optional[int] = None) -> Any:
        """The job's output as bytes; with `follow=True` an iterator of chunks that
        waits for a pending job to start, follows a requeued job into its next attempt,
        and ends when the job does (as `gpusched logs -f`)."""
        if not follow:
            return self._read(stream, 0, attempt).content
        return self._follow(stream)

    def _follow(self, stream: str) -> Iterator[bytes]:
        from .errors import NotFound, Unavailable

        offset, seen = 0, None
        while True:
            try:
                r = self._read(stream, offset, None)
            except (NotFound, Unavailable):
                # Not started yet, requeued (404 until it starts again), its node away.
                if str(self.view().state) in TERMINAL:
                    raise
                time.sleep(LOG_POLL_S)
                continue
            got = r.headers.get("x-gpusched-job-attempt")
            if seen is not None and got != seen:
                seen, offset = got, 0
                continue
            seen = got
            chunk = r.content
            offset += len(chunk)
            if chunk:
                yield chunk
                continue
            if r.headers.get("x-gpusched-job-state", "") in TERMINAL:
                return
            time.sleep(LOG_POLL_S)

    def cancel(self) -> Any:
        return self.client.call(cancel_job, id=self.id)

    def hold(self) -> JobView:
        return self.client.call(hold_job, id=self.id)

    def release(self) -> JobView:
        return self.client.call(release_job, id=self.id)

    def checkpoint(self) -> JobView:
        """Tells the scheduler the job saved a checkpoint (a cheaper preemption victim)."""
        return self.client.call(checkpoint_job, id=self.id)

    def update(self, **fields: Any) -> JobView:
        """Changes a pending job (`JobUpdate` fields by wire name; `walltime` accepted)."""
        if "walltime" in fields:
            fields["walltime_s"] = _units.seconds(fields.pop("walltime"))
        return self.client.call(update_job, id=self.id, body=JobUpdate.from_dict(fields))

    def events(self) -> Any:
        return self.client.call(get_job_events, id=self.id)


class Array(Job):
    """An array (one id); its tasks become jobs of their own as they start."""

    def tasks(self) -> List[Any]:
        return list(self.client.call(list_tasks, id=self.id).jobs)

    def task(self, index: int) -> Job:
        """The job task `index` became (404 until it has started)."""
        return Job(self.client, self.client.call(get_task, id=self.id, index=index).id)

    def cancel_task(self, index: int) -> Any:
        return self.client.call(cancel_task, id=self.id, index=index)


class AsyncClient(_Base):
    """The asyncio variant of `Client`: the same methods, as coroutines."""

    def __init__(
        self,
        server: Optional[str] = None,
        token: Optional[str] = None,
        *,
        ca_cert: Optional[str] = None,
        timeout: float = 330.0,
        failover_wait: float = 30.0,
    ) -> None:
        super().__init__(server, token, ca_cert, timeout, asynchronous=True, failover_wait=failover_wait)

    async def call(self, operation: Any, **kwargs: Any) -> Any:
        return (await self._raw(operation, **kwargs)).parsed

    async def _raw(self, operation: Any, **kwargs: Any) -> Any:
        try:
            resp = await operation.asyncio_detailed(client=self.openapi, **kwargs)
        except httpx.TransportError as e:
            raise self._unreachable(e) from e
        return _checked(resp)

    async def aclose(self) -> None:
        await self.openapi.get_async_httpx_client().aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def health(self) -> Any:
        return await self.call(health)

    async def whoami(self) -> Any:
        return await self.call(whoami)

    async def submit(self, command: Sequence[str], **options: Any) -> "AsyncJob":
        ids = (await self.call(submit_job, body=job_submit(command, **options))).ids
        return AsyncArray(self, ids[0]) if options.get("array") is not None else AsyncJob(self, ids[0])

    async def submit_many(self, jobs: Sequence[Mapping[str, Any]]) -> List["AsyncJob"]:
        bodies = [job_submit(**dict(j)) for j in jobs]
        ids = (await self.call(submit_jobs, body=BatchSubmit(jobs=bodies))).ids
        return [AsyncJob(self, i) for i in ids]

    async def workflow(self, steps: Sequence[Step]) -> Dict[str, "AsyncJob"]:
        body = WorkflowSubmit.from_dict({"steps": [s.to_dict() for s in steps]})
        ids = (await self.call(submit_workflow, body=body)).ids.additional_properties
        return {k: AsyncJob(self, int(v)) for k, v in ids.items()}

    def job(self, id: int) -> "AsyncJob":
        return AsyncJob(self, int(id))

    async def jobs(self, state: str = "all", *, user: Optional[str] = None, limit: Optional[int] = None) -> List[JobView]:
        got = await self.call(list_jobs, state=state, user=user if user else UNSET, limit=limit if limit else UNSET)
        return list(got.jobs)

    async def queue(self, *, user: Optional[str] = None) -> List[JobView]:
        return await self.jobs("active", user=user)

    async def cancel(self, *ids: Union[int, Job, "AsyncJob"]) -> Any:
        body = CancelMany(ids=[i.id if isinstance(i, (Job, AsyncJob)) else int(i) for i in ids])
        return await self.call(cancel_jobs, body=body)

    async def nodes(self) -> List[Any]:
        return list((await self.call(list_nodes)).nodes)

    async def queues(self) -> List[Any]:
        return list((await self.call(list_queues)).queues)


class AsyncJob:
    """The asyncio variant of `Job`."""

    def __init__(self, client: AsyncClient, id: int) -> None:
        self.client = client
        self.id = id

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id})"

    async def view(self) -> JobView:
        return await self.client.call(get_job, id=self.id)

    async def wait(self, timeout: Optional[float] = None, *, check: bool = False) -> JobView:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            left = WAIT_POLL_S if deadline is None else max(0, min(WAIT_POLL_S, deadline - loop.time()))
            v = await self.client.call(wait_for_job, id=self.id, timeout_s=int(left))
            if str(v.state) in TERMINAL or (deadline is not None and loop.time() >= deadline):
                break
        if check and str(v.state) != "succeeded":
            raise JobFailed(self.id, str(v.state), v.reason or "", v.exit_code if isinstance(v.exit_code, int) else None)
        return v

    async def logs(self, *, stream: str = "stdout", attempt: Optional[int] = None) -> bytes:
        r = await self.client._raw(
            get_job_logs, id=self.id, stream=stream, offset=0, attempt=attempt if attempt else UNSET
        )
        return r.content

    async def follow(self, *, stream: str = "stdout") -> AsyncIterator[bytes]:
        """`Job.logs(follow=True)` as an async iterator."""
        from .errors import NotFound, Unavailable

        offset, seen = 0, None
        while True:
            try:
                r = await self.client._raw(get_job_logs, id=self.id, stream=stream, offset=offset)
            except (NotFound, Unavailable):
                if str((await self.view()).state) in TERMINAL:
                    raise
                await asyncio.sleep(LOG_POLL_S)
                continue
            got = r.headers.get("x-gpusched-job-attempt")
            if seen is not None and got != seen:
                seen, offset = got, 0
                continue
            seen = got
            offset += len(r.content)
            if r.content:
                yield r.content
                continue
            if r.headers.get("x-gpusched-job-state", "") in TERMINAL:
                return
            await asyncio.sleep(LOG_POLL_S)

    async def cancel(self) -> Any:
        return await self.client.call(cancel_job, id=self.id)


class AsyncArray(AsyncJob):
    async def tasks(self) -> List[Any]:
        return list((await self.client.call(list_tasks, id=self.id)).jobs)

    async def task(self, index: int) -> AsyncJob:
        return AsyncJob(self.client, (await self.client.call(get_task, id=self.id, index=index)).id)
