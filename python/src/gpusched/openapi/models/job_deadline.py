from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.deadline_status import DeadlineStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="JobDeadline")


@_attrs_define
class JobDeadline:
    """A job's deadline and how it stands (`JobView::deadline`, `Submitted::deadline`).

    Attributes:
        at_ms (int): When it must be finished, Unix milliseconds.
        status (DeadlineStatus): How a job stands against its deadline.
        finish_ms (int | None | Unset): When it is expected to finish (waiting or running jobs with an estimate: the
            estimated start plus the walltime or the predicted run time), or when it ended.
        slack_s (int | None | Unset): Seconds from that finish to the deadline: negative when late.
    """

    at_ms: int
    status: DeadlineStatus
    finish_ms: int | None | Unset = UNSET
    slack_s: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at_ms = self.at_ms

        status = self.status.value

        finish_ms: int | None | Unset
        if isinstance(self.finish_ms, Unset):
            finish_ms = UNSET
        else:
            finish_ms = self.finish_ms

        slack_s: int | None | Unset
        if isinstance(self.slack_s, Unset):
            slack_s = UNSET
        else:
            slack_s = self.slack_s

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at_ms": at_ms,
                "status": status,
            }
        )
        if finish_ms is not UNSET:
            field_dict["finish_ms"] = finish_ms
        if slack_s is not UNSET:
            field_dict["slack_s"] = slack_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at_ms = d.pop("at_ms")

        status = DeadlineStatus(d.pop("status"))

        def _parse_finish_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        finish_ms = _parse_finish_ms(d.pop("finish_ms", UNSET))

        def _parse_slack_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        slack_s = _parse_slack_s(d.pop("slack_s", UNSET))

        job_deadline = cls(
            at_ms=at_ms,
            status=status,
            finish_ms=finish_ms,
            slack_s=slack_s,
        )

        job_deadline.additional_properties = d
        return job_deadline

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
