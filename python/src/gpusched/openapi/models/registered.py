from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Registered")


@_attrs_define
class Registered:
    """
    Attributes:
        heartbeat_timeout_ms (int): Silence after which the server places nothing more on the node (it stays
            unreachable, its jobs kept, until its agent is heard again or the lease ends).
        instance (str): Changes every time the server starts; polls name it.
        poll_wait_ms (int): The longest the server holds a poll; the agent polls again at once after each.
        compact (bool | Unset): The server takes the compact agent messages (`compact.rs`): polls naming what the
            agent holds ([`PollQuery::have`]) answered with the launches it lacks, and
            MessagePack ([`MSGPACK`]) for polls and reports. Absent (false) from servers
            before them: the agent then speaks JSON and takes whole desired states. An
            addition needing no new protocol: `Registered` is read without
            `deny_unknown_fields`, and a server answers compactly only a request that asks.
        lease_ms (int | None | Unset): The node lease: silence after which the server declares the node's jobs lost and
            requeues them, counted from the last request it received from the agent (or from
            its own start). The agent stops its jobs before the same span has passed since
            it sent the last request the server answered, so no job runs twice. Absent from
            servers before it was sent: the agent then uses half the heartbeat timeout.
        protocol (int | Unset): The agent protocol the server speaks ([`AGENT_PROTOCOL`]); absent from servers of
            protocol 1.
    """

    heartbeat_timeout_ms: int
    instance: str
    poll_wait_ms: int
    compact: bool | Unset = UNSET
    lease_ms: int | None | Unset = UNSET
    protocol: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        heartbeat_timeout_ms = self.heartbeat_timeout_ms

        instance = self.instance

        poll_wait_ms = self.poll_wait_ms

        compact = self.compact

        lease_ms: int | None | Unset
        if isinstance(self.lease_ms, Unset):
            lease_ms = UNSET
        else:
            lease_ms = self.lease_ms

        protocol = self.protocol

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "heartbeat_timeout_ms": heartbeat_timeout_ms,
                "instance": instance,
                "poll_wait_ms": poll_wait_ms,
            }
        )
        if compact is not UNSET:
            field_dict["compact"] = compact
        if lease_ms is not UNSET:
            field_dict["lease_ms"] = lease_ms
        if protocol is not UNSET:
            field_dict["protocol"] = protocol

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        heartbeat_timeout_ms = d.pop("heartbeat_timeout_ms")

        instance = d.pop("instance")

        poll_wait_ms = d.pop("poll_wait_ms")

        compact = d.pop("compact", UNSET)

        def _parse_lease_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        lease_ms = _parse_lease_ms(d.pop("lease_ms", UNSET))

        protocol = d.pop("protocol", UNSET)

        registered = cls(
            heartbeat_timeout_ms=heartbeat_timeout_ms,
            instance=instance,
            poll_wait_ms=poll_wait_ms,
            compact=compact,
            lease_ms=lease_ms,
            protocol=protocol,
        )

        registered.additional_properties = d
        return registered

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
