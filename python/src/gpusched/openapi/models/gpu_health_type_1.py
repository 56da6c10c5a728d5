from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.gpu_health_type_1_state import GpuHealthType1State

T = TypeVar("T", bound="GpuHealthType1")


@_attrs_define
class GpuHealthType1:
    """Out of placement until an operator resumes the node (or the agent re-registers
    with the GPU healthy), with why.

        Attributes:
            reason (str):
            since_ms (int):
            state (GpuHealthType1State):
    """

    reason: str
    since_ms: int
    state: GpuHealthType1State
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        reason = self.reason

        since_ms = self.since_ms

        state = self.state.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "reason": reason,
                "since_ms": since_ms,
                "state": state,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        reason = d.pop("reason")

        since_ms = d.pop("since_ms")

        state = GpuHealthType1State(d.pop("state"))

        gpu_health_type_1 = cls(
            reason=reason,
            since_ms=since_ms,
            state=state,
        )

        gpu_health_type_1.additional_properties = d
        return gpu_health_type_1

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
