from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_event_kind_type_2_kind import RunEventKindType2Kind

T = TypeVar("T", bound="RunEventKindType2")


@_attrs_define
class RunEventKindType2:
    """The port this node reserved for the attempt's `MASTER_PORT` (see
    [`Desired::reserve_ports`]).

        Attributes:
            kind (RunEventKindType2Kind):
            port (int):
    """

    kind: RunEventKindType2Kind
    port: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        port = self.port

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "port": port,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = RunEventKindType2Kind(d.pop("kind"))

        port = d.pop("port")

        run_event_kind_type_2 = cls(
            kind=kind,
            port=port,
        )

        run_event_kind_type_2.additional_properties = d
        return run_event_kind_type_2

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
