from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ServiceLoad")


@_attrs_define
class ServiceLoad:
    """One gateway's load on one service.

    Attributes:
        in_flight (int): Requests sent to replicas and not yet answered.
        queued (int): Requests waiting in the gateway (batch queues, held for a replica to start).
        service (str):
        answered (int | Unset): Requests answered since the last sync.
        p95_ms (float | None | Unset): The p95 latency of the requests answered since the last sync, ms.
    """

    in_flight: int
    queued: int
    service: str
    answered: int | Unset = UNSET
    p95_ms: float | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        in_flight = self.in_flight

        queued = self.queued

        service = self.service

        answered = self.answered

        p95_ms: float | None | Unset
        if isinstance(self.p95_ms, Unset):
            p95_ms = UNSET
        else:
            p95_ms = self.p95_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "in_flight": in_flight,
                "queued": queued,
                "service": service,
            }
        )
        if answered is not UNSET:
            field_dict["answered"] = answered
        if p95_ms is not UNSET:
            field_dict["p95_ms"] = p95_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        in_flight = d.pop("in_flight")

        queued = d.pop("queued")

        service = d.pop("service")

        answered = d.pop("answered", UNSET)

        def _parse_p95_ms(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("float | None | Unset", data)

        p95_ms = _parse_p95_ms(d.pop("p95_ms", UNSET))

        service_load = cls(
            in_flight=in_flight,
            queued=queued,
            service=service,
            answered=answered,
            p95_ms=p95_ms,
        )

        return service_load
