from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.model_speed import ModelSpeed


T = TypeVar("T", bound="JobSpeed")


@_attrs_define
class JobSpeed:
    """A job's speed on GPU models (`JobView::speed`; docs/heterogeneous.md).

    Attributes:
        declared (None | str | Unset): What it declared (`--speedup`), in canonical form (`A100=1.6,H100=2.8`).
        on (list[ModelSpeed] | Unset): Its factor against a V100 on each GPU model of the cluster, fastest first: only
            in `GET /api/jobs/{id}`.
    """

    declared: None | str | Unset = UNSET
    on: list[ModelSpeed] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        declared: None | str | Unset
        if isinstance(self.declared, Unset):
            declared = UNSET
        else:
            declared = self.declared

        on: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.on, Unset):
            on = []
            for on_item_data in self.on:
                on_item = on_item_data.to_dict()
                on.append(on_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if declared is not UNSET:
            field_dict["declared"] = declared
        if on is not UNSET:
            field_dict["on"] = on

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.model_speed import ModelSpeed

        d = dict(src_dict)

        def _parse_declared(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        declared = _parse_declared(d.pop("declared", UNSET))

        _on = d.pop("on", UNSET)
        on: list[ModelSpeed] | Unset = UNSET
        if _on is not UNSET:
            on = []
            for on_item_data in _on:
                on_item = ModelSpeed.from_dict(on_item_data)

                on.append(on_item)

        job_speed = cls(
            declared=declared,
            on=on,
        )

        job_speed.additional_properties = d
        return job_speed

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
