"""A `request_id` longer than PostgreSQL's replay index holds is refused on `request_id`, nothing
written: it was refused as "the text is too large for PostgreSQL's full-text index … split it into
several notes", of a one-character note (decision 443). SQLite's index takes any length."""

from __future__ import annotations

import random
import string
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec


def test_a_replay_key_past_the_index_is_refused_on_request_id(vault: VaultSpec, service: Service) -> None:
    if vault.backend != "postgres":
        pytest.skip("PostgreSQL's b-tree entry bound")
    run: Any = build_server(service).registry.run
    rng = random.Random(7)
    letters = "".join(rng.choice(string.ascii_letters) for _ in range(3_000))  # pglz cannot shrink it
    for key, field in ((letters, "request_id"), ("r" * 1_000_000, None)):
        answer = run("note", {"initiative": "weir", "text": "t", "request_id": key})
        assert answer["state"] == "rejected", answer
        [issue] = answer["issues"]
        assert issue["field"] == field and "request_id" in issue["message"], issue
        assert "full-text index" not in issue["message"]
    assert run("note", {"initiative": "weir", "text": "t", "request_id": letters[:36]})["state"] == "applied"
    found = run("search", {"initiatives": ["weir"], "text": "t"})
    assert found["data"]["total"] == 1, "only the note with a key that fits was written"
