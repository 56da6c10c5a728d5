from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..models.gpu_source import GpuSource
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mig_info import MigInfo


T = TypeVar("T", bound="GpuInfo")


@_attrs_define
class GpuInfo:
    """One GPU as the agent found it.

    Attributes:
        index (int): NVML index (PCI bus order).
        mem_mib (int):
        model (str):
        source (GpuSource): How the agent learned about a GPU.
        mig (MigInfo | None | Unset):
        uuid (None | str | Unset): `GPU-…` UUID where known.
    """

    index: int
    mem_mib: int
    model: str
    source: GpuSource
    mig: MigInfo | None | Unset = UNSET
    uuid: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.mig_info import MigInfo

        index = self.index

        mem_mib = self.mem_mib

        model = self.model

        source = self.source.value

        mig: dict[str, Any] | None | Unset
        if isinstance(self.mig, Unset):
            mig = UNSET
        elif isinstance(self.mig, MigInfo):
            mig = self.mig.to_dict()
        else:
            mig = self.mig

        uuid: None | str | Unset
        if isinstance(self.uuid, Unset):
            uuid = UNSET
        else:
            uuid = self.uuid

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "index": index,
                "mem_mib": mem_mib,
                "model": model,
                "source": source,
            }
        )
        if mig is not UNSET:
            field_dict["mig"] = mig
        if uuid is not UNSET:
            field_dict["uuid"] = uuid

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mig_info import MigInfo

        d = dict(src_dict)
        index = d.pop("index")

        mem_mib = d.pop("mem_mib")

        model = d.pop("model")

        source = GpuSource(d.pop("source"))

        def _parse_mig(data: object) -> MigInfo | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                mig_type_1 = MigInfo.from_dict(data)

                return mig_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("MigInfo | None | Unset", data)

        mig = _parse_mig(d.pop("mig", UNSET))

        def _parse_uuid(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        uuid = _parse_uuid(d.pop("uuid", UNSET))

        gpu_info = cls(
            index=index,
            mem_mib=mem_mib,
            model=model,
            source=source,
            mig=mig,
            uuid=uuid,
        )

        return gpu_info
