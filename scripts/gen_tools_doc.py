"""Regenerate docs/tools.md, the tools/list snapshot and the README's figure of the tools'
definitions from the live server's `tools/list`.

Run after changing a tool: `python scripts/gen_tools_doc.py`. The tests fail when either file is
out of date, so the documentation and the pinned contract cannot drift from the code.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "src" / "kaeru" / "mcp" / "tools.json"
INPUTS = ROOT / "src" / "kaeru" / "api" / "inputs.json"
DOC = ROOT / "docs" / "tools.md"
ERRORS = ROOT / "docs" / "errors.md"
README = ROOT / "README.md"


def exact_inputs() -> dict[str, Any]:
    """Every tool's exact input schema, built from the contract and the request models (what
    `src/kaeru/api/inputs.json` pins for `input_for`)."""
    from kaeru.api.schemas import exact_input
    from kaeru.service.requests import REQUESTS

    return json.loads(json.dumps({tool: exact_input(tool) for tool in REQUESTS}))


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
            return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in kaeru.registry.built_listing()]
        finally:
            store.close()


#: The typical call of each tool whose answer `docs/tools.md` measures, on a small fixed vault.
_TOPIC = "ledger"


def _typical_calls(run: Any) -> dict[str, dict[str, Any]]:
    """Seed a small vault through the tools and make one typical call of each tool: their envelopes."""
    lines = [
        "The ingest worker retries after a lock timeout of 30 seconds.",
        "We keep both columns until the next release so old clients still read.",
        "The cache is warmed at start from the last snapshot.",
        "Nightly the index is rebuilt; a rebuild takes about four minutes.",
        "A client reads the ledger twice when its first read times out.",
    ]
    ids = []
    for i in range(12):
        kind = ("observation", "decision", "rule", "idea")[i % 4]
        env = run("note", {"initiative": _TOPIC, "kind": kind, "text": f"{lines[i % len(lines)]} (case {i})"})
        ids.append(env["data"]["primary"]["id"])
    ref = run("note", {"initiative": _TOPIC, "kind": "reference", "text": "the ops runbook", "source": "v1 text"})
    claim = run("claim", {"initiative": _TOPIC, "text": "the timeout causes the double read", "about": ids[4]})
    task = run("task", {"initiative": _TOPIC, "text": "raise the lock timeout"})
    run("note", {"initiative": "scratchpad", "text": "an initiative to rename"})
    node = ids[0]
    return {
        "initiatives": run("initiatives", {}),
        "context": run("context", {"initiative": _TOPIC}),
        "recall": run("recall", {"initiatives": [_TOPIC], "query": "why does the client read twice", "limit": 10}),
        "timeline": run("timeline", {"initiatives": [_TOPIC], "limit": 10}),
        "reflect": run("reflect", {"initiative": _TOPIC}),
        "search": run("search", {"initiatives": [_TOPIC], "text": "the", "limit": 10}),
        "read": run("read", {"initiative": _TOPIC, "node": node}),
        "trail": run("trail", {"initiative": _TOPIC, "node": node}),
        "current_state": run("current_state", {"initiative": _TOPIC, "node": node}),
        "note": run("note", {"initiative": _TOPIC, "text": "retries back off exponentially"}),
        "claim": claim,
        "revise": run("revise", {"initiative": _TOPIC, "node": node, "patch": {"description": "lock retries"}}),
        "replace": run("replace", {"initiative": _TOPIC, "node": ref["data"]["primary"]["id"], "source": "v2 text"}),
        "link": run(
            "link", {"initiative": _TOPIC, "from": ids[1], "to": ids[2], "edge_type": "refers_to", "weight": 0.6}
        ),
        "verdict": run(
            "verdict", {"initiative": _TOPIC, "hypothesis": claim["data"]["primary"]["id"], "status": "supported"}
        ),
        "evolve": run(
            "evolve", {"initiative": _TOPIC, "mode": "supersede", "source": ids[3], "new_body": "rebuilt hourly"}
        ),
        "review": run(
            "review", {"initiative": _TOPIC, "action": "flag", "target": ids[5], "reason": "is this still true?"}
        ),
        "slot": run("slot", {"initiative": _TOPIC, "slot": "handoff", "node": ids[6]}),
        "layer": run("layer", {"initiative": _TOPIC, "nodes": [ids[7]], "layer": "hot"}),
        "forget": run("forget", {"initiative": _TOPIC, "node": ids[8], "reason": "a duplicate"}),
        "task": run("task", {"initiative": _TOPIC, "text": "write the runbook page"}),
        "task_update": run(
            "task_update", {"initiative": _TOPIC, "task": task["data"]["primary"]["id"], "status": "done"}
        ),
        "initiative": run("initiative", {"initiative": "scratchpad", "action": "rename", "to": "scratch"}),
        "archive": run("archive", {"action": "export", "format": "amg", "path": "ledger.amg"}),
    }


def answer_sizes() -> dict[str, tuple[str, int, int]]:
    """Per tool: the typical answer's state and its text's characters, compact and as JSON."""
    import random
    from datetime import UTC, datetime, timedelta

    from kaeru.config import Settings
    from kaeru.mcp.adapter import Output
    from kaeru.mcp.server import build_server
    from kaeru.service import Service
    from kaeru.storage.factory import open_store

    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    ticks = iter(range(1_000_000))

    def clock() -> datetime:
        return start + timedelta(seconds=next(ticks))

    entropy = random.Random(18).randbytes
    with tempfile.TemporaryDirectory() as vault:
        settings = Settings.from_env({"KAERU_VAULT": vault})
        store = open_store(settings)
        try:
            run = build_server(Service(store, settings, clock=clock, entropy=entropy)).registry.run
            envelopes = _typical_calls(run)
        finally:
            store.close()
        # An answer naming a file names it under the vault: measured as under one path whatever
        # TMPDIR is (as long as `/tmp/tmpXXXXXXXX`, TemporaryDirectory's name there), so the
        # figures do not follow the machine's temporary folder.
        envelopes = json.loads(json.dumps(envelopes).replace(json.dumps(vault)[1:-1], "/tmp/kaeru-vault"))
    compact, as_json = Output(), Output(text="json")
    return {
        tool: (env["state"], len(compact.text_of(env)), len(as_json.text_of(env))) for tool, env in envelopes.items()
    }


def served_bytes(value: Any) -> int:
    """The bytes `value` takes on the wire: compact JSON in UTF-8, as the SDK sends a `tools/list`
    entry (its keys and values as served, no spaces, other scripts than Latin unescaped). The one
    measure of the tools' definitions here and in the README (`definition_bytes`)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def definition_bytes(listing: list[dict[str, Any]], names: Sequence[str] | None = None) -> int:
    """The bytes of the `tools/list` entries of `names` (None: every listed tool), each as served."""
    return sum(served_bytes(tool) for tool in listing if names is None or tool["name"] in names)


