from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

T = TypeVar("T", bound="PurgeRequest")


@_attrs_define
class PurgeRequest:
    """`POST /api/admin/purge`: delete the jobs that ended before a time from the history.

    Attributes:
        before_ms (int): Jobs that ended before this time (Unix ms) are deleted with their timelines;
            live jobs never are.
    """

    before_ms: int

    def to_dict(self) -> dict[str, Any]:
        before_ms = self.before_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "before_ms": before_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        before_ms = d.pop("before_ms")

        purge_request = cls(
            before_ms=before_ms,
        )

        return purge_request
