from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="JobUpdate")


@_attrs_define
class JobUpdate:
    """`PATCH /api/jobs/{id}`: change a pending job (Slurm's `scontrol update`); fields left
    out keep their values. A job that has started is refused (409).

        Attributes:
            priority (int | None | Unset):
            queue (None | str | Unset):
            walltime_s (int | None | Unset):
    """

    priority: int | None | Unset = UNSET
    queue: None | str | Unset = UNSET
    walltime_s: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        priority: int | None | Unset
        if isinstance(self.priority, Unset):
            priority = UNSET
        else:
            priority = self.priority

        queue: None | str | Unset
        if isinstance(self.queue, Unset):
            queue = UNSET
        else:
            queue = self.queue

        walltime_s: int | None | Unset
        if isinstance(self.walltime_s, Unset):
            walltime_s = UNSET
        else:
            walltime_s = self.walltime_s

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if priority is not UNSET:
            field_dict["priority"] = priority
        if queue is not UNSET:
            field_dict["queue"] = queue
        if walltime_s is not UNSET:
            field_dict["walltime_s"] = walltime_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_priority(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        priority = _parse_priority(d.pop("priority", UNSET))

        def _parse_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        queue = _parse_queue(d.pop("queue", UNSET))

        def _parse_walltime_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        walltime_s = _parse_walltime_s(d.pop("walltime_s", UNSET))

        job_update = cls(
            priority=priority,
            queue=queue,
            walltime_s=walltime_s,
        )

        return job_update
