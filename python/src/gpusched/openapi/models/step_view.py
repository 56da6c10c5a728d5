from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.step_state import StepState
from ..types import UNSET, Unset

T = TypeVar("T", bound="StepView")


@_attrs_define
class StepView:
    """One step of a job, as `show` lists it.

    Attributes:
        command (list[str]):
        nodes (list[str]):
        pty (bool):
        started_ms (int):
        state (StepState): Where a step stands.
        step (int): The step's number in its job (0, 1, ...: `JOB.STEP`).
        tasks_per_node (int):
        ended_ms (int | None | Unset):
        exit_code (int | None | Unset): Srun's rule: the first non-zero exit of its tasks (128+N for a signal death).
        reason (None | str | Unset): Why it ended as it did, in words (none while it runs).
    """

    command: list[str]
    nodes: list[str]
    pty: bool
    started_ms: int
    state: StepState
    step: int
    tasks_per_node: int
    ended_ms: int | None | Unset = UNSET
    exit_code: int | None | Unset = UNSET
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        command = self.command

        nodes = self.nodes

        pty = self.pty

        started_ms = self.started_ms

        state = self.state.value

        step = self.step

        tasks_per_node = self.tasks_per_node

        ended_ms: int | None | Unset
        if isinstance(self.ended_ms, Unset):
            ended_ms = UNSET
        else:
            ended_ms = self.ended_ms

        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "command": command,
                "nodes": nodes,
                "pty": pty,
                "started_ms": started_ms,
                "state": state,
                "step": step,
                "tasks_per_node": tasks_per_node,
            }
        )
        if ended_ms is not UNSET:
            field_dict["ended_ms"] = ended_ms
        if exit_code is not UNSET:
            field_dict["exit_code"] = exit_code
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        command = cast(list[str], d.pop("command"))

        nodes = cast(list[str], d.pop("nodes"))

        pty = d.pop("pty")

        started_ms = d.pop("started_ms")

        state = StepState(d.pop("state"))

        step = d.pop("step")

        tasks_per_node = d.pop("tasks_per_node")

        def _parse_ended_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        ended_ms = _parse_ended_ms(d.pop("ended_ms", UNSET))

        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        exit_code = _parse_exit_code(d.pop("exit_code", UNSET))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        reason = _parse_reason(d.pop("reason", UNSET))

        step_view = cls(
            command=command,
            nodes=nodes,
            pty=pty,
            started_ms=started_ms,
            state=state,
            step=step,
            tasks_per_node=tasks_per_node,
            ended_ms=ended_ms,
            exit_code=exit_code,
            reason=reason,
        )

        step_view.additional_properties = d
        return step_view

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
