from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_submit import JobSubmit


T = TypeVar("T", bound="WorkflowStep")


@_attrs_define
class WorkflowStep:
    """One step: a job (or an array) and the steps it waits for, by key. The job's own
    `after*` lists may also name jobs submitted before.

        Attributes:
            job (JobSubmit): One job to run.
            key (str): Unique within the workflow: 1-64 letters, digits, `_`, `-` or `.`.
            after (list[str] | Unset): Steps that must succeed first (every task, for an array).
            after_any (list[str] | Unset): Steps that must end first, however they end.
            after_notok (list[str] | Unset): Steps that must end without succeeding first.
    """

    job: JobSubmit
    key: str
    after: list[str] | Unset = UNSET
    after_any: list[str] | Unset = UNSET
    after_notok: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        job = self.job.to_dict()

        key = self.key

        after: list[str] | Unset = UNSET
        if not isinstance(self.after, Unset):
            after = self.after

        after_any: list[str] | Unset = UNSET
        if not isinstance(self.after_any, Unset):
            after_any = self.after_any

        after_notok: list[str] | Unset = UNSET
        if not isinstance(self.after_notok, Unset):
            after_notok = self.after_notok

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "job": job,
                "key": key,
            }
        )
        if after is not UNSET:
            field_dict["after"] = after
        if after_any is not UNSET:
            field_dict["after_any"] = after_any
        if after_notok is not UNSET:
            field_dict["after_notok"] = after_notok

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.job_submit import JobSubmit

        d = dict(src_dict)
        job = JobSubmit.from_dict(d.pop("job"))

        key = d.pop("key")

        after = cast(list[str], d.pop("after", UNSET))

        after_any = cast(list[str], d.pop("after_any", UNSET))

        after_notok = cast(list[str], d.pop("after_notok", UNSET))

        workflow_step = cls(
            job=job,
            key=key,
            after=after,
            after_any=after_any,
            after_notok=after_notok,
        )

        return workflow_step
