from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="DesiredPowerCaps")


@_attrs_define
class DesiredPowerCaps:
    """The power limit each GPU should have, milliwatts, by GPU index (`gpusched serve
    --gpu-power-cap`, docs/power.md); a GPU not listed keeps its default limit. An
    addition needing no new protocol: `Desired` is read without
    `deny_unknown_fields`, so an agent of an older release ignores it, and a server
    sends it only when a cap is set. Such an agent's GPUs keep their default limit,
    which the server cannot tell from the protocol: a power budget counts caps that
    only agents of this release apply (docs/power.md).

    """

    additional_properties: dict[str, int] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        desired_power_caps = cls()

        desired_power_caps.additional_properties = d
        return desired_power_caps

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> int:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: int) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
