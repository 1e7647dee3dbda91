"""Every issue code the source can put in an answer is one `docs/errors.md` explains.

`docs/errors.md` is generated from `errors.ISSUE_CODES` (test_tools_snapshot), but nothing tied the
table to the codes the code writes: `kaeru import-from` answered `name_cleaned` and
`read_graph_file`, which no table explained (the docs-truth probe, session 49). Read from the source
itself: each `Issue("code", …)` and each error class's `code = "…"`."""

from __future__ import annotations

import ast
from pathlib import Path

from kaeru.errors import ISSUE_CODES

SRC = Path(__file__).resolve().parents[2] / "src" / "kaeru"


def _codes_written() -> dict[str, str]:
    """code → the first file:line that writes it."""
    found: dict[str, str] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            code: ast.expr | None = None
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Issue":
                code = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "code"), None)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.Assign) and any(getattr(t, "id", None) == "code" for t in item.targets):
                        code = item.value
            if isinstance(code, ast.Constant) and isinstance(code.value, str):
                found.setdefault(code.value, f"{path.relative_to(SRC)}:{node.lineno}")
    return found


def test_every_issue_code_written_is_documented() -> None:
    written = _codes_written()
    assert len(written) > 30, "the scan finds the codes the source writes"
    assert {"ambiguous_ref", "not_embedded", "duplicate_key"} <= set(written), sorted(written)
    undocumented = {code: where for code, where in written.items() if code not in ISSUE_CODES}
    assert not undocumented, f"codes an answer can carry that docs/errors.md does not explain: {undocumented}"
