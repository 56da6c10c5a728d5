from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="MigAt")


@_attrs_define
class MigAt:
    """A job's MIG instance: an existing one, or one the agent creates for it.

    Attributes:
        create (bool): True: the agent creates the instance before the job and destroys it after.
        profile (str):
        size (int): Memory slices it spans (NVML's placement size).
        start (int): First memory slice of the instance (NVML's placement start).
        destroy (list[int] | Unset): Idle instances (by start slice) the agent destroys first to make room (a
            re-layout); only instances no job holds are ever listed.
        uuid (None | str | Unset): `MIG-…` UUID, once known.
    """

    create: bool
    profile: str
    size: int
    start: int
    destroy: list[int] | Unset = UNSET
    uuid: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        create = self.create

        profile = self.profile

        size = self.size

        start = self.start

        destroy: list[int] | Unset = UNSET
        if not isinstance(self.destroy, Unset):
            destroy = self.destroy

        uuid: None | str | Unset
        if isinstance(self.uuid, Unset):
            uuid = UNSET
        else:
            uuid = self.uuid

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "create": create,
                "profile": profile,
                "size": size,
                "start": start,
            }
        )
        if destroy is not UNSET:
            field_dict["destroy"] = destroy
        if uuid is not UNSET:
            field_dict["uuid"] = uuid

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        create = d.pop("create")

        profile = d.pop("profile")

        size = d.pop("size")

        start = d.pop("start")

        destroy = cast(list[int], d.pop("destroy", UNSET))

        def _parse_uuid(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        uuid = _parse_uuid(d.pop("uuid", UNSET))

        mig_at = cls(
            create=create,
            profile=profile,
            size=size,
            start=start,
            destroy=destroy,
            uuid=uuid,
        )

        return mig_at
