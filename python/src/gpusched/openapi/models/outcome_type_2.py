from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.outcome_type_2_kind import OutcomeType2Kind

T = TypeVar("T", bound="OutcomeType2")


@_attrs_define
class OutcomeType2:
    """gpusched stopped it for passing its walltime.

    Attributes:
        kind (OutcomeType2Kind):
        walltime_s (int):
    """

    kind: OutcomeType2Kind
    walltime_s: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        walltime_s = self.walltime_s

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "walltime_s": walltime_s,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = OutcomeType2Kind(d.pop("kind"))

        walltime_s = d.pop("walltime_s")

        outcome_type_2 = cls(
            kind=kind,
            walltime_s=walltime_s,
        )

        outcome_type_2.additional_properties = d
        return outcome_type_2

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
