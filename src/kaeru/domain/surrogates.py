"""Lone UTF-16 surrogates: half a surrogate pair can reach Python text (a JSON `"\\ud800"` escape,
or a command line's undecodable byte under `surrogateescape`) but it is not Unicode and cannot be
stored, so every way in refuses it with a field-naming `invalid_argument`. NUL, which PostgreSQL cannot
hold, is refused the same way (`refusal_of_unstorable`) so both backends answer alike."""

from __future__ import annotations

import re
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


def _any_lone(value: Any) -> bool:
    """Whether any string or key in `value` holds a lone surrogate: `lone_surrogate`'s walk without
    building paths, and one call for a flat object of ASCII strings (every tool call is checked)."""
    if isinstance(value, str):
        return not value.isascii() and _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        for key, item in value.items():
            if not (key.isascii() if isinstance(key, str) else str(key).isascii()) and _SURROGATE.search(str(key)):
                return True
            if isinstance(item, str):
                if not item.isascii() and _SURROGATE.search(item) is not None:
                    return True
            elif isinstance(item, dict | list) and _any_lone(item):
                return True
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                if not item.isascii() and _SURROGATE.search(item) is not None:
                    return True
            elif isinstance(item, dict | list) and _any_lone(item):
                return True
    return False


def lone_surrogate(value: Any, path: str = "") -> tuple[str, str] | None:
    """(path, code point) of the first string or key in `value` holding a lone surrogate."""
    if not _any_lone(value):
        return None
    return _first_lone(value, path)


def _first_lone(value: Any, path: str) -> tuple[str, str] | None:
    if isinstance(value, str):
        found = _lone(value)
        return (path, found) if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            found = _lone(str(key))
            if found:
                return (where, found)
            hit = _first_lone(item, where)
            if hit:
                return hit
    if isinstance(value, list):
        for i, item in enumerate(value):
            hit = _first_lone(item, f"{path}[{i}]")
            if hit:
                return hit
    return None


def refusal_of_lone_surrogate(arguments: Any) -> InvalidArgument | None:
    """The `invalid_argument` refusal for the first lone surrogate in a call's arguments, or None.

    Half a UTF-16 surrogate pair can reach Python text — a JSON `"\\ud800"` escape, or a command
    line's undecodable byte (`surrogateescape`) — but it is not Unicode and cannot be stored.
    """
    hit = lone_surrogate(arguments)
    if hit is None:
        return None
    field, code_point = hit
    return InvalidArgument(
        f"{field} holds a lone UTF-16 surrogate ({code_point}), which is not Unicode text; "
        "send the text as UTF-8 (or escape whole surrogate pairs)",
        field=field,
    )


def _any_nul(value: Any) -> bool:
    """Whether any string or key in `value` holds NUL (one `in` per string: every tool call is checked)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in str(key):
                return True
            if isinstance(item, str):
                if "\x00" in item:
                    return True
            elif isinstance(item, dict | list) and _any_nul(item):
                return True
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                if "\x00" in item:
                    return True
            elif isinstance(item, dict | list) and _any_nul(item):
                return True
    return False


def nul_character(value: Any, path: str = "") -> str | None:
    """The path of the first string or key in `value` holding a NUL character, else None."""
    if not _any_nul(value):
        return None
    return _first_nul(value, path)


def _first_nul(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        return path if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return where
            hit = _first_nul(item, where)
            if hit is not None:
                return hit
    if isinstance(value, list):
        for i, item in enumerate(value):
            hit = _first_nul(item, f"{path}[{i}]")
            if hit is not None:
                return hit
    return None


def refusal_of_unstorable(arguments: Any) -> InvalidArgument | None:
    """The `invalid_argument` refusal for the first character a call's arguments cannot hold: a lone
    surrogate (`refusal_of_lone_surrogate`), else a NUL character; None when there is neither.

    NUL is refused up front, in every string argument, because the backends disagreed about it
    (decision 217): PostgreSQL cannot store or even compare a text holding NUL, so a `request_id`,
    NodeRef, tag filter or query holding one was refused there (with no field, naming `text`) while
    SQLite applied it or answered `not_found`/`ok`. One rule now, on both, before schema validation
    and before any query: the field path is named, as decision 14 names `text` for a node text.
    """
    if (refusal := refusal_of_lone_surrogate(arguments)) is not None:
        return refusal
    field = nul_character(arguments)
    if field is None:
        return None
    return InvalidArgument(f"{field} contains a NUL character", field=field)
