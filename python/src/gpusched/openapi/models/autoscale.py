from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Autoscale")


@_attrs_define
class Autoscale:
    """Scaling on load: the desired replicas are the requests in flight and waiting at the
    gateways divided by `target_in_flight`, rounded up, within `min..=max`; a rise is
    acted on after `up_window_s` of it, a fall after `down_window_s` (the most replicas
    recommended over that window), so the count does not flap.

        Attributes:
            max_ (int): At most this many.
            min_ (int): At least this many replicas (0: scale to zero when idle).
            down_window_s (int | Unset): Seconds over which the highest recommendation is kept before scaling down
                (default 60).
            idle_to_zero_s (int | Unset): With `min = 0`: seconds without any request before the last replica goes
                (default 300).
            latency_p95_ms (int | None | Unset): Scale up, as for load, when the gateways' p95 latency passes this (ms).
            target_in_flight (float | Unset): Requests in flight (at replicas or queued at gateways) one replica should
                carry
                (default 4).
            up_window_s (int | Unset): Seconds a higher recommendation must hold before scaling up (default 0).
    """

    max_: int
    min_: int
    down_window_s: int | Unset = UNSET
    idle_to_zero_s: int | Unset = UNSET
    latency_p95_ms: int | None | Unset = UNSET
    target_in_flight: float | Unset = UNSET
    up_window_s: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_ = self.max_

        min_ = self.min_

        down_window_s = self.down_window_s

        idle_to_zero_s = self.idle_to_zero_s

        latency_p95_ms: int | None | Unset
        if isinstance(self.latency_p95_ms, Unset):
            latency_p95_ms = UNSET
        else:
            latency_p95_ms = self.latency_p95_ms

        target_in_flight = self.target_in_flight

        up_window_s = self.up_window_s

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "max": max_,
                "min": min_,
            }
        )
        if down_window_s is not UNSET:
            field_dict["down_window_s"] = down_window_s
        if idle_to_zero_s is not UNSET:
            field_dict["idle_to_zero_s"] = idle_to_zero_s
        if latency_p95_ms is not UNSET:
            field_dict["latency_p95_ms"] = latency_p95_ms
        if target_in_flight is not UNSET:
            field_dict["target_in_flight"] = target_in_flight
        if up_window_s is not UNSET:
            field_dict["up_window_s"] = up_window_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        max_ = d.pop("max")

        min_ = d.pop("min")

        down_window_s = d.pop("down_window_s", UNSET)

        idle_to_zero_s = d.pop("idle_to_zero_s", UNSET)

        def _parse_latency_p95_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        latency_p95_ms = _parse_latency_p95_ms(d.pop("latency_p95_ms", UNSET))

        target_in_flight = d.pop("target_in_flight", UNSET)

        up_window_s = d.pop("up_window_s", UNSET)

        autoscale = cls(
            max_=max_,
            min_=min_,
            down_window_s=down_window_s,
            idle_to_zero_s=idle_to_zero_s,
            latency_p95_ms=latency_p95_ms,
            target_in_flight=target_in_flight,
            up_window_s=up_window_s,
        )

        return autoscale
