from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.workflow_step import WorkflowStep


T = TypeVar("T", bound="WorkflowSubmit")


@_attrs_define
class WorkflowSubmit:
    """`POST /api/workflows`: every step is accepted, or none is (a cycle, an unknown key,
    or any step's own refusal refuses the whole workflow).

        Attributes:
            steps (list[WorkflowStep]):
    """

    steps: list[WorkflowStep]

    def to_dict(self) -> dict[str, Any]:
        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "steps": steps,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.workflow_step import WorkflowStep

        d = dict(src_dict)
        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = WorkflowStep.from_dict(steps_item_data)

            steps.append(steps_item)

        workflow_submit = cls(
            steps=steps,
        )

        return workflow_submit
