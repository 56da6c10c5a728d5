"""The hand-written client against a live `gpusched up`: discovery as the CLI's, jobs,
logs, arrays, workflows, the queue, errors carrying the server's message, asyncio."""

from __future__ import annotations

import asyncio
import datetime
import os

import pytest

import gpusched
from gpusched import _units
from gpusched.client import _array
from gpusched.openapi.api.tokens import list_tokens

# --- no server needed


def test_durations_and_sizes_read_as_the_cli_reads_them():
    assert _units.seconds("2h") == 7200
    assert _units.seconds("2h30m") == 9000
    assert _units.seconds("1d 12h") == 129600
    assert _units.seconds("01:02:03") == 3723
    assert _units.seconds("1-00:00:10") == 86410
    assert _units.seconds(90) == 90
    assert _units.seconds(datetime.timedelta(minutes=3)) == 180
    for bad in ("2x", "1h1h", "", "h"):
        with pytest.raises(gpusched.ConfigError, match="not a duration"):
            _units.seconds(bad)
    assert _units.mib("16G") == 16384
    assert _units.mib("1.5GiB") == 1536
    assert _units.mib(512) == 512
    with pytest.raises(gpusched.ConfigError, match="not a size"):
        _units.mib("lots")


def test_array_forms():
    assert _array("0-9999%8") == {"first": 0, "last": 9999, "max_running": 8}
    assert _array("10-90:10") == {"first": 10, "last": 90, "step": 10}
    assert _array(100) == {"first": 0, "last": 99}
    assert _array(range(0, 10, 2)) == {"first": 0, "last": 8, "step": 2}
    with pytest.raises(gpusched.ConfigError, match="is not an array"):
        _array("a-b")


def test_a_command_given_as_a_string_is_refused_saying_what_to_do():
    with pytest.raises(gpusched.ConfigError, match=r'\["sh", "-c", LINE\]'):
        gpusched.job_submit("python train.py")


def test_a_server_of_another_scheme_is_refused_naming_every_form():
    with pytest.raises(gpusched.ConfigError, match="unix:PATH.*http://HOST:PORT"):
        gpusched.Client(server="ftp://example:1")


def test_nothing_listening_is_unreachable_with_advice():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = gpusched.Client(server=f"http://127.0.0.1:{port}", token="x")
    with pytest.raises(gpusched.Unreachable, match="gpusched up"):
        c.whoami()


# --- against the live cluster


def test_discovery_by_environment_socket(sock_env):
    c = gpusched.Client()
    assert c.target.socket == sock_env.socket
    me = c.whoami()
    assert me.via == "unix-socket" and me.user


def test_discovery_of_the_default_socket(cluster, monkeypatch):
    monkeypatch.delenv("GPUSCHED_SERVER", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(cluster.data.parent))
    c = gpusched.Client()
    assert c.target.socket == cluster.socket
    assert c.whoami().via == "unix-socket"


