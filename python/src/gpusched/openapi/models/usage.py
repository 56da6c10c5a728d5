from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Usage")


@_attrs_define
class Usage:
    """What an attempt's processes used on one node, read from its cgroup when it ended.

    Attributes:
        cpu_ms (int): CPU time (user + system) of every process of the part, milliseconds.
        cpu_pressure_ms (int | None | Unset): Time some of its processes stalled waiting for a CPU / for memory (cgroup
            v2
            pressure stall information), milliseconds.
        mem_peak_bytes (int | None | Unset): The most memory the part's processes held at once, bytes (`None` where the
            kernel
            keeps no peak: cgroup v2 before Linux 5.19).
        mem_pressure_ms (int | None | Unset):
    """

    cpu_ms: int
    cpu_pressure_ms: int | None | Unset = UNSET
    mem_peak_bytes: int | None | Unset = UNSET
    mem_pressure_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cpu_ms = self.cpu_ms

        cpu_pressure_ms: int | None | Unset
        if isinstance(self.cpu_pressure_ms, Unset):
            cpu_pressure_ms = UNSET
        else:
            cpu_pressure_ms = self.cpu_pressure_ms

        mem_peak_bytes: int | None | Unset
        if isinstance(self.mem_peak_bytes, Unset):
            mem_peak_bytes = UNSET
        else:
            mem_peak_bytes = self.mem_peak_bytes

        mem_pressure_ms: int | None | Unset
        if isinstance(self.mem_pressure_ms, Unset):
            mem_pressure_ms = UNSET
        else:
            mem_pressure_ms = self.mem_pressure_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cpu_ms": cpu_ms,
            }
        )
        if cpu_pressure_ms is not UNSET:
            field_dict["cpu_pressure_ms"] = cpu_pressure_ms
        if mem_peak_bytes is not UNSET:
            field_dict["mem_peak_bytes"] = mem_peak_bytes
        if mem_pressure_ms is not UNSET:
            field_dict["mem_pressure_ms"] = mem_pressure_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cpu_ms = d.pop("cpu_ms")

        def _parse_cpu_pressure_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        cpu_pressure_ms = _parse_cpu_pressure_ms(d.pop("cpu_pressure_ms", UNSET))

        def _parse_mem_peak_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        mem_peak_bytes = _parse_mem_peak_bytes(d.pop("mem_peak_bytes", UNSET))

        def _parse_mem_pressure_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        mem_pressure_ms = _parse_mem_pressure_ms(d.pop("mem_pressure_ms", UNSET))

        usage = cls(
            cpu_ms=cpu_ms,
            cpu_pressure_ms=cpu_pressure_ms,
            mem_peak_bytes=mem_peak_bytes,
            mem_pressure_ms=mem_pressure_ms,
        )

        usage.additional_properties = d
        return usage

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
