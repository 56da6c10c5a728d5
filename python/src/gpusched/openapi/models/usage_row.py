from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="UsageRow")


@_attrs_define
class UsageRow:
    """One user's (or queue's) use of the cluster in the window.

    Attributes:
        cancelled (int):
        failed (int):
        gpu_hours (float): GPUs x hours run in the window, running jobs counted up to now.
        jobs (int): Jobs that ran (or ended) in the window.
        key (str):
        mean_wait_s (float): Mean time from submission to start, over the jobs that started.
        succeeded (int):
        timed_out (int):
        cpu_hours (float | Unset): CPU time its jobs' processes used, hours, as their nodes' cgroups measured it when
            each attempt ended: each job's whole last attempt, as energy (running jobs and
            jobs on nodes that measure nothing add nothing).
        energy_kwh (float | Unset): Energy of those jobs, kWh: each job's whole measured energy (see
            docs/energy.md), not only the window's part.
        idle_gpu_hours (float | Unset): GPU-hours interactive allocations held idle (below their queue's idle
            threshold): those still running, and those that ended since the server started
            (kept in its memory; docs/interactive-alloc.md), each whole when it is in the
            window.
        mem_gib_hours (float | Unset): Memory GiB-hours: each job's peak memory x its nodes x its run time in the window
            (the peak is its largest part's; memory held below the peak counts as the peak,
            so this is what the jobs kept from others, not an average). Measured as
            `cpu_hours`.
        step_gpu_hours (float | Unset):
        steps (int | Unset): Steps (`gpusched run`) that ended in the jobs, and their GPU-hours (each step's
            GPUs x its run time), each job's whole when it is in the window: how much of what
            allocations held their steps used.
    """

    cancelled: int
    failed: int
    gpu_hours: float
    jobs: int
    key: str
    mean_wait_s: float
    succeeded: int
    timed_out: int
    cpu_hours: float | Unset = UNSET
    energy_kwh: float | Unset = UNSET
    idle_gpu_hours: float | Unset = UNSET
    mem_gib_hours: float | Unset = UNSET
    step_gpu_hours: float | Unset = UNSET
    steps: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cancelled = self.cancelled

        failed = self.failed

        gpu_hours = self.gpu_hours

        jobs = self.jobs

        key = self.key

        mean_wait_s = self.mean_wait_s

        succeeded = self.succeeded

        timed_out = self.timed_out

        cpu_hours = self.cpu_hours

        energy_kwh = self.energy_kwh

        idle_gpu_hours = self.idle_gpu_hours

        mem_gib_hours = self.mem_gib_hours

        step_gpu_hours = self.step_gpu_hours

        steps = self.steps

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cancelled": cancelled,
                "failed": failed,
                "gpu_hours": gpu_hours,
                "jobs": jobs,
                "key": key,
                "mean_wait_s": mean_wait_s,
                "succeeded": succeeded,
                "timed_out": timed_out,
            }
        )
        if cpu_hours is not UNSET:
            field_dict["cpu_hours"] = cpu_hours
        if energy_kwh is not UNSET:
            field_dict["energy_kwh"] = energy_kwh
        if idle_gpu_hours is not UNSET:
            field_dict["idle_gpu_hours"] = idle_gpu_hours
        if mem_gib_hours is not UNSET:
            field_dict["mem_gib_hours"] = mem_gib_hours
        if step_gpu_hours is not UNSET:
            field_dict["step_gpu_hours"] = step_gpu_hours
        if steps is not UNSET:
            field_dict["steps"] = steps

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cancelled = d.pop("cancelled")

        failed = d.pop("failed")

        gpu_hours = d.pop("gpu_hours")

        jobs = d.pop("jobs")

        key = d.pop("key")

        mean_wait_s = d.pop("mean_wait_s")

        succeeded = d.pop("succeeded")

        timed_out = d.pop("timed_out")

        cpu_hours = d.pop("cpu_hours", UNSET)

        energy_kwh = d.pop("energy_kwh", UNSET)

        idle_gpu_hours = d.pop("idle_gpu_hours", UNSET)

        mem_gib_hours = d.pop("mem_gib_hours", UNSET)

        step_gpu_hours = d.pop("step_gpu_hours", UNSET)

        steps = d.pop("steps", UNSET)

        usage_row = cls(
            cancelled=cancelled,
            failed=failed,
            gpu_hours=gpu_hours,
            jobs=jobs,
            key=key,
            mean_wait_s=mean_wait_s,
            succeeded=succeeded,
            timed_out=timed_out,
            cpu_hours=cpu_hours,
            energy_kwh=energy_kwh,
            idle_gpu_hours=idle_gpu_hours,
            mem_gib_hours=mem_gib_hours,
            step_gpu_hours=step_gpu_hours,
            steps=steps,
        )

        usage_row.additional_properties = d
        return usage_row

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
