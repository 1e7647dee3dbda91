"""What the viewer keeps between requests, in the app object (one table each, bounded): who is signed
in (`Sessions`) and what each edit did (`Notices`).

The sign-in cookie held the bearer token itself. A browser sends a host's cookies to every port of
that host (`SameSite` does not tell ports apart and `Path` is the requester's choice), so any server
on another port the browser visited was sent the token — which also works on `/mcp`, for every tool
and the export. The cookie now holds a random session id, useless anywhere but this viewer's `/ui`.

A session keeps the token's digest and the token sealed with a key derived from the session id: the
table alone does not hold the token, the cookie alone is not it, and each request still checks the
token with the server's verifier (`Backend.verify` takes a token, not a digest; an identity
provider's tokens expire, and so may a vault token: `kaeru token add --expires`), so a token revoked,
expired or changed ends its sessions at their next request.
Both tables are keyed by a digest of the random id, so neither holds an id that could be replayed.

The table was bounded as a whole only, least recently used dropped first: one token's holder (a
script, a reader with a read-only token) signing in `SESSIONS_KEPT` times signed every other person
out, whose page then said they had signed out or left it unused. Each token (by its digest) now
keeps at most `SESSIONS_PER_TOKEN`, a sign-in past it ending that token's own least recently used;
and a session dropped for room leaves a record of why (`Ended`, keyed by the same digest of the id,
bounded by `ENDED_KEPT`), so the page its browser next asks for says what happened.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

#: Sessions one viewer keeps; past it the least recently used is dropped (signed out). It bounds the
#: viewer's memory whoever signs in; `SESSIONS_PER_TOKEN` keeps one token from filling it.
SESSIONS_KEPT = 1024
#: Sessions one token keeps; a sign-in past it ends that token's own least recently used session.
#: A person's browsers and devices on one token are a handful, so this leaves them room, while a
#: holder signing in over and over (a script) ends only sessions of that token, whoever opened them
#: (a token shared by many people is shared in this too): filling the whole table takes
#: `SESSIONS_KEPT / SESSIONS_PER_TOKEN` tokens, each at its bound.
SESSIONS_PER_TOKEN = 16
#: Sessions dropped for room whose reason is kept for the page their browser next asks for; past it
#: the oldest record goes, and that browser is told the general `app.ENDED`, which names this case too.
ENDED_KEPT = SESSIONS_KEPT
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


#: Why a session was dropped for room: its token was at `SESSIONS_PER_TOKEN` (`"token"`), or the
#: table was at `SESSIONS_KEPT` (`"room"`).
Ended = Literal["token", "room"]


@dataclass
class Found:
    """A session found by its cookie: the session, its table key and the token it was opened with."""

    session: Session
    key: str
    token: str


class Sessions:
    """The signed-in browsers of one viewer: opened by a sign-in, found by the cookie's id, ended by
    sign-out, by `IDLE_SECONDS` unused, by a refused token, or dropped, least recently used first,
    past `per_token` of one token (that token's own) or past `kept` in all (anyone's). A dropped
    session's reason is kept (`ended`, at most `ended_kept`) for `why_ended`."""

    def __init__(
        self,
        kept: int = SESSIONS_KEPT,
        idle: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        per_token: int = SESSIONS_PER_TOKEN,
        ended_kept: int = ENDED_KEPT,
    ):
        if kept < 1 or per_token < 1 or ended_kept < 0:
            raise ValueError("a viewer keeps at least one session, and one per token")
        self.kept = kept
        self.idle = idle
        self.clock = clock
        self.per_token = per_token
        self.ended_kept = ended_kept
        self._table: OrderedDict[str, Session] = OrderedDict()
        #: Sessions held per token digest, so a sign-in knows without a scan whether its token is full.
        self._held: dict[str, int] = {}
        #: Table key of a session dropped for room → why; oldest first.
        self._ended: OrderedDict[str, Ended] = OrderedDict()

    def __len__(self) -> int:
        return len(self._table)

    @property
    def ended(self) -> int:
        """How many dropped sessions' reasons are kept (at most `ended_kept`)."""
        return len(self._ended)

    def open(self, token: str) -> tuple[str, Session]:
        """A new session for `token`: (the id for the cookie, the session). Its token's least recently
        used session is dropped when the token holds `per_token`, then anyone's while the table is full."""
        secret = secrets.token_urlsafe(32)
        now = self.clock()
        self._expire(now)
        digest = token_digest(token)
        if self._held.get(digest, 0) >= self.per_token:
            own = next(key for key, held in self._table.items() if held.digest == digest)
            self._drop(own, "token")
        while len(self._table) >= self.kept:
            self._drop(next(iter(self._table)), "room")
        session = Session(_seal(token, secret), digest, secrets.token_urlsafe(24), now)
        self._table[_lookup(secret)] = session
        self._held[digest] = self._held.get(digest, 0) + 1
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

    def why_ended(self, secret: str) -> Ended | None:
        """Why the session of a cookie's id was dropped for room, if it was and the reason is still
        kept; None for any other id (signed out, idle, unknown, or a record since dropped)."""
        return self._ended.get(_lookup(secret))

    def close(self, key: str) -> None:
        """End the session whose table key is `key` (sign-out, a refused token)."""
        self._remove(key)

    def _drop(self, key: str, why: Ended) -> None:
        """End a session for room, keeping why for its browser's next request."""
        self._remove(key)
        if self.ended_kept:
            while len(self._ended) >= self.ended_kept:
                self._ended.popitem(last=False)
            self._ended[key] = why

    def _remove(self, key: str) -> None:
        session = self._table.pop(key, None)
        if session is None:
            return
        left = self._held[session.digest] - 1
        if left:
            self._held[session.digest] = left
        else:
            del self._held[session.digest]

    def _expire(self, now: float) -> None:
        """Drop the sessions unused for `idle` seconds: the least recently used come first."""
        while self._table:
            key, oldest = next(iter(self._table.items()))
            if now - oldest.used < self.idle:
                return
            self._remove(key)


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
