from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.replica_phase import ReplicaPhase
from ..types import UNSET, Unset

T = TypeVar("T", bound="ReplicaView")


@_attrs_define
class ReplicaView:
    """One replica of a service (a job).

    Attributes:
        job (int):
        phase (ReplicaPhase): Where a replica is in its life.
        version (int):
        node (None | str | Unset):
        url (None | str | Unset): `http://ADDRESS:PORT` once its agent gave it a port.
    """

    job: int
    phase: ReplicaPhase
    version: int
    node: None | str | Unset = UNSET
    url: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        job = self.job

        phase = self.phase.value

        version = self.version

        node: None | str | Unset
        if isinstance(self.node, Unset):
            node = UNSET
        else:
            node = self.node

        url: None | str | Unset
        if isinstance(self.url, Unset):
            url = UNSET
        else:
            url = self.url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "job": job,
                "phase": phase,
                "version": version,
            }
        )
        if node is not UNSET:
            field_dict["node"] = node
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        job = d.pop("job")

        phase = ReplicaPhase(d.pop("phase"))

        version = d.pop("version")

        def _parse_node(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        node = _parse_node(d.pop("node", UNSET))

        def _parse_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        url = _parse_url(d.pop("url", UNSET))

        replica_view = cls(
            job=job,
            phase=phase,
            version=version,
            node=node,
            url=url,
        )

        replica_view.additional_properties = d
        return replica_view

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
