from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.node_telemetry import NodeTelemetry
    from ..models.run_event import RunEvent


T = TypeVar("T", bound="Report")


@_attrs_define
class Report:
    """`POST /api/agent/report`.

    Attributes:
        events (list[RunEvent]):
        instance (str):
        node (str):
        leaving (bool | Unset): The agent is stopping and runs nothing any more (it stopped its jobs and these
            events report their ends): the server takes the node out of placement now
            instead of after the heartbeat timeout.
        telemetry (NodeTelemetry | None | Unset):
    """

    events: list[RunEvent]
    instance: str
    node: str
    leaving: bool | Unset = UNSET
    telemetry: NodeTelemetry | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.node_telemetry import NodeTelemetry

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)

        instance = self.instance

        node = self.node

        leaving = self.leaving

        telemetry: dict[str, Any] | None | Unset
        if isinstance(self.telemetry, Unset):
            telemetry = UNSET
        elif isinstance(self.telemetry, NodeTelemetry):
            telemetry = self.telemetry.to_dict()
        else:
            telemetry = self.telemetry

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "events": events,
                "instance": instance,
                "node": node,
            }
        )
        if leaving is not UNSET:
            field_dict["leaving"] = leaving
        if telemetry is not UNSET:
            field_dict["telemetry"] = telemetry

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.node_telemetry import NodeTelemetry
        from ..models.run_event import RunEvent

        d = dict(src_dict)
        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = RunEvent.from_dict(events_item_data)

            events.append(events_item)

        instance = d.pop("instance")

        node = d.pop("node")

        leaving = d.pop("leaving", UNSET)

        def _parse_telemetry(data: object) -> NodeTelemetry | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                telemetry_type_1 = NodeTelemetry.from_dict(data)

                return telemetry_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("NodeTelemetry | None | Unset", data)

        telemetry = _parse_telemetry(d.pop("telemetry", UNSET))

        report = cls(
            events=events,
            instance=instance,
            node=node,
            leaving=leaving,
            telemetry=telemetry,
        )

        return report
