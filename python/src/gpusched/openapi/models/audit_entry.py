from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.audit_action import AuditAction
from ..types import UNSET, Unset

T = TypeVar("T", bound="AuditEntry")


@_attrs_define
class AuditEntry:
    """One entry of the audit log.

    Attributes:
        action (AuditAction): An admin action the audit log records.
        actor (str): Who did it: the token's user, or `uid N` / `root` over the Unix socket, or
            `server` for the server itself (a queue file reloaded on SIGHUP).
        at_ms (int): The server's clock, Unix ms.
        id (int): Increasing: the order actions took effect.
        target (str): What it was done to: a user (tokens), a token id, a node, `queues`, a job id.
        detail (str | Unset): The rest, in words (a drain's reason and mode, a token's role).
    """

    action: AuditAction
    actor: str
    at_ms: int
    id: int
    target: str
    detail: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        action = self.action.value

        actor = self.actor

        at_ms = self.at_ms

        id = self.id

        target = self.target

        detail = self.detail

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "actor": actor,
                "at_ms": at_ms,
                "id": id,
                "target": target,
            }
        )
        if detail is not UNSET:
            field_dict["detail"] = detail

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        action = AuditAction(d.pop("action"))

        actor = d.pop("actor")

        at_ms = d.pop("at_ms")

        id = d.pop("id")

        target = d.pop("target")

        detail = d.pop("detail", UNSET)

        audit_entry = cls(
            action=action,
            actor=actor,
            at_ms=at_ms,
            id=id,
            target=target,
            detail=detail,
        )

        audit_entry.additional_properties = d
        return audit_entry

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
