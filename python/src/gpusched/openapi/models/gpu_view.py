from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.gpu_source import GpuSource
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mig_info import MigInfo
    from ..models.slice_view import SliceView


T = TypeVar("T", bound="GpuView")


@_attrs_define
class GpuView:
    """The fields of [`GpuView`] as one object, for its schema only (the test below keeps
    the two in step).

        Attributes:
            index (int): NVML index (PCI bus order).
            mem_mib (int):
            model (str):
            slices (list[SliceView]): Shares and MIG instances of this GPU, with who holds them.
            source (GpuSource): How the agent learned about a GPU.
            job (int | None | Unset): The job holding this GPU whole (absent when it is another user's job hidden by
                the server's `--private-jobs`).
            mig (MigInfo | Unset): A GPU's MIG state as its agent reports it. Absent on a GPU with MIG disabled.
            user (None | str | Unset): The user of the job holding this GPU whole, or `(another user)` for a job hidden
                by `--private-jobs`.
            uuid (None | str | Unset): `GPU-…` UUID where known.
    """

    index: int
    mem_mib: int
    model: str
    slices: list[SliceView]
    source: GpuSource
    job: int | None | Unset = UNSET
    mig: MigInfo | Unset = UNSET
    user: None | str | Unset = UNSET
    uuid: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        index = self.index

        mem_mib = self.mem_mib

        model = self.model

        slices = []
        for slices_item_data in self.slices:
            slices_item = slices_item_data.to_dict()
            slices.append(slices_item)

        source = self.source.value

        job: int | None | Unset
        if isinstance(self.job, Unset):
            job = UNSET
        else:
            job = self.job

        mig: dict[str, Any] | Unset = UNSET
        if not isinstance(self.mig, Unset):
            mig = self.mig.to_dict()

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
                "index": index,
                "mem_mib": mem_mib,
                "model": model,
                "slices": slices,
                "source": source,
            }
        )
        if job is not UNSET:
            field_dict["job"] = job
        if mig is not UNSET:
            field_dict["mig"] = mig
        if user is not UNSET:
            field_dict["user"] = user
        if uuid is not UNSET:
            field_dict["uuid"] = uuid

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mig_info import MigInfo
        from ..models.slice_view import SliceView

        d = dict(src_dict)
        index = d.pop("index")

        mem_mib = d.pop("mem_mib")

        model = d.pop("model")

        slices = []
        _slices = d.pop("slices")
        for slices_item_data in _slices:
            slices_item = SliceView.from_dict(slices_item_data)

            slices.append(slices_item)

        source = GpuSource(d.pop("source"))

        def _parse_job(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        job = _parse_job(d.pop("job", UNSET))

        _mig = d.pop("mig", UNSET)
        mig: MigInfo | Unset
        if isinstance(_mig, Unset):
            mig = UNSET
        else:
            mig = MigInfo.from_dict(_mig)

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

        gpu_view = cls(
            index=index,
            mem_mib=mem_mib,
            model=model,
            slices=slices,
            source=source,
            job=job,
            mig=mig,
            user=user,
            uuid=uuid,
        )

        gpu_view.additional_properties = d
        return gpu_view

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
