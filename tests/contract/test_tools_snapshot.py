"""`tools/list` is pinned: names, descriptions, schemas and annotations change only on purpose.

After an intended change run `python scripts/gen_tools_doc.py` and review the diff of the
snapshot and of docs/tools.md.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_tools_doc", ROOT / "scripts" / "gen_tools_doc.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tools_list_matches_the_checked_in_snapshot() -> None:
    gen = _generator()
    pinned = json.loads((ROOT / "src" / "kaeru" / "mcp" / "tools.json").read_text())
    live = json.loads(json.dumps(gen.tools_listing(), sort_keys=True))
    assert live == pinned, "tools/list changed: run `python scripts/gen_tools_doc.py` and review the diff"


def test_the_pinned_input_schemas_are_the_ones_the_models_and_the_contract_give() -> None:
    """`input_for` validates every call (and the listing serves) from `inputs.json`: it must be what
    the request models and the contract build today, properties in the same order."""
    gen = _generator()
    pinned = json.loads((ROOT / "src" / "kaeru" / "api" / "inputs.json").read_text())
    live = gen.exact_inputs()
    assert json.dumps(live) == json.dumps(pinned), "an input schema changed: run `python scripts/gen_tools_doc.py`"


def test_docs_tools_md_is_generated_from_tools_list() -> None:
    gen = _generator()
    assert (ROOT / "docs" / "tools.md").read_text() == gen.render(gen.tools_listing())


def test_docs_errors_md_lists_every_issue_code() -> None:
    gen = _generator()
    assert (ROOT / "docs" / "errors.md").read_text() == gen.render_errors()
