"""A history entry whose description alone is past a trail page's text bound (a summary pasted as
a whole document): the page shows its start, `description_range` says how much, and the warning
names the `read` that shows all of it — which does. Both backends."""

from __future__ import annotations

import json
import re
from typing import Any

from kaeru.service.trail_pages import HISTORY_PAGE_CHARS
from tests.working.conftest import Call


def _pages(call: Call, **args: Any) -> list[dict[str, Any]]:
    pages = [call("trail", **args)]
    while pages[-1].get("continuation"):
        pages.append(call("trail", **pages[-1]["continuation"]["next_arguments"]))
    return pages


def test_a_long_description_is_cut_in_its_entry_and_the_warning_names_the_read_of_it_all(call: Call) -> None:
    node = call("note", initiative="docs", text="the short body", name="spec")["data"]["primary"]["id"]
    description = " ".join(f"clause{i}" for i in range(HISTORY_PAGE_CHARS // 4))  # past the bound
    assert call("revise", initiative="docs", node=node, patch={"description": description})["state"] == "applied"
    pages = _pages(call, initiative="docs", node=node, kind="history")
    entries = [e for p in pages for e in p["data"]["entries"]]
    assert [e["node"]["revision"].split("-")[0] for e in entries] == ["1", "2"]
    revised = entries[1]["node"]
    shown = revised["description_range"]
    assert shown["start"] == 0 and 0 < shown["end"] < shown["total"] == len(description)
    assert revised["description"] == description[: shown["end"]]
    [warning] = [i for p in pages for i in p["issues"] if i["code"] == "budget_truncated"]
    said = warning["message"]
    assert f"description {shown['end']} of {len(description)}" in said, said
    [asked] = {m for m in re.findall(r"read (\{.*?\})(?:;|$)", said)}
    whole = call("read", **json.loads(asked))
    assert whole["data"]["hits"][0]["description"] == description
