from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.outcome_type_1_kind import OutcomeType1Kind

T = TypeVar("T", bound="OutcomeType1")


@_attrs_define
class OutcomeType1:
    """The process was killed by a signal it did not ask for (not by gpusched).

    Attributes:
        kind (OutcomeType1Kind):
        signal (int):
    """

    kind: OutcomeType1Kind
    signal: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        signal = self.signal

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "signal": signal,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = OutcomeType1Kind(d.pop("kind"))

        signal = d.pop("signal")

        outcome_type_1 = cls(
            kind=kind,
            signal=signal,
        )

        outcome_type_1.additional_properties = d
        return outcome_type_1

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
