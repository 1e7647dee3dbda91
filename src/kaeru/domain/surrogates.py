"""Lone UTF-16 surrogates: half a surrogate pair can reach Python text (a JSON `"\\ud800"` escape,
or a command line's undecodable byte under `surrogateescape`) but it is not Unicode and cannot be
stored, so every way in refuses it with a field-naming `invalid_argument`. NUL, which PostgreSQL cannot
hold, is refused the same way (`refusal_of_unstorable`) so both backends answer alike."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kaeru.errors import InvalidArgument

#: Half a UTF-16 surrogate pair, which a Python str can hold but UTF-8 cannot encode.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone(text: str) -> str | None:
    """`U+D800` for the first lone surrogate of `text`, else None (ASCII text: one C call)."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return f"U+{ord(found.group()):04X}" if found else None


def _has_lone(text: str) -> bool:
    """Whether `text` holds a surrogate code point: exactly what strict UTF-8 cannot encode, and
    encoding is 2-4 times quicker than the pattern's search over a long non-ASCII text."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _has_nul(text: str) -> bool:
    return "\x00" in text


def _has_either(text: str) -> bool:
    return "\x00" in text or _has_lone(text)


def _any(value: Any, bad: Callable[[str], bool]) -> bool:
    """Whether any string or key in `value` is `bad`: the walk without building paths (every tool
    call is checked twice: lone surrogates, then NUL)."""
    if isinstance(value, str):
        return bad(value)
    if isinstance(value, dict):
        for key, item in value.items():
            if bad(key if isinstance(key, str) else str(key)):
                return True
            if isinstance(item, str):
                if bad(item):
                    return True
            elif isinstance(item, dict | list) and _any(item, bad):
                return True
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                if bad(item):
                    return True
            elif isinstance(item, dict | list) and _any(item, bad):
                return True
    return False


def _segment(key: str) -> str:
    """A key as a field path shows it: escaped (`\\ud800`, `\\x00`) when it holds what cannot be
    printed — a path that held a lone surrogate made the refusal itself unwritable as UTF-8, and the
    stdio server died writing it (decision 239)."""
    return key if key.isprintable() else key.encode("unicode_escape").decode("ascii")


def _first(value: Any, path: str, found: Callable[[str], str | None]) -> tuple[str, str] | None:
    """(path, what `found` says of it) for the first string or key in `value` it says something of."""
    if isinstance(value, str):
        said = found(value)
        return (path, said) if said else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{_segment(str(key))}" if path else _segment(str(key))
            said = found(str(key))
            if said:
                return (where, said)
            hit = _first(item, where, found)
            if hit:
                return hit
    if isinstance(value, list):
        for i, item in enumerate(value):
            hit = _first(item, f"{path}[{i}]", found)
            if hit:
                return hit
    return None


def lone_surrogate(value: Any, path: str = "") -> tuple[str, str] | None:
    """(path, code point) of the first string or key in `value` holding a lone surrogate."""
    if not _any(value, _has_lone):
        return None
    return _first(value, path, _lone)


def refusal_of_lone_surrogate(arguments: Any) -> InvalidArgument | None:
    """The `invalid_argument` refusal for the first lone surrogate in a call's arguments, or None.

    Half a UTF-16 surrogate pair can reach Python text — a JSON `"\\ud800"` escape, or an
    undecodable byte of a command line or standard input (`surrogateescape`) — but it is not
    Unicode and cannot be stored.
    """
    hit = lone_surrogate(arguments)
    if hit is None:
        return None
    field, code_point = hit
    value = int(code_point[2:], 16)
    if 0xDC80 <= value <= 0xDCFF:
        # What Python makes of a byte that does not decode — in a command line, a piped file, a
        # file name (`surrogateescape`): a terminal user is told which byte, and where such bytes
        # come from. Said of no one way in: the same refusal answers standard input and a tool call.
        return InvalidArgument(
            f"{field} holds the byte 0x{value - 0xDC00:02X}, which is not UTF-8 (a byte that does not decode "
            f"is kept as the lone surrogate {code_point}): the terminal or file is in another encoding "
            "(see LANG, LC_ALL); send the text as UTF-8",
            field=field,
        )
    return InvalidArgument(
        f"{field} holds a lone UTF-16 surrogate ({code_point}), which is not Unicode text; "
        "send the text as UTF-8 (or escape whole surrogate pairs)",
        field=field,
    )


def nul_character(value: Any, path: str = "") -> str | None:
    """The path of the first string or key in `value` holding a NUL character, else None."""
    if not _any(value, _has_nul):
        return None
    hit = _first(value, path, lambda text: "NUL" if _has_nul(text) else None)
    return hit[0] if hit else None


def refusal_of_unstorable(arguments: Any) -> InvalidArgument | None:
    """The `invalid_argument` refusal for the first character a call's arguments cannot hold: a lone
    surrogate (`refusal_of_lone_surrogate`), else a NUL character; None when there is neither.

    NUL is refused up front, in every string argument, because the backends disagreed about it
    (decision 217): PostgreSQL cannot store or even compare a text holding NUL, so a `request_id`,
    NodeRef, tag filter or query holding one was refused there (with no field, naming `text`) while
    SQLite applied it or answered `not_found`/`ok`. One rule now, on both, before schema validation
    and before any query: the field path is named, as decision 14 names `text` for a node text.
    """
    if not _any(arguments, _has_either):  # the usual answer, in one walk
        return None
    if (refusal := refusal_of_lone_surrogate(arguments)) is not None:
        return refusal
    field = nul_character(arguments)
    if field is None:
        return None
    return InvalidArgument(f"{field} contains a NUL character", field=field)
