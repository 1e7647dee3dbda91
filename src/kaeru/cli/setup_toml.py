"""Codex's `config.toml`: kaeru's `[mcp_servers.<name>]` table written, and put in place of the one
the file holds with the rest of the text kept byte for byte (decision 19.I4).

The table is written from the entry as `tomllib` reads it, the settings of the user's entry that
setup keeps included (decision 449): its comments stay in the backup.
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime, time
from typing import Any


def toml_text(name: str, server: dict[str, Any]) -> str:
    """`[mcp_servers.<name>]` (and its `.env` table, and those of the settings kept from the entry,
    such as `[mcp_servers.<name>.tools.x]`) as TOML."""
    return "\n".join(_toml_table(f"mcp_servers.{_toml_key(name)}", server)) + "\n"


def _toml_table(header: str, table: dict[str, Any]) -> list[str]:
    lines = [f"[{header}]"]
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items() if not isinstance(v, dict)]
    for key, value in table.items():
        if isinstance(value, dict):
            lines += ["", *_toml_table(f"{header}.{_toml_key(key)}", value)]
    return lines


def _toml_value(value: Any) -> str:
    """`value` (as `tomllib` reads it) as TOML: a JSON string is a TOML basic string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return json.dumps(str(value), ensure_ascii=False)


def _toml_key(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() and key.isascii() else json.dumps(key)


def merged_toml(existing: str, name: str, server: dict[str, Any]) -> str:
    """`existing` with its `[mcp_servers.<name>]` tables (if any) replaced by the new one, at the end."""
    kept: list[str] = []
    skipping = False
    #: The comments (and blank lines) after a replaced table's last line: they belong to what
    #: follows (the next table, or the end of the file), so they are kept.
    trailing: list[str] = []
    for line in existing.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and not stripped.startswith("[["):
            skipping = _header_key(stripped)[:2] == ("mcp_servers", name)
        elif stripped.startswith("[["):
            skipping = False
        if not skipping:
            kept.extend(trailing)
            kept.append(line)
            trailing = []
        elif not stripped or stripped.startswith("#"):
            trailing.append(line)
        else:
            trailing = []
    kept.extend(trailing)
    text = "\n".join(kept).rstrip("\n")
    return (text + "\n\n" if text else "") + toml_text(name, server)


def _header_key(line: str) -> tuple[str, ...]:
    """The key of a `[table]` header as its parts, however it is spelt: `[ mcp_servers."kaeru" ]  #
    mine` is `("mcp_servers", "kaeru")` (only the bare `[mcp_servers.kaeru]` was known, and a
    comment after it made setup declare the table twice)."""
    parts: list[str] = []
    part, quote = "", ""
    for ch in line[1:]:
        if quote:
            quote, part = ("", part) if ch == quote else (quote, part + ch)
        elif ch in "\"'":
            quote = ch
        elif ch in ".]":
            parts.append(part.strip())
            part = ""
            if ch == "]":
                break
        else:
            part += ch
    return tuple(parts)
