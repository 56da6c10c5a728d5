from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.node_state import NodeState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.containment import Containment
    from ..models.drain import Drain
    from ..models.gpu_link import GpuLink
    from ..models.gpu_view import GpuView
    from ..models.node_location import NodeLocation
    from ..models.node_telemetry import NodeTelemetry
    from ..models.node_view_free_resources import NodeViewFreeResources
    from ..models.node_view_gpu_health import NodeViewGpuHealth
    from ..models.node_view_resources import NodeViewResources


T = TypeVar("T", bound="NodeView")


@_attrs_define
class NodeView:
    """
    Attributes:
        agent_version (str):
        cpus (int):
        gpus (list[GpuView]):
        last_seen_ms_ago (int): Milliseconds since the agent was last heard from.
        mem_mib (int):
        name (str):
        state (NodeState):
        addr (None | str | Unset): The address its agent advertised (`MASTER_ADDR`, hostfiles).
        containment (Containment | None | Unset):
        drain (Drain | None | Unset):
        features (list[str] | Unset): Features it offers (`--feature`), sorted.
        free_cpu_milli (int | Unset): CPUs (thousandths), memory (MiB) and generic resources not held by its running
            jobs (what jobs that ask for them may still get here). Accounting only.
        free_mem_mib (int | Unset):
        free_resources (NodeViewFreeResources | Unset):
        gpu_health (NodeViewGpuHealth | Unset): Each GPU's health (by NVML index; a GPU absent here is healthy).
        gpu_links (list[GpuLink] | Unset): How its GPUs are linked, pair by pair.
        location (NodeLocation | Unset): Where a node sits in the network, as its agent says (`--switch`, `--rack`) or
            the
            server's topology file overrides. Nodes under one switch are one hop apart; placement
            keeps a gang under as few switches as it can.
        mps (bool | Unset): The node runs NVIDIA MPS: shares of its GPUs get MPS limits.
        partitions (list[str] | Unset): Partitions it is in (the queue file's `[partition.NAME]`), in file order.
        resources (NodeViewResources | Unset): Generic counted resources the node declares (`--resource fpga=2`), by
            name.
        telemetry (NodeTelemetry | None | Unset):
    """

    agent_version: str
    cpus: int
    gpus: list[GpuView]
    last_seen_ms_ago: int
    mem_mib: int
    name: str
    state: NodeState
    addr: None | str | Unset = UNSET
    containment: Containment | None | Unset = UNSET
    drain: Drain | None | Unset = UNSET
    features: list[str] | Unset = UNSET
    free_cpu_milli: int | Unset = UNSET
    free_mem_mib: int | Unset = UNSET
    free_resources: NodeViewFreeResources | Unset = UNSET
    gpu_health: NodeViewGpuHealth | Unset = UNSET
    gpu_links: list[GpuLink] | Unset = UNSET
    location: NodeLocation | Unset = UNSET
    mps: bool | Unset = UNSET
    partitions: list[str] | Unset = UNSET
    resources: NodeViewResources | Unset = UNSET
    telemetry: NodeTelemetry | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.containment import Containment
        from ..models.drain import Drain
        from ..models.node_telemetry import NodeTelemetry

        agent_version = self.agent_version

        cpus = self.cpus

        gpus = []
        for gpus_item_data in self.gpus:
            gpus_item = gpus_item_data.to_dict()
            gpus.append(gpus_item)

        last_seen_ms_ago = self.last_seen_ms_ago

        mem_mib = self.mem_mib

        name = self.name

        state = self.state.value

        addr: None | str | Unset
        if isinstance(self.addr, Unset):
            addr = UNSET
        else:
            addr = self.addr

        containment: dict[str, Any] | None | Unset
        if isinstance(self.containment, Unset):
            containment = UNSET
        elif isinstance(self.containment, Containment):
            containment = self.containment.to_dict()
        else:
            containment = self.containment

        drain: dict[str, Any] | None | Unset
        if isinstance(self.drain, Unset):
            drain = UNSET
        elif isinstance(self.drain, Drain):
            drain = self.drain.to_dict()
        else:
            drain = self.drain

        features: list[str] | Unset = UNSET
        if not isinstance(self.features, Unset):
            features = self.features

        free_cpu_milli = self.free_cpu_milli

        free_mem_mib = self.free_mem_mib

        free_resources: dict[str, Any] | Unset = UNSET
        if not isinstance(self.free_resources, Unset):
            free_resources = self.free_resources.to_dict()

        gpu_health: dict[str, Any] | Unset = UNSET
        if not isinstance(self.gpu_health, Unset):
            gpu_health = self.gpu_health.to_dict()

        gpu_links: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.gpu_links, Unset):
            gpu_links = []
            for gpu_links_item_data in self.gpu_links:
                gpu_links_item = gpu_links_item_data.to_dict()
                gpu_links.append(gpu_links_item)

        location: dict[str, Any] | Unset = UNSET
        if not isinstance(self.location, Unset):
            location = self.location.to_dict()

        mps = self.mps

        partitions: list[str] | Unset = UNSET
        if not isinstance(self.partitions, Unset):
            partitions = self.partitions

        resources: dict[str, Any] | Unset = UNSET
        if not isinstance(self.resources, Unset):
            resources = self.resources.to_dict()

        telemetry: dict[str, Any] | None | Unset
        if isinstance(self.telemetry, Unset):
            telemetry = UNSET
        elif isinstance(self.telemetry, NodeTelemetry):
            telemetry = self.telemetry.to_dict()
        else:
            telemetry = self.telemetry

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agent_version": agent_version,
                "cpus": cpus,
                "gpus": gpus,
                "last_seen_ms_ago": last_seen_ms_ago,
                "mem_mib": mem_mib,
                "name": name,
                "state": state,
            }
        )
        if addr is not UNSET:
            field_dict["addr"] = addr
        if containment is not UNSET:
            field_dict["containment"] = containment
        if drain is not UNSET:
            field_dict["drain"] = drain
        if features is not UNSET:
            field_dict["features"] = features
        if free_cpu_milli is not UNSET:
            field_dict["free_cpu_milli"] = free_cpu_milli
        if free_mem_mib is not UNSET:
            field_dict["free_mem_mib"] = free_mem_mib
        if free_resources is not UNSET:
            field_dict["free_resources"] = free_resources
        if gpu_health is not UNSET:
            field_dict["gpu_health"] = gpu_health
        if gpu_links is not UNSET:
            field_dict["gpu_links"] = gpu_links
        if location is not UNSET:
            field_dict["location"] = location
        if mps is not UNSET:
            field_dict["mps"] = mps
        if partitions is not UNSET:
            field_dict["partitions"] = partitions
        if resources is not UNSET:
            field_dict["resources"] = resources
        if telemetry is not UNSET:
            field_dict["telemetry"] = telemetry

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.containment import Containment
        from ..models.drain import Drain
        from ..models.gpu_link import GpuLink
        from ..models.gpu_view import GpuView
        from ..models.node_location import NodeLocation
        from ..models.node_telemetry import NodeTelemetry
        from ..models.node_view_free_resources import NodeViewFreeResources
        from ..models.node_view_gpu_health import NodeViewGpuHealth
        from ..models.node_view_resources import NodeViewResources

        d = dict(src_dict)
        agent_version = d.pop("agent_version")

        cpus = d.pop("cpus")

        gpus = []
        _gpus = d.pop("gpus")
        for gpus_item_data in _gpus:
            gpus_item = GpuView.from_dict(gpus_item_data)

            gpus.append(gpus_item)

        last_seen_ms_ago = d.pop("last_seen_ms_ago")

        mem_mib = d.pop("mem_mib")

        name = d.pop("name")

        state = NodeState(d.pop("state"))

        def _parse_addr(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        addr = _parse_addr(d.pop("addr", UNSET))

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

        def _parse_drain(data: object) -> Drain | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                drain_type_1 = Drain.from_dict(data)

                return drain_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("Drain | None | Unset", data)

        drain = _parse_drain(d.pop("drain", UNSET))

        features = cast(list[str], d.pop("features", UNSET))

        free_cpu_milli = d.pop("free_cpu_milli", UNSET)

        free_mem_mib = d.pop("free_mem_mib", UNSET)

        _free_resources = d.pop("free_resources", UNSET)
        free_resources: NodeViewFreeResources | Unset
        if isinstance(_free_resources, Unset):
            free_resources = UNSET
        else:
            free_resources = NodeViewFreeResources.from_dict(_free_resources)

        _gpu_health = d.pop("gpu_health", UNSET)
        gpu_health: NodeViewGpuHealth | Unset
        if isinstance(_gpu_health, Unset):
            gpu_health = UNSET
        else:
            gpu_health = NodeViewGpuHealth.from_dict(_gpu_health)

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

        mps = d.pop("mps", UNSET)

        partitions = cast(list[str], d.pop("partitions", UNSET))

        _resources = d.pop("resources", UNSET)
        resources: NodeViewResources | Unset
        if isinstance(_resources, Unset):
            resources = UNSET
        else:
            resources = NodeViewResources.from_dict(_resources)

        def _parse_telemetry(data: object) -> NodeTelemetry | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                telemetry_type_1 = NodeTelemetry.from_dict(data)

                return telemetry_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast("NodeTelemetry | None | Unset", data)

        telemetry = _parse_telemetry(d.pop("telemetry", UNSET))

        node_view = cls(
            agent_version=agent_version,
            cpus=cpus,
            gpus=gpus,
            last_seen_ms_ago=last_seen_ms_ago,
            mem_mib=mem_mib,
            name=name,
            state=state,
            addr=addr,
            containment=containment,
            drain=drain,
            features=features,
            free_cpu_milli=free_cpu_milli,
            free_mem_mib=free_mem_mib,
            free_resources=free_resources,
            gpu_health=gpu_health,
            gpu_links=gpu_links,
            location=location,
            mps=mps,
            partitions=partitions,
            resources=resources,
            telemetry=telemetry,
        )

        node_view.additional_properties = d
        return node_view

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
