from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.service_endpoints import ServiceEndpoints


T = TypeVar("T", bound="EndpointSet")


@_attrs_define
class EndpointSet:
    """The answer to a gateway's sync.

    Attributes:
        services (list[ServiceEndpoints]):
        sync_ms (int): How often the gateway should sync (ms).
    """

    services: list[ServiceEndpoints]
    sync_ms: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        services = []
        for services_item_data in self.services:
            services_item = services_item_data.to_dict()
            services.append(services_item)

        sync_ms = self.sync_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "services": services,
                "sync_ms": sync_ms,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.service_endpoints import ServiceEndpoints

        d = dict(src_dict)
        services = []
        _services = d.pop("services")
        for services_item_data in _services:
            services_item = ServiceEndpoints.from_dict(services_item_data)

            services.append(services_item)

        sync_ms = d.pop("sync_ms")

        endpoint_set = cls(
            services=services,
            sync_ms=sync_ms,
        )

        endpoint_set.additional_properties = d
        return endpoint_set

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
