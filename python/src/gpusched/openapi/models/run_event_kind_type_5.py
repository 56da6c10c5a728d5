from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.run_event_kind_type_5_kind import RunEventKindType5Kind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.outcome_type_0 import OutcomeType0
    from ..models.outcome_type_1 import OutcomeType1
    from ..models.outcome_type_2 import OutcomeType2
    from ..models.outcome_type_3 import OutcomeType3
    from ..models.outcome_type_4 import OutcomeType4
    from ..models.outcome_type_5 import OutcomeType5
    from ..models.outcome_type_6 import OutcomeType6
    from ..models.outcome_type_7 import OutcomeType7
    from ..models.outcome_type_8 import OutcomeType8
    from ..models.outcome_type_9 import OutcomeType9
    from ..models.usage import Usage


T = TypeVar("T", bound="RunEventKindType5")


@_attrs_define
class RunEventKindType5:
    """
    Attributes:
        kind (RunEventKindType5Kind):
        outcome (OutcomeType0 | OutcomeType1 | OutcomeType2 | OutcomeType3 | OutcomeType4 | OutcomeType5 | OutcomeType6
            | OutcomeType7 | OutcomeType8 | OutcomeType9): How an attempt ended.
        usage (None | Unset | Usage):
    """

    kind: RunEventKindType5Kind
    outcome: (
        OutcomeType0
        | OutcomeType1
        | OutcomeType2
        | OutcomeType3
        | OutcomeType4
        | OutcomeType5
        | OutcomeType6
        | OutcomeType7
        | OutcomeType8
        | OutcomeType9
    )
    usage: None | Unset | Usage = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.outcome_type_0 import OutcomeType0
        from ..models.outcome_type_1 import OutcomeType1
        from ..models.outcome_type_2 import OutcomeType2
        from ..models.outcome_type_3 import OutcomeType3
        from ..models.outcome_type_4 import OutcomeType4
        from ..models.outcome_type_5 import OutcomeType5
        from ..models.outcome_type_6 import OutcomeType6
        from ..models.outcome_type_7 import OutcomeType7
        from ..models.outcome_type_8 import OutcomeType8
        from ..models.usage import Usage

        kind = self.kind.value

        outcome: dict[str, Any]
        if (
            isinstance(self.outcome, OutcomeType0)
            or isinstance(self.outcome, OutcomeType1)
            or isinstance(self.outcome, OutcomeType2)
            or isinstance(self.outcome, OutcomeType3)
            or isinstance(self.outcome, OutcomeType4)
            or isinstance(self.outcome, OutcomeType5)
            or isinstance(self.outcome, OutcomeType6)
            or isinstance(self.outcome, OutcomeType7)
            or isinstance(self.outcome, OutcomeType8)
        ):
            outcome = self.outcome.to_dict()
        else:
            outcome = self.outcome.to_dict()

        usage: dict[str, Any] | None | Unset
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, Usage):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "outcome": outcome,
            }
        )
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.outcome_type_0 import OutcomeType0
        from ..models.outcome_type_1 import OutcomeType1
        from ..models.outcome_type_2 import OutcomeType2
        from ..models.outcome_type_3 import OutcomeType3
        from ..models.outcome_type_4 import OutcomeType4
        from ..models.outcome_type_5 import OutcomeType5
        from ..models.outcome_type_6 import OutcomeType6
        from ..models.outcome_type_7 import OutcomeType7
        from ..models.outcome_type_8 import OutcomeType8
        from ..models.outcome_type_9 import OutcomeType9
        from ..models.usage import Usage

        d = dict(src_dict)
        kind = RunEventKindType5Kind(d.pop("kind"))

        def _parse_outcome(
            data: object,
        ) -> (
            OutcomeType0
            | OutcomeType1
            | OutcomeType2
            | OutcomeType3
            | OutcomeType4
            | OutcomeType5
            | OutcomeType6
            | OutcomeType7
            | OutcomeType8
            | OutcomeType9
        ):
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_0 = OutcomeType0.from_dict(data)

                return componentsschemas_outcome_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_1 = OutcomeType1.from_dict(data)

                return componentsschemas_outcome_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_2 = OutcomeType2.from_dict(data)

                return componentsschemas_outcome_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_3 = OutcomeType3.from_dict(data)

                return componentsschemas_outcome_type_3
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_4 = OutcomeType4.from_dict(data)

                return componentsschemas_outcome_type_4
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_5 = OutcomeType5.from_dict(data)

                return componentsschemas_outcome_type_5
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_6 = OutcomeType6.from_dict(data)

                return componentsschemas_outcome_type_6
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_7 = OutcomeType7.from_dict(data)

                return componentsschemas_outcome_type_7
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_8 = OutcomeType8.from_dict(data)

                return componentsschemas_outcome_type_8
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_outcome_type_9 = OutcomeType9.from_dict(data)

            return componentsschemas_outcome_type_9

        outcome = _parse_outcome(d.pop("outcome"))

        def _parse_usage(data: object) -> None | Unset | Usage:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_1 = Usage.from_dict(data)

                return usage_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | Unset | Usage", data)

        usage = _parse_usage(d.pop("usage", UNSET))

        run_event_kind_type_5 = cls(
            kind=kind,
            outcome=outcome,
            usage=usage,
        )

        run_event_kind_type_5.additional_properties = d
        return run_event_kind_type_5

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
