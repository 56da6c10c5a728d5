from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.role import Role

T = TypeVar("T", bound="TokenView")


@_attrs_define
class TokenView:
    """
    Attributes:
        created_ms (int):
        id (int):
        revoked (bool):
        role (Role): What a caller may do. Anyone may read the queue; users submit and change their own
            jobs; admins change anyone's and manage tokens. A metrics token only reads
            `/metrics` (what a Prometheus server holds, so a leaked one reveals no job's output
            and submits nothing). A gateway token only syncs with the server
            (`POST /api/gateway/sync`: the services' endpoints for their load).
        user (str):
    """

    created_ms: int
    id: int
    revoked: bool
    role: Role
    user: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_ms = self.created_ms

        id = self.id

        revoked = self.revoked

        role = self.role.value

        user = self.user

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_ms": created_ms,
                "id": id,
                "revoked": revoked,
                "role": role,
                "user": user,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_ms = d.pop("created_ms")

        id = d.pop("id")

        revoked = d.pop("revoked")

        role = Role(d.pop("role"))

        user = d.pop("user")

        token_view = cls(
            created_ms=created_ms,
            id=id,
            revoked=revoked,
            role=role,
            user=user,
        )

        token_view.additional_properties = d
        return token_view

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
