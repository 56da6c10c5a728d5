from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_event import JobEvent


T = TypeVar("T", bound="JobEvents")


@_attrs_define
class JobEvents:
    """`GET /api/jobs/{id}/events`: a job's timeline, oldest first.

    Attributes:
        events (list[JobEvent]):
        job (int):
        dropped (int | Unset): Older events were dropped: the server keeps at most this many per job (the first
            `submitted` is always kept).
    """

    events: list[JobEvent]
    job: int
    dropped: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)

        job = self.job

        dropped = self.dropped

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "events": events,
                "job": job,
            }
        )
        if dropped is not UNSET:
            field_dict["dropped"] = dropped

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.job_event import JobEvent

        d = dict(src_dict)
        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = JobEvent.from_dict(events_item_data)

            events.append(events_item)

        job = d.pop("job")

        dropped = d.pop("dropped", UNSET)

        job_events = cls(
            events=events,
            job=job,
            dropped=dropped,
        )

        job_events.additional_properties = d
        return job_events

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
