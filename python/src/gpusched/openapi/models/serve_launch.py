from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.probe import Probe


T = TypeVar("T", bound="ServeLaunch")


@_attrs_define
class ServeLaunch:
    """The agent's part of a replica ([`crate::Launch::serve`], protocol 5): give it a
    port in `$PORT`, report the port ([`crate::RunEventKind::Listening`]), probe it.

        Attributes:
            liveness (None | Probe | Unset):
            readiness (None | Probe | Unset):
    """

    liveness: None | Probe | Unset = UNSET
    readiness: None | Probe | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.probe import Probe

        liveness: dict[str, Any] | None | Unset
        if isinstance(self.liveness, Unset):
            liveness = UNSET
        elif isinstance(self.liveness, Probe):
            liveness = self.liveness.to_dict()
        else:
            liveness = self.liveness

        readiness: dict[str, Any] | None | Unset
        if isinstance(self.readiness, Unset):
            readiness = UNSET
        elif isinstance(self.readiness, Probe):
            readiness = self.readiness.to_dict()
        else:
            readiness = self.readiness

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if liveness is not UNSET:
            field_dict["liveness"] = liveness
        if readiness is not UNSET:
            field_dict["readiness"] = readiness

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.probe import Probe

        d = dict(src_dict)

        def _parse_liveness(data: object) -> None | Probe | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                liveness_type_1 = Probe.from_dict(data)

                return liveness_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | Probe | Unset", data)

        liveness = _parse_liveness(d.pop("liveness", UNSET))

        def _parse_readiness(data: object) -> None | Probe | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                readiness_type_1 = Probe.from_dict(data)

                return readiness_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | Probe | Unset", data)

        readiness = _parse_readiness(d.pop("readiness", UNSET))

        serve_launch = cls(
            liveness=liveness,
            readiness=readiness,
        )

        return serve_launch
