from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.attempt_ref import AttemptRef


T = TypeVar("T", bound="QueuedKnown")


@_attrs_define
class QueuedKnown:
    """A queued attempt whose launch the agent already holds (see [`Desired::queued_known`]).

    Attributes:
        after (AttemptRef): One run of one job.
        attempt (AttemptRef): One run of one job.
    """

    after: AttemptRef
    attempt: AttemptRef

    def to_dict(self) -> dict[str, Any]:
        after = self.after.to_dict()

        attempt = self.attempt.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "after": after,
                "attempt": attempt,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.attempt_ref import AttemptRef

        d = dict(src_dict)
        after = AttemptRef.from_dict(d.pop("after"))

        attempt = AttemptRef.from_dict(d.pop("attempt"))

        queued_known = cls(
            after=after,
            attempt=attempt,
        )

        return queued_known
