"""Automatic node names: the first words of the text plus a short unique suffix (kaeru's rule)."""

from __future__ import annotations

import re

#: What a name word drops: everything but letters, digits, `_` and `-`.
NOT_NAME_CHAR = re.compile(r"[^\w\-]", re.UNICODE)
MAX_WORDS = 5
MAX_NAME_CHARS = 200


def auto_name(text: str | None, node_id: str, fallback: str) -> str:
    """`first-five-words-<last 6 chars of the id>`; `<fallback>-<suffix>` when no word survives."""
    words: list[str] = []
    for raw in (text or "").split():
        word = NOT_NAME_CHAR.sub("", raw).lower().strip("-_")
        if word:
            words.append(word[:32])
        if len(words) == MAX_WORDS:
            break
    suffix = node_id.replace("-", "")[-6:]
    stem = "-".join(words) if words else fallback
    return f"{stem}-{suffix}"
