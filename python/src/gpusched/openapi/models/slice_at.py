from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mig_at import MigAt


T = TypeVar("T", bound="SliceAt")


@_attrs_define
class SliceAt:
    """Where the scheduler put a job's slice, as the agent needs it to start the job.

    Attributes:
        gpu (int): Node-local GPU index (NVML order).
        mem_mib (int):
        milli (int): Compute thousandths and memory MiB the job is entitled to on that GPU (for a MIG
            instance: the instance's share of the GPU).
        mig (MigAt | None | Unset):
    """

    gpu: int
    mem_mib: int
    milli: int
    mig: MigAt | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.mig_at import MigAt

        gpu = self.gpu

        mem_mib = self.mem_mib

        milli = self.milli

        mig: dict[str, Any] | None | Unset
        if isinstance(self.mig, Unset):
            mig = UNSET
        elif isinstance(self.mig, MigAt):
            mig = self.mig.to_dict()
        else:
            mig = self.mig

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "gpu": gpu,
                "mem_mib": mem_mib,
                "milli": milli,
            }
        )
        if mig is not UNSET:
            field_dict["mig"] = mig

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mig_at import MigAt

        d = dict(src_dict)
        gpu = d.pop("gpu")

        mem_mib = d.pop("mem_mib")

        milli = d.pop("milli")

        def _parse_mig(data: object) -> MigAt | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                mig_type_1 = MigAt.from_dict(data)

                return mig_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("MigAt | None | Unset", data)

        mig = _parse_mig(d.pop("mig", UNSET))

        slice_at = cls(
            gpu=gpu,
            mem_mib=mem_mib,
            milli=milli,
            mig=mig,
        )

        return slice_at
