from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.reservation_state import ReservationState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.reservation_spec import ReservationSpec


T = TypeVar("T", bound="ReservationView")


@_attrs_define
class ReservationView:
    """A reservation as `GET /api/reservations` shows it.

    Attributes:
        created_by (str): Who created it.
        created_ms (int):
        end_ms (int):
        gpus (int): GPUs on those nodes.
        nodes (list[str]): The nodes it holds (for `gpus`, those the server picked at creation).
        spec (ReservationSpec): A reservation to create, or (`PUT /api/reservations/{name}`) its new terms.
        state (ReservationState): Where a reservation's window stands.
        jobs (list[int] | Unset): Jobs that asked for it and have not ended.
    """

    created_by: str
    created_ms: int
    end_ms: int
    gpus: int
    nodes: list[str]
    spec: ReservationSpec
    state: ReservationState
    jobs: list[int] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_by = self.created_by

        created_ms = self.created_ms

        end_ms = self.end_ms

        gpus = self.gpus

        nodes = self.nodes

        spec = self.spec.to_dict()

        state = self.state.value

        jobs: list[int] | Unset = UNSET
        if not isinstance(self.jobs, Unset):
            jobs = self.jobs

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_by": created_by,
                "created_ms": created_ms,
                "end_ms": end_ms,
                "gpus": gpus,
                "nodes": nodes,
                "spec": spec,
                "state": state,
            }
        )
        if jobs is not UNSET:
            field_dict["jobs"] = jobs

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.reservation_spec import ReservationSpec

        d = dict(src_dict)
        created_by = d.pop("created_by")

        created_ms = d.pop("created_ms")

        end_ms = d.pop("end_ms")

        gpus = d.pop("gpus")

        nodes = cast(list[str], d.pop("nodes"))

        spec = ReservationSpec.from_dict(d.pop("spec"))

        state = ReservationState(d.pop("state"))

        jobs = cast(list[int], d.pop("jobs", UNSET))

        reservation_view = cls(
            created_by=created_by,
            created_ms=created_ms,
            end_ms=end_ms,
            gpus=gpus,
            nodes=nodes,
            spec=spec,
            state=state,
            jobs=jobs,
        )

        reservation_view.additional_properties = d
        return reservation_view

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
