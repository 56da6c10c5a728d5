from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="StepUse")


@_attrs_define
class StepUse:
    """What the steps that ended in a job used (`JobView::step_use`; `usage` sums it).

    Attributes:
        gpu_s (int): Their GPU-seconds: each step's GPUs (the job's on the step's nodes) x its run time.
        steps (int): Steps that ended.
    """

    gpu_s: int
    steps: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        gpu_s = self.gpu_s

        steps = self.steps

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "gpu_s": gpu_s,
                "steps": steps,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        gpu_s = d.pop("gpu_s")

        steps = d.pop("steps")

        step_use = cls(
            gpu_s=gpu_s,
            steps=steps,
        )

        step_use.additional_properties = d
        return step_use

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
