"""gpusched: a Python client for the gpusched GPU cluster scheduler.

    import gpusched
    client = gpusched.Client()          # the server and identity, found as the CLI does
    job = client.submit(["python", "train.py"], gpus=2, walltime="2h")
    job.wait()
    print(job.logs().decode())

`gpusched.AsyncClient` is the asyncio variant; `gpusched.openapi` is the client generated
from the server's OpenAPI document (every operation, typed); `submitit.AutoExecutor(folder,
cluster="gpusched")` runs Python functions as gpusched jobs (`pip install gpusched[submitit]`).
See docs/python.md.
"""

from .client import (
    TERMINAL,
    Array,
    AsyncArray,
    AsyncClient,
    AsyncJob,
    Client,
    Job,
    Step,
    job_submit,
)
from .errors import (
    ApiError,
    BadRequest,
    ConfigError,
    Conflict,
    Forbidden,
    GpuschedError,
    JobFailed,
    NotFound,
    PayloadTooLarge,
    TooManyRequests,
    Unauthorized,
    Unavailable,
    Unreachable,
)

__version__ = "0.1.0"

__all__ = [
    "TERMINAL",
    "ApiError",
    "Array",
    "AsyncArray",
    "AsyncClient",
    "AsyncJob",
    "BadRequest",
    "Client",
    "ConfigError",
    "Conflict",
    "Forbidden",
    "GpuschedError",
    "Job",
    "JobFailed",
    "NotFound",
    "PayloadTooLarge",
    "Step",
    "TooManyRequests",
    "Unauthorized",
    "Unavailable",
    "Unreachable",
    "job_submit",
]
