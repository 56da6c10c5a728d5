from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="StepRequest")


@_attrs_define
class StepRequest:
    """`POST /api/jobs/{id}/steps`: a step to run in the job.

    Attributes:
        command (list[str]): The program and its arguments (no shell).
        cols (int | Unset):
        nodes (int | None | Unset): On the first N of the job's nodes (all of them when absent).
        pty (bool | Unset): Run it in a pseudo-terminal (one task, on the first node unless `nodes` says
            otherwise); `cols`/`rows` its first size.
        rows (int | Unset):
        tasks_per_node (int | Unset): Processes per node (Slurm's `--ntasks-per-node`); 1 by default.
        term (None | str | Unset): `TERM` for a pseudo-terminal.
    """

    command: list[str]
    cols: int | Unset = UNSET
    nodes: int | None | Unset = UNSET
    pty: bool | Unset = UNSET
    rows: int | Unset = UNSET
    tasks_per_node: int | Unset = UNSET
    term: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        command = self.command

        cols = self.cols

        nodes: int | None | Unset
        if isinstance(self.nodes, Unset):
            nodes = UNSET
        else:
            nodes = self.nodes

        pty = self.pty

        rows = self.rows

        tasks_per_node = self.tasks_per_node

        term: None | str | Unset
        if isinstance(self.term, Unset):
            term = UNSET
        else:
            term = self.term

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "command": command,
            }
        )
        if cols is not UNSET:
            field_dict["cols"] = cols
        if nodes is not UNSET:
            field_dict["nodes"] = nodes
        if pty is not UNSET:
            field_dict["pty"] = pty
        if rows is not UNSET:
            field_dict["rows"] = rows
        if tasks_per_node is not UNSET:
            field_dict["tasks_per_node"] = tasks_per_node
        if term is not UNSET:
            field_dict["term"] = term

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        command = cast(list[str], d.pop("command"))

        cols = d.pop("cols", UNSET)

        def _parse_nodes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("int | None | Unset", data)

        nodes = _parse_nodes(d.pop("nodes", UNSET))

        pty = d.pop("pty", UNSET)

        rows = d.pop("rows", UNSET)

        tasks_per_node = d.pop("tasks_per_node", UNSET)

        def _parse_term(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        term = _parse_term(d.pop("term", UNSET))

        step_request = cls(
            command=command,
            cols=cols,
            nodes=nodes,
            pty=pty,
            rows=rows,
            tasks_per_node=tasks_per_node,
            term=term,
        )

        return step_request
