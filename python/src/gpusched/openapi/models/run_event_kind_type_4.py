from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_event_kind_type_4_kind import RunEventKindType4Kind
from ..types import UNSET, Unset

T = TypeVar("T", bound="RunEventKindType4")


@_attrs_define
class RunEventKindType4:
    """A replica's readiness changed: it passes its readiness probe (`ready`), or it
    failed it `failure_threshold` times in a row (`message`: what the last probe got).

        Attributes:
            kind (RunEventKindType4Kind):
            ready (bool):
            message (None | str | Unset):
    """

    kind: RunEventKindType4Kind
    ready: bool
    message: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        ready = self.ready

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "ready": ready,
            }
        )
        if message is not UNSET:
            field_dict["message"] = message

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = RunEventKindType4Kind(d.pop("kind"))

        ready = d.pop("ready")

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        message = _parse_message(d.pop("message", UNSET))

        run_event_kind_type_4 = cls(
            kind=kind,
            ready=ready,
            message=message,
        )

        run_event_kind_type_4.additional_properties = d
        return run_event_kind_type_4

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
