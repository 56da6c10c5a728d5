from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ReplicaOf")


@_attrs_define
class ReplicaOf:
    """What a replica's job says of its service (`JobView::service`).

    Attributes:
        ready (bool): Whether it passes its readiness probe now.
        service (str):
        version (int):
        draining_since_ms (int | None | Unset): Out of the gateways' endpoints since then (Unix ms): its service is
            replacing or
            removing it, and stops it once the rollout's `drain_s` has passed.
        port (int | None | Unset): The port its agent gave it, once known.
    """

    ready: bool
    service: str
    version: int
    draining_since_ms: int | None | Unset = UNSET
    port: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ready = self.ready

        service = self.service

        version = self.version

        draining_since_ms: int | None | Unset
        if isinstance(self.draining_since_ms, Unset):
            draining_since_ms = UNSET
        else:
            draining_since_ms = self.draining_since_ms

        port: int | None | Unset
        if isinstance(self.port, Unset):
            port = UNSET
        else:
            port = self.port

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ready": ready,
                "service": service,
                "version": version,
            }
        )
        if draining_since_ms is not UNSET:
            field_dict["draining_since_ms"] = draining_since_ms
        if port is not UNSET:
            field_dict["port"] = port

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        ready = d.pop("ready")

        service = d.pop("service")

        version = d.pop("version")

        def _parse_draining_since_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        draining_since_ms = _parse_draining_since_ms(d.pop("draining_since_ms", UNSET))

        def _parse_port(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        port = _parse_port(d.pop("port", UNSET))

        replica_of = cls(
            ready=ready,
            service=service,
            version=version,
            draining_since_ms=draining_since_ms,
            port=port,
        )

        replica_of.additional_properties = d
        return replica_of

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
