from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="AccountUserView")


@_attrs_define
class AccountUserView:
    """One user under an account (Slurm's association).

    Attributes:
        declared (bool): Whether it is in the file (a user with jobs here that the file does not name
            counts with 1 share).
        fair_share (float): `rank / users`, in (0, 1]: the `fairtree` policy starts higher factors first.
        norm_shares (float):
        norm_usage (float):
        rank (int): From the number of users (the best) down to 1.
        shares (int):
        usage_gpu_hours (float): Decayed GPU-hours.
        user (str):
        level_fs (float | None | Unset):
    """

    declared: bool
    fair_share: float
    norm_shares: float
    norm_usage: float
    rank: int
    shares: int
    usage_gpu_hours: float
    user: str
    level_fs: float | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        declared = self.declared

        fair_share = self.fair_share

        norm_shares = self.norm_shares

        norm_usage = self.norm_usage

        rank = self.rank

        shares = self.shares

        usage_gpu_hours = self.usage_gpu_hours

        user = self.user

        level_fs: float | None | Unset
        if isinstance(self.level_fs, Unset):
            level_fs = UNSET
        else:
            level_fs = self.level_fs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "declared": declared,
                "fair_share": fair_share,
                "norm_shares": norm_shares,
                "norm_usage": norm_usage,
                "rank": rank,
                "shares": shares,
                "usage_gpu_hours": usage_gpu_hours,
                "user": user,
            }
        )
        if level_fs is not UNSET:
            field_dict["level_fs"] = level_fs

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        declared = d.pop("declared")

        fair_share = d.pop("fair_share")

        norm_shares = d.pop("norm_shares")

        norm_usage = d.pop("norm_usage")

        rank = d.pop("rank")

        shares = d.pop("shares")

        usage_gpu_hours = d.pop("usage_gpu_hours")

        user = d.pop("user")

        def _parse_level_fs(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("float | None | Unset", data)

        level_fs = _parse_level_fs(d.pop("level_fs", UNSET))

        account_user_view = cls(
            declared=declared,
            fair_share=fair_share,
            norm_shares=norm_shares,
            norm_usage=norm_usage,
            rank=rank,
            shares=shares,
            usage_gpu_hours=usage_gpu_hours,
            user=user,
            level_fs=level_fs,
        )

        account_user_view.additional_properties = d
        return account_user_view

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
