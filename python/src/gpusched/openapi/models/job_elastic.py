from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="JobElastic")


@_attrs_define
class JobElastic:
    """An elastic job's range and scaling (`JobView::elastic`).

    Attributes:
        gpus_max (int): The most whole GPUs it runs on (`gpus` is the least).
        scaling_serial (float): Amdahl's serial fraction it declared, else the default (0.05).
    """

    gpus_max: int
    scaling_serial: float
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        gpus_max = self.gpus_max

        scaling_serial = self.scaling_serial

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "gpus_max": gpus_max,
                "scaling_serial": scaling_serial,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        gpus_max = d.pop("gpus_max")

        scaling_serial = d.pop("scaling_serial")

        job_elastic = cls(
            gpus_max=gpus_max,
            scaling_serial=scaling_serial,
        )

        job_elastic.additional_properties = d
        return job_elastic

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
