from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.outcome_type_6_kind import OutcomeType6Kind

T = TypeVar("T", bound="OutcomeType6")


@_attrs_define
class OutcomeType6:
    """It was preempted (checkpoint signal, grace, stop); the server requeues it with
    its service kept.

        Attributes:
            kind (OutcomeType6Kind):
    """

    kind: OutcomeType6Kind
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = OutcomeType6Kind(d.pop("kind"))

        outcome_type_6 = cls(
            kind=kind,
        )

        outcome_type_6.additional_properties = d
        return outcome_type_6

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
