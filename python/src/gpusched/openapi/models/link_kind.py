from __future__ import annotations
from enum import Enum


class StrEnum(str, Enum):
    """enum.StrEnum for Python 3.9 and 3.10 (py39_compat)."""

    def __str__(self) -> str:
        return str(self.value)


class LinkKind(StrEnum):
    HOST_BRIDGE = "host_bridge"
    NUMA = "numa"
    NV_LINK = "nv_link"
    NV_SWITCH = "nv_switch"
    PCIE_MULTI = "pcie_multi"
    PCIE_SWITCH = "pcie_switch"
    SYSTEM = "system"

    def __str__(self) -> str:
        return str(self.value)
