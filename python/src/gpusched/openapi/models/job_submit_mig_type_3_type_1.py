from __future__ import annotations
from enum import Enum


class StrEnum(str, Enum):
    """enum.StrEnum for Python 3.9 and 3.10 (py39_compat)."""

    def __str__(self) -> str:
        return str(self.value)


class JobSubmitMigType3Type1(StrEnum):
    VALUE_0 = "1g.10gb"
    VALUE_1 = "1g.20gb"
    VALUE_10 = "7g.80gb"
    VALUE_2 = "1g.5gb"
    VALUE_3 = "2g.10gb"
    VALUE_4 = "2g.20gb"
    VALUE_5 = "3g.20gb"
    VALUE_6 = "3g.40gb"
    VALUE_7 = "4g.20gb"
    VALUE_8 = "4g.40gb"
    VALUE_9 = "7g.40gb"

    def __str__(self) -> str:
        return str(self.value)
