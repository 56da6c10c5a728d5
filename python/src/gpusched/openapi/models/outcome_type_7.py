from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.outcome_type_7_kind import OutcomeType7Kind

T = TypeVar("T", bound="OutcomeType7")


@_attrs_define
class OutcomeType7:
    """Its agent was told to stop (SIGTERM or SIGINT to `gpusched agent` or `up`) and
    stopped it (SIGTERM to its group, the grace, SIGKILL); the server requeues it
    without using a retry: nothing went wrong with the job.

        Attributes:
            kind (OutcomeType7Kind):
            message (str):
    """

    kind: OutcomeType7Kind
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = OutcomeType7Kind(d.pop("kind"))

        message = d.pop("message")

        outcome_type_7 = cls(
            kind=kind,
            message=message,
        )

        outcome_type_7.additional_properties = d
        return outcome_type_7

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
