from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

T = TypeVar("T", bound="PreemptOrder")


@_attrs_define
class PreemptOrder:
    """How to preempt one attempt.

    Attributes:
        attempt (int):
        grace_s (int): Seconds it has to save and exit before it is stopped.
        job (int):
        signal (int): The signal asking the job to checkpoint (10 = SIGUSR1).
    """

    attempt: int
    grace_s: int
    job: int
    signal: int

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        grace_s = self.grace_s

        job = self.job

        signal = self.signal

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attempt": attempt,
                "grace_s": grace_s,
                "job": job,
                "signal": signal,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        attempt = d.pop("attempt")

        grace_s = d.pop("grace_s")

        job = d.pop("job")

        signal = d.pop("signal")

        preempt_order = cls(
            attempt=attempt,
            grace_s=grace_s,
            job=job,
            signal=signal,
        )

        return preempt_order
