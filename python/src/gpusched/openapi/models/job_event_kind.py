from __future__ import annotations
from enum import Enum


class StrEnum(str, Enum):
    """enum.StrEnum for Python 3.9 and 3.10 (py39_compat)."""

    def __str__(self) -> str:
        return str(self.value)


class JobEventKind(StrEnum):
    CANCEL_REQUESTED = "cancel_requested"
    CHECKPOINT = "checkpoint"
    ENDED = "ended"
    HELD = "held"
    IDLE_WARNING = "idle_warning"
    PLACED = "placed"
    PREEMPTED = "preempted"
    RELEASED = "released"
    REQUEUED = "requeued"
    STARTED = "started"
    STEP_ENDED = "step_ended"
    STEP_STARTED = "step_started"
    SUBMITTED = "submitted"
    UPDATED = "updated"

    def __str__(self) -> str:
        return str(self.value)
