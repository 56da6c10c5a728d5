from __future__ import annotations
from enum import Enum


class StrEnum(str, Enum):
    """enum.StrEnum for Python 3.9 and 3.10 (py39_compat)."""

    def __str__(self) -> str:
        return str(self.value)


class DeadlineStatus(StrEnum):
    AT_RISK = "at_risk"
    MET = "met"
    MISSED = "missed"
    ON_TRACK = "on_track"

    def __str__(self) -> str:
        return str(self.value)
