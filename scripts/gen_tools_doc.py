"""Regenerate docs/tools.md and the tools/list snapshot from the live server's `tools/list`.

Run after changing a tool: `python scripts/gen_tools_doc.py`. The tests fail when either file is
out of date, so the documentation and the pinned contract cannot drift from the code.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "contract" / "tools_snapshot.json"
DOC = ROOT / "docs" / "tools.md"
ERRORS = ROOT / "docs" / "errors.md"


def tools_listing() -> list[dict[str, Any]]:
    from kaeru.config import Settings
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    with tempfile.TemporaryDirectory() as vault:
        settings = Settings.from_env({"KAERU_VAULT": vault})
        store = open_store(settings)
        try:
            kaeru = build_server(Service(store, settings))
            return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in kaeru.registry.list_tools()]
        finally:
            store.close()


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    return str(kind)


#: Explained by SPEC §2.3 and by its string form's own description; not worth a row per tool.
_NOT_EXPANDED = {"NodeRef"}


def _row(name: str, spec: dict[str, Any], required: bool) -> str:
    desc = str(spec.get("description", "")).replace("|", "\\|").replace("\n", " ")
    return f"| `{name}` | {_type(spec)} | {'yes' if required else 'no'} | {desc} |"


def _nested(
    spec: dict[str, Any], defs: dict[str, Any], prefix: str, depth: int = 0
) -> list[tuple[str, dict[str, Any], bool]]:
    """The fields inside an object parameter (`filters.tags`, `patch.reminder.after`), as table rows."""
    if depth > 3:
        return []
    branches = [spec, *spec.get("anyOf", []), *spec.get("oneOf", []), *spec.get("allOf", [])]
    if spec.get("type") == "array" and isinstance(spec.get("items"), dict):
        return _nested(spec["items"], defs, f"{prefix}[]", depth + 1)
    rows: list[tuple[str, dict[str, Any], bool]] = []
    seen: set[str] = set()
    for branch in branches:
        if "$ref" in branch:
            name = branch["$ref"].rsplit("/", 1)[-1]
            if name in _NOT_EXPANDED or name not in defs:
                continue
            branch = defs[name]
            extra = [b for b in (*branch.get("anyOf", []), *branch.get("oneOf", [])) if "properties" in b]
        else:
            extra = []
        for holder in (branch, *extra):
            required = set(holder.get("required", []))
            for field, field_spec in holder.get("properties", {}).items():
                if field in seen:
                    continue
                seen.add(field)
                path = f"{prefix}.{field}"
                rows.append((path, field_spec, field in required))
                rows += _nested(field_spec, defs, path, depth + 1)
    return rows


def render(listing: list[dict[str, Any]]) -> str:
    from kaeru.mcp.server import INSTRUCTIONS

    lines = [
        "# Tools",
        "",
        "Generated from the server's `tools/list` by `scripts/gen_tools_doc.py` — do not edit by hand.",
        "Every tool answers with the API 1 envelope (`api_version`, `operation`, `state`, `replayed`,",
        "`request_id`, `data`, `issues`, and for reads `coverage`/`continuation`); see `docs/errors.md` for",
        "the issue codes. The exact JSON Schemas are in `tests/contract/tools_snapshot.json`.",
        "",
        "## Server instructions",
        "",
        "```text",
        INSTRUCTIONS,
        "```",
        "",
    ]
    for tool in listing:
        ann = tool.get("annotations", {})
        hints = ", ".join(f"{k}={v}" for k, v in sorted(ann.items()) if k.endswith("Hint"))
        lines += [
            f"## `{tool['name']}` — {tool.get('title', '')}",
            "",
            f"Annotations: {hints}",
            "",
            tool["description"],
            "",
        ]
        props = tool["inputSchema"].get("properties", {})
        required = set(tool["inputSchema"].get("required", []))
        lines += ["| parameter | type | required | description |", "|---|---|---|---|"]
        defs = tool["inputSchema"].get("$defs", {})
        for name, spec in props.items():
            lines.append(_row(name, spec, name in required))
            for sub, sub_spec, sub_required in _nested(spec, defs, name):
                lines.append(_row(sub, sub_spec, sub_required))
        lines.append("")
    return "\n".join(lines)


def render_errors() -> str:
    from kaeru.errors import ISSUE_CODES, KaeruError

    retryable = {cls.code for cls in _subclasses(KaeruError) if cls.retryable}
    lines = [
        "# Issue codes",
        "",
        "Generated from `kaeru.errors.ISSUE_CODES` by `scripts/gen_tools_doc.py` — do not edit by hand.",
        "Every envelope's `issues[]` entry is `{code, message, field, retryable}`. A `rejected` response",
        "carries exactly the issue that stopped it (nothing was applied); other states may carry warnings.",
        "`retryable` is true only where the same call may succeed later.",
        "",
        "| code | retryable | meaning and what to do |",
        "|---|---|---|",
    ]
    for code, meaning in ISSUE_CODES.items():
        lines.append(f"| `{code}` | {'yes' if code in retryable else 'no'} | {meaning} |")
    return "\n".join(lines) + "\n"


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def main() -> int:
    sys.path.insert(0, str(ROOT / "src"))
    listing = tools_listing()
    SNAPSHOT.write_text(json.dumps(listing, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
    DOC.write_text(render(listing))
    ERRORS.write_text(render_errors())
    print(f"wrote {SNAPSHOT.relative_to(ROOT)} and {DOC.relative_to(ROOT)} ({len(listing)} tools)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
