from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.gpu_health_type_0 import GpuHealthType0
    from ..models.gpu_health_type_1 import GpuHealthType1


T = TypeVar("T", bound="NodeViewGpuHealth")


@_attrs_define
class NodeViewGpuHealth:
    """Each GPU's health (by NVML index; a GPU absent here is healthy)."""

    additional_properties: dict[str, GpuHealthType0 | GpuHealthType1] = _attrs_field(
        init=False, factory=dict
    )

    def to_dict(self) -> dict[str, Any]:
        from ..models.gpu_health_type_0 import GpuHealthType0

        field_dict: dict[str, Any] = {}
        for prop_name, prop in self.additional_properties.items():
            if isinstance(prop, GpuHealthType0):
                field_dict[prop_name] = prop.to_dict()
            else:
                field_dict[prop_name] = prop.to_dict()

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.gpu_health_type_0 import GpuHealthType0
        from ..models.gpu_health_type_1 import GpuHealthType1

        d = dict(src_dict)
        node_view_gpu_health = cls()

        additional_properties = {}
        for prop_name, prop_dict in d.items():

            def _parse_additional_property(
                data: object,
            ) -> GpuHealthType0 | GpuHealthType1:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_gpu_health_type_0 = GpuHealthType0.from_dict(data)

                    return componentsschemas_gpu_health_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_gpu_health_type_1 = GpuHealthType1.from_dict(data)

                return componentsschemas_gpu_health_type_1

            additional_property = _parse_additional_property(prop_dict)

            additional_properties[prop_name] = additional_property

        node_view_gpu_health.additional_properties = additional_properties
        return node_view_gpu_health

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> GpuHealthType0 | GpuHealthType1:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: GpuHealthType0 | GpuHealthType1) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
