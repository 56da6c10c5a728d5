from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.job_state import JobState

T = TypeVar("T", bound="CancelResult")


@_attrs_define
class CancelResult:
    """What a cancel did.

    Attributes:
        id (int):
        result (str): `cancelled` (it never ran or is gone), `cancelling` (its node is stopping it),
            or `already_ended`.
        state (JobState): Where a job is in its life.
    """

    id: int
    result: str
    state: JobState
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        result = self.result

        state = self.state.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "result": result,
                "state": state,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        result = d.pop("result")

        state = JobState(d.pop("state"))

        cancel_result = cls(
            id=id,
            result=result,
            state=state,
        )

        cancel_result.additional_properties = d
        return cancel_result

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
