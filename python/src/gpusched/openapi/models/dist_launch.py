from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.dist_host import DistHost


T = TypeVar("T", bound="DistLaunch")


@_attrs_define
class DistLaunch:
    """The launch environment of one part of a job (every job with GPUs has one: a job on
    one node is a gang of one).

        Attributes:
            gpus_per_node (int): Whole GPUs on each node (`GPUS_PER_NODE`).
            nnodes (int): Nodes the job runs on (`NNODES`).
            node_rank (int): This part's position among them, 0 on the first node (`NODE_RANK`).
            hosts (list[DistHost] | Unset): Every node in rank order with its slots, for `GPUSCHED_HOSTFILE`
                (`addr slots=N` lines); empty on a job of one node (the agent writes its own).
            master_addr (None | str | Unset): The first node's address (`MASTER_ADDR`); `None` on a job of one node: the
                agent's own advertised address.
            master_port (int | None | Unset): The port the first node's agent reserved (`MASTER_PORT`); `None` on a job of
                one
                node: the agent picks a free port itself when it starts the job.
            tasks_per_node (int | None | Unset): Processes the agent starts on this node, each with `RANK`, `LOCAL_RANK`,
                `LOCAL_WORLD_SIZE` and its share of the GPUs; `None`: one process (a launcher such
                as `torchrun` that starts the ranks itself).
    """

    gpus_per_node: int
    nnodes: int
    node_rank: int
    hosts: list[DistHost] | Unset = UNSET
    master_addr: None | str | Unset = UNSET
    master_port: int | None | Unset = UNSET
    tasks_per_node: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        gpus_per_node = self.gpus_per_node

        nnodes = self.nnodes

        node_rank = self.node_rank

        hosts: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.hosts, Unset):
            hosts = []
            for hosts_item_data in self.hosts:
                hosts_item = hosts_item_data.to_dict()
                hosts.append(hosts_item)

        master_addr: None | str | Unset
        if isinstance(self.master_addr, Unset):
            master_addr = UNSET
        else:
            master_addr = self.master_addr

        master_port: int | None | Unset
        if isinstance(self.master_port, Unset):
            master_port = UNSET
        else:
            master_port = self.master_port

        tasks_per_node: int | None | Unset
        if isinstance(self.tasks_per_node, Unset):
            tasks_per_node = UNSET
        else:
            tasks_per_node = self.tasks_per_node

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "gpus_per_node": gpus_per_node,
                "nnodes": nnodes,
                "node_rank": node_rank,
            }
        )
        if hosts is not UNSET:
            field_dict["hosts"] = hosts
        if master_addr is not UNSET:
            field_dict["master_addr"] = master_addr
        if master_port is not UNSET:
            field_dict["master_port"] = master_port
        if tasks_per_node is not UNSET:
            field_dict["tasks_per_node"] = tasks_per_node

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.dist_host import DistHost

        d = dict(src_dict)
        gpus_per_node = d.pop("gpus_per_node")

        nnodes = d.pop("nnodes")

        node_rank = d.pop("node_rank")

        _hosts = d.pop("hosts", UNSET)
        hosts: list[DistHost] | Unset = UNSET
        if _hosts is not UNSET:
            hosts = []
            for hosts_item_data in _hosts:
                hosts_item = DistHost.from_dict(hosts_item_data)

                hosts.append(hosts_item)

        def _parse_master_addr(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        master_addr = _parse_master_addr(d.pop("master_addr", UNSET))

        def _parse_master_port(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        master_port = _parse_master_port(d.pop("master_port", UNSET))

        def _parse_tasks_per_node(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        tasks_per_node = _parse_tasks_per_node(d.pop("tasks_per_node", UNSET))

        dist_launch = cls(
            gpus_per_node=gpus_per_node,
            nnodes=nnodes,
            node_rank=node_rank,
            hosts=hosts,
            master_addr=master_addr,
            master_port=master_port,
            tasks_per_node=tasks_per_node,
        )

        return dist_launch
