from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SliceView")


@_attrs_define
class SliceView:
    """One slice of a GPU as `gpusched nodes` shows it.

    Attributes:
        kind (str): `share` or `mig`.
        mem_mib (int):
        milli (int):
        job (int | None | Unset): The job holding it (none: an idle MIG instance).
        profile (None | str | Unset): The MIG profile and start slice, for a MIG instance.
        start (int | None | Unset):
        user (None | str | Unset):
        uuid (None | str | Unset):
    """

    kind: str
    mem_mib: int
    milli: int
    job: int | None | Unset = UNSET
    profile: None | str | Unset = UNSET
    start: int | None | Unset = UNSET
    user: None | str | Unset = UNSET
    uuid: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        mem_mib = self.mem_mib

        milli = self.milli

        job: int | None | Unset
        if isinstance(self.job, Unset):
            job = UNSET
        else:
            job = self.job

        profile: None | str | Unset
        if isinstance(self.profile, Unset):
            profile = UNSET
        else:
            profile = self.profile

        start: int | None | Unset
        if isinstance(self.start, Unset):
            start = UNSET
        else:
            start = self.start

        user: None | str | Unset
        if isinstance(self.user, Unset):
            user = UNSET
        else:
            user = self.user

        uuid: None | str | Unset
        if isinstance(self.uuid, Unset):
            uuid = UNSET
        else:
            uuid = self.uuid

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "mem_mib": mem_mib,
                "milli": milli,
            }
        )
        if job is not UNSET:
            field_dict["job"] = job
        if profile is not UNSET:
            field_dict["profile"] = profile
        if start is not UNSET:
            field_dict["start"] = start
        if user is not UNSET:
            field_dict["user"] = user
        if uuid is not UNSET:
            field_dict["uuid"] = uuid

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = d.pop("kind")

        mem_mib = d.pop("mem_mib")

        milli = d.pop("milli")

        def _parse_job(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        job = _parse_job(d.pop("job", UNSET))

        def _parse_profile(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        profile = _parse_profile(d.pop("profile", UNSET))

        def _parse_start(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        start = _parse_start(d.pop("start", UNSET))

        def _parse_user(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        user = _parse_user(d.pop("user", UNSET))

        def _parse_uuid(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        uuid = _parse_uuid(d.pop("uuid", UNSET))

        slice_view = cls(
            kind=kind,
            mem_mib=mem_mib,
            milli=milli,
            job=job,
            profile=profile,
            start=start,
            user=user,
            uuid=uuid,
        )

        slice_view.additional_properties = d
        return slice_view

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
