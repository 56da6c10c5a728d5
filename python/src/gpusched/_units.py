"""Durations and sizes as the CLI reads them (crates/wire/src/duration.rs; `--mem`)."""

from __future__ import annotations

import datetime
import re
from typing import Union

from .errors import ConfigError

_UNITS = (
    (("w", "week", "weeks"), 7 * 86400),
    (("d", "day", "days"), 86400),
    (("h", "hr", "hrs", "hour", "hours"), 3600),
    (("m", "min", "mins", "minute", "minutes"), 60),
    (("s", "sec", "secs", "second", "seconds"), 1),
)
_UNIT_OF = {name: secs for names, secs in _UNITS for name in names}


def seconds(value: Union[str, int, float, datetime.timedelta], what: str = "walltime") -> int:
    """`90`, `"90s"`, `"15m"`, `"2h30m"`, `"1d 12h"`, Slurm's `"MM:SS"`, `"HH:MM:SS"`,
    `"D-HH:MM:SS"`, or a timedelta, in whole seconds (at least 1)."""
    if isinstance(value, datetime.timedelta):
        secs = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        secs = float(value)
    elif isinstance(value, str):
        secs = float(_parse(value.strip(), what))
    else:
        raise ConfigError(f"{what} {value!r}: give seconds, a string such as '2h30m', or a timedelta")
    if secs <= 0:
        raise ConfigError(f"{what} {value!r} is not positive")
    return max(1, int(round(secs)))


def _parse(s: str, what: str) -> int:
    bad = ConfigError(
        f"{what} {s!r} is not a duration: write seconds (90), units (15m, 2h30m, 1d 12h) "
        "or Slurm's MM:SS, HH:MM:SS, D-HH:MM:SS"
    )
    if s.isdigit():
        return int(s)
    if ":" in s:
        days = 0
        if "-" in s:
            d, s = s.split("-", 1)
            if not d.isdigit():
                raise bad
            days = int(d)
        parts = s.split(":")
        if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
            raise bad
        nums = [int(p) for p in parts]
        if len(nums) == 2:
            h, m, sec = (0, nums[0], nums[1]) if days == 0 else (nums[0], nums[1], 0)
        else:
            h, m, sec = nums
        return days * 86400 + h * 3600 + m * 60 + sec
    total, seen = 0, set()
    for num, unit in re.findall(r"(\d+)\s*([a-zA-Z]+)\s*", s):
        secs = _UNIT_OF.get(unit.lower())
        if secs is None or secs in seen:
            raise bad
        seen.add(secs)
        total += int(num) * secs
    if re.sub(r"(\d+)\s*([a-zA-Z]+)\s*", "", s) != "" or not seen:
        raise bad
    return total


_SIZE = re.compile(r"^(\d{1,8})(?:\.(\d{1,6}))?\s*([KMGT]?)(i?B)?$", re.I)
_MIB_PER = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}


def mib(value: Union[str, int, float], what: str = "mem") -> int:
    """Memory in MiB: an int is MiB; a string such as `"16G"`, `"1.5GiB"`, `"512M"`."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        n = int(value)
    elif isinstance(value, str):
        m = _SIZE.match(value.strip())
        if not m:
            raise ConfigError(f"{what} {value!r} is not a size: write MiB (512) or a unit (16G, 1.5GiB, 512M)")
        num = float(f"{m.group(1)}.{m.group(2) or 0}")
        n = int(round(num * _MIB_PER[m.group(3).upper()]))
    else:
        raise ConfigError(f"{what} {value!r}: give MiB as an int or a string such as '16G'")
    if n < 1:
        raise ConfigError(f"{what} {value!r} is less than 1 MiB")
    return n
