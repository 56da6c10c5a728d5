from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.replica_view import ReplicaView
    from ..models.service_spec import ServiceSpec


T = TypeVar("T", bound="ServiceView")


@_attrs_define
class ServiceView:
    """A service as `GET /api/services/{name}` shows it.

    Attributes:
        created_ms (int):
        desired (int): Replicas wanted now (the autoscaler's, else `replicas`).
        failures (int): Replicas that ended unexpectedly in a row (reset when one becomes ready).
        in_flight (int): The load the gateways last reported (requests in flight and queued, over
            every gateway heard from lately).
        ready (int): Replicas ready to serve (of any version).
        replicas_list (list[ReplicaView]):
        spec (ServiceSpec): A service to run: `POST /api/services` creates it, `PUT /api/services/{name}` rolls
            out a new version of it (every field but `name` may change).
        status (str): What the service is doing or waiting for, in words ("rolling out version 3: 1
            of 2 ready", "replica 41 failed: exit code 1; restarting in 8 s").
        updated_ms (int):
        updated_ready (int): Replicas of the current version ready.
        user (str):
        version (int): The spec's version: 1 at creation, one more at each update.
        backoff_until_ms (int | None | Unset): While a failed replica's restart waits (exponential backoff): until when.
    """

    created_ms: int
    desired: int
    failures: int
    in_flight: int
    ready: int
    replicas_list: list[ReplicaView]
    spec: ServiceSpec
    status: str
    updated_ms: int
    updated_ready: int
    user: str
    version: int
    backoff_until_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_ms = self.created_ms

        desired = self.desired

        failures = self.failures

        in_flight = self.in_flight

        ready = self.ready

        replicas_list = []
        for replicas_list_item_data in self.replicas_list:
            replicas_list_item = replicas_list_item_data.to_dict()
            replicas_list.append(replicas_list_item)

        spec = self.spec.to_dict()

        status = self.status

        updated_ms = self.updated_ms

        updated_ready = self.updated_ready

        user = self.user

        version = self.version

        backoff_until_ms: int | None | Unset
        if isinstance(self.backoff_until_ms, Unset):
            backoff_until_ms = UNSET
        else:
            backoff_until_ms = self.backoff_until_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_ms": created_ms,
                "desired": desired,
                "failures": failures,
                "in_flight": in_flight,
                "ready": ready,
                "replicas_list": replicas_list,
                "spec": spec,
                "status": status,
                "updated_ms": updated_ms,
                "updated_ready": updated_ready,
                "user": user,
                "version": version,
            }
        )
        if backoff_until_ms is not UNSET:
            field_dict["backoff_until_ms"] = backoff_until_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.replica_view import ReplicaView
        from ..models.service_spec import ServiceSpec

        d = dict(src_dict)
        created_ms = d.pop("created_ms")

        desired = d.pop("desired")

        failures = d.pop("failures")

        in_flight = d.pop("in_flight")

        ready = d.pop("ready")

        replicas_list = []
        _replicas_list = d.pop("replicas_list")
        for replicas_list_item_data in _replicas_list:
            replicas_list_item = ReplicaView.from_dict(replicas_list_item_data)

            replicas_list.append(replicas_list_item)

        spec = ServiceSpec.from_dict(d.pop("spec"))

        status = d.pop("status")

        updated_ms = d.pop("updated_ms")

        updated_ready = d.pop("updated_ready")

        user = d.pop("user")

        version = d.pop("version")

        def _parse_backoff_until_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        backoff_until_ms = _parse_backoff_until_ms(d.pop("backoff_until_ms", UNSET))

        service_view = cls(
            created_ms=created_ms,
            desired=desired,
            failures=failures,
            in_flight=in_flight,
            ready=ready,
            replicas_list=replicas_list,
            spec=spec,
            status=status,
            updated_ms=updated_ms,
            updated_ready=updated_ready,
            user=user,
            version=version,
            backoff_until_ms=backoff_until_ms,
        )

        service_view.additional_properties = d
        return service_view

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
