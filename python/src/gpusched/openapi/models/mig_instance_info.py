from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="MigInstanceInfo")


@_attrs_define
class MigInstanceInfo:
    """
    Attributes:
        profile (str):
        size (int):
        start (int):
        uuid (None | str | Unset): `MIG-…` UUID of its compute instance (what `CUDA_VISIBLE_DEVICES` takes).
    """

    profile: str
    size: int
    start: int
    uuid: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        profile = self.profile

        size = self.size

        start = self.start

        uuid: None | str | Unset
        if isinstance(self.uuid, Unset):
            uuid = UNSET
        else:
            uuid = self.uuid

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "profile": profile,
                "size": size,
                "start": start,
            }
        )
        if uuid is not UNSET:
            field_dict["uuid"] = uuid

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        profile = d.pop("profile")

        size = d.pop("size")

        start = d.pop("start")

        def _parse_uuid(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        uuid = _parse_uuid(d.pop("uuid", UNSET))

        mig_instance_info = cls(
            profile=profile,
            size=size,
            start=start,
            uuid=uuid,
        )

        return mig_instance_info
