from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.launch import Launch


T = TypeVar("T", bound="StepLaunch")


@_attrs_define
class StepLaunch:
    """A step the server wants a node to run (agent protocol 6, [`crate::Desired::steps`]):
    the agent starts its tasks once, with the job's environment, identity and GPUs,
    opens the step's stream, and kills them when the step is no longer listed.

        Attributes:
            command (list[str]):
            first_rank (int):
            launch (Launch): Everything the agent needs to start one attempt.
            ntasks (int):
            pty (bool):
            step (int):
            tasks (int): Tasks on this node, ranked `first_rank..first_rank + tasks` of `ntasks`.
            cols (int | Unset):
            rows (int | Unset):
            term (None | str | Unset):
    """

    command: list[str]
    first_rank: int
    launch: Launch
    ntasks: int
    pty: bool
    step: int
    tasks: int
    cols: int | Unset = UNSET
    rows: int | Unset = UNSET
    term: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        command = self.command

        first_rank = self.first_rank

        launch = self.launch.to_dict()

        ntasks = self.ntasks

        pty = self.pty

        step = self.step

        tasks = self.tasks

        cols = self.cols

        rows = self.rows

        term: None | str | Unset
        if isinstance(self.term, Unset):
            term = UNSET
        else:
            term = self.term

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "command": command,
                "first_rank": first_rank,
                "launch": launch,
                "ntasks": ntasks,
                "pty": pty,
                "step": step,
                "tasks": tasks,
            }
        )
        if cols is not UNSET:
            field_dict["cols"] = cols
        if rows is not UNSET:
            field_dict["rows"] = rows
        if term is not UNSET:
            field_dict["term"] = term

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.launch import Launch

        d = dict(src_dict)
        command = cast(list[str], d.pop("command"))

        first_rank = d.pop("first_rank")

        launch = Launch.from_dict(d.pop("launch"))

        ntasks = d.pop("ntasks")

        pty = d.pop("pty")

        step = d.pop("step")

        tasks = d.pop("tasks")

        cols = d.pop("cols", UNSET)

        rows = d.pop("rows", UNSET)

        def _parse_term(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        term = _parse_term(d.pop("term", UNSET))

        step_launch = cls(
            command=command,
            first_rank=first_rank,
            launch=launch,
            ntasks=ntasks,
            pty=pty,
            step=step,
            tasks=tasks,
            cols=cols,
            rows=rows,
            term=term,
        )

        return step_launch
