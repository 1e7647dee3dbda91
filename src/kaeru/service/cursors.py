"""Opaque, tamper-evident cursors: a signed token naming a stored result list and a position.

The vault's secret (stored in the database, so every server process over one vault agrees) signs
each token; a token whose arguments differ from the call's is refused, so a cursor cannot be
replayed against another query.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from kaeru.errors import CursorInvalid
from kaeru.storage.base import Session


@dataclass(frozen=True, slots=True)
class CursorState:
    kind: str
    list_id: str | None
    offset: int
    args: str


def args_key(args: dict[str, Any], ignore: tuple[str, ...] = ("cursor",)) -> str:
    payload = {k: v for k, v in args.items() if k not in ignore}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode(secret: bytes, state: CursorState) -> str:
    body = _b64(json.dumps([state.kind, state.list_id, state.offset, state.args], separators=(",", ":")).encode())
    mac = _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest()[:16])
    return f"{body}.{mac}"


def decode(secret: bytes, token: str, kind: str, args: str) -> CursorState:
    """The state inside `token`.

    Raises:
        CursorInvalid: malformed, signed by another vault, altered, or made for other arguments.
    """
    try:
        body, mac = token.split(".", 1)
        expected = _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest()[:16])
        if not hmac.compare_digest(mac, expected):
            raise CursorInvalid("cursor signature does not match (altered, or from another vault)", field="cursor")
        raw_kind, list_id, offset, raw_args = json.loads(_unb64(body))
    except CursorInvalid:
        raise
    except (ValueError, TypeError) as exc:
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
    return CursorState(raw_kind, list_id, offset, raw_args)


def resume(session: Session, secret: bytes, token: str, kind: str, args: str) -> tuple[int, str, list[str]]:
    """Position, list id and stored items of a page token for the call `kind` with these arguments.

    Raises:
        CursorInvalid: as `decode`, or the stored list has expired.
    """
    state = decode(secret, token, kind, args)
    items = session.load_cursor(state.list_id) if state.list_id else None
    if items is None or state.list_id is None:
        raise CursorInvalid(f"cursor has expired; repeat the {kind} without a cursor", field="cursor")
    return state.offset, state.list_id, items
