"""`recall`'s `token_budget` says what it holds: the hits' descriptions and bodies, not the answer.

Its description said "Most text in the answer", while only the hits' texts are cut to it: at the
floor of 128 tokens (512 characters) the answer's text was some 2,400 characters, its names, ids
and other fields on top. An agent sizing its context by the budget was told a bound the answer
does not keep. What the agent relies on: the texts the budget bounds keep to it, and the
description names those texts and says the rest comes on top.
"""

from __future__ import annotations

from kaeru.api.schemas import input_for
from kaeru.mcp.adapter import Output, ToolRegistry
from kaeru.mcp.tools import register_tools
from kaeru.service import Service


def test_the_budget_bounds_the_hits_texts_and_says_so(service: Service) -> None:
    registry = ToolRegistry(service)
    register_tools(registry)
    for i in range(8):
        text = f"The ledger cache retries case {i}. " + " ".join(f"ledger cache detail {i}-{k}" for k in range(120))
        registry.run("note", {"initiative": "ledger", "text": text})
    answer = registry.run("recall", {"initiatives": ["ledger"], "query": "ledger cache", "token_budget": 128})
    hits = answer["data"]["hits"]
    assert hits, answer
    texts = sum(len(hit.get("description") or "") + len(hit.get("body") or "") for hit in hits)
    assert texts <= 128 * 4
    assert len(Output().text_of(answer)) > 128 * 4  # the answer as a whole is more
    said = input_for("recall")["properties"]["token_budget"]["description"]
    assert "descriptions and bodies" in said and "on top" in said, said
    assert "in the answer," not in said, said
