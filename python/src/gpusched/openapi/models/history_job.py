from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.usage import Usage


T = TypeVar("T", bound="HistoryJob")


@_attrs_define
class HistoryJob:
    """One ended job that ran, as a trace row.

    Attributes:
        command (list[str]): The command line, as submitted; empty in another user's job (a command line may
            hold secrets: only its owner and admins see it).
        end_ms (int):
        gpus (int): Whole GPUs (0 for a job on part of one GPU or on CPUs only).
        id (int):
        name (str):
        preemptions (int): Times it was preempted before its last run.
        priority (int):
        queue (str):
        start_ms (int):
        state (str): How it ended: `succeeded`, `failed`, `cancelled` or `timed_out`.
        submit_ms (int): Unix times in milliseconds; `start_ms` of its last run.
        user (str):
        gpu_model (None | str | Unset):
        usage (None | Unset | Usage):
        walltime_s (int | None | Unset): The walltime the user asked for, seconds.
    """

    command: list[str]
    end_ms: int
    gpus: int
    id: int
    name: str
    preemptions: int
    priority: int
    queue: str
    start_ms: int
    state: str
    submit_ms: int
    user: str
    gpu_model: None | str | Unset = UNSET
    usage: None | Unset | Usage = UNSET
    walltime_s: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.usage import Usage

        command = self.command

        end_ms = self.end_ms

        gpus = self.gpus

        id = self.id

        name = self.name

        preemptions = self.preemptions

        priority = self.priority

        queue = self.queue

        start_ms = self.start_ms

        state = self.state

        submit_ms = self.submit_ms

        user = self.user

        gpu_model: None | str | Unset
        if isinstance(self.gpu_model, Unset):
            gpu_model = UNSET
        else:
            gpu_model = self.gpu_model

        usage: dict[str, Any] | None | Unset
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, Usage):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        walltime_s: int | None | Unset
        if isinstance(self.walltime_s, Unset):
            walltime_s = UNSET
        else:
            walltime_s = self.walltime_s

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "command": command,
                "end_ms": end_ms,
                "gpus": gpus,
                "id": id,
                "name": name,
                "preemptions": preemptions,
                "priority": priority,
                "queue": queue,
                "start_ms": start_ms,
                "state": state,
                "submit_ms": submit_ms,
                "user": user,
            }
        )
        if gpu_model is not UNSET:
            field_dict["gpu_model"] = gpu_model
        if usage is not UNSET:
            field_dict["usage"] = usage
        if walltime_s is not UNSET:
            field_dict["walltime_s"] = walltime_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.usage import Usage

        d = dict(src_dict)
        command = cast(list[str], d.pop("command"))

        end_ms = d.pop("end_ms")

        gpus = d.pop("gpus")

        id = d.pop("id")

        name = d.pop("name")

        preemptions = d.pop("preemptions")

        priority = d.pop("priority")

        queue = d.pop("queue")

        start_ms = d.pop("start_ms")

        state = d.pop("state")

        submit_ms = d.pop("submit_ms")

        user = d.pop("user")

        def _parse_gpu_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        gpu_model = _parse_gpu_model(d.pop("gpu_model", UNSET))

        def _parse_usage(data: object) -> None | Unset | Usage:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_1 = Usage.from_dict(data)

                return usage_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | Unset | Usage", data)

        usage = _parse_usage(d.pop("usage", UNSET))

        def _parse_walltime_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        walltime_s = _parse_walltime_s(d.pop("walltime_s", UNSET))

        history_job = cls(
            command=command,
            end_ms=end_ms,
            gpus=gpus,
            id=id,
            name=name,
            preemptions=preemptions,
            priority=priority,
            queue=queue,
            start_ms=start_ms,
            state=state,
            submit_ms=submit_ms,
            user=user,
            gpu_model=gpu_model,
            usage=usage,
            walltime_s=walltime_s,
        )

        history_job.additional_properties = d
        return history_job

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
