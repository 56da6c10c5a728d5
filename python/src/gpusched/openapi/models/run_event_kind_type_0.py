from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_event_kind_type_0_kind import RunEventKindType0Kind
from ..types import UNSET, Unset

T = TypeVar("T", bound="RunEventKindType0")


@_attrs_define
class RunEventKindType0:
    """
    Attributes:
        kind (RunEventKindType0Kind):
        pid (int):
        mig_uuid (None | str | Unset): The `MIG-…` UUID of the instance the job was given, for a MIG job.
    """

    kind: RunEventKindType0Kind
    pid: int
    mig_uuid: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        pid = self.pid

        mig_uuid: None | str | Unset
        if isinstance(self.mig_uuid, Unset):
            mig_uuid = UNSET
        else:
            mig_uuid = self.mig_uuid

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "pid": pid,
            }
        )
        if mig_uuid is not UNSET:
            field_dict["mig_uuid"] = mig_uuid

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = RunEventKindType0Kind(d.pop("kind"))

        pid = d.pop("pid")

        def _parse_mig_uuid(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        mig_uuid = _parse_mig_uuid(d.pop("mig_uuid", UNSET))

        run_event_kind_type_0 = cls(
            kind=kind,
            pid=pid,
            mig_uuid=mig_uuid,
        )

        run_event_kind_type_0.additional_properties = d
        return run_event_kind_type_0

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
