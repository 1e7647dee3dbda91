"""How a replay row keeps its argument digest and its response, on both engines (decisions 16.D2,
16.I2, 224): the digest as its 32 bytes, the response as compact JSON deflated with a dictionary of
what most responses share. A replay row is written by every write that carries a request id, so its
width is paid per note for the whole replay window; both engines read every form they ever wrote."""

from __future__ import annotations

import json
import zlib
from typing import Any

from kaeru.errors import Internal

_compact_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode

#: A stored replay response: this byte, then raw deflate data (a 1 KiB window, so a short response
#: compresses quickly) primed with `_RESPONSE_WORDS`, what most responses share. Both are part of
#: the file format: a new dictionary needs a new version byte.
_RESPONSE_V1 = b"\x01"
_RESPONSE_WORDS = (
    b'"kind":"","message":"","field":null,"code":"","state":"unchanged","name":"","initiative":"",'
    b'{"affected":[],"artifacts":[],"changes":[],"created":[{"id":"","revision":"1-"}],"evidence":[],'
    b'"failed_steps":[],"issues":[],"primary":{"id":"","revision":"1-"},"slots":[],"state":"applied"}'
)


def pack_response(response: dict[str, Any]) -> bytes:
    packer = zlib.compressobj(1, zlib.DEFLATED, -10, 2, zdict=_RESPONSE_WORDS)
    return _RESPONSE_V1 + packer.compress(_compact_json(response).encode("utf-8")) + packer.flush()


def unpack_response(stored: bytes | memoryview | str) -> Any:
    """A stored replay response: packed; or JSON, as text (SQLite rows written before its migration
    010) or as its UTF-8 bytes (PostgreSQL rows its migration 019 turned into `bytea`)."""
    if isinstance(stored, str):
        return json.loads(stored)
    raw = bytes(stored)
    if raw[:1] == b"{":
        return json.loads(raw)
    if raw[:1] != _RESPONSE_V1:
        raise Internal("a stored replay response has an unknown format")
    unpacker = zlib.decompressobj(-10, zdict=_RESPONSE_WORDS)
    return json.loads(unpacker.decompress(raw[1:]) + unpacker.flush())


def pack_hash(args_hash: str) -> bytes | str:
    """A replay row's argument digest as its 32 bytes, not 64 hex characters (any other text kept:
    digests are always SHA-256 in hex, but a row must never fail to be written for its digest)."""
    try:
        return bytes.fromhex(args_hash) if len(args_hash) == 64 else args_hash
    except ValueError:
        return args_hash


def pack_hash_bytes(args_hash: str) -> bytes:
    """`pack_hash` for a `bytea` column (PostgreSQL): other text as its UTF-8 bytes."""
    packed = pack_hash(args_hash)
    return packed if isinstance(packed, bytes) else packed.encode("utf-8")


def unpack_hash(stored: bytes | memoryview | str) -> str:
    """A stored digest as the service compares it: 32 bytes in hex, any other value as its text."""
    if isinstance(stored, str):
        return stored
    raw = bytes(stored)
    return raw.hex() if len(raw) == 32 else raw.decode("utf-8")
