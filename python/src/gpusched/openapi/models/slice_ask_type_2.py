from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.slice_ask_type_2_kind import SliceAskType2Kind

T = TypeVar("T", bound="SliceAskType2")


@_attrs_define
class SliceAskType2:
    """One MIG instance of a profile such as `1g.10gb`.

    Attributes:
        kind (SliceAskType2Kind):
        profile (str):
    """

    kind: SliceAskType2Kind
    profile: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        profile = self.profile

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "profile": profile,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = SliceAskType2Kind(d.pop("kind"))

        profile = d.pop("profile")

        slice_ask_type_2 = cls(
            kind=kind,
            profile=profile,
        )

        slice_ask_type_2.additional_properties = d
        return slice_ask_type_2

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
