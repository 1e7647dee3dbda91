"""Vectors for the optional semantic channel: the embedder protocol and the stored vector format.

Nothing here loads a model. An `Embedder` is injected by the edge (`kaeru.semantic`), and only
when the `[semantic]` extra is installed and enabled; without it `recall` is purely lexical.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    """Turns texts into unit-length vectors; loads its model lazily, on the first call."""

    model_id: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def pack(vector: Sequence[float]) -> bytes:
    """float32, little-endian: the same bytes on every backend and machine."""
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack(blob: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


def text_of(name: str, description: str | None, body: str | None, limit: int = 2000) -> str:
    """What a node's vector represents: its name, description and the start of its body."""
    return " ".join(part for part in (name, description or "", (body or "")[:limit]) if part)


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
