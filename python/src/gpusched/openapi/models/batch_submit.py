from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.job_submit import JobSubmit


T = TypeVar("T", bound="BatchSubmit")


@_attrs_define
class BatchSubmit:
    """Many jobs in one call, accepted (or refused) together in one transaction.

    Attributes:
        jobs (list[JobSubmit]):
    """

    jobs: list[JobSubmit]

    def to_dict(self) -> dict[str, Any]:
        jobs = []
        for jobs_item_data in self.jobs:
            jobs_item = jobs_item_data.to_dict()
            jobs.append(jobs_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "jobs": jobs,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.job_submit import JobSubmit

        d = dict(src_dict)
        jobs = []
        _jobs = d.pop("jobs")
        for jobs_item_data in _jobs:
            jobs_item = JobSubmit.from_dict(jobs_item_data)

            jobs.append(jobs_item)

        batch_submit = cls(
            jobs=jobs,
        )

        return batch_submit
