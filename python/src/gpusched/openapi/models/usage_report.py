from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.usage_row import UsageRow


T = TypeVar("T", bound="UsageReport")


@_attrs_define
class UsageReport:
    """
    Attributes:
        by (str):
        rows (list[UsageRow]):
        until_ms (int):
        since_ms (int | None | Unset):
    """

    by: str
    rows: list[UsageRow]
    until_ms: int
    since_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        by = self.by

        rows = []
        for rows_item_data in self.rows:
            rows_item = rows_item_data.to_dict()
            rows.append(rows_item)

        until_ms = self.until_ms

        since_ms: int | None | Unset
        if isinstance(self.since_ms, Unset):
            since_ms = UNSET
        else:
            since_ms = self.since_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "by": by,
                "rows": rows,
                "until_ms": until_ms,
            }
        )
        if since_ms is not UNSET:
            field_dict["since_ms"] = since_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.usage_row import UsageRow

        d = dict(src_dict)
        by = d.pop("by")

        rows = []
        _rows = d.pop("rows")
        for rows_item_data in _rows:
            rows_item = UsageRow.from_dict(rows_item_data)

            rows.append(rows_item)

        until_ms = d.pop("until_ms")

        def _parse_since_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        since_ms = _parse_since_ms(d.pop("since_ms", UNSET))

        usage_report = cls(
            by=by,
            rows=rows,
            until_ms=until_ms,
            since_ms=since_ms,
        )

        usage_report.additional_properties = d
        return usage_report

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
