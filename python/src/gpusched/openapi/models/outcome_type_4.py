from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.outcome_type_4_kind import OutcomeType4Kind

T = TypeVar("T", bound="OutcomeType4")


@_attrs_define
class OutcomeType4:
    """The program could not be started (not found, not executable, bad directory).

    Attributes:
        kind (OutcomeType4Kind):
        message (str):
    """

    kind: OutcomeType4Kind
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
        kind = OutcomeType4Kind(d.pop("kind"))

        message = d.pop("message")

        outcome_type_4 = cls(
            kind=kind,
            message=message,
        )

        outcome_type_4.additional_properties = d
        return outcome_type_4

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
