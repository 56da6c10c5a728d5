from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ArraySpec")


@_attrs_define
class ArraySpec:
    """The indices of an array's tasks: `first`, `first + step`, ... up to `last`
    (inclusive), at most `max_running` of them running at once.

        Attributes:
            first (int):
            last (int):
            max_running (int | None | Unset): Slurm's `%K`: at most this many tasks hold resources at once (default: no
                limit).
            step (int | Unset): Default 1.
    """

    first: int
    last: int
    max_running: int | None | Unset = UNSET
    step: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        first = self.first

        last = self.last

        max_running: int | None | Unset
        if isinstance(self.max_running, Unset):
            max_running = UNSET
        else:
            max_running = self.max_running

        step = self.step

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "first": first,
                "last": last,
            }
        )
        if max_running is not UNSET:
            field_dict["max_running"] = max_running
        if step is not UNSET:
            field_dict["step"] = step

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        first = d.pop("first")

        last = d.pop("last")

        def _parse_max_running(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        max_running = _parse_max_running(d.pop("max_running", UNSET))

        step = d.pop("step", UNSET)

        array_spec = cls(
            first=first,
            last=last,
            max_running=max_running,
            step=step,
        )

        return array_spec
