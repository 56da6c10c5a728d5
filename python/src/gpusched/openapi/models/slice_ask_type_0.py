from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.slice_ask_type_0_kind import SliceAskType0Kind

T = TypeVar("T", bound="SliceAskType0")


@_attrs_define
class SliceAskType0:
    """A share of one GPU's compute, in thousandths (1..=999).

    Attributes:
        kind (SliceAskType0Kind):
        milli (int):
    """

    kind: SliceAskType0Kind
    milli: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        milli = self.milli

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "milli": milli,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = SliceAskType0Kind(d.pop("kind"))

        milli = d.pop("milli")

        slice_ask_type_0 = cls(
            kind=kind,
            milli=milli,
        )

        slice_ask_type_0.additional_properties = d
        return slice_ask_type_0

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
