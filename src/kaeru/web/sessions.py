"""What the viewer keeps between requests, in the app object (one table each, bounded): who is signed
in (`Sessions`) and what each edit did (`Notices`).

The sign-in cookie held the bearer token itself. A browser sends a host's cookies to every port of
that host (`SameSite` does not tell ports apart and `Path` is the requester's choice), so any server
on another port the browser visited was sent the token — which also works on `/mcp`, for every tool
and the export. The cookie now holds a random session id, useless anywhere but this viewer's `/ui`.

A session keeps the token's digest and the token sealed with a key derived from the session id: the
table alone does not hold the token, the cookie alone is not it, and each request still checks the
token with the server's verifier (`Backend.verify` takes a token, not a digest; an identity
provider's tokens expire), so a token revoked or changed ends its sessions at their next request.
Both tables are keyed by a digest of the random id, so neither holds an id that could be replayed.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

#: Sessions one viewer keeps; past it the least recently used is dropped (signed out).
SESSIONS_KEPT = 1024
#: A session unused this long (seconds) is ended: the browser left open over a night signs in again.
IDLE_SECONDS = 12 * 3600
#: Edit outcomes kept for the page an edit returns to; past it the oldest is dropped.
NOTICES_KEPT = 512


def _lookup(secret: str) -> str:
    """A table's key for a random id: its digest (the id itself is kept only by the browser)."""
    return hashlib.sha256(b"kaeru-ui-id\0" + secret.encode()).hexdigest()


def _pad(secret: str, size: int) -> bytes:
    """A one-time key stream of `size` bytes from a session's id (SHAKE-256, its own domain)."""
    return hashlib.shake_256(b"kaeru-ui-seal\0" + secret.encode()).digest(size)


def _seal(token: str, secret: str) -> bytes:
    data = token.encode()
    return bytes(a ^ b for a, b in zip(data, _pad(secret, len(data)), strict=True))


def _unseal(sealed: bytes, secret: str) -> str:
    return bytes(a ^ b for a, b in zip(sealed, _pad(secret, len(sealed)), strict=True)).decode("utf-8", "replace")


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Session:
    """One sign-in: the token sealed (`_seal`) and its digest, the session's CSRF token for its
    forms, and when it was last used (the clock's reading)."""

    sealed: bytes
    digest: str
    csrf: str
    used: float


@dataclass
class Found:
    """A session found by its cookie: the session, its table key and the token it was opened with."""

    session: Session
    key: str
    token: str


class Sessions:
    """The signed-in browsers of one viewer: opened by a sign-in, found by the cookie's id, ended by
    sign-out, by `IDLE_SECONDS` unused, by a refused token, or dropped, least recently used first,
    past `SESSIONS_KEPT`."""

    def __init__(
        self, kept: int = SESSIONS_KEPT, idle: float = IDLE_SECONDS, clock: Callable[[], float] = time.monotonic
    ):
        self.kept = kept
        self.idle = idle
        self.clock = clock
        self._table: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._table)

    def open(self, token: str) -> tuple[str, Session]:
        """A new session for `token`: (the id for the cookie, the session)."""
        secret = secrets.token_urlsafe(32)
        now = self.clock()
        self._expire(now)
        while len(self._table) >= self.kept:
            self._table.popitem(last=False)
        session = Session(_seal(token, secret), token_digest(token), secrets.token_urlsafe(24), now)
        self._table[_lookup(secret)] = session
        return secret, session

    def find(self, secret: str) -> Found | None:
        """The session of a cookie's id (its token unsealed), or None: unknown, ended or idle too long."""
        now = self.clock()
        self._expire(now)
        key = _lookup(secret)
        session = self._table.get(key)
        if session is None:
            return None
        token = _unseal(session.sealed, secret)
        if not hmac.compare_digest(token_digest(token), session.digest):
            return None
        session.used = now
        self._table.move_to_end(key)
        return Found(session, key, token)

    def close(self, key: str) -> None:
        """End the session whose table key is `key` (sign-out, a refused token)."""
        self._table.pop(key, None)

    def _expire(self, now: float) -> None:
        """Drop the sessions unused for `idle` seconds: the least recently used come first."""
        while self._table:
            key, oldest = next(iter(self._table.items()))
            if now - oldest.used < self.idle:
                return
            del self._table[key]


@dataclass
class Notice:
    text: str
    refused: bool
    owner: str


class Notices:
    """What each edit did, kept here and named in the URL the edit returns to by a short random id
    (`?edited=ID`). The URL carried the text itself, which the page showed as its own alert: a link
    could make the real viewer say "Your sign-in expired, sign in at http://…". A notice is shown
    only to whoever made the edit (`owner`), and an unknown id shows nothing."""

    def __init__(self, kept: int = NOTICES_KEPT):
        self.kept = kept
        self._table: OrderedDict[str, Notice] = OrderedDict()

    def add(self, text: str, refused: bool, owner: str) -> str:
        secret = secrets.token_urlsafe(9)
        while len(self._table) >= self.kept:
            self._table.popitem(last=False)
        self._table[_lookup(secret)] = Notice(text, refused, owner)
        return secret

    def find(self, secret: str, owner: str) -> Notice | None:
        notice = self._table.get(_lookup(secret))
        return notice if notice is not None and hmac.compare_digest(notice.owner, owner) else None
