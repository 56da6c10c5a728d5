from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

from ..models.role import Role
from ..types import UNSET, Unset

T = TypeVar("T", bound="TokenCreate")


@_attrs_define
class TokenCreate:
    """`POST /api/tokens` (admins only).

    Attributes:
        user (str): 1-64 letters, digits, `.`, `_`, `-` or `@`.
        role (Role | Unset): What a caller may do. Anyone may read the queue; users submit and change their own
            jobs; admins change anyone's and manage tokens. A metrics token only reads
            `/metrics` (what a Prometheus server holds, so a leaked one reveals no job's output
            and submits nothing). A gateway token only syncs with the server
            (`POST /api/gateway/sync`: the services' endpoints for their load).
    """

    user: str
    role: Role | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        user = self.user

        role: str | Unset = UNSET
        if not isinstance(self.role, Unset):
            role = self.role.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "user": user,
            }
        )
        if role is not UNSET:
            field_dict["role"] = role

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        user = d.pop("user")

        _role = d.pop("role", UNSET)
        role: Role | Unset
        if isinstance(_role, Unset):
            role = UNSET
        else:
            role = Role(_role)

        token_create = cls(
            user=user,
            role=role,
        )

        return token_create
