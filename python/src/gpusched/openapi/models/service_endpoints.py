from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.serve_protocol import ServeProtocol

if TYPE_CHECKING:
    from ..models.endpoint import Endpoint
    from ..models.model_config import ModelConfig


T = TypeVar("T", bound="ServiceEndpoints")


@_attrs_define
class ServiceEndpoints:
    """Where one service can be called now.

    Attributes:
        desired (int): Replicas wanted now; with none ready and `desired` 0 the service is scaled to
            zero and a request is held (bounded) while the gateway's load brings one up.
        endpoints (list[Endpoint]): Ready replicas, lowest job first.
        models (list[ModelConfig]): The models it serves (never empty: the default model is filled in).
        name (str):
        protocol (ServeProtocol): The protocol replicas speak.
    """

    desired: int
    endpoints: list[Endpoint]
    models: list[ModelConfig]
    name: str
    protocol: ServeProtocol
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        desired = self.desired

        endpoints = []
        for endpoints_item_data in self.endpoints:
            endpoints_item = endpoints_item_data.to_dict()
            endpoints.append(endpoints_item)

        models = []
        for models_item_data in self.models:
            models_item = models_item_data.to_dict()
            models.append(models_item)

        name = self.name

        protocol = self.protocol.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "desired": desired,
                "endpoints": endpoints,
                "models": models,
                "name": name,
                "protocol": protocol,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.endpoint import Endpoint
        from ..models.model_config import ModelConfig

        d = dict(src_dict)
        desired = d.pop("desired")

        endpoints = []
        _endpoints = d.pop("endpoints")
        for endpoints_item_data in _endpoints:
            endpoints_item = Endpoint.from_dict(endpoints_item_data)

            endpoints.append(endpoints_item)

        models = []
        _models = d.pop("models")
        for models_item_data in _models:
            models_item = ModelConfig.from_dict(models_item_data)

            models.append(models_item)

        name = d.pop("name")

        protocol = ServeProtocol(d.pop("protocol"))

        service_endpoints = cls(
            desired=desired,
            endpoints=endpoints,
            models=models,
            name=name,
            protocol=protocol,
        )

        service_endpoints.additional_properties = d
        return service_endpoints

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
