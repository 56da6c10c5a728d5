from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Health")


@_attrs_define
class Health:
    """
    Attributes:
        role (str): `leader` or `follower`.
        status (str): `ok` on the leader (its state task answered), `follower` on a server that does
            not lead.
        version (str):
        epoch (int | None | Unset): The leader's epoch (this server's own when it leads); none while no leader is
            known.
        leader_url (None | str | Unset): The leader's advertised URL (this server's own when it leads).
    """

    role: str
    status: str
    version: str
    epoch: int | None | Unset = UNSET
    leader_url: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        role = self.role

        status = self.status

        version = self.version

        epoch: int | None | Unset
        if isinstance(self.epoch, Unset):
            epoch = UNSET
        else:
            epoch = self.epoch

        leader_url: None | str | Unset
        if isinstance(self.leader_url, Unset):
            leader_url = UNSET
        else:
            leader_url = self.leader_url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "role": role,
                "status": status,
                "version": version,
            }
        )
        if epoch is not UNSET:
            field_dict["epoch"] = epoch
        if leader_url is not UNSET:
            field_dict["leader_url"] = leader_url

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        role = d.pop("role")

        status = d.pop("status")

        version = d.pop("version")

        def _parse_epoch(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        epoch = _parse_epoch(d.pop("epoch", UNSET))

        def _parse_leader_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        leader_url = _parse_leader_url(d.pop("leader_url", UNSET))

        health = cls(
            role=role,
            status=status,
            version=version,
            epoch=epoch,
            leader_url=leader_url,
        )

        health.additional_properties = d
        return health

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
