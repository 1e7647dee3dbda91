"""What every viewer request and answer passes besides who is asking (`app.py`): the headers that keep
the pages out of other sites' frames, whose a state-changing request is (its `Origin`), and how much
of a posted form is read.

A probe of the viewer (session 40) found each missing: any web site could frame the viewer, under a
decoy button, and have a person's click edit the vault as them (no `frame-ancestors`, no
`X-Frame-Options`); a page on another port of the same host posted edits the viewer accepted — the
`Origin` allow-list of `/mcp` admits every port of the loopback names (`127.0.0.1:*`), and a browser
sends a host's cookies to all its ports; a 300 MB post to `/ui/login` without a token was read whole
into memory before it was refused.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from starlette.types import Message, Receive, Scope, Send

#: The most of a posted form the viewer reads (bytes, as sent). The longest form a page offers is a
#: flag's reason (`REASON_CHARS`, each character at most 9 bytes once form-encoded) with a 128-character
#: initiative name twice (in `i` and `back`) and the short fields: under 45 KiB.
BODY_LIMIT = 64 * 1024
#: The most characters a page's reason or resolution box takes (the browser stops typing there).
REASON_CHARS = 4000

#: Content-Security-Policy: the pages run no script and load only their own stylesheet; no other
#: site may frame them, and their forms post only to the viewer.
POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
#: Sent with every answer. `Referrer-Policy: same-origin`, not `no-referrer`: under `no-referrer` a
#: browser sends a form post's `Origin` as `null` (the Fetch standard), and the viewer's own forms
#: would be refused by the Origin check below; `same-origin` still tells no other site a viewer URL
#: (they hold node ids, and the sign-in link a token).
HEADERS = [
    (b"content-security-policy", POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]


def with_headers(send: Send) -> Send:
    """`send`, adding `HEADERS` to the answer's start."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
        await send(message)

    return sending


def own_origins(scope: Scope, host: str) -> tuple[str, ...]:
    """The viewer's own origin for a request: the scheme it came by and the `Host` it was sent to
    (which passed the host check). Over plain HTTP, `https://` with the same host and port too: a
    TLS-terminating proxy in front (decision 180) forwards a browser's `https://` form as plain HTTP,
    and nothing else can serve HTTPS on the very host and port this request was sent to."""
    scheme = str(scope.get("scheme") or "http")
    own = f"{scheme}://{host}".lower()
    return (own, f"https://{host}".lower()) if scheme == "http" else (own,)


def foreign_post(scope: Scope, headers: dict[str, str], admitted: Callable[[str], bool]) -> str | None:
    """Why a state-changing request is refused as not sent by the viewer's own pages, or None. Its
    `Origin` (or, without one, its `Referer`'s origin) must be exactly the viewer's own
    (`own_origins`), not any port of the host as `/mcp`'s allow-list admits — or one the operator
    `admitted` (a proxy's public name, KAERU_ALLOWED_HOSTS: a proxy may send its own `Host`)."""
    own = own_origins(scope, headers.get("host", ""))
    origin = headers.get("origin")
    if origin is not None:
        if origin.strip().lower() in own or admitted(origin.strip().lower()):
            return None
        return f"it came from {origin.strip()!r}, not from this viewer ({own[0]})"
    referer = headers.get("referer")
    if referer:
        parts = urlsplit(referer.strip())
        sender = f"{parts.scheme}://{parts.netloc}".lower()
        if sender in own or admitted(sender):
            return None
        return f"it came from a page of {parts.scheme}://{parts.netloc}, not from this viewer ({own[0]})"
    return "it said neither where it came from (no Origin) nor which page sent it (no Referer)"


def declared_too_large(headers: dict[str, str]) -> bool:
    """True when a request's declared `Content-Length` is over `BODY_LIMIT` (or not a length)."""
    declared = headers.get("content-length")
    if declared is None:
        return False
    return not declared.strip().isdigit() or int(declared) > BODY_LIMIT


async def read_body(receive: Receive) -> bytes | None:
    """The request's body, read as it comes and counted (a chunked body declares no length), or None
    once it passes `BODY_LIMIT` or the client leaves before sending it all: never read further."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body: bytes = message.get("body", b"")
        size += len(body)
        if size > BODY_LIMIT:
            return None
        chunks.append(body)
        if not message.get("more_body", False):
            return b"".join(chunks)
