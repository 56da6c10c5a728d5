"""Makes the generated OpenAPI client importable on Python 3.9 and 3.10.

openapi-python-client 0.29.1 (pinned in scripts/openapi_client_check.sh) writes code for
Python 3.11: `typing.Self`, and `X | Y` unions evaluated at run time (in `cast(...)` and
in the type aliases of `types.py`). This rewrite is mechanical and deterministic, so the
committed client stays exactly what scripts/python_client_generate.sh makes:

- every module gets `from __future__ import annotations` (annotations are then strings);
- `Self` comes from typing_extensions (a dependency of the package);
- `cast(A | B, x)` becomes `cast("A | B", x)`;
- the unions of `types.py` are spelled with `typing.Union` / `typing.Optional`;
- `enum.StrEnum` (3.11) is a `str, Enum` subclass whose `str()` is its value, as StrEnum's.

A pattern this script expects and no longer finds fails the run, naming it, so a new
generator version cannot slip code past it unconverted.

Usage: python py39_compat.py PACKAGE_DIR
"""

import re
import sys
from pathlib import Path

FUTURE = "from __future__ import annotations\n"
CAST = re.compile(r"cast\(((?:[A-Za-z_][A-Za-z0-9_.\[\], ]*\s*\|\s*)+[A-Za-z_][A-Za-z0-9_.\[\], ]*?), ")

# types.py: its run-time aliases, as 0.29.1 writes them, and their 3.9 spelling.
TYPES_ALIASES = (
    (
        "FileContent = IO[bytes] | bytes | str\n",
        "FileContent = Union[IO[bytes], bytes, str]\n",
    ),
    (
        "    tuple[str | None, FileContent, str | None]\n",
        "    Union[tuple[Optional[str], FileContent, Optional[str]],\n",
    ),
    (
        "    | tuple[str | None, FileContent, str | None, Mapping[str, str]]\n",
        "    tuple[Optional[str], FileContent, Optional[str], Mapping[str, str]]]\n",
    ),
    (
        "from typing import IO, BinaryIO, Generic, Literal, TypeVar\n",
        "from typing import IO, BinaryIO, Generic, Literal, Optional, TypeVar, Union\n",
    ),
)


def add_future(text: str) -> str:
    if FUTURE in text:
        return text
    # After a module docstring, if there is one.
    m = re.match(r'(\s*"""(?:.|\n)*?"""\n)', text)
    if m:
        return m.group(1) + "\n" + FUTURE + text[m.end():]
    return FUTURE + text


def fix_self(text: str) -> str:
    def repl(m: "re.Match[str]") -> str:
        names = [n.strip() for n in m.group(1).split(",")]
        rest = [n for n in names if n != "Self"]
        out = f"from typing import {', '.join(rest)}\n" if rest else ""
        return out + "\nfrom typing_extensions import Self\n"

    return re.sub(r"^from typing import ([^\n]*\bSelf\b[^\n]*)\n", repl, text, flags=re.M)


STRENUM_IMPORT = "from enum import StrEnum\n"
STRENUM_LOCAL = (
    "from enum import Enum\n\n\n"
    "class StrEnum(str, Enum):\n"
    "    \"\"\"enum.StrEnum for Python 3.9 and 3.10 (py39_compat).\"\"\"\n\n"
    "    def __str__(self) -> str:\n"
    "        return str(self.value)\n"
)


def main() -> None:
    root = Path(sys.argv[1])
    files = sorted(root.rglob("*.py"))
    if not files:
        sys.exit(f"{root}: no Python files to convert")
    for path in files:
        text = path.read_text()
        if path.name == "types.py" and path.parent == root:
            for old, new in TYPES_ALIASES:
                if old not in text:
                    sys.exit(f"{path}: expected {old.strip()!r} (the generator's output changed; "
                             "update python/tools/py39_compat.py)")
                text = text.replace(old, new)
        text = text.replace(STRENUM_IMPORT, STRENUM_LOCAL)
        text = fix_self(text)
        text = CAST.sub(lambda m: f'cast("{m.group(1)}", ', text)
        text = add_future(text)
        path.write_text(text)
    # What 3.9 cannot run must be gone: a union evaluated outside annotations.
    leftovers = []
    for path in files:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bcast\([^\"]*\|", line) or re.search(r"^from typing import .*\bSelf\b", line) or line.startswith(STRENUM_IMPORT.strip()):
                leftovers.append(f"{path}:{n}: {line.strip()}")
    if leftovers:
        sys.exit("py39_compat left code Python 3.9 cannot run:\n  " + "\n  ".join(leftovers))


if __name__ == "__main__":
    main()
