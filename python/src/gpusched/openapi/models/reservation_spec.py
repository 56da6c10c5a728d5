from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ReservationSpec")


@_attrs_define
class ReservationSpec:
    """A reservation to create, or (`PUT /api/reservations/{name}`) its new terms.

    Attributes:
        duration_s (int): How long it lasts, seconds (at least 60, at most 366 days).
        name (str): 1-64 letters, digits, `_`, `-` and `.`, starting with a letter or digit.
        start_ms (int): When the window opens, milliseconds since the Unix epoch (the CLI takes
            `2026-12-11T09:00`, `+2h` or `now`).
        features (None | str | Unset): With `gpus`: only nodes with these features (a constraint, as jobs'
            `--constraint`).
        gpu_model (None | str | Unset): With `gpus`: only nodes whose GPUs are of this model (a prefix, as jobs ask).
        gpus (int | None | Unset): Or: at least this many GPUs, on whole nodes the server picks when it is created
            (the fewest nodes that hold them, of `gpu_model` and with `features` if given).
        maintenance (bool | Unset): A maintenance window: no job at all runs on its nodes in it, and the nodes are
            drained as it opens (their running jobs are asked to stop, with the checkpoint
            contract's grace).
        nodes (list[str] | Unset): The nodes it holds, by name. Either this or `gpus`.
        queues (list[str] | Unset): Queues whose jobs may run in it.
        users (list[str] | Unset): Users who may run jobs in it (with `queues`: either lets a job in). Both empty:
            only admins' jobs.
    """

    duration_s: int
    name: str
    start_ms: int
    features: None | str | Unset = UNSET
    gpu_model: None | str | Unset = UNSET
    gpus: int | None | Unset = UNSET
    maintenance: bool | Unset = UNSET
    nodes: list[str] | Unset = UNSET
    queues: list[str] | Unset = UNSET
    users: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        duration_s = self.duration_s

        name = self.name

        start_ms = self.start_ms

        features: None | str | Unset
        if isinstance(self.features, Unset):
            features = UNSET
        else:
            features = self.features

        gpu_model: None | str | Unset
        if isinstance(self.gpu_model, Unset):
            gpu_model = UNSET
        else:
            gpu_model = self.gpu_model

        gpus: int | None | Unset
        if isinstance(self.gpus, Unset):
            gpus = UNSET
        else:
            gpus = self.gpus

        maintenance = self.maintenance

        nodes: list[str] | Unset = UNSET
        if not isinstance(self.nodes, Unset):
            nodes = self.nodes

        queues: list[str] | Unset = UNSET
        if not isinstance(self.queues, Unset):
            queues = self.queues

        users: list[str] | Unset = UNSET
        if not isinstance(self.users, Unset):
            users = self.users

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "duration_s": duration_s,
                "name": name,
                "start_ms": start_ms,
            }
        )
        if features is not UNSET:
            field_dict["features"] = features
        if gpu_model is not UNSET:
            field_dict["gpu_model"] = gpu_model
        if gpus is not UNSET:
            field_dict["gpus"] = gpus
        if maintenance is not UNSET:
            field_dict["maintenance"] = maintenance
        if nodes is not UNSET:
            field_dict["nodes"] = nodes
        if queues is not UNSET:
            field_dict["queues"] = queues
        if users is not UNSET:
            field_dict["users"] = users

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        duration_s = d.pop("duration_s")

        name = d.pop("name")

        start_ms = d.pop("start_ms")

        def _parse_features(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        features = _parse_features(d.pop("features", UNSET))

        def _parse_gpu_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        gpu_model = _parse_gpu_model(d.pop("gpu_model", UNSET))

        def _parse_gpus(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        gpus = _parse_gpus(d.pop("gpus", UNSET))

        maintenance = d.pop("maintenance", UNSET)

        nodes = cast(list[str], d.pop("nodes", UNSET))

        queues = cast(list[str], d.pop("queues", UNSET))

        users = cast(list[str], d.pop("users", UNSET))

        reservation_spec = cls(
            duration_s=duration_s,
            name=name,
            start_ms=start_ms,
            features=features,
            gpu_model=gpu_model,
            gpus=gpus,
            maintenance=maintenance,
            nodes=nodes,
            queues=queues,
            users=users,
        )

        return reservation_spec
