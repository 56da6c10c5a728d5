from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.job_state import JobState
from ..types import UNSET, Unset

T = TypeVar("T", bound="CancelOutcome")


@_attrs_define
class CancelOutcome:
    """One id of a [`CancelMany`].

    Attributes:
        id (int):
        result (str): `cancelled`, `cancelling`, `already_ended` (as [`CancelResult`]), or `refused`:
            this id was not cancelled, `error` says why; the other ids still were.
        error (None | str | Unset):
        state (JobState | None | Unset):
    """

    id: int
    result: str
    error: None | str | Unset = UNSET
    state: JobState | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        result = self.result

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        state: None | str | Unset
        if isinstance(self.state, Unset):
            state = UNSET
        elif isinstance(self.state, JobState):
            state = self.state.value
        else:
            state = self.state

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "result": result,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if state is not UNSET:
            field_dict["state"] = state

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        result = d.pop("result")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_state(data: object) -> JobState | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                state_type_1 = JobState(data)

                return state_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("JobState | None | Unset", data)

        state = _parse_state(d.pop("state", UNSET))

        cancel_outcome = cls(
            id=id,
            result=result,
            error=error,
            state=state,
        )

        cancel_outcome.additional_properties = d
        return cancel_outcome

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
