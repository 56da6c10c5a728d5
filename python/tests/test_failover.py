"""Several servers for one client, as the CLI takes them (`GPUSCHED_SERVER=URL,URL`):
a server that cannot be reached is passed over; a follower's 307 is followed to the
leader with the method, body and token kept; a follower that knows no leader (503) makes
the client ask the next server. The leader is the live `gpusched up`; the followers are
small loopback doubles that answer as docs/failover.md says a follower does (307 with
`Location`, or 503 with `x-gpusched-leader: unknown`): a real multi-server failover needs
PostgreSQL and is tested by the Rust live tests (tests/live), not here."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import gpusched


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


class Follower:
    """A loopback HTTP server answering every request as a follower would."""

    def __init__(self, leader: str, mode: str) -> None:
        self.leader, self.mode, self.seen = leader, mode, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                outer.seen.append((self.command, self.path, self.rfile.read(n)))
                if outer.mode == "redirect":
                    self.send_response(307)
                    self.send_header("location", outer.leader + self.path)
                    body = b'{"error": "this server does not lead"}'
                else:
                    self.send_response(503)
                    self.send_header("x-gpusched-leader", "unknown")
                    self.send_header("retry-after", "1")
                    body = b'{"error": "no leader is known yet"}'
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture()
def follower(cluster):
    made = []

    def make(mode: str) -> Follower:
        f = Follower(cluster.url, mode)
        made.append(f)
        return f

    yield make
    for f in made:
        f.stop()


def test_an_unreachable_server_is_passed_over_and_the_good_one_remembered(cluster):
    c = gpusched.Client(server=f"{dead_url()},{cluster.url}", token=cluster.token)
    assert c.whoami().user
    transport = c.openapi.get_httpx_client()._transport
    assert transport.servers.order()[0] == cluster.url, "the server that answered goes first next time"
    job = c.submit(["true"], gpus=0)
    assert str(job.wait(timeout=30).state) == "succeeded"


def test_a_followers_redirect_keeps_method_body_and_token(cluster, follower):
    f = follower("redirect")
    # Only the follower is named: everything reaches the leader through its 307s.
    c = gpusched.Client(server=f.url, token=cluster.token)
    assert c.whoami().via != "unix-socket"  # the token reached the leader (else 401)
    job = c.submit(["sh", "-c", "echo via the follower"], gpus=0, name="redirected")
    assert [m for m, _, _ in f.seen] == ["GET", "POST"]
    assert b'"redirected"' in f.seen[1][2]
    job.wait(timeout=30)
    assert job.logs() == b"via the follower\n"
    assert job.view().name == "redirected"


def test_a_follower_without_a_leader_sends_the_client_to_the_next_server(cluster, follower):
    f = follower("no-leader")
    c = gpusched.Client(server=f"{f.url},{cluster.url}", token=cluster.token)
    job = c.submit(["true"], gpus=0, name="after-503")
    assert job.view().name == "after-503"
    assert f.seen and f.seen[0][0] == "POST"
    # The submission reached the leader once: its client token makes a repeat the same job.
    assert [j.name for j in c.jobs() if j.name == "after-503"] == ["after-503"]


def test_when_no_server_leads_the_client_waits_then_says_so(cluster, follower):
    f = follower("no-leader")
    c = gpusched.Client(server=f"{f.url},{dead_url()}", token=cluster.token, failover_wait=4)
    import time

    t = time.monotonic()
    with pytest.raises(gpusched.Unavailable, match="no leader is known yet"):
        c.whoami()
    waited = time.monotonic() - t
    # Retried through the failover window (4 s here, 30 s by default) in 1 s steps, six
    # tries at least: not at once, and not forever.
    assert 4 <= waited <= 15, waited
    assert len(f.seen) >= 5


def test_asyncio_follows_the_redirect_too(cluster, follower):
    import asyncio

    f = follower("redirect")

    async def main():
        async with gpusched.AsyncClient(server=f"{dead_url()},{f.url}", token=cluster.token) as c:
            return await c.whoami()

    assert asyncio.run(main()).user
