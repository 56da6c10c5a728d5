from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.xid_event import XidEvent


T = TypeVar("T", bound="GpuSample")


@_attrs_define
class GpuSample:
    """One GPU's latest sample. Every reading is optional: NVML answers `NOT_SUPPORTED` for
    some of them on some GPUs (energy before Volta, ECC on consumer boards).

        Attributes:
            at_ms (int): When it was read, the agent's clock (Unix ms).
            index (int): NVML index.
            ecc_corrected (int | None | Unset): ECC errors since the driver was loaded (volatile counters).
            ecc_uncorrected (int | None | Unset):
            energy_mj (int | None | Unset): Energy since the driver was loaded, millijoules (NVML's total energy counter).
            lost (bool | Unset): NVML no longer sees the GPU (it fell off the bus, `GPU_IS_LOST`): the other
                readings are absent.
            mem_used_mib (int | None | Unset):
            power_mw (int | None | Unset): Power draw, milliwatts.
            retire_pending (bool | None | Unset): A page retirement or row remap waits for a GPU reset.
            retired_pages (int | None | Unset): Retired pages (pre-Ampere) or remapped rows (Ampere and later) in all.
            temp_c (int | None | Unset): Core temperature, degrees Celsius.
            throttle_reasons (int | None | Unset): NVML's clocks event (throttle) reasons bitmask.
            util_pct (int | None | Unset): Percent of time a kernel ran over the driver's last sample period.
            xids (list[XidEvent] | Unset): Xid events seen since the previous report.
    """

    at_ms: int
    index: int
    ecc_corrected: int | None | Unset = UNSET
    ecc_uncorrected: int | None | Unset = UNSET
    energy_mj: int | None | Unset = UNSET
    lost: bool | Unset = UNSET
    mem_used_mib: int | None | Unset = UNSET
    power_mw: int | None | Unset = UNSET
    retire_pending: bool | None | Unset = UNSET
    retired_pages: int | None | Unset = UNSET
    temp_c: int | None | Unset = UNSET
    throttle_reasons: int | None | Unset = UNSET
    util_pct: int | None | Unset = UNSET
    xids: list[XidEvent] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        at_ms = self.at_ms

        index = self.index

        ecc_corrected: int | None | Unset
        if isinstance(self.ecc_corrected, Unset):
            ecc_corrected = UNSET
        else:
            ecc_corrected = self.ecc_corrected

        ecc_uncorrected: int | None | Unset
        if isinstance(self.ecc_uncorrected, Unset):
            ecc_uncorrected = UNSET
        else:
            ecc_uncorrected = self.ecc_uncorrected

        energy_mj: int | None | Unset
        if isinstance(self.energy_mj, Unset):
            energy_mj = UNSET
        else:
            energy_mj = self.energy_mj

        lost = self.lost

        mem_used_mib: int | None | Unset
        if isinstance(self.mem_used_mib, Unset):
            mem_used_mib = UNSET
        else:
            mem_used_mib = self.mem_used_mib

        power_mw: int | None | Unset
        if isinstance(self.power_mw, Unset):
            power_mw = UNSET
        else:
            power_mw = self.power_mw

        retire_pending: bool | None | Unset
        if isinstance(self.retire_pending, Unset):
            retire_pending = UNSET
        else:
            retire_pending = self.retire_pending

        retired_pages: int | None | Unset
        if isinstance(self.retired_pages, Unset):
            retired_pages = UNSET
        else:
            retired_pages = self.retired_pages

        temp_c: int | None | Unset
        if isinstance(self.temp_c, Unset):
            temp_c = UNSET
        else:
            temp_c = self.temp_c

        throttle_reasons: int | None | Unset
        if isinstance(self.throttle_reasons, Unset):
            throttle_reasons = UNSET
        else:
            throttle_reasons = self.throttle_reasons

        util_pct: int | None | Unset
        if isinstance(self.util_pct, Unset):
            util_pct = UNSET
        else:
            util_pct = self.util_pct

        xids: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.xids, Unset):
            xids = []
            for xids_item_data in self.xids:
                xids_item = xids_item_data.to_dict()
                xids.append(xids_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "at_ms": at_ms,
                "index": index,
            }
        )
        if ecc_corrected is not UNSET:
            field_dict["ecc_corrected"] = ecc_corrected
        if ecc_uncorrected is not UNSET:
            field_dict["ecc_uncorrected"] = ecc_uncorrected
        if energy_mj is not UNSET:
            field_dict["energy_mj"] = energy_mj
        if lost is not UNSET:
            field_dict["lost"] = lost
        if mem_used_mib is not UNSET:
            field_dict["mem_used_mib"] = mem_used_mib
        if power_mw is not UNSET:
            field_dict["power_mw"] = power_mw
        if retire_pending is not UNSET:
            field_dict["retire_pending"] = retire_pending
        if retired_pages is not UNSET:
            field_dict["retired_pages"] = retired_pages
        if temp_c is not UNSET:
            field_dict["temp_c"] = temp_c
        if throttle_reasons is not UNSET:
            field_dict["throttle_reasons"] = throttle_reasons
        if util_pct is not UNSET:
            field_dict["util_pct"] = util_pct
        if xids is not UNSET:
            field_dict["xids"] = xids

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.xid_event import XidEvent

        d = dict(src_dict)
        at_ms = d.pop("at_ms")

        index = d.pop("index")

        def _parse_ecc_corrected(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        ecc_corrected = _parse_ecc_corrected(d.pop("ecc_corrected", UNSET))

        def _parse_ecc_uncorrected(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        ecc_uncorrected = _parse_ecc_uncorrected(d.pop("ecc_uncorrected", UNSET))

        def _parse_energy_mj(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        energy_mj = _parse_energy_mj(d.pop("energy_mj", UNSET))

        lost = d.pop("lost", UNSET)

        def _parse_mem_used_mib(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        mem_used_mib = _parse_mem_used_mib(d.pop("mem_used_mib", UNSET))

        def _parse_power_mw(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        power_mw = _parse_power_mw(d.pop("power_mw", UNSET))

        def _parse_retire_pending(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("bool | None | Unset", data)

        retire_pending = _parse_retire_pending(d.pop("retire_pending", UNSET))

        def _parse_retired_pages(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        retired_pages = _parse_retired_pages(d.pop("retired_pages", UNSET))

        def _parse_temp_c(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        temp_c = _parse_temp_c(d.pop("temp_c", UNSET))

        def _parse_throttle_reasons(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        throttle_reasons = _parse_throttle_reasons(d.pop("throttle_reasons", UNSET))

        def _parse_util_pct(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        util_pct = _parse_util_pct(d.pop("util_pct", UNSET))

        _xids = d.pop("xids", UNSET)
        xids: list[XidEvent] | Unset = UNSET
        if _xids is not UNSET:
            xids = []
            for xids_item_data in _xids:
                xids_item = XidEvent.from_dict(xids_item_data)

                xids.append(xids_item)

        gpu_sample = cls(
            at_ms=at_ms,
            index=index,
            ecc_corrected=ecc_corrected,
            ecc_uncorrected=ecc_uncorrected,
            energy_mj=energy_mj,
            lost=lost,
            mem_used_mib=mem_used_mib,
            power_mw=power_mw,
            retire_pending=retire_pending,
            retired_pages=retired_pages,
            temp_c=temp_c,
            throttle_reasons=throttle_reasons,
            util_pct=util_pct,
            xids=xids,
        )

        return gpu_sample
