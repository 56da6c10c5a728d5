from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.run_event_kind_type_0 import RunEventKindType0
    from ..models.run_event_kind_type_1 import RunEventKindType1
    from ..models.run_event_kind_type_2 import RunEventKindType2
    from ..models.run_event_kind_type_3 import RunEventKindType3
    from ..models.run_event_kind_type_4 import RunEventKindType4
    from ..models.run_event_kind_type_5 import RunEventKindType5


T = TypeVar("T", bound="RunEvent")


@_attrs_define
class RunEvent:
    """Something that happened to an attempt on a node, with the node's clock (Unix ms).

    Attributes:
        at_ms (int):
        attempt (int):
        event (RunEventKindType0 | RunEventKindType1 | RunEventKindType2 | RunEventKindType3 | RunEventKindType4 |
            RunEventKindType5):
        job (int):
    """

    at_ms: int
    attempt: int
    event: (
        RunEventKindType0
        | RunEventKindType1
        | RunEventKindType2
        | RunEventKindType3
        | RunEventKindType4
        | RunEventKindType5
    )
    job: int

    def to_dict(self) -> dict[str, Any]:
        from ..models.run_event_kind_type_0 import RunEventKindType0
        from ..models.run_event_kind_type_1 import RunEventKindType1
        from ..models.run_event_kind_type_2 import RunEventKindType2
        from ..models.run_event_kind_type_3 import RunEventKindType3
        from ..models.run_event_kind_type_4 import RunEventKindType4

        at_ms = self.at_ms

        attempt = self.attempt

        event: dict[str, Any]
        if (
            isinstance(self.event, RunEventKindType0)
            or isinstance(self.event, RunEventKindType1)
            or isinstance(self.event, RunEventKindType2)
            or isinstance(self.event, RunEventKindType3)
            or isinstance(self.event, RunEventKindType4)
        ):
            event = self.event.to_dict()
        else:
            event = self.event.to_dict()

        job = self.job

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "at_ms": at_ms,
                "attempt": attempt,
                "event": event,
                "job": job,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.run_event_kind_type_0 import RunEventKindType0
        from ..models.run_event_kind_type_1 import RunEventKindType1
        from ..models.run_event_kind_type_2 import RunEventKindType2
        from ..models.run_event_kind_type_3 import RunEventKindType3
        from ..models.run_event_kind_type_4 import RunEventKindType4
        from ..models.run_event_kind_type_5 import RunEventKindType5

        d = dict(src_dict)
        at_ms = d.pop("at_ms")

        attempt = d.pop("attempt")

        def _parse_event(
            data: object,
        ) -> (
            RunEventKindType0
            | RunEventKindType1
            | RunEventKindType2
            | RunEventKindType3
            | RunEventKindType4
            | RunEventKindType5
        ):
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_event_kind_type_0 = RunEventKindType0.from_dict(
                    data
                )

                return componentsschemas_run_event_kind_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_event_kind_type_1 = RunEventKindType1.from_dict(
                    data
                )

                return componentsschemas_run_event_kind_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_event_kind_type_2 = RunEventKindType2.from_dict(
                    data
                )

                return componentsschemas_run_event_kind_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_event_kind_type_3 = RunEventKindType3.from_dict(
                    data
                )

                return componentsschemas_run_event_kind_type_3
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_run_event_kind_type_4 = RunEventKindType4.from_dict(
                    data
                )

                return componentsschemas_run_event_kind_type_4
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_run_event_kind_type_5 = RunEventKindType5.from_dict(data)

            return componentsschemas_run_event_kind_type_5

        event = _parse_event(d.pop("event"))

        job = d.pop("job")

        run_event = cls(
            at_ms=at_ms,
            attempt=attempt,
            event=event,
            job=job,
        )

        return run_event
