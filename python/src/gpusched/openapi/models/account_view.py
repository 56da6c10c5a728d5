from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.account_user_view import AccountUserView


T = TypeVar("T", bound="AccountView")


@_attrs_define
class AccountView:
    """One account and the users charged to it.

    Attributes:
        depth (int): 0 for the root.
        name (str): `root` for the root.
        norm_shares (float): Shares over its siblings' shares.
        norm_usage (float): Usage over its siblings' usage (0 when none used anything).
        shares (int): Its shares among its siblings, as the file says.
        usage_gpu_hours (float): Decayed GPU-hours of its whole subtree.
        users (list[AccountUserView]):
        coordinators (list[str] | Unset): Who users ask to be added.
        level_fs (float | None | Unset): `norm_shares / norm_usage`; absent while it used nothing (infinite: it ranks
            first).
        parent (None | str | Unset): Its parent (absent for the root).
    """

    depth: int
    name: str
    norm_shares: float
    norm_usage: float
    shares: int
    usage_gpu_hours: float
    users: list[AccountUserView]
    coordinators: list[str] | Unset = UNSET
    level_fs: float | None | Unset = UNSET
    parent: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        depth = self.depth

        name = self.name

        norm_shares = self.norm_shares

        norm_usage = self.norm_usage

        shares = self.shares

        usage_gpu_hours = self.usage_gpu_hours

        users = []
        for users_item_data in self.users:
            users_item = users_item_data.to_dict()
            users.append(users_item)

        coordinators: list[str] | Unset = UNSET
        if not isinstance(self.coordinators, Unset):
            coordinators = self.coordinators

        level_fs: float | None | Unset
        if isinstance(self.level_fs, Unset):
            level_fs = UNSET
        else:
            level_fs = self.level_fs

        parent: None | str | Unset
        if isinstance(self.parent, Unset):
            parent = UNSET
        else:
            parent = self.parent

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "depth": depth,
                "name": name,
                "norm_shares": norm_shares,
                "norm_usage": norm_usage,
                "shares": shares,
                "usage_gpu_hours": usage_gpu_hours,
                "users": users,
            }
        )
        if coordinators is not UNSET:
            field_dict["coordinators"] = coordinators
        if level_fs is not UNSET:
            field_dict["level_fs"] = level_fs
        if parent is not UNSET:
            field_dict["parent"] = parent

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.account_user_view import AccountUserView

        d = dict(src_dict)
        depth = d.pop("depth")

        name = d.pop("name")

        norm_shares = d.pop("norm_shares")

        norm_usage = d.pop("norm_usage")

        shares = d.pop("shares")

        usage_gpu_hours = d.pop("usage_gpu_hours")

        users = []
        _users = d.pop("users")
        for users_item_data in _users:
            users_item = AccountUserView.from_dict(users_item_data)

            users.append(users_item)

        coordinators = cast(list[str], d.pop("coordinators", UNSET))

        def _parse_level_fs(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("float | None | Unset", data)

        level_fs = _parse_level_fs(d.pop("level_fs", UNSET))

        def _parse_parent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        parent = _parse_parent(d.pop("parent", UNSET))

        account_view = cls(
            depth=depth,
            name=name,
            norm_shares=norm_shares,
            norm_usage=norm_usage,
            shares=shares,
            usage_gpu_hours=usage_gpu_hours,
            users=users,
            coordinators=coordinators,
            level_fs=level_fs,
            parent=parent,
        )

        account_view.additional_properties = d
        return account_view

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
