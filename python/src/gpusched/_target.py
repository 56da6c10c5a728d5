"""Where the server is and who the caller is, found as the `gpusched` CLI finds them
(crates/cli/src/client.rs, `Target::resolve`):

1. the `server` argument, else `$GPUSCHED_SERVER`: `unix:PATH` for a server's socket, or
   one or more `http(s)://HOST:PORT`, comma-separated, for servers that fail over;
2. else the local server's socket, `$XDG_DATA_HOME/gpusched/gpusched.sock` (by default
   `~/.local/share/gpusched/gpusched.sock`) if it exists;
3. else `http://127.0.0.1:6450`.

Over TCP the token is the `token` argument, else `$GPUSCHED_TOKEN`, else the file
`$XDG_CONFIG_HOME/gpusched/token` (`~/.config/gpusched/token`). The socket needs no token:
the server knows the caller by its uid. `$GPUSCHED_CA_CERT` names a PEM file to trust
besides the system's roots, as the CLI's `--ca-cert`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

from .errors import ConfigError

DEFAULT_PORT = 6450
SOCKET_NAME = "gpusched.sock"


def _xdg(var: str, default: str) -> Path:
    v = os.environ.get(var)
    if v and os.path.isabs(v):
        return Path(v)
    return Path.home() / default


def default_socket() -> Path:
    return _xdg("XDG_DATA_HOME", ".local/share") / "gpusched" / SOCKET_NAME


def token_file() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / "gpusched" / "token"


def _read_token_file() -> Optional[str]:
    try:
        t = token_file().read_text().strip()
    except OSError:
        return None
    return t or None


@dataclass
class Target:
    """How to reach the server: a socket, or one or more TCP servers."""

    socket: Optional[Path] = None
    servers: List[str] = field(default_factory=list)
    token: Optional[str] = None
    ca_cert: Optional[str] = None

    def shown(self) -> str:
        if self.socket is not None:
            return f"unix:{self.socket}"
        return ",".join(self.servers)


def parse_servers(spec: str) -> List[str]:
    """`http://a:1,https://b:2/` as a list of origins; any other scheme is refused,
    naming every form the server may be given in."""
    servers = []
    for part in spec.split(","):
        part = part.strip().rstrip("/")
        if not part:
            continue
        if not (part.startswith("http://") or part.startswith("https://")):
            raise ConfigError(
                f"server {part!r} is not one gpusched can reach: give unix:PATH for a "
                f"server's socket (DATA_DIR/{SOCKET_NAME}), or http://HOST:PORT or "
                "https://HOST:PORT, several comma-separated for servers that fail over"
            )
        if part not in servers:
            servers.append(part)
    if not servers:
        raise ConfigError(f"no server in {spec!r}: give unix:PATH or http(s)://HOST:PORT")
    return servers


def resolve(server: Optional[str] = None, token: Optional[str] = None, ca_cert: Optional[str] = None) -> Target:
    server = server if server is not None else os.environ.get("GPUSCHED_SERVER") or None
    token = token if token is not None else os.environ.get("GPUSCHED_TOKEN") or None
    ca_cert = ca_cert if ca_cert is not None else os.environ.get("GPUSCHED_CA_CERT") or None
    if server is not None:
        if server.startswith("unix:"):
            return Target(socket=Path(server[len("unix:") :]), ca_cert=ca_cert)
        return Target(servers=parse_servers(server), token=token or _read_token_file(), ca_cert=ca_cert)
    sock = default_socket()
    if sock.exists():
        return Target(socket=sock, ca_cert=ca_cert)
    return Target(
        servers=[f"http://127.0.0.1:{DEFAULT_PORT}"], token=token or _read_token_file(), ca_cert=ca_cert
    )
