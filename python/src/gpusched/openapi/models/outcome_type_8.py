from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.outcome_type_8_kind import OutcomeType8Kind

T = TypeVar("T", bound="OutcomeType8")


@_attrs_define
class OutcomeType8:
    """The kernel killed it for passing its memory limit (`mem_mib` or the node's
    default): `peak_bytes` is the most it held, `limit_bytes` the limit.

        Attributes:
            kind (OutcomeType8Kind):
            limit_bytes (int):
            peak_bytes (int):
    """

    kind: OutcomeType8Kind
    limit_bytes: int
    peak_bytes: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        limit_bytes = self.limit_bytes

        peak_bytes = self.peak_bytes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "limit_bytes": limit_bytes,
                "peak_bytes": peak_bytes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = OutcomeType8Kind(d.pop("kind"))

        limit_bytes = d.pop("limit_bytes")

        peak_bytes = d.pop("peak_bytes")

        outcome_type_8 = cls(
            kind=kind,
            limit_bytes=limit_bytes,
            peak_bytes=peak_bytes,
        )

        outcome_type_8.additional_properties = d
        return outcome_type_8

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
