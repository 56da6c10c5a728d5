from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="QueueView")


@_attrs_define
class QueueView:
    """A queue as `GET /api/queues` shows it.

    Attributes:
        default_priority (int):
        groups (list[str]):
        name (str):
        pending (int):
        quota (int): GPUs guaranteed.
        running (int):
        used_gpus (int): GPUs its starting and running jobs hold now.
        users (list[str]):
        weight (float):
        max_ (int | None | Unset): The most GPUs it may hold (quota plus borrowing); none: no limit.
        max_priority (int | None | Unset):
        preempt_lower_priority (bool | Unset): A waiting job may preempt running jobs of lower tiers of this queue.
        priority_tiers (list[int] | Unset): The lowest base priority of each tier above the first, ascending (`[100,
            1000]`:
            below 100, 100 to 999, 1000 and up); empty: one tier (docs/preemption.md).
    """

    default_priority: int
    groups: list[str]
    name: str
    pending: int
    quota: int
    running: int
    used_gpus: int
    users: list[str]
    weight: float
    max_: int | None | Unset = UNSET
    max_priority: int | None | Unset = UNSET
    preempt_lower_priority: bool | Unset = UNSET
    priority_tiers: list[int] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        default_priority = self.default_priority

        groups = self.groups

        name = self.name

        pending = self.pending

        quota = self.quota

        running = self.running

        used_gpus = self.used_gpus

        users = self.users

        weight = self.weight

        max_: int | None | Unset
        if isinstance(self.max_, Unset):
            max_ = UNSET
        else:
            max_ = self.max_

        max_priority: int | None | Unset
        if isinstance(self.max_priority, Unset):
            max_priority = UNSET
        else:
            max_priority = self.max_priority

        preempt_lower_priority = self.preempt_lower_priority

        priority_tiers: list[int] | Unset = UNSET
        if not isinstance(self.priority_tiers, Unset):
            priority_tiers = self.priority_tiers

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "default_priority": default_priority,
                "groups": groups,
                "name": name,
                "pending": pending,
                "quota": quota,
                "running": running,
                "used_gpus": used_gpus,
                "users": users,
                "weight": weight,
            }
        )
        if max_ is not UNSET:
            field_dict["max"] = max_
        if max_priority is not UNSET:
            field_dict["max_priority"] = max_priority
        if preempt_lower_priority is not UNSET:
            field_dict["preempt_lower_priority"] = preempt_lower_priority
        if priority_tiers is not UNSET:
            field_dict["priority_tiers"] = priority_tiers

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        default_priority = d.pop("default_priority")

        groups = cast(list[str], d.pop("groups"))

        name = d.pop("name")

        pending = d.pop("pending")

        quota = d.pop("quota")

        running = d.pop("running")

        used_gpus = d.pop("used_gpus")

        users = cast(list[str], d.pop("users"))

        weight = d.pop("weight")

        def _parse_max_(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        max_ = _parse_max_(d.pop("max", UNSET))

        def _parse_max_priority(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        max_priority = _parse_max_priority(d.pop("max_priority", UNSET))

        preempt_lower_priority = d.pop("preempt_lower_priority", UNSET)

        priority_tiers = cast(list[int], d.pop("priority_tiers", UNSET))

        queue_view = cls(
            default_priority=default_priority,
            groups=groups,
            name=name,
            pending=pending,
            quota=quota,
            running=running,
            used_gpus=used_gpus,
            users=users,
            weight=weight,
            max_=max_,
            max_priority=max_priority,
            preempt_lower_priority=preempt_lower_priority,
            priority_tiers=priority_tiers,
        )

        queue_view.additional_properties = d
        return queue_view

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
