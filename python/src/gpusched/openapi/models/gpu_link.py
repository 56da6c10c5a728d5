from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from typing_extensions import Self

from attrs import define as _attrs_define

from ..models.link_kind import LinkKind

T = TypeVar("T", bound="GpuLink")


@_attrs_define
class GpuLink:
    """The link between two GPUs of a node (by NVML index, `a < b`). A node reports every
    pair it knows; a pair it does not report counts as [`LinkKind::System`].

        Attributes:
            a (int):
            b (int):
            kind (LinkKind): How two GPUs of one node are linked, best first (NVML's topology levels, NVLink
                above them). Placement prefers GPUs that share the best link.
    """

    a: int
    b: int
    kind: LinkKind

    def to_dict(self) -> dict[str, Any]:
        a = self.a

        b = self.b

        kind = self.kind.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "a": a,
                "b": b,
                "kind": kind,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        a = d.pop("a")

        b = d.pop("b")

        kind = LinkKind(d.pop("kind"))

        gpu_link = cls(
            a=a,
            b=b,
            kind=kind,
        )

        return gpu_link
