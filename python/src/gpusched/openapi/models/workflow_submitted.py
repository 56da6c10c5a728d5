from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.workflow_submitted_ids import WorkflowSubmittedIds


T = TypeVar("T", bound="WorkflowSubmitted")


@_attrs_define
class WorkflowSubmitted:
    """The id each step got, by key.

    Attributes:
        ids (WorkflowSubmittedIds):
    """

    ids: WorkflowSubmittedIds
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        ids = self.ids.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ids": ids,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.workflow_submitted_ids import WorkflowSubmittedIds

        d = dict(src_dict)
        ids = WorkflowSubmittedIds.from_dict(d.pop("ids"))

        workflow_submitted = cls(
            ids=ids,
        )

        workflow_submitted.additional_properties = d
        return workflow_submitted

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
