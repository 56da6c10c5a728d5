from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="JobRules")


@_attrs_define
class JobRules:
    """Where a job may run, as accepted (see [`JobSubmit`]'s fields of the same names).

    Attributes:
        constraint (None | str | Unset): The constraint in its canonical form (`a100&(nvlink|ib)`).
        exclude (list[str] | Unset):
        nodelist (list[str] | Unset):
        partitions (list[str] | Unset):
        reservation (None | str | Unset):
    """

    constraint: None | str | Unset = UNSET
    exclude: list[str] | Unset = UNSET
    nodelist: list[str] | Unset = UNSET
    partitions: list[str] | Unset = UNSET
    reservation: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        constraint: None | str | Unset
        if isinstance(self.constraint, Unset):
            constraint = UNSET
        else:
            constraint = self.constraint

        exclude: list[str] | Unset = UNSET
        if not isinstance(self.exclude, Unset):
            exclude = self.exclude

        nodelist: list[str] | Unset = UNSET
        if not isinstance(self.nodelist, Unset):
            nodelist = self.nodelist

        partitions: list[str] | Unset = UNSET
        if not isinstance(self.partitions, Unset):
            partitions = self.partitions

        reservation: None | str | Unset
        if isinstance(self.reservation, Unset):
            reservation = UNSET
        else:
            reservation = self.reservation

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if constraint is not UNSET:
            field_dict["constraint"] = constraint
        if exclude is not UNSET:
            field_dict["exclude"] = exclude
        if nodelist is not UNSET:
            field_dict["nodelist"] = nodelist
        if partitions is not UNSET:
            field_dict["partitions"] = partitions
        if reservation is not UNSET:
            field_dict["reservation"] = reservation

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_constraint(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        constraint = _parse_constraint(d.pop("constraint", UNSET))

        exclude = cast(list[str], d.pop("exclude", UNSET))

        nodelist = cast(list[str], d.pop("nodelist", UNSET))

        partitions = cast(list[str], d.pop("partitions", UNSET))

        def _parse_reservation(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        reservation = _parse_reservation(d.pop("reservation", UNSET))

        job_rules = cls(
            constraint=constraint,
            exclude=exclude,
            nodelist=nodelist,
            partitions=partitions,
            reservation=reservation,
        )

        job_rules.additional_properties = d
        return job_rules

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
