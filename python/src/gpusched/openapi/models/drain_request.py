from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="DrainRequest")


@_attrs_define
class DrainRequest:
    """`POST /api/nodes/{name}/drain` (admins).

    Attributes:
        now (bool | Unset): Requeue the running jobs now (checkpoint signal, grace), instead of letting them
            finish.
        reason (None | str | Unset):
    """

    now: bool | Unset = UNSET
    reason: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        now = self.now

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if now is not UNSET:
            field_dict["now"] = now
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        now = d.pop("now", UNSET)

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        reason = _parse_reason(d.pop("reason", UNSET))

        drain_request = cls(
            now=now,
            reason=reason,
        )

        return drain_request