def test_tcp_with_the_token_file(cluster, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUSCHED_SERVER", cluster.url)
    monkeypatch.delenv("GPUSCHED_TOKEN", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "gpusched").mkdir()
    (tmp_path / "gpusched" / "token").write_text(cluster.token + "\n")
    c = gpusched.Client()
    assert c.target.servers == [cluster.url] and c.target.token == cluster.token
    me = c.whoami()
    assert me.via != "unix-socket", me
    # An ordinary user may not list tokens: 403 with the server's own message.
    with pytest.raises(gpusched.Forbidden) as e:
        c.call(list_tokens)
    assert e.value.status == 403 and "admin" in e.value.message


def test_a_wrong_token_is_unauthorized_with_the_servers_message(cluster):
    c = gpusched.Client(server=cluster.url, token="not-a-token")
    with pytest.raises(gpusched.Unauthorized) as e:
        c.whoami()
    assert e.value.status == 401 and e.value.message


def test_submit_wait_logs(sock_env, tmp_path):
    c = gpusched.Client()
    job = c.submit(
        ["sh", "-c", 'echo "out $X $GPUSCHED_JOB_ID"; echo err >&2; exit 3'],
        gpus=1, walltime="2m", name="py-test", env={"X": "42"}, mem="64M", cpus=0.5, cwd=str(tmp_path),
    )
    assert isinstance(job, gpusched.Job)
    v = job.wait(timeout=60)
    assert str(v.state) == "failed" and v.exit_code == 3, v
    assert v.name == "py-test" and v.walltime_s == 120 and v.mem_mib == 64
    assert job.logs() == f"out 42 {job.id}\n".encode()
    assert job.logs(stream="stderr") == b"err\n"
    with pytest.raises(gpusched.JobFailed, match=f"job {job.id} ended failed"):
        job.wait(check=True)


def test_logs_follow_waits_for_the_start_and_ends_with_the_job(sock_env):
    c = gpusched.Client()
    first = c.submit(["sleep", "1"], gpus=2)
    later = c.submit(["sh", "-c", "echo one; sleep 1; echo two"], gpus=2, after=[first])
    assert str(later.view().state) == "pending"
    assert b"".join(later.logs(follow=True)) == b"one\ntwo\n"
    assert str(later.view().state) == "succeeded"


def test_arrays(sock_env):
    c = gpusched.Client()
    arr = c.submit(["sh", "-c", "echo task $GPUSCHED_ARRAY_INDEX of $GPUSCHED_ARRAY_ID"], gpus=0, array="0-4%2")
    assert isinstance(arr, gpusched.Array)
    v = arr.wait(timeout=60)
    assert str(v.state) == "succeeded" and v.array_counts.succeeded == 5
    tasks = arr.tasks()
    assert sorted(t.array_task.index for t in tasks) == [0, 1, 2, 3, 4]
    assert arr.task(3).logs() == f"task 3 of {arr.id}\n".encode()


def test_workflow_runs_steps_in_order(sock_env, tmp_path):
    c = gpusched.Client()
    out = tmp_path / "order"
    jobs = c.workflow([
        gpusched.Step("prep", ["sh", "-c", f"echo prep >> {out}"], gpus=0),
        gpusched.Step("train", ["sh", "-c", f"echo train >> {out}"], after=["prep"], gpus=1),
        gpusched.Step("cleanup", ["sh", "-c", f"echo cleanup >> {out}"], after_any=["train"], gpus=0),
    ])
    assert set(jobs) == {"prep", "train", "cleanup"}
    assert str(jobs["cleanup"].wait(timeout=60).state) == "succeeded"
    assert out.read_text() == "prep\ntrain\ncleanup\n"


def test_queue_hold_release_cancel(sock_env):
    c = gpusched.Client()
    job = c.submit(["sleep", "30"], gpus=0, hold=True)
    assert job.id in [j.id for j in c.queue()]
    assert "held" in job.view().reason.lower()
    job.release()
    job.cancel()
    assert str(job.wait(timeout=30).state) == "cancelled"
    assert job.id not in [j.id for j in c.queue()]
    # Releasing it again: 409, the server saying why.
    with pytest.raises(gpusched.Conflict) as e:
        job.release()
    assert e.value.status == 409 and e.value.message


def test_refusals_carry_the_servers_message(sock_env):
    c = gpusched.Client()
    with pytest.raises(gpusched.Conflict, match="largest node") as e:
        c.submit(["true"], gpus=64)
    assert e.value.status == 409
    with pytest.raises(gpusched.NotFound) as e:
        c.job(987654).view()
    assert e.value.status == 404 and "987654" in e.value.message
    with pytest.raises(gpusched.BadRequest, match="max_retries") as e:
        c.submit(["true"], gpus=1, max_retries=1000)
    assert e.value.status == 400
    with pytest.raises(gpusched.Conflict, match="GPUSCHED_ARRAY_INDEX"):
        c.submit(["true"], gpus=1, env={"GPUSCHED_ARRAY_INDEX": "1"}, array=3)


def test_the_generated_client_is_the_whole_api(sock_env):
    import pkgutil

    import gpusched.openapi.api as api

    modules = sorted(m.name for m in pkgutil.iter_modules(api.__path__))
    assert {"jobs", "arrays", "workflows", "nodes", "queues", "tokens", "services", "reservations"} <= set(modules)
    from gpusched.openapi.api.reservations import list_reservations

    c = gpusched.Client()
    assert c.call(list_reservations).reservations == []
    assert [n.name for n in c.nodes()] and c.queues()


def test_asyncio_variant(sock_env):
    async def main():
        async with gpusched.AsyncClient() as c:
            me = await c.whoami()
            job = await c.submit(["sh", "-c", "echo a; sleep 0.5; echo b"], gpus=1)
            chunks = [chunk async for chunk in job.follow()]
            v = await job.wait(timeout=30)
            arr = await c.submit(["true"], gpus=0, array=3)
            av = await arr.wait(timeout=60)
            with pytest.raises(gpusched.Conflict):
                await c.submit(["true"], gpus=64)
            return me, b"".join(chunks), v, av, await job.logs()

    me, followed, v, av, logs = asyncio.run(main())
    assert me.via == "unix-socket"
    assert followed == b"a\nb\n" == logs
    assert str(v.state) == "succeeded" and str(av.state) == "succeeded"


def test_cwd_defaults_to_the_callers(sock_env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    c = gpusched.Client()
    job = c.submit(["pwd"], gpus=0)
    job.wait(timeout=30)
    assert job.logs().decode().strip() == os.path.realpath(tmp_path)
