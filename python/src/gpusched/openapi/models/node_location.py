from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from typing_extensions import Self

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="NodeLocation")


@_attrs_define
class NodeLocation:
    """Where a node sits in the network, as its agent says (`--switch`, `--rack`) or the
    server's topology file overrides. Nodes under one switch are one hop apart; placement
    keeps a gang under as few switches as it can.

        Attributes:
            rack (None | str | Unset):
            switch (None | str | Unset):
    """

    rack: None | str | Unset = UNSET
    switch: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        rack: None | str | Unset
        if isinstance(self.rack, Unset):
            rack = UNSET
        else:
            rack = self.rack

        switch: None | str | Unset
        if isinstance(self.switch, Unset):
            switch = UNSET
        else:
            switch = self.switch

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if rack is not UNSET:
            field_dict["rack"] = rack
        if switch is not UNSET:
            field_dict["switch"] = switch

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_rack(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        rack = _parse_rack(d.pop("rack", UNSET))

        def _parse_switch(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast("None | str | Unset", data)

        switch = _parse_switch(d.pop("switch", UNSET))

        node_location = cls(
            rack=rack,
            switch=switch,
        )

        return node_location
