from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.mig_instance_info import MigInstanceInfo


T = TypeVar("T", bound="MigInfo")


@_attrs_define
class MigInfo:
    """A GPU's MIG state as its agent reports it. Absent on a GPU with MIG disabled.

    Attributes:
        dynamic (bool): The agent may create and destroy instances on this GPU to fit the queue.
        instances (list[MigInstanceInfo]): The GPU instances that exist now.
    """

    dynamic: bool
    instances: list[MigInstanceInfo]

    def to_dict(self) -> dict[str, Any]:
        dynamic = self.dynamic

        instances = []
        for instances_item_data in self.instances:
            instances_item = instances_item_data.to_dict()
            instances.append(instances_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "dynamic": dynamic,
                "instances": instances,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mig_instance_info import MigInstanceInfo

        d = dict(src_dict)
        dynamic = d.pop("dynamic")

        instances = []
        _instances = d.pop("instances")
        for instances_item_data in _instances:
            instances_item = MigInstanceInfo.from_dict(instances_item_data)

            instances.append(instances_item)

        mig_info = cls(
            dynamic=dynamic,
            instances=instances,
        )

        return mig_info
