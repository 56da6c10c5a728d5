from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_event_kind_type_1_kind import RunEventKindType1Kind

T = TypeVar("T", bound="RunEventKindType1")


@_attrs_define
class RunEventKindType1:
    """The job saved a checkpoint at the event's `at_ms` (it touched the file
    `$GPUSCHED_CHECKPOINT_DIR/checkpoint`).

        Attributes:
            kind (RunEventKindType1Kind):
    """

    kind: RunEventKindType1Kind
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = RunEventKindType1Kind(d.pop("kind"))

        run_event_kind_type_1 = cls(
            kind=kind,
        )

        run_event_kind_type_1.additional_properties = d
        return run_event_kind_type_1

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
