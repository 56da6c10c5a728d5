from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.service_load import ServiceLoad


T = TypeVar("T", bound="GatewaySync")


@_attrs_define
class GatewaySync:
    """`POST /api/gateway/sync`: a gateway's load, sent every poll; the answer is the
    endpoints it routes to.

        Attributes:
            gateway (str): The gateway's identity (stable for its life: its load replaces its last report).
            load (list[ServiceLoad] | Unset): Its load per service, as of now.
    """

    gateway: str
    load: list[ServiceLoad] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        gateway = self.gateway

        load: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.load, Unset):
            load = []
            for load_item_data in self.load:
                load_item = load_item_data.to_dict()
                load.append(load_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "gateway": gateway,
            }
        )
        if load is not UNSET:
            field_dict["load"] = load

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.service_load import ServiceLoad

        d = dict(src_dict)
        gateway = d.pop("gateway")

        _load = d.pop("load", UNSET)
        load: list[ServiceLoad] | Unset = UNSET
        if _load is not UNSET:
            load = []
            for load_item_data in _load:
                load_item = ServiceLoad.from_dict(load_item_data)

                load.append(load_item)

        gateway_sync = cls(
            gateway=gateway,
            load=load,
        )

        return gateway_sync
