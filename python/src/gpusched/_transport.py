"""httpx transports that give the generated client the CLI's way of reaching servers
(crates/cli/src/client.rs):

- several servers: a request goes to the one that answered last; a server that cannot
  be reached, or answers 503, makes the transport try the next;
- a follower's `307` is followed to its `Location` (method, body and token kept; httpx
  itself would drop the token when the host changes);
- a 503 (nothing was done: a failover, an overloaded server, a store restarting) and a
  429 with `Retry-After` are tried again after the wait the server asks for, a bounded
  number of times, and for up to 30 s while no server leads;
- over a Unix socket the same retries, one server.

Every request carries the same client token for a submission, so trying it again never
makes a second job (the hand-written layer sets `client_token`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import List, Optional, Tuple
from urllib.parse import urlsplit

import httpx

log = logging.getLogger("gpusched")

MAX_HOPS = 4
BUSY_TRIES = 6
FAILOVER_WAIT_S = 30.0
BUSY_WAIT_MAX_S = 30.0


class _Servers:
    def __init__(self, bases: List[str]) -> None:
        self.bases = bases
        self._last = 0
        self._lock = threading.Lock()

    def order(self) -> List[str]:
        with self._lock:
            i = self._last
        return self.bases[i:] + self.bases[:i]

    def answered(self, base: str) -> None:
        if base in self.bases:
            with self._lock:
                self._last = self.bases.index(base)

    def shown(self) -> str:
        return ",".join(self.bases)


def _origin(url: str) -> Optional[str]:
    p = urlsplit(url)
    if p.scheme not in ("http", "https") or not p.netloc:
        return None
    return f"{p.scheme}://{p.netloc}"


def _retarget(request: httpx.Request, url: str, body: bytes) -> httpx.Request:
    headers = [(k, v) for k, v in request.headers.raw if k.lower() not in (b"host", b"content-length")]
    return httpx.Request(request.method, url, headers=headers, content=body, extensions=request.extensions)


def _path_of(request: httpx.Request) -> str:
    return request.url.raw_path.decode("ascii")


def _retry_after(resp: httpx.Response) -> Optional[int]:
    try:
        return int(resp.headers.get("retry-after", "").strip())
    except ValueError:
        return None


def _copy(resp: httpx.Response, content: bytes) -> httpx.Response:
    return httpx.Response(resp.status_code, headers=resp.headers, content=content, extensions=resp.extensions)


class _Plan:
    """What to do after one round over the servers (shared by both transports)."""

    def __init__(self, servers: _Servers, failover_wait: float) -> None:
        self.servers = servers
        self.failover_wait = failover_wait
        self.started = time.monotonic()
        self.tries = 1

    def wait_before_retry(self, resp: httpx.Response, failover: bool) -> Optional[float]:
        """Seconds to wait before sending again, or None to give `resp` to the caller."""
        status = resp.status_code
        if status not in (503, 429):
            return None
        again = self.tries < BUSY_TRIES or (failover and time.monotonic() - self.started < self.failover_wait)
        after = _retry_after(resp)
        if status == 503 and after is None:
            after = 1
        if after is None or not again:
            return None
        self.tries += 1
        wait = min(max(after, 1), BUSY_WAIT_MAX_S)
        if failover:
            log.warning("no gpusched server leads right now (a failover is under way); trying again in %d s", wait)
        else:
            log.warning("the gpusched server is busy (HTTP %d); trying again in %d s", status, wait)
        return wait


class FailoverTransport(httpx.BaseTransport):
    """Synchronous transport over one or more servers (or one Unix socket)."""

    def __init__(self, bases: List[str], inner: httpx.BaseTransport, failover_wait: float = FAILOVER_WAIT_S) -> None:
        self.servers = _Servers(bases)
        self.inner = inner
        self.failover_wait = failover_wait

    def _round(self, request: httpx.Request, body: bytes) -> Tuple[httpx.Response, bool]:
        several = len(self.servers.bases) > 1
        path = _path_of(request)
        last_exc: Optional[Exception] = None
        busy: Optional[httpx.Response] = None
        lost_leader: Optional[str] = None
        for base in self.servers.order():
            url, at = base + path, base
            for _ in range(MAX_HOPS):
                try:
                    resp = self.inner.handle_request(_retarget(request, url, body))
                except httpx.TransportError as e:
                    if at != base:
                        lost_leader = at
                    last_exc = e
                    break
                if resp.status_code == 307:
                    loc = resp.headers.get("location", "")
                    resp.read()
                    resp.close()
                    origin = _origin(loc)
                    if origin is None:
                        break
                    url, at = loc, origin
                    continue
                if resp.status_code == 503 and several:
                    busy = _copy(resp, resp.read())
                    resp.close()
                    break
                self.servers.answered(at)
                no_leader = resp.headers.get("x-gpusched-leader") == "unknown"
                return resp, resp.status_code == 503 and no_leader
        if busy is not None:
            return busy, True
        if lost_leader is not None:
            msg = (
                f'{{"error": "the leader the other servers name ({lost_leader}) cannot be reached '
                f'and none of {self.servers.shown()} leads yet"}}'
            )
            return httpx.Response(503, headers={"retry-after": "1"}, content=msg.encode()), True
        raise last_exc or httpx.ConnectError(f"the servers at {self.servers.shown()} kept redirecting")

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        plan = _Plan(self.servers, self.failover_wait)
        while True:
            resp, failover = self._round(request, body)
            wait = plan.wait_before_retry(resp, failover)
            if wait is None:
                return resp
            resp.read()
            resp.close()
            time.sleep(wait)

    def close(self) -> None:
        self.inner.close()


class AsyncFailoverTransport(httpx.AsyncBaseTransport):
    """The same for asyncio."""

    def __init__(
        self, bases: List[str], inner: httpx.AsyncBaseTransport, failover_wait: float = FAILOVER_WAIT_S
    ) -> None:
        self.servers = _Servers(bases)
        self.inner = inner
        self.failover_wait = failover_wait

    async def _round(self, request: httpx.Request, body: bytes) -> Tuple[httpx.Response, bool]:
        several = len(self.servers.bases) > 1
        path = _path_of(request)
        last_exc: Optional[Exception] = None
        busy: Optional[httpx.Response] = None
        lost_leader: Optional[str] = None
        for base in self.servers.order():
            url, at = base + path, base
            for _ in range(MAX_HOPS):
                try:
                    resp = await self.inner.handle_async_request(_retarget(request, url, body))
                except httpx.TransportError as e:
                    if at != base:
                        lost_leader = at
                    last_exc = e
                    break
                if resp.status_code == 307:
                    loc = resp.headers.get("location", "")
                    await resp.aread()
                    await resp.aclose()
                    origin = _origin(loc)
                    if origin is None:
                        break
                    url, at = loc, origin
                    continue
                if resp.status_code == 503 and several:
                    busy = _copy(resp, await resp.aread())
                    await resp.aclose()
                    break
                self.servers.answered(at)
                no_leader = resp.headers.get("x-gpusched-leader") == "unknown"
                return resp, resp.status_code == 503 and no_leader
        if busy is not None:
            return busy, True
        if lost_leader is not None:
            msg = (
                f'{{"error": "the leader the other servers name ({lost_leader}) cannot be reached '
                f'and none of {self.servers.shown()} leads yet"}}'
            )
            return httpx.Response(503, headers={"retry-after": "1"}, content=msg.encode()), True
        raise last_exc or httpx.ConnectError(f"the servers at {self.servers.shown()} kept redirecting")

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        plan = _Plan(self.servers, self.failover_wait)
        while True:
            resp, failover = await self._round(request, body)
            wait = plan.wait_before_retry(resp, failover)
            if wait is None:
                return resp
            await resp.aread()
            await resp.aclose()
            await asyncio.sleep(wait)

    async def aclose(self) -> None:
        await self.inner.aclose()
