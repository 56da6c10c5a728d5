from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_deadline import JobDeadline


T = TypeVar("T", bound="Submitted")


@_attrs_define
class Submitted:
    """The ids given to submitted jobs, in submission order.

    Attributes:
        ids (list[int]):
        deadline (JobDeadline | None | Unset):
    """

    ids: list[int]
    deadline: JobDeadline | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job_deadline import JobDeadline

        ids = self.ids

        deadline: dict[str, Any] | None | Unset
        if isinstance(self.deadline, Unset):
            deadline = UNSET
        elif isinstance(self.deadline, JobDeadline):
            deadline = self.deadline.to_dict()
        else:
            deadline = self.deadline

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "ids": ids,
            }
        )
        if deadline is not UNSET:
            field_dict["deadline"] = deadline

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.job_deadline import JobDeadline

        d = dict(src_dict)
        ids = cast(list[int], d.pop("ids"))

        def _parse_deadline(data: object) -> JobDeadline | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                deadline_type_1 = JobDeadline.from_dict(data)

                return deadline_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("JobDeadline | None | Unset", data)

        deadline = _parse_deadline(d.pop("deadline", UNSET))

        submitted = cls(
            ids=ids,
            deadline=deadline,
        )

        submitted.additional_properties = d
        return submitted

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
