"""Automatic node names: the first words of the text plus a short unique suffix (kaeru's rule)."""

from __future__ import annotations

import re
import unicodedata

#: What a name word drops: everything but letters, digits, `_` and `-`.
NOT_NAME_CHAR = re.compile(r"[^\w\-]", re.UNICODE)
MAX_WORDS = 5
MAX_NAME_CHARS = 200


def canonical(name: str) -> str:
    """The form a name is stored and compared in: trimmed, Unicode NFC (decision 184).

    The same word can reach the server in two encodings — `café` as `e` + a combining accent from a
    macOS file name or a terminal, as one code point from a model; `プロジェクト` with its voiced
    marks apart or composed — which look the same and compared different: one project split in two
    initiatives no one could tell apart, a node not found by the name it showed."""
    return unicodedata.normalize("NFC", name.strip())


def folded(name: str) -> str:
    """`name` for a case-insensitive prefix match in either Unicode form: canonical, case-folded,
    composed again (case folding may decompose)."""
    return unicodedata.normalize("NFC", canonical(name).casefold())


def forms(name: str) -> tuple[str, ...]:
    """The forms a stored name may have for `name` (canonical): itself, and the decomposed form
    (NFD) a kaeru before decision 184 — or an archive it exported — may have stored."""
    decomposed = unicodedata.normalize("NFD", name)
    return (name,) if decomposed == name else (name, decomposed)


def auto_name(text: str | None, node_id: str, fallback: str) -> str:
    """`first-five-words-<last 6 chars of the id>`; `<fallback>-<suffix>` when no word survives.

    A word is composed (NFC) before its signs are dropped: a decomposed voiced kana's mark is no
    word character, and `バグ` typed on a Mac became `ハク`, another word."""
    words: list[str] = []
    for raw in (text or "").split():
        word = NOT_NAME_CHAR.sub("", unicodedata.normalize("NFC", raw)).lower().strip("-_")
        if word:
            words.append(word[:32])
        if len(words) == MAX_WORDS:
            break
    suffix = node_id.replace("-", "")[-6:]
    stem = "-".join(words) if words else fallback
    return f"{stem}-{suffix}"


#: Letters and symbols that draw nothing: Hangul fillers, the halfwidth filler, the blank Braille
#: pattern — the blank characters that are not format or space characters by category.
_BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def invisible(name: str) -> bool:
    """Whether `name` draws nothing: only spaces, format characters (zero-width space, joiners,
    direction marks and overrides), controls or blank glyphs. `str.strip` keeps such a name, which
    then reads as empty wherever it is listed and cannot be typed back (decision 240)."""
    return all(ch in _BLANK_GLYPHS or unicodedata.category(ch) in ("Cf", "Cc", "Zs", "Zl", "Zp") for ch in name)
