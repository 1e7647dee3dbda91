"""Where the HTTP server listens and who may reach it: loopback or not, the bound socket, and the
Host/Origin allow-list against DNS rebinding (shared by `serve --http` and `kaeru ui`)."""

from __future__ import annotations

import errno
import ipaddress
import socket
from typing import TYPE_CHECKING

from kaeru.config import Settings

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:`port` (0: a free port the system picks), bound before the address
    is announced: a port in use is said in one line instead of after "serving … at", and the
    address printed is the one bound (decision 124).

    Raises:
        ValueError: the address cannot be bound (in use, not this machine's, not permitted).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        made = socket.create_server((host, port), family=family, backlog=128)  # SO_REUSEADDR on POSIX
    except OSError as exc:
        hint = (
            "another process listens there: choose another --port"
            if exc.errno == errno.EADDRINUSE
            else "check --host (KAERU_HOST) and --port"
        )
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; {hint}") from None
    # Nagle's algorithm off for every connection accepted: with it on, a response written in two
    # parts (head, then body) waited for the client's delayed ACK on every call of a
    # kept-alive connection, which is how MCP clients call (decision 160). asyncio turns it off only
    # on sockets that say IPPROTO_TCP, and `create_server` leaves `proto` 0; so the listener has
    # TCP_NODELAY itself (accepted connections inherit it on Linux, the BSDs and macOS, where
    # asyncio's own setting does not reach, CPython gh-148783), and is wrapped again from its
    # descriptor, which reads the protocol from the kernel where it can (Linux, FreeBSD).
    made.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return socket.socket(fileno=made.detach())


def security_settings(settings: Settings, host: str, port: int) -> TransportSecuritySettings:
    """Host/Origin allow-list against DNS rebinding: loopback names plus `KAERU_ALLOWED_HOSTS`."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    if not is_loopback(host):
        hosts.append(f"{host}:*")
    for extra in settings.allowed_hosts:
        # A name without a port: on any port, and without one (a proxy on 443 or 80 sends the bare
        # name, and `name:*` matches only a Host that carries a port).
        hosts.extend([extra] if ":" in extra else [extra, f"{extra}:*"])
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)
