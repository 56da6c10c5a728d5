from __future__ import annotations
from enum import Enum


class StrEnum(str, Enum):
    """enum.StrEnum for Python 3.9 and 3.10 (py39_compat)."""

    def __str__(self) -> str:
        return str(self.value)


class AuditAction(StrEnum):
    CANCEL_OTHER = "cancel_other"
    DRAIN = "drain"
    HOLD_OTHER = "hold_other"
    PURGE = "purge"
    QUEUE_RELOAD = "queue_reload"
    RELEASE_OTHER = "release_other"
    RESERVATION_CREATE = "reservation_create"
    RESERVATION_DELETE = "reservation_delete"
    RESERVATION_UPDATE = "reservation_update"
    RESUME = "resume"
    TOKEN_CREATE = "token_create"
    TOKEN_REVOKE = "token_revoke"
    UPDATE_OTHER = "update_other"

    def __str__(self) -> str:
        return str(self.value)
