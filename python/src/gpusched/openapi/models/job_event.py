from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.job_event_kind import JobEventKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="JobEvent")


@_attrs_define
class JobEvent:
    """One step of a job's life.

    Attributes:
        at_ms (int): The server's clock, Unix ms (a `checkpoint` or `started` carries the node's).
        attempt (int): The attempt it belongs to (0 while the job has never been placed: `submitted`,
            and what happens to it while it first waits).
        kind (JobEventKind): What happened to a job.
        detail (str | Unset): Why, or where, in words.
        nodes (list[str] | Unset): The nodes involved, in rank order (empty when none is).
    """

    at_ms: int
    attempt: int
    kind: JobEventKind
    detail: str | Unset = UNSET
    nodes: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at_ms = self.at_ms

        attempt = self.attempt

        kind = self.kind.value

        detail = self.detail

        nodes: list[str] | Unset = UNSET
        if not isinstance(self.nodes, Unset):
            nodes = self.nodes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at_ms": at_ms,
                "attempt": attempt,
                "kind": kind,
            }
        )
        if detail is not UNSET:
            field_dict["detail"] = detail
        if nodes is not UNSET:
            field_dict["nodes"] = nodes

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        at_ms = d.pop("at_ms")

        attempt = d.pop("attempt")

        kind = JobEventKind(d.pop("kind"))

        detail = d.pop("detail", UNSET)

        nodes = cast(list[str], d.pop("nodes", UNSET))

        job_event = cls(
            at_ms=at_ms,
            attempt=attempt,
            kind=kind,
            detail=detail,
            nodes=nodes,
        )

        job_event.additional_properties = d
        return job_event

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