def size_table(listing: list[dict[str, Any]], answers: dict[str, tuple[str, int, int]]) -> list[str]:
    """The bytes each tool's definition costs, and a typical answer's characters."""
    from kaeru.domain.tool_set import CORE

    lines = [
        "## Sizes",
        "",
        "A definition is measured as a client receives it: the bytes of each tool's `tools/list` entry as",
        "served (compact JSON in UTF-8; `served_bytes` in `scripts/gen_tools_doc.py`), and each part of it",
        "the same way. A model is shown the name, description and input schema of every tool; the output",
        "schema is for programs (`KAERU_STRUCTURED=off` lists none). A typical answer is one call of the",
        "tool on a small fixed vault, its text block compact (the default) and as JSON (`KAERU_TEXT=json`,",
        "also what clients that prefer `structuredContent` show their model), in characters.",
        "",
        "| tool | entry | description | input schema | output schema | answer (state) | compact | JSON |",
        "|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    totals = [0, 0, 0, 0, 0, 0]
    for tool in listing:
        state, compact, as_json = answers.get(tool["name"], ("—", 0, 0))
        row = [served_bytes(tool), len(tool["description"].encode()), served_bytes(tool["inputSchema"])]
        row += [served_bytes(tool["outputSchema"]) if "outputSchema" in tool else 0, compact, as_json]
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        cells = " | ".join(f"{n:,}" for n in row[:4])
        lines.append(f"| `{tool['name']}` | {cells} | {state} | {row[4]:,} | {row[5]:,} |")
    cells = " | ".join(f"{n:,}" for n in totals[:4])
    lines.append(f"| **total** | {cells} | | {totals[4]:,} | {totals[5]:,} |")
    bare = [{k: v for k, v in tool.items() if k != "outputSchema"} for tool in listing]
    lines += [
        "",
        f"All {len(listing)} entries: {definition_bytes(listing):,} bytes, {definition_bytes(bare):,} without their",
        f"output schemas; the {len(CORE)} of `--tools core`: {definition_bytes(listing, CORE):,} and"
        f" {definition_bytes(bare, CORE):,}. The README quotes these figures (`readme_figure`).",
        "",
    ]
    return lines


#: The README's sentence on what `--tools core` saves: its figures are `readme_figure`'s.
_README_FIGURE = re.compile(r"— [\d,]+ of the [\d,]+ bytes(.*?)\([\d,]+ of [\d,]+ without", re.S)


def readme_figure(listing: list[dict[str, Any]], readme: str) -> str:
    """`readme` with its figures of the core tools' definitions and all of them rewritten from
    `listing` (bytes as served, `definition_bytes`), with and without the output schemas (not every
    client hands those to its model)."""
    from kaeru.domain.tool_set import CORE

    bare = [{k: v for k, v in tool.items() if k != "outputSchema"} for tool in listing]

    def figure(found: re.Match[str]) -> str:
        return (
            f"— {definition_bytes(listing, CORE):,} of the {definition_bytes(listing):,} bytes{found.group(1)}"
            f"({definition_bytes(bare, CORE):,} of {definition_bytes(bare):,} without"
        )

    written, found = _README_FIGURE.subn(figure, readme)
    if found != 1:
        raise SystemExit(f"README.md: expected one figure matching {_README_FIGURE.pattern!r}, found {found}")
    return written


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


def render(listing: list[dict[str, Any]], answers: dict[str, tuple[str, int, int]] | None = None) -> str:
    from kaeru.api.schemas import input_for
    from kaeru.domain.tool_set import CORE
    from kaeru.mcp.server import INSTRUCTIONS

    answers = answer_sizes() if answers is None else answers

    lines = [
        "# Tools",
        "",
        "Generated from the server's `tools/list` by `scripts/gen_tools_doc.py` — do not edit by hand.",
        "Every tool answers with the API 1 envelope (`api_version`, `operation`, `state`, `replayed`,",
        "`request_id`, `data`, `issues`, and for reads `coverage`/`continuation`); see `docs/errors.md` for",
        "the issue codes. The schemas as served are in `src/kaeru/mcp/tools.json`. Outside the",
        "published contract (`search`, `claim`, `revise`) a served input schema is a hint that accepts at",
        "least what the server accepts (a NodeRef one `string`/`object` type, no length or pattern bounds);",
        "every call is validated by the exact schema, whose fields and types the parameter tables below show",
        "(decision 18.M1).",
        "",
        "The envelope goes out as `structuredContent`; the text block is a compact rendering for the model",
        "(ids, revisions, bodies, issues and the exact next call: `mcp/render.py`). `KAERU_TEXT=json` makes",
        "the text the envelope's JSON instead; `KAERU_STRUCTURED=off` sends no `structuredContent` and lists",
        "no output schemas, for clients that would otherwise show their model the JSON and drop the text",
        "(Claude Code, VS Code, Codex: decision 18.C1).",
        "",
        "These are all the tools. `kaeru serve --tools LIST` (`KAERU_TOOLS`) offers fewer: `core` is",
        f"{', '.join(f'`{name}`' for name in CORE)}; a server so narrowed",
        "lists only those, refuses a call of another as not served here, and ends its instructions with",
        "the list (decision 439).",
        "",
        "## Server instructions",
        "",
        "```text",
        INSTRUCTIONS,
        "```",
        "",
        *size_table(listing, answers),
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
        exact = input_for(tool["name"])  # the schema that validates: NodeRef and the rest by name
        props = exact.get("properties", {})
        required = set(exact.get("required", []))
        lines += ["| parameter | type | required | description |", "|---|---|---|---|"]
        defs = exact.get("$defs", {})
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
    from kaeru.api import schemas

    INPUTS.write_text(json.dumps(exact_inputs(), indent=1, ensure_ascii=False) + "\n")
    schemas._pinned_inputs.cache_clear()  # the listing below serves the inputs just written
    listing = tools_listing()
    SNAPSHOT.write_text(json.dumps(listing, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
    DOC.write_text(render(listing))
    ERRORS.write_text(render_errors())
    README.write_text(readme_figure(listing, README.read_text()))
    print(
        f"wrote {INPUTS.relative_to(ROOT)}, {SNAPSHOT.relative_to(ROOT)}, {DOC.relative_to(ROOT)} and the"
        f" README's figure ({len(listing)} tools)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
