from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.part_state import PartState
from ..types import UNSET, Unset

T = TypeVar("T", bound="JobPart")


@_attrs_define
class JobPart:
    """Where a part of a running (or ended) job ran, as `show` and the API list them.

    Attributes:
        gpu_indices (list[int]): Node-local GPU indices.
        node (str):
        rank (int): `NODE_RANK`.
        state (PartState): Where one part of a job is in its run.
        addr (None | str | Unset): The node's advertised address.
        exit_code (int | None | Unset): The part's (first failing) process exit status, once it ended by itself.
        signal (int | None | Unset): The signal that killed it, if one did; for a part gpusched stopped, the signal it
            was stopped with (SIGTERM, or the checkpoint signal of a preemption).
    """

    gpu_indices: list[int]
    node: str
    rank: int
    state: PartState
    addr: None | str | Unset = UNSET
    exit_code: int | None | Unset = UNSET
    signal: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        gpu_indices = self.gpu_indices

        node = self.node

        rank = self.rank

        state = self.state.value

        addr: None | str | Unset
        if isinstance(self.addr, Unset):
            addr = UNSET
        else:
            addr = self.addr

        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        signal: int | None | Unset
        if isinstance(self.signal, Unset):
            signal = UNSET
        else:
            signal = self.signal

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "gpu_indices": gpu_indices,
                "node": node,
                "rank": rank,
                "state": state,
            }
        )
        if addr is not UNSET:
            field_dict["addr"] = addr
        if exit_code is not UNSET:
            field_dict["exit_code"] = exit_code
        if signal is not UNSET:
            field_dict["signal"] = signal

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        gpu_indices = cast(list[int], d.pop("gpu_indices"))

        node = d.pop("node")

        rank = d.pop("rank")

        state = PartState(d.pop("state"))

        def _parse_addr(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        addr = _parse_addr(d.pop("addr", UNSET))

        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        exit_code = _parse_exit_code(d.pop("exit_code", UNSET))

        def _parse_signal(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        signal = _parse_signal(d.pop("signal", UNSET))

        job_part = cls(
            gpu_indices=gpu_indices,
            node=node,
            rank=rank,
            state=state,
            addr=addr,
            exit_code=exit_code,
            signal=signal,
        )

        job_part.additional_properties = d
        return job_part

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
