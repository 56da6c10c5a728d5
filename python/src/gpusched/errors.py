"""Errors of the gpusched client: every refusal carries the server's own message (what
was wrong and what to do) and the HTTP status."""

from __future__ import annotations

import json
from typing import Dict, Optional, Type


class GpuschedError(Exception):
    """Base of every error this package raises."""


class ConfigError(GpuschedError, ValueError):
    """The client was given something it cannot use (a server URL, a size, a duration)."""


class Unreachable(GpuschedError, ConnectionError):
    """No server answered (refused, timed out, or every server of a failover list)."""


class ApiError(GpuschedError):
    """The server refused the request; `message` is its own explanation."""

    status: int = 0

    def __init__(self, status: int, message: str, retry_after: Optional[int] = None) -> None:
        super().__init__(f"{message} (HTTP {status})")
        self.status = status
        self.message = message
        self.retry_after = retry_after


class BadRequest(ApiError):
    """400: the request is malformed; the message names the field."""


class Unauthorized(ApiError):
    """401: no token, or a revoked or mistyped one (over TCP)."""


class Forbidden(ApiError):
    """403: the role, the owner or the account forbids it."""


class NotFound(ApiError):
    """404: no such job, task, node, token, service or reservation."""


class Conflict(ApiError):
    """409: well-formed, but the cluster as it is now cannot take it (may succeed later)."""


class PayloadTooLarge(ApiError):
    """413: the body is over the server's --max-body."""


class TooManyRequests(ApiError):
    """429: over the submit rate; `retry_after` says when to try again."""


class Unavailable(ApiError):
    """503: nothing was done (overloaded, a failover, a store restarting); try again."""


_BY_STATUS: Dict[int, Type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    429: TooManyRequests,
    503: Unavailable,
}


class JobFailed(GpuschedError):
    """`Job.wait(check=True)` on a job that ended without succeeding."""

    def __init__(self, job_id: int, state: str, reason: str, exit_code: Optional[int]) -> None:
        detail = f"exit code {exit_code}" if exit_code is not None else "no exit code"
        super().__init__(f"job {job_id} ended {state} ({detail}): {reason}".rstrip(": "))
        self.job_id = job_id
        self.state = state
        self.reason = reason
        self.exit_code = exit_code


def from_response(status: int, content: bytes, headers: Optional[dict] = None) -> ApiError:
    """The exception for a refusal: the `ApiError` body's message, else the body itself."""
    message = ""
    try:
        body = json.loads(content)
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            message = body["error"]
    except ValueError:
        pass
    if not message:
        message = content.decode("utf-8", "replace").strip() or f"the server answered HTTP {status}"
    retry = None
    if headers is not None:
        try:
            retry = int(str(headers.get("retry-after", "")).strip())
        except ValueError:
            retry = None
    return _BY_STATUS.get(status, ApiError)(status, message, retry)
