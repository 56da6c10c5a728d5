from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.dist_launch import DistLaunch
    from ..models.launch_env import LaunchEnv
    from ..models.launch_resources import LaunchResources
    from ..models.serve_launch import ServeLaunch
    from ..models.slice_at import SliceAt


T = TypeVar("T", bound="Launch")


@_attrs_define
class Launch:
    """Everything the agent needs to start one attempt.

    Attributes:
        attempt (int):
        command (list[str]):
        cwd (str):
        env (LaunchEnv):
        gpus (list[int]): Node-local GPU indices (NVML order).
        grace_s (int): Seconds between SIGTERM and SIGKILL when the job is stopped.
        job (int):
        name (str):
        user (str): The submitting user; an agent running as root runs the job as this Unix user.
        cpu_milli (int | Unset): CPUs the part may use, in thousandths (0: none asked; the node's default per
            GPU applies). Enforced where the agent has a cgroup.
        dist (DistLaunch | None | Unset):
        hold (bool | Unset): An interactive allocation ([`HOLD_PROTOCOL`]): the agent holds the GPUs with no
            process of the job's own (`command` is a label), keeps the attempt running (its
            cgroup made, so steps can join it) until it is cancelled, stopped or passes its
            walltime, and ends it as it would a process.
        image (None | str | Unset): The container image the part runs in (`None`: a host process).
        mem_mib (int | Unset): The part's memory limit in MiB (0: none asked; the node's default per GPU
            applies). Enforced where the agent has a cgroup, with no swap beyond it.
        pids_max (int | None | Unset): The most processes (and threads) the part may have at once (`None`: the node's
            default).
        resources (LaunchResources | Unset): Generic counted resources the job was given on this node (`fpga: 1`); the
            agent
            tells the job in `GPUSCHED_RESOURCE_<NAME>` variables.
        serve (None | ServeLaunch | Unset):
        slice_ (None | SliceAt | Unset):
        walltime_s (int | None | Unset):
    """

    attempt: int
    command: list[str]
    cwd: str
    env: LaunchEnv
    gpus: list[int]
    grace_s: int
    job: int
    name: str
    user: str
    cpu_milli: int | Unset = UNSET
    dist: DistLaunch | None | Unset = UNSET
    hold: bool | Unset = UNSET
    image: None | str | Unset = UNSET
    mem_mib: int | Unset = UNSET
    pids_max: int | None | Unset = UNSET
    resources: LaunchResources | Unset = UNSET
    serve: None | ServeLaunch | Unset = UNSET
    slice_: None | SliceAt | Unset = UNSET
    walltime_s: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.dist_launch import DistLaunch
        from ..models.serve_launch import ServeLaunch
        from ..models.slice_at import SliceAt

        attempt = self.attempt

        command = self.command

        cwd = self.cwd

        env = self.env.to_dict()

        gpus = self.gpus

        grace_s = self.grace_s

        job = self.job

        name = self.name

        user = self.user

        cpu_milli = self.cpu_milli

        dist: dict[str, Any] | None | Unset
        if isinstance(self.dist, Unset):
            dist = UNSET
        elif isinstance(self.dist, DistLaunch):
            dist = self.dist.to_dict()
        else:
            dist = self.dist

        hold = self.hold

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

        mem_mib = self.mem_mib

        pids_max: int | None | Unset
        if isinstance(self.pids_max, Unset):
            pids_max = UNSET
        else:
            pids_max = self.pids_max

        resources: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resources, Unset):
            resources = self.resources.to_dict()

        serve: dict[str, Any] | None | Unset
        if isinstance(self.serve, Unset):
            serve = UNSET
        elif isinstance(self.serve, ServeLaunch):
            serve = self.serve.to_dict()
        else:
            serve = self.serve

        slice_: dict[str, Any] | None | Unset
        if isinstance(self.slice_, Unset):
            slice_ = UNSET
        elif isinstance(self.slice_, SliceAt):
            slice_ = self.slice_.to_dict()
        else:
            slice_ = self.slice_

        walltime_s: int | None | Unset
        if isinstance(self.walltime_s, Unset):
            walltime_s = UNSET
        else:
            walltime_s = self.walltime_s

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "attempt": attempt,
                "command": command,
                "cwd": cwd,
                "env": env,
                "gpus": gpus,
                "grace_s": grace_s,
                "job": job,
                "name": name,
                "user": user,
            }
        )
        if cpu_milli is not UNSET:
            field_dict["cpu_milli"] = cpu_milli
        if dist is not UNSET:
            field_dict["dist"] = dist
        if hold is not UNSET:
            field_dict["hold"] = hold
        if image is not UNSET:
            field_dict["image"] = image
        if mem_mib is not UNSET:
            field_dict["mem_mib"] = mem_mib
        if pids_max is not UNSET:
            field_dict["pids_max"] = pids_max
        if resources is not UNSET:
            field_dict["resources"] = resources
        if serve is not UNSET:
            field_dict["serve"] = serve
        if slice_ is not UNSET:
            field_dict["slice"] = slice_
        if walltime_s is not UNSET:
            field_dict["walltime_s"] = walltime_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.dist_launch import DistLaunch
        from ..models.launch_env import LaunchEnv
        from ..models.launch_resources import LaunchResources
        from ..models.serve_launch import ServeLaunch
        from ..models.slice_at import SliceAt

        d = dict(src_dict)
        attempt = d.pop("attempt")

        command = cast(list[str], d.pop("command"))

        cwd = d.pop("cwd")

        env = LaunchEnv.from_dict(d.pop("env"))

        gpus = cast(list[int], d.pop("gpus"))

        grace_s = d.pop("grace_s")

        job = d.pop("job")

        name = d.pop("name")

        user = d.pop("user")

        cpu_milli = d.pop("cpu_milli", UNSET)

        def _parse_dist(data: object) -> DistLaunch | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                dist_type_1 = DistLaunch.from_dict(data)

                return dist_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("DistLaunch | None | Unset", data)

        dist = _parse_dist(d.pop("dist", UNSET))

        hold = d.pop("hold", UNSET)

        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        image = _parse_image(d.pop("image", UNSET))

        mem_mib = d.pop("mem_mib", UNSET)

        def _parse_pids_max(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        pids_max = _parse_pids_max(d.pop("pids_max", UNSET))

        _resources = d.pop("resources", UNSET)
        resources: LaunchResources | Unset
        if isinstance(_resources, Unset):
            resources = UNSET
        else:
            resources = LaunchResources.from_dict(_resources)

        def _parse_serve(data: object) -> None | ServeLaunch | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                serve_type_1 = ServeLaunch.from_dict(data)

                return serve_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | ServeLaunch | Unset", data)

        serve = _parse_serve(d.pop("serve", UNSET))

        def _parse_slice_(data: object) -> None | SliceAt | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                slice_type_1 = SliceAt.from_dict(data)

                return slice_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("None | SliceAt | Unset", data)

        slice_ = _parse_slice_(d.pop("slice", UNSET))

        def _parse_walltime_s(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        walltime_s = _parse_walltime_s(d.pop("walltime_s", UNSET))

        launch = cls(
            attempt=attempt,
            command=command,
            cwd=cwd,
            env=env,
            gpus=gpus,
            grace_s=grace_s,
            job=job,
            name=name,
            user=user,
            cpu_milli=cpu_milli,
            dist=dist,
            hold=hold,
            image=image,
            mem_mib=mem_mib,
            pids_max=pids_max,
            resources=resources,
            serve=serve,
            slice_=slice_,
            walltime_s=walltime_s,
        )

        return launch
