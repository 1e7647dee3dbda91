"""Which account is on the other end of a loopback connection, so that a server with no token serves
only the account that runs it (decision 178).

Loopback is not one person: on a shared machine every account can connect to 127.0.0.1. With no
token anywhere, `kaeru serve --http` used to serve any of them as the local admin — every note,
decision and source of the vault, readable and writable. On Linux the kernel says who owns the
client's end of a TCP connection; SQLite's file modes already keep the vault itself to its owner
(decision 177), so the door over HTTP is kept the same.

The owner is asked of the kernel's socket diagnostics (netlink `sock_diag`, what `ss` uses) for the
one connection, by its addresses and ports: a hash look-up. `/proc/net/tcp` says the same, but the
kernel walks its whole socket table to print it, a cost that grows with the machine's memory and
connections, and this runs on every request made without a token (decision 178 has the figures).
"""

from __future__ import annotations

import errno
import os
import socket
import struct
import sys
from typing import Any

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST = 1
NLMSG_ERROR = 2
#: `struct nlmsghdr`: length, type, flags, sequence, port id.
_HEADER = struct.Struct("=IHHII")
#: `struct inet_diag_req_v2` up to its socket id: family, protocol, extensions, pad, states.
_REQUEST = struct.Struct("=BBBBI")
#: `struct inet_diag_sockid`: ports and addresses in network order, interface, cookie.
_SOCKID = struct.Struct(">HH16s16s")
_SOCKID_REST = struct.Struct("=III")
#: No cookie to match: the look-up is by addresses and ports alone.
_NO_COOKIE = 0xFFFFFFFF
#: Where `idiag_uid` sits in a reply: header, four bytes of state, the socket id, expires and queues;
#: `idiag_inode` follows it.
_UID_AT = _HEADER.size + 4 + _SOCKID.size + _SOCKID_REST.size + 12
#: Answered when this system cannot be asked at all (not Linux, or a sandbox without socket
#: diagnostics): what a system lacks, never what a caller can bring about.
UNKNOWN = -1
#: How creating a netlink socket fails where socket diagnostics do not exist or are forbidden. Any
#: other failure (no descriptors left, no memory) can be caused by another account — by holding
#: connections open — and refuses the request instead (found in review).
_UNSUPPORTED = frozenset({errno.EAFNOSUPPORT, errno.EPROTONOSUPPORT, errno.EPERM, errno.EACCES})


def _packed(host: str) -> tuple[int, bytes]:
    """The address family of `host` and the address as the 16 bytes the socket id holds."""
    if ":" in host:
        return socket.AF_INET6, socket.inet_pton(socket.AF_INET6, host)
    return socket.AF_INET, socket.inet_aton(host).ljust(16, b"\0")


def owner(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid owning the TCP socket at `client` connected to `server` (a connection to this
    process: its client's end); None when there is no such connection; `UNKNOWN` when the kernel
    cannot be asked."""
    if not sys.platform.startswith("linux"):
        return UNKNOWN
    try:
        family, source = _packed(client[0])
        _, destination = _packed(server[0])
    except OSError:
        return None  # not an IP address: not a TCP peer of ours
    request = (
        _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF)
        + _SOCKID.pack(client[1], server[1], source, destination)
        + _SOCKID_REST.pack(0, _NO_COOKIE, _NO_COOKIE)
    )
    message = _HEADER.pack(_HEADER.size + len(request), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, 1, 0) + request
    try:
        asking = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, NETLINK_SOCK_DIAG)
    except AttributeError:  # a build without AF_NETLINK
        return UNKNOWN
    except OSError as exc:
        return UNKNOWN if exc.errno in _UNSUPPORTED else None
    try:
        with asking:
            asking.sendto(message, (0, 0))
            reply = asking.recv(8192)
    except OSError:
        return None
    if len(reply) < _UID_AT + 8 or _HEADER.unpack_from(reply)[1] != SOCK_DIAG_BY_FAMILY:
        return None  # NLMSG_ERROR (ENOENT: no such connection), or nothing that can be read
    uid, inode = struct.unpack_from("=II", reply, _UID_AT)
    # A socket its process has closed (TIME_WAIT, orphaned) has no inode, and the kernel reports it
    # as owned by uid 0: it would pass for root's own (found in review). Nobody waits for the answer.
    return int(uid) if inode else None


def owners_known() -> bool:
    """Whether this system says who owns a loopback connection (`owner` answers no `UNKNOWN`): asked
    once at start-up, so that a server without a token that every local account may use says so."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, NETLINK_SOCK_DIAG).close()
    except AttributeError:  # a build without AF_NETLINK
        return False
    except OSError as exc:
        return exc.errno not in _UNSUPPORTED
    return True


def same_account(scope: Any) -> bool:
    """True when the HTTP request of ASGI `scope` comes from a live socket of the account this process
    runs as — or when this system cannot say (not Linux, no socket diagnostics: as before 178). A
    look-up that fails on a system that can answer refuses."""
    client, server = scope.get("client"), scope.get("server")
    if not client or not server:
        return False
    found = owner((str(client[0]), int(client[1])), (str(server[0]), int(server[1])))
    return found == UNKNOWN or found == os.getuid()
