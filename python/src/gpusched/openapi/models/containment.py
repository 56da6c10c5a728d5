from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.cgroup_mode import CgroupMode
from ..types import UNSET, Unset

T = TypeVar("T", bound="Containment")


@_attrs_define
class Containment:
    """What the agent of a node enforces, sent at registration and shown by `nodes`.

    Attributes:
        cgroup (CgroupMode): Which cgroup hierarchy an agent contains its jobs with.
        enforced (list[str] | Unset): What is enforced, from `memory`, `cpu` (a CPU quota), `cpuset` (pinned cores),
            `pids`, `devices` (a job opens only its own GPUs) and `kill` (nothing a job
            started outlives it).
        image_runtime (None | str | Unset): The container runtime that runs `--image` jobs here (`podman 4.3.1`);
            `None`:
            this node runs no image jobs.
        notes (list[str] | Unset): Why each thing not enforced is not ("devices: ..."), for the operator.
    """

    cgroup: CgroupMode
    enforced: list[str] | Unset = UNSET
    image_runtime: None | str | Unset = UNSET
    notes: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cgroup = self.cgroup.value

        enforced: list[str] | Unset = UNSET
        if not isinstance(self.enforced, Unset):
            enforced = self.enforced

        image_runtime: None | str | Unset
        if isinstance(self.image_runtime, Unset):
            image_runtime = UNSET
        else:
            image_runtime = self.image_runtime

        notes: list[str] | Unset = UNSET
        if not isinstance(self.notes, Unset):
            notes = self.notes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cgroup": cgroup,
            }
        )
        if enforced is not UNSET:
            field_dict["enforced"] = enforced
        if image_runtime is not UNSET:
            field_dict["image_runtime"] = image_runtime
        if notes is not UNSET:
            field_dict["notes"] = notes

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cgroup = CgroupMode(d.pop("cgroup"))

        enforced = cast(list[str], d.pop("enforced", UNSET))

        def _parse_image_runtime(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        image_runtime = _parse_image_runtime(d.pop("image_runtime", UNSET))

        notes = cast(list[str], d.pop("notes", UNSET))

        containment = cls(
            cgroup=cgroup,
            enforced=enforced,
            image_runtime=image_runtime,
            notes=notes,
        )

        containment.additional_properties = d
        return containment

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
