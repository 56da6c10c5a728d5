from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.gpu_sample import GpuSample


T = TypeVar("T", bound="NodeTelemetry")


@_attrs_define
class NodeTelemetry:
    """A node's latest samples, one per GPU, sent with the agent's reports.

    Attributes:
        gpus (list[GpuSample]):
    """

    gpus: list[GpuSample]

    def to_dict(self) -> dict[str, Any]:
        gpus = []
        for gpus_item_data in self.gpus:
            gpus_item = gpus_item_data.to_dict()
            gpus.append(gpus_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "gpus": gpus,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.gpu_sample import GpuSample

        d = dict(src_dict)
        gpus = []
        _gpus = d.pop("gpus")
        for gpus_item_data in _gpus:
            gpus_item = GpuSample.from_dict(gpus_item_data)

            gpus.append(gpus_item)

        node_telemetry = cls(
            gpus=gpus,
        )

        return node_telemetry
