from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

T = TypeVar("T", bound="XidEvent")


@_attrs_define
class XidEvent:
    """One Xid event (NVIDIA's error codes in the kernel log; NVML's critical Xid events).

    Attributes:
        at_ms (int):
        code (int):
    """

    at_ms: int
    code: int

    def to_dict(self) -> dict[str, Any]:
        at_ms = self.at_ms

        code = self.code

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "at_ms": at_ms,
                "code": code,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at_ms = d.pop("at_ms")

        code = d.pop("code")

        xid_event = cls(
            at_ms=at_ms,
            code=code,
        )

        return xid_event
