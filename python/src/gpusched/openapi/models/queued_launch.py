from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.attempt_ref import AttemptRef
    from ..models.launch import Launch


T = TypeVar("T", bound="QueuedLaunch")


@_attrs_define
class QueuedLaunch:
    """An attempt to start when another ends (see [`Desired::queued`]).

    Attributes:
        after (AttemptRef): One run of one job.
        launch (Launch): Everything the agent needs to start one attempt.
    """

    after: AttemptRef
    launch: Launch

    def to_dict(self) -> dict[str, Any]:
        after = self.after.to_dict()

        launch = self.launch.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "after": after,
                "launch": launch,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.attempt_ref import AttemptRef
        from ..models.launch import Launch

        d = dict(src_dict)
        after = AttemptRef.from_dict(d.pop("after"))

        launch = Launch.from_dict(d.pop("launch"))

        queued_launch = cls(
            after=after,
            launch=launch,
        )

        return queued_launch
