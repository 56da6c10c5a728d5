from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Batching")


@_attrs_define
class Batching:
    """Triton's dynamic batcher, at the gateway: requests for the model wait in a queue
    (ordered by priority level, then arrival) and go to one replica as one request, their
    inputs concatenated along the first dimension, when the batch reaches the largest
    `preferred_batch_sizes` (or `max_batch_size`) it can, or when the oldest has waited
    `max_queue_delay_us`; the answer is split back along the first dimension.

        Attributes:
            max_batch_size (int): The most items (sum of the requests' first dimensions) in one batch.
            allow_timeout_override (bool | Unset):
            default_priority_level (int | None | Unset): The level of a request that names none (default: the lowest).
            default_timeout_us (int | Unset): A request still queued after this many microseconds is refused (Triton's
                `default_timeout_microseconds` with `REJECT`); 0: no timeout. A request's own
                `timeout` parameter overrides it when `allow_timeout_override`.
            max_queue_delay_us (int | Unset): The longest the oldest request waits for a batch to fill, in microseconds
                (default 0: send whatever is queued once a replica is free).
            max_queue_size (int | Unset): Requests queued for the model beyond which new ones are refused (503 with
                `Retry-After`); default 1024.
            preferred_batch_sizes (list[int] | Unset): Batch sizes to send as soon as they are reached (each at most
                `max_batch_size`); empty: send at `max_batch_size`.
            priority_levels (int | Unset): Priority levels (1 is the highest); 0: one level. A request names its level in
                the `priority` parameter.
    """

    max_batch_size: int
    allow_timeout_override: bool | Unset = UNSET
    default_priority_level: int | None | Unset = UNSET
    default_timeout_us: int | Unset = UNSET
    max_queue_delay_us: int | Unset = UNSET
    max_queue_size: int | Unset = UNSET
    preferred_batch_sizes: list[int] | Unset = UNSET
    priority_levels: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        max_batch_size = self.max_batch_size

        allow_timeout_override = self.allow_timeout_override

        default_priority_level: int | None | Unset
        if isinstance(self.default_priority_level, Unset):
            default_priority_level = UNSET
        else:
            default_priority_level = self.default_priority_level

        default_timeout_us = self.default_timeout_us

        max_queue_delay_us = self.max_queue_delay_us

        max_queue_size = self.max_queue_size

        preferred_batch_sizes: list[int] | Unset = UNSET
        if not isinstance(self.preferred_batch_sizes, Unset):
            preferred_batch_sizes = self.preferred_batch_sizes

        priority_levels = self.priority_levels

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "max_batch_size": max_batch_size,
            }
        )
        if allow_timeout_override is not UNSET:
            field_dict["allow_timeout_override"] = allow_timeout_override
        if default_priority_level is not UNSET:
            field_dict["default_priority_level"] = default_priority_level
        if default_timeout_us is not UNSET:
            field_dict["default_timeout_us"] = default_timeout_us
        if max_queue_delay_us is not UNSET:
            field_dict["max_queue_delay_us"] = max_queue_delay_us
        if max_queue_size is not UNSET:
            field_dict["max_queue_size"] = max_queue_size
        if preferred_batch_sizes is not UNSET:
            field_dict["preferred_batch_sizes"] = preferred_batch_sizes
        if priority_levels is not UNSET:
            field_dict["priority_levels"] = priority_levels

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        max_batch_size = d.pop("max_batch_size")

        allow_timeout_override = d.pop("allow_timeout_override", UNSET)

        def _parse_default_priority_level(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        default_priority_level = _parse_default_priority_level(
            d.pop("default_priority_level", UNSET)
        )

        default_timeout_us = d.pop("default_timeout_us", UNSET)

        max_queue_delay_us = d.pop("max_queue_delay_us", UNSET)

        max_queue_size = d.pop("max_queue_size", UNSET)

        preferred_batch_sizes = cast(list[int], d.pop("preferred_batch_sizes", UNSET))

        priority_levels = d.pop("priority_levels", UNSET)

        batching = cls(
            max_batch_size=max_batch_size,
            allow_timeout_override=allow_timeout_override,
            default_priority_level=default_priority_level,
            default_timeout_us=default_timeout_us,
            max_queue_delay_us=max_queue_delay_us,
            max_queue_size=max_queue_size,
            preferred_batch_sizes=preferred_batch_sizes,
            priority_levels=priority_levels,
        )

        return batching
