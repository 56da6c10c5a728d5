from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="Rollout")


@_attrs_define
class Rollout:
    """How a new version rolls out (Kubernetes' rolling update, in replicas).

    Attributes:
        drain_s (int | Unset): Seconds a replica leaving the service is kept out of the gateways' endpoints
            before it is stopped, so no new request reaches a stopping replica (default 2).
        max_surge (int | Unset): Replicas above the desired count a rollout (or a drain) may start (default 1).
        max_unavailable (int | Unset): Ready replicas below the desired count a rollout may go (default 0: every old
            replica keeps serving until a new one is ready). `max_surge` and
            `max_unavailable` may not both be 0.
    """

    drain_s: int | Unset = UNSET
    max_surge: int | Unset = UNSET
    max_unavailable: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        drain_s = self.drain_s

        max_surge = self.max_surge

        max_unavailable = self.max_unavailable

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if drain_s is not UNSET:
            field_dict["drain_s"] = drain_s
        if max_surge is not UNSET:
            field_dict["max_surge"] = max_surge
        if max_unavailable is not UNSET:
            field_dict["max_unavailable"] = max_unavailable

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        drain_s = d.pop("drain_s", UNSET)

        max_surge = d.pop("max_surge", UNSET)

        max_unavailable = d.pop("max_unavailable", UNSET)

        rollout = cls(
            drain_s=drain_s,
            max_surge=max_surge,
            max_unavailable=max_unavailable,
        )

        return rollout
