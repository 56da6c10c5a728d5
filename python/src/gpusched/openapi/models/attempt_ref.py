from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

T = TypeVar("T", bound="AttemptRef")


@_attrs_define
class AttemptRef:
    """One run of one job.

    Attributes:
        attempt (int):
        job (int):
    """

    attempt: int
    job: int

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        job = self.job

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attempt": attempt,
                "job": job,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        attempt = d.pop("attempt")

        job = d.pop("job")

        attempt_ref = cls(
            attempt=attempt,
            job=job,
        )

        return attempt_ref
