from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ModelSpeed")


@_attrs_define
class ModelSpeed:
    """How fast a job runs on one GPU model.

    Attributes:
        factor (float): Times a V100's speed.
        model (str):
        source (str): `declared`, `learned` (from jobs of its user and name that ran on both),
            `default` (the table of docs/heterogeneous.md) or `unknown` (taken as 1).
    """

    factor: float
    model: str
    source: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        factor = self.factor

        model = self.model

        source = self.source

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "factor": factor,
                "model": model,
                "source": source,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        factor = d.pop("factor")

        model = d.pop("model")

        source = d.pop("source")

        model_speed = cls(
            factor=factor,
            model=model,
            source=source,
        )

        model_speed.additional_properties = d
        return model_speed

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
