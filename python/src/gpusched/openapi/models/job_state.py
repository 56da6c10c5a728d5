from __future__ import annotations
from enum import Enum


class StrEnum(str, Enum):
    """enum.StrEnum for Python 3.9 and 3.10 (py39_compat)."""

    def __str__(self) -> str:
        return str(self.value)


class JobState(StrEnum):
    CANCELLED = "cancelled"
    FAILED = "failed"
    PENDING = "pending"
    RUNNING = "running"
    STARTING = "starting"
    SUCCEEDED = "succeeded"
    TIMED_OUT = "timed_out"

    def __str__(self) -> str:
        return str(self.value)
