from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Probe")


@_attrs_define
class Probe:
    """An HTTP GET (or, without `path`, a TCP connection) the replica's agent makes to the
    replica's port every `period_s`; a status 200-399 within `timeout_s` is a success.

        Attributes:
            failure_threshold (int | Unset): Failures in a row that make the replica not ready (readiness) or restart it
                (liveness); default 3.
            initial_delay_s (int | Unset): Seconds after the replica starts before the first probe (default 0).
            path (None | str | Unset): The path to GET, e.g. `/v2/health/ready`; absent: a TCP connection to the port.
            period_s (int | Unset): Seconds between probes (default 2).
            timeout_s (int | Unset): Seconds a probe may take (default 1).
    """

    failure_threshold: int | Unset = UNSET
    initial_delay_s: int | Unset = UNSET
    path: None | str | Unset = UNSET
    period_s: int | Unset = UNSET
    timeout_s: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        failure_threshold = self.failure_threshold

        initial_delay_s = self.initial_delay_s

        path: None | str | Unset
        if isinstance(self.path, Unset):
            path = UNSET
        else:
            path = self.path

        period_s = self.period_s

        timeout_s = self.timeout_s

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if failure_threshold is not UNSET:
            field_dict["failure_threshold"] = failure_threshold
        if initial_delay_s is not UNSET:
            field_dict["initial_delay_s"] = initial_delay_s
        if path is not UNSET:
            field_dict["path"] = path
        if period_s is not UNSET:
            field_dict["period_s"] = period_s
        if timeout_s is not UNSET:
            field_dict["timeout_s"] = timeout_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        failure_threshold = d.pop("failure_threshold", UNSET)

        initial_delay_s = d.pop("initial_delay_s", UNSET)

        def _parse_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        path = _parse_path(d.pop("path", UNSET))

        period_s = d.pop("period_s", UNSET)

        timeout_s = d.pop("timeout_s", UNSET)

        probe = cls(
            failure_threshold=failure_threshold,
            initial_delay_s=initial_delay_s,
            path=path,
            period_s=period_s,
            timeout_s=timeout_s,
        )

        return probe
