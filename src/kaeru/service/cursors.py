"""Opaque, tamper-evident cursors: a signed token naming a result list and a position.

The vault's secret (stored in the database, so every server process over one vault agrees) signs
each token; a token whose arguments differ from the call's is refused, so a cursor cannot be
replayed against another query. A caller limited to some initiatives signs with a key bound to
its grant: a list ranked for a caller who sees more names what it may not see, and its cursor is
refused (decision 364).

A short rest of a list travels inside the token itself (node ids packed as 16 bytes each). A long
list is kept in this process's memory, in a cache bounded by the number of items it holds, and the
token names it: paging a read writes nothing to the vault, so readers never take the write lock
(decision 15.P4). A token whose list this process does not hold (made by another server process
on the vault, or evicted) is answered by running the query again and continuing at the token's
position; a list stored in the vault's `cursors` table by an earlier version is still read.

A walk in a stable order (`timeline`: by (created_at, seq), both fixed for a node's life) needs no
list at all: its token carries the last served item's position, and the next page starts strictly
after it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets as pysecrets
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kaeru.domain.digest import args_sha256
from kaeru.errors import CursorInvalid
from kaeru.service import grants
from kaeru.service.outcomes import Continuation, Issue
from kaeru.storage.base import Session

if TYPE_CHECKING:
    from kaeru.service.runtime import Runtime

#: A rest of at most this many items travels inside the token instead of being stored.
INLINE_ITEMS = 24


@dataclass(frozen=True, slots=True)
class CursorState:
    kind: str
    list_id: str | None
    offset: int
    args: str
    items: tuple[str, ...] | None = None  # an inline list (then list_id is None)
    #: A keyset position instead of a list (`timeline`): the last served item's (created_at, seq, id);
    #: the next page starts strictly after it, so writes between pages neither repeat nor skip items.
    position: tuple[str, int, str] | None = None
    #: The hits the list's query counted when that is more than the list holds (a `search` ranked in
    #: windows): a page that reaches the list's end ranks the next window (`search._extended`).
    total: int | None = None
    #: A `search` of audit events whose scope holds more audit records than it reads: at least one
    #: more may match among the older ones (every page says so, `{hits, 1, window}`).
    audit_past: bool = False


#: The token's compact JSON, the encoder built once.
_compact_json = json.JSONEncoder(separators=(",", ":")).encode


def args_key(args: dict[str, Any], ignore: tuple[str, ...] = ("cursor",)) -> str:
    return args_sha256(args, ignore)[:24]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


#: Any number of canonical (lower-case, hyphenated) UUIDs back to back: one match checks a whole list.
_CANONICAL_UUIDS = re.compile(r"(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})*")


def _pack(items: list[str]) -> str | None:
    """The ids as one base64 string of 16-byte UUIDs, or None if any is not a canonical UUID."""
    joined = "".join(items)
    if any(len(item) != 36 for item in items) or not _CANONICAL_UUIDS.fullmatch(joined):
        return None
    return _b64(bytes.fromhex(joined.replace("-", "")))


def _unpack(text: str) -> tuple[str, ...]:
    raw = _unb64(text)
    if len(raw) % 16:
        raise ValueError("packed ids are not 16-byte aligned")
    return tuple(str(uuid.UUID(bytes=raw[i : i + 16])) for i in range(0, len(raw), 16))


def _signing_key(secret: bytes) -> bytes:
    """The vault's secret, or for a caller limited to some initiatives a key derived from it and the
    names it may see: its cursors and another grant's do not verify under each other's key."""
    granted = grants.current()
    if granted is None or granted.initiatives is None:
        return secret
    scope = "\x1f".join(sorted(granted.initiatives)).encode()
    return hmac.new(secret, b"kaeru-cursor-grant\x00" + scope, hashlib.sha256).digest()


def encode(secret: bytes, state: CursorState) -> str:
    fields: list[Any] = [state.kind, state.list_id, state.offset, state.args]
    if state.items is not None:
        packed = _pack(list(state.items))
        if packed is None:
            raise ValueError("inline cursor items must be node ids")
        fields.append(packed)
    elif state.position is not None:
        fields.append(list(state.position))
    if state.total is not None or state.audit_past:
        fields += [None] * (5 - len(fields)) + [state.total]
    if state.audit_past:
        fields.append(1)
    body = _b64(_compact_json(fields).encode())
    mac = _b64(hmac.new(_signing_key(secret), body.encode(), hashlib.sha256).digest()[:16])
    return f"{body}.{mac}"


def decode(secret: bytes, token: str, kind: str, args: str) -> CursorState:
    """The state inside `token`.

    Raises:
        CursorInvalid: malformed, signed by another vault, altered, or made for other arguments.
    """
    try:
        body, mac = token.split(".", 1)
        expected = _b64(hmac.new(_signing_key(secret), body.encode(), hashlib.sha256).digest()[:16])
        if not hmac.compare_digest(mac, expected):
            raise CursorInvalid(
                "cursor signature does not match (altered, from another vault, or made for a caller with "
                "other grants); repeat the call without the cursor",
                field="cursor",
            )
        fields = json.loads(_unb64(body))
        raw_kind, list_id, offset, raw_args = fields[:4]
        extra = fields[4] if len(fields) > 4 else None
        items = _unpack(extra) if isinstance(extra, str) else None
        position = _position(extra) if isinstance(extra, list) else None
        if extra is not None and items is None and position is None:
            raise ValueError("unknown cursor payload")
        total = fields[5] if len(fields) > 5 else None
        if total is not None and (not isinstance(total, int) or isinstance(total, bool) or total < 0):
            raise ValueError("a cursor's total is a count")
        audit_past = fields[6] if len(fields) > 6 else 0
        if audit_past not in (0, 1) or isinstance(audit_past, bool):
            raise ValueError("a cursor's audit flag is 0 or 1")
    except CursorInvalid:
        raise
    except (ValueError, TypeError, IndexError) as exc:
        raise CursorInvalid("cursor is malformed", field="cursor") from exc
    if raw_kind != kind:
        raise CursorInvalid(f"cursor belongs to {raw_kind}, not {kind}", field="cursor")
    if raw_args != args:
        raise CursorInvalid(
            "cursor was made for different arguments; repeat the call with exactly `next_arguments`",
            field="cursor",
        )
    if not isinstance(offset, int) or offset < 0:
        raise CursorInvalid("cursor is malformed", field="cursor")
    return CursorState(raw_kind, list_id, offset, raw_args, items, position, total, bool(audit_past))


def _position(raw: list[Any]) -> tuple[str, int, str]:
    """A keyset position (created_at, seq, id), checked field by field."""
    if len(raw) != 3:
        raise ValueError("a position has three fields")
    moment, seq, node_id = raw
    if not isinstance(moment, str) or not isinstance(node_id, str) or not isinstance(seq, int) or seq < 0:
        raise ValueError("a position is (created_at, seq, id)")
    return moment, seq, node_id


class _Joined:
    """A result list whose items are all `width` characters long (node ids: 36), kept as one string:
    36 bytes an id, where a tuple of strings takes ~93 (a string's ~85 and its slot; decision 97)."""

    __slots__ = ("count", "text", "width")

    def __init__(self, items: list[str], width: int):
        self.text, self.width, self.count = "".join(items), width, len(items)

    def split(self) -> list[str]:
        text, width = self.text, self.width
        return [text[i : i + width] for i in range(0, len(text), width)]


def _kept(items: list[str]) -> _Joined | tuple[str, ...]:
    """How a list is kept: joined when its items have one length (not 0), else as a tuple."""
    widths = set(map(len, items))
    if len(widths) == 1 and (width := widths.pop()) > 0:
        return _Joined(items, width)
    return tuple(items)


def _count(kept: _Joined | tuple[str, ...]) -> int:
    return kept.count if isinstance(kept, _Joined) else len(kept)


def _items(kept: _Joined | tuple[str, ...]) -> list[str]:
    return kept.split() if isinstance(kept, _Joined) else list(kept)


class ResultLists:
    """The result lists of this process's cursors, least recently used first, holding at most
    `limit` items in all and `LIST_ITEMS` in one list (a longer list is not kept: its pages rank
    the query again). Thread-safe: HTTP serves reads side by side. A list of ids is kept as one
    string (`_Joined`) and split again when a page asks for it.

    A list put again under its id with more items replaces it: a search's list grows by a window
    when a page reaches its end, and the tokens of its earlier pages name the same list (their
    positions lie in the part it keeps). Two pages that grow one list at once both put it; the
    first kept stays, and `grow` answers with it, so each page serves what its token names."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        #: One list's share: a single deep search cannot push every other caller's list out.
        self.share = min(limit, LIST_ITEMS)
        self._lists: OrderedDict[str, _Joined | tuple[str, ...]] = OrderedDict()
        self._items = 0
        self._lock = threading.Lock()

    def put(self, list_id: str, items: list[str]) -> None:
        """Keep `items` under `list_id` unless a list as long is kept there."""
        self._keep(list_id, items)

    def grow(self, list_id: str, items: list[str]) -> list[str]:
        """`put`, and the list kept under `list_id` after it: `items`, or a list as long that
        another page kept first (or `items` when too long to keep)."""
        held = self._keep(list_id, items)
        return items if held is None else _items(held)

    def _keep(self, list_id: str, items: list[str]) -> _Joined | tuple[str, ...] | None:
        """Keep `items`; the list kept under `list_id` instead when it is at least as long."""
        if len(items) > self.share:
            with self._lock:  # a shorter list under this id would end its pages too early
                self._items -= _count(self._lists.pop(list_id, ()))
            return None
        with self._lock:
            held = self._lists.get(list_id)
            if held is not None and _count(held) >= len(items):
                self._lists.move_to_end(list_id)
                return held
        kept = _kept(items)  # joined outside the lock: other pages' look-ups do not wait for it
        with self._lock:
            held = self._lists.get(list_id)  # checked again: another page may have grown it since
            if held is not None and _count(held) >= len(items):
                self._lists.move_to_end(list_id)
                return held
            self._items -= _count(self._lists.pop(list_id, ()))
            self._lists[list_id] = kept
            self._items += len(items)
            while self._items > self.limit:
                _, dropped = self._lists.popitem(last=False)
                self._items -= _count(dropped)
        return None

    def get(self, list_id: str) -> list[str] | None:
        with self._lock:
            found = self._lists.get(list_id)
            if found is None:
                return None
            self._lists.move_to_end(list_id)
        return _items(found)

    def clear(self) -> None:
        with self._lock:
            self._lists.clear()
            self._items = 0


#: Items a service keeps for cursors' lists, all lists together: 200,000 node ids are ~7 MB joined
#: (`_Joined`; ~18 MB as a tuple of strings, before decision 97): forty searches paged within their
#: first window (5,000 hits), or four paged to `LIST_ITEMS`. The lists are owned by the Runtime
#: (`Runtime.cursor_lists`), not by this module.
CACHED_ITEMS = 200_000
#: The most items one list keeps (a quarter of `CACHED_ITEMS`): a search paged deeper ranks the
#: query again at each page past it (its pages still reach every hit, warned as a rerun).
LIST_ITEMS = 50_000


def resume(
    session: Session, lists: ResultLists, secret: bytes, token: str, kind: str, args: str
) -> tuple[int, str | None, list[str] | None]:
    """Position, list id (None for an inline list) and items of a page token for the call `kind`;
    items None when this process does not hold the token's list (the caller runs the query again
    and continues at the position).

    Raises:
        CursorInvalid: as `decode`.
    """
    offset, list_id, items, _, _ = resume_counted(session, lists, secret, token, kind, args)
    return offset, list_id, items


def resume_counted(
    session: Session, lists: ResultLists, secret: bytes, token: str, kind: str, args: str
) -> tuple[int, str | None, list[str] | None, int | None, bool]:
    """`resume`, the total the token carries (`CursorState.total`; None: the list holds every hit)
    and its `CursorState.audit_past`.

    Raises:
        CursorInvalid: as `decode`.
    """
    state = decode(secret, token, kind, args)
    if state.items is not None:
        # Only the rest travels; the first `offset` places (already served, never read again) are
        # padding, so positions and the list's total stay those of the first page.
        return state.offset, None, [""] * state.offset + list(state.items), state.total, state.audit_past
    if state.list_id is None:
        raise CursorInvalid("cursor is malformed", field="cursor")
    items = lists.get(state.list_id)
    if items is None:
        items = session.load_cursor(state.list_id)  # stored by an earlier version (read only)
    if items is None:
        return state.offset, None, None, state.total, state.audit_past
    return state.offset, state.list_id, items, state.total, state.audit_past


def rerun_issue(kind: str) -> Issue:
    """The warning of a page whose list was ranked again (see `resume`)."""
    return Issue(
        CursorInvalid.code,
        f"this server no longer held the cursor's result list, so the {kind} was run again and this page "
        "continues at the same position; if the vault changed since the first page, a hit may repeat "
        "or be missed (repeat the call without a cursor for a fresh list)",
        "cursor",
    )


def next_token(
    rt: Runtime,
    secret: bytes,
    kind: str,
    args: str,
    items: list[str],
    offset: int,
    list_id: str | None,
    total: int | None = None,
    audit_past: bool = False,
) -> str:
    """The token for the page of `items` starting at `offset`: inline if the rest is short, else
    naming the list, kept in this process's memory (nothing is written to the vault). `total`: the
    hits counted past the list's end, if any; such a list is always kept, never inline, since the
    page that reaches its end leaves out what the list already served. `audit_past`: as
    `CursorState.audit_past`."""
    beyond = total if total is not None and total > len(items) else None
    if list_id is None:
        rest = items[offset:]
        if len(rest) <= INLINE_ITEMS and beyond is None:
            try:
                return encode(secret, CursorState(kind, None, offset, args, tuple(rest), audit_past=audit_past))
            except ValueError:
                pass  # not all node ids (audit events in the list): keep it instead
        list_id = pysecrets.token_hex(12)
    rt.cursor_lists.put(list_id, items)
    return encode(secret, CursorState(kind, list_id, offset, args, total=beyond, audit_past=audit_past))


def continuation(
    rt: Runtime,
    secret: bytes,
    kind: str,
    key: str,
    items: list[str],
    offset: int,
    list_id: str | None,
    call_args: dict[str, Any],
    total: int | None = None,
    audit_past: bool = False,
) -> Continuation:
    """The continuation of a page of `items` that ends before `offset`: the token and the call's
    arguments with it (`key` = `args_key(call_args)`; `total` and `audit_past` as `next_token`)."""
    token = next_token(rt, secret, kind, key, items, offset, list_id, total, audit_past)
    return Continuation(token, {**{k: v for k, v in call_args.items() if k != "cursor"}, "cursor": token})
