from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attempt_ref import AttemptRef
    from ..models.containment import Containment
    from ..models.gpu_info import GpuInfo
    from ..models.gpu_link import GpuLink
    from ..models.node_location import NodeLocation
    from ..models.register_resources import RegisterResources
    from ..models.run_event import RunEvent


T = TypeVar("T", bound="Register")


@_attrs_define
class Register:
    """`POST /api/agent/register`: sent when the agent starts and whenever the server does
    not know it (the server restarted).

        Attributes:
            agent_version (str):
            cpus (int):
            events (list[RunEvent]): Ends the server has not acknowledged yet (applied before `running` is compared).
            gpus (list[GpuInfo]):
            mem_mib (int):
            node (str):
            running (list[AttemptRef]): Attempts running right now.
            advertise_addr (None | str | Unset): The address other nodes reach this one at (`MASTER_ADDR` when a job's first
                part runs here, the hostfile): `--advertise-addr`, else the local address of the
                agent's connection to the server.
            containment (Containment | None | Unset):
            features (list[str] | Unset): Features the node offers (`gpusched agent --feature a100,nvlink,ib`; also the
                topology file), which jobs' constraints and partitions select nodes by.
            gpu_links (list[GpuLink] | Unset): How its GPUs are linked, pair by pair (NVML topology; empty where unknown).
            location (NodeLocation | Unset): Where a node sits in the network, as its agent says (`--switch`, `--rack`) or
                the
                server's topology file overrides. Nodes under one switch are one hop apart; placement
                keeps a gang under as few switches as it can.
            log_token (None | str | Unset): The bearer secret the server must present to `log_url` (new every agent start,
                so the join token never travels to an agent's plain-HTTP log endpoint).
            log_url (None | str | Unset): Where the server can fetch job logs from this agent (`http://host:port`).
            mps (bool | Unset): The node runs NVIDIA MPS (`nvidia-cuda-mps-control -d`): shares of its GPUs are
                limited by MPS instead of by agreement.
            resources (RegisterResources | Unset): Generic counted resources the node offers (`gpusched agent --resource
                fpga=2`),
                by name: jobs that ask for them are scheduled here, one count each at a time.
    """

    agent_version: str
    cpus: int
    events: list[RunEvent]
    gpus: list[GpuInfo]
    mem_mib: int
    node: str
    running: list[AttemptRef]
    advertise_addr: None | str | Unset = UNSET
    containment: Containment | None | Unset = UNSET
    features: list[str] | Unset = UNSET
    gpu_links: list[GpuLink] | Unset = UNSET
    location: NodeLocation | Unset = UNSET
    log_token: None | str | Unset = UNSET
    log_url: None | str | Unset = UNSET
    mps: bool | Unset = UNSET
    resources: RegisterResources | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.containment import Containment

        agent_version = self.agent_version

        cpus = self.cpus

        events = []
        for events_item_data in self.events:
            events_item = events_item_data.to_dict()
            events.append(events_item)

        gpus = []
        for gpus_item_data in self.gpus:
            gpus_item = gpus_item_data.to_dict()
            gpus.append(gpus_item)

        mem_mib = self.mem_mib

        node = self.node

        running = []
        for running_item_data in self.running:
            running_item = running_item_data.to_dict()
            running.append(running_item)

        advertise_addr: None | str | Unset
        if isinstance(self.advertise_addr, Unset):
            advertise_addr = UNSET
        else:
            advertise_addr = self.advertise_addr

        containment: dict[str, Any] | None | Unset
        if isinstance(self.containment, Unset):
            containment = UNSET
        elif isinstance(self.containment, Containment):
            containment = self.containment.to_dict()
        else:
            containment = self.containment

        features: list[str] | Unset = UNSET
        if not isinstance(self.features, Unset):
            features = self.features

        gpu_links: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.gpu_links, Unset):
            gpu_links = []
            for gpu_links_item_data in self.gpu_links:
                gpu_links_item = gpu_links_item_data.to_dict()
                gpu_links.append(gpu_links_item)

        location: dict[str, Any] | Unset = UNSET
        if not isinstance(self.location, Unset):
            location = self.location.to_dict()

        log_token: None | str | Unset
        if isinstance(self.log_token, Unset):
            log_token = UNSET
        else:
            log_token = self.log_token

        log_url: None | str | Unset
        if isinstance(self.log_url, Unset):
            log_url = UNSET
        else:
            log_url = self.log_url

        mps = self.mps

        resources: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resources, Unset):
            resources = self.resources.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent_version": agent_version,
                "cpus": cpus,
                "events": events,
                "gpus": gpus,
                "mem_mib": mem_mib,
                "node": node,
                "running": running,
            }
        )
        if advertise_addr is not UNSET:
            field_dict["advertise_addr"] = advertise_addr
        if containment is not UNSET:
            field_dict["containment"] = containment
        if features is not UNSET:
            field_dict["features"] = features
        if gpu_links is not UNSET:
            field_dict["gpu_links"] = gpu_links
        if location is not UNSET:
            field_dict["location"] = location
        if log_token is not UNSET:
            field_dict["log_token"] = log_token
        if log_url is not UNSET:
            field_dict["log_url"] = log_url
        if mps is not UNSET:
            field_dict["mps"] = mps
        if resources is not UNSET:
            field_dict["resources"] = resources

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.attempt_ref import AttemptRef
        from ..models.containment import Containment
        from ..models.gpu_info import GpuInfo
        from ..models.gpu_link import GpuLink
        from ..models.node_location import NodeLocation
        from ..models.register_resources import RegisterResources
        from ..models.run_event import RunEvent

        d = dict(src_dict)
        agent_version = d.pop("agent_version")

        cpus = d.pop("cpus")

        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = RunEvent.from_dict(events_item_data)

            events.append(events_item)

        gpus = []
        _gpus = d.pop("gpus")
        for gpus_item_data in _gpus:
            gpus_item = GpuInfo.from_dict(gpus_item_data)

            gpus.append(gpus_item)

        mem_mib = d.pop("mem_mib")

        node = d.pop("node")

        running = []
        _running = d.pop("running")
        for running_item_data in _running:
            running_item = AttemptRef.from_dict(running_item_data)

            running.append(running_item)

        def _parse_advertise_addr(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        advertise_addr = _parse_advertise_addr(d.pop("advertise_addr", UNSET))

        def _parse_containment(data: object) -> Containment | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                containment_type_1 = Containment.from_dict(data)

                return containment_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("Containment | None | Unset", data)

        containment = _parse_containment(d.pop("containment", UNSET))

        features = cast(list[str], d.pop("features", UNSET))

        _gpu_links = d.pop("gpu_links", UNSET)
        gpu_links: list[GpuLink] | Unset = UNSET
        if _gpu_links is not UNSET:
            gpu_links = []
            for gpu_links_item_data in _gpu_links:
                gpu_links_item = GpuLink.from_dict(gpu_links_item_data)

                gpu_links.append(gpu_links_item)

        _location = d.pop("location", UNSET)
        location: NodeLocation | Unset
        if isinstance(_location, Unset):
            location = UNSET
        else:
            location = NodeLocation.from_dict(_location)

        def _parse_log_token(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        log_token = _parse_log_token(d.pop("log_token", UNSET))

        def _parse_log_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        log_url = _parse_log_url(d.pop("log_url", UNSET))

        mps = d.pop("mps", UNSET)

        _resources = d.pop("resources", UNSET)
        resources: RegisterResources | Unset
        if isinstance(_resources, Unset):
            resources = UNSET
        else:
            resources = RegisterResources.from_dict(_resources)

        register = cls(
            agent_version=agent_version,
            cpus=cpus,
            events=events,
            gpus=gpus,
            mem_mib=mem_mib,
            node=node,
            running=running,
            advertise_addr=advertise_addr,
            containment=containment,
            features=features,
            gpu_links=gpu_links,
            location=location,
            log_token=log_token,
            log_url=log_url,
            mps=mps,
            resources=resources,
        )

        return register
