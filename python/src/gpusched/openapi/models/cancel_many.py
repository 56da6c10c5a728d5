from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

T = TypeVar("T", bound="CancelMany")


@_attrs_define
class CancelMany:
    """`POST /api/jobs/cancel`: several jobs cancelled in one request and one transaction,
    so GPUs freed by one of them never go to another before its cancel arrives.

        Attributes:
            ids (list[int]): The jobs to cancel (at least one, at most 100000).
    """

    ids: list[int]

    def to_dict(self) -> dict[str, Any]:
        ids = self.ids

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "ids": ids,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        ids = cast(list[int], d.pop("ids"))

        cancel_many = cls(
            ids=ids,
        )

        return cancel_many
