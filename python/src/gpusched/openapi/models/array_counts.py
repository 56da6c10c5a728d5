from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ArrayCounts")


@_attrs_define
class ArrayCounts:
    """How many of an array's tasks are in each state (tasks not started yet are pending).

    Attributes:
        cancelled (int):
        failed (int):
        pending (int):
        running (int):
        starting (int):
        succeeded (int):
        timed_out (int):
    """

    cancelled: int
    failed: int
    pending: int
    running: int
    starting: int
    succeeded: int
    timed_out: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cancelled = self.cancelled

        failed = self.failed

        pending = self.pending

        running = self.running

        starting = self.starting

        succeeded = self.succeeded

        timed_out = self.timed_out

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cancelled": cancelled,
                "failed": failed,
                "pending": pending,
                "running": running,
                "starting": starting,
                "succeeded": succeeded,
                "timed_out": timed_out,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cancelled = d.pop("cancelled")

        failed = d.pop("failed")

        pending = d.pop("pending")

        running = d.pop("running")

        starting = d.pop("starting")

        succeeded = d.pop("succeeded")

        timed_out = d.pop("timed_out")

        array_counts = cls(
            cancelled=cancelled,
            failed=failed,
            pending=pending,
            running=running,
            starting=starting,
            succeeded=succeeded,
            timed_out=timed_out,
        )

        array_counts.additional_properties = d
        return array_counts

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
