from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

T = TypeVar("T", bound="Drain")


@_attrs_define
class Drain:
    """An operator's drain of a node: nothing new starts there.

    Attributes:
        by (str): Who drained it.
        now (bool): Running jobs were requeued with the checkpoint contract (`drain --now`); else
            they finish.
        reason (str):
        since_ms (int):
    """

    by: str
    now: bool
    reason: str
    since_ms: int

    def to_dict(self) -> dict[str, Any]:
        by = self.by

        now = self.now

        reason = self.reason

        since_ms = self.since_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "by": by,
                "now": now,
                "reason": reason,
                "since_ms": since_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        by = d.pop("by")

        now = d.pop("now")

        reason = d.pop("reason")

        since_ms = d.pop("since_ms")

        drain = cls(
            by=by,
            now=now,
            reason=reason,
            since_ms=since_ms,
        )

        return drain
