"""Where the HTTP server listens and who may reach it: loopback or not, the bound socket, and the
Host/Origin allow-list against DNS rebinding (shared by `serve --http` and `kaeru ui`)."""

from __future__ import annotations

import errno
import ipaddress
import socket
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kaeru.config import Settings

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings


#: The most a request to `/mcp` may carry, in bytes: the same bound as one message over stdio (its
#: line reader's limit), so a call valid on one transport is valid on the other — text fields hold up
#: to 4,000,000 characters (decision 14), and a reference's text and source together in UTF-8 pass
#: the SDK's 4 MiB default several times over.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


#: What a JSON-RPC batch is told, on either transport.
BATCH = "Invalid Request: batches are not supported; send each message on its own (a request a POST, a line on stdio)"
#: What a message that is JSON but no object (`42`, `null`, `"x"`) is told, on either transport.
NOT_AN_OBJECT = "Invalid Request: a message is one JSON object"


def too_large(size: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """What a request over the limit is told, on either transport (`size`: how far over)."""
    return (
        f"the request is {size} the {limit // (1024 * 1024)} MiB this server takes in one call "
        "(a text field holds at most 4,000,000 characters): send it in several calls"
    )


#: Addresses that bind every interface of the machine (a socket bound to "" does too: it is not loopback).
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})
#: Linux's ioctl for an interface's IPv4 address.
_SIOCGIFADDR = 0x8915


def bare_host(host: str) -> str:
    """A bind address as the socket layer takes it: an IPv6 address written as a URL writes it
    (`[::1]`) loses its brackets (decision 232)."""
    host = host.strip()
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def is_loopback(host: str) -> bool:
    if host == "localhost":
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


def admitted_hosts(settings: Settings) -> list[str]:
    """The `Host` patterns of the names an operator admitted (`KAERU_ALLOWED_HOSTS`). A name without a
    port: on any port, and without one (a proxy on 443 or 80 sends the bare name, and `name:*`
    matches only a Host that carries a port)."""
    return [name for extra in settings.allowed_hosts for name in ([extra] if ":" in extra else [extra, f"{extra}:*"])]


def security_settings(settings: Settings, host: str, port: int) -> TransportSecuritySettings:
    """Host/Origin allow-list against DNS rebinding: the names the bound `host` is reached by — on
    loopback the address itself (`127.0.0.2` too: the URL the server announces), else `own_names` —
    then the loopback names, plus `KAERU_ALLOWED_HOSTS`. Only names and addresses of this machine: a
    rebinding page's Host is its own name, which none of these is. The bound host's names come first,
    as a refused request is told the names in this order."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = [reachable_as(host)] if is_loopback(host) else own_names(host)
    hosts = [f"{name}:*" for name in names]
    hosts.extend(name for name in ("127.0.0.1:*", "localhost:*", "[::1]:*") if name not in hosts)
    hosts.extend(admitted_hosts(settings))
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def reachable_as(host: str) -> str:
    """How a client names a server bound to `host` in a URL: bound to every interface, by this
    machine's host name (`0.0.0.0` reaches nothing from another machine); IPv6 in brackets."""
    if host.strip() in _WILDCARDS:
        return socket.gethostname()
    return f"[{host}]" if ":" in host else host


def own_names(host: str) -> list[str]:
    """The names a client reaches a server bound to a non-loopback `host` by, as a Host header
    spells them: `host` itself, this machine's host name and fully qualified name — and, bound to
    every interface (`0.0.0.0`, `::`), each interface's address (IPv6 in brackets). A name this
    misses (a proxy's, a DNS alias) is added with `KAERU_ALLOWED_HOSTS`; the refusal says so."""
    names = [] if host.strip() in _WILDCARDS else [f"[{host}]" if ":" in host else host]
    names += [socket.gethostname(), socket.getfqdn()]
    if host.strip() in _WILDCARDS:
        names += sorted(_interface_addresses())
    return [name for i, name in enumerate(names) if name and name not in names[:i]]


def _interface_addresses() -> set[str]:
    """The non-loopback addresses of this machine's interfaces, as far as it says without a helper:
    on Linux each interface's IPv4 address and every IPv6 one but link-local; elsewhere what the
    host name resolves to."""
    found: set[str] = set()
    if sys.platform.startswith("linux"):
        import fcntl

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            for _, name in socket.if_nameindex():
                try:
                    answer = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
                except OSError:  # no IPv4 address on it
                    continue
                found.add(socket.inet_ntoa(answer[20:24]))
        try:
            lines = Path("/proc/net/if_inet6").read_text().splitlines()
        except OSError:
            lines = []
        found.update(str(ipaddress.IPv6Address(bytes.fromhex(line.split()[0]))) for line in lines if line.strip())
    else:
        try:
            found.update(str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None))
        except OSError:
            pass
    addresses = (ipaddress.ip_address(a.split("%")[0]) for a in found)
    return {f"[{a}]" if a.version == 6 else str(a) for a in addresses if not (a.is_loopback or a.is_link_local)}
