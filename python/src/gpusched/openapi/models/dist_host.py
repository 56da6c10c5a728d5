from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

T = TypeVar("T", bound="DistHost")


@_attrs_define
class DistHost:
    """One line of the hostfile.

    Attributes:
        addr (str): The node's advertised address.
        slots (int): Processes MPI may start there: `tasks_per_node`, else the node's GPUs.
    """

    addr: str
    slots: int

    def to_dict(self) -> dict[str, Any]:
        addr = self.addr

        slots = self.slots

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "addr": addr,
                "slots": slots,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        addr = d.pop("addr")

        slots = d.pop("slots")

        dist_host = cls(
            addr=addr,
            slots=slots,
        )

        return dist_host
