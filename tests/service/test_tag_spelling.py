"""A tag filter that matched nothing because the scope spells the tag otherwise says so.

Tags match exactly (case and accents included) while `search`'s words do not: an agent that tagged
its notes `Backend` and later filtered on `backend` got `ok`, no hit, and no hint. The answer stays
the same (no hit); a warning on the filter's position names the spellings the scope does carry."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service

P = "tagged"


@pytest.fixture
def run(service: Service) -> Any:
    registry = build_server(service).registry
    for text, tags in (
        ("the cache layer is slow under load", ["Backend", "Café-notes"]),
        ("the login page flickers", ["frontend"]),
    ):
        assert registry.run("note", {"initiative": P, "text": text, "tags": tags})["state"] == "applied"
    return registry.run


def _warnings(answer: dict[str, Any]) -> list[tuple[str | None, str]]:
    return [(i["field"], i["message"]) for i in answer["issues"]]


def test_a_search_whose_tag_is_spelled_otherwise_names_the_spelling(run: Any) -> None:
    answer = run("search", {"initiatives": [P], "text": "cache", "filters": {"tags": ["frontend", "backend"]}})
    assert answer["state"] == "ok" and answer["data"]["total"] == 0  # the answer itself is unchanged
    [(field, message)] = _warnings(answer)
    assert field == "filters.tags.1" and "'backend'" in message and "'Backend'" in message


def test_accents_count_as_case_does(run: Any) -> None:
    answer = run("search", {"initiatives": [P], "filters": {"tags": ["cafe-notes"]}})
    assert answer["data"]["total"] == 0
    [(field, message)] = _warnings(answer)
    assert field == "filters.tags.0" and "'Café-notes'" in message


def test_recall_says_it_too(run: Any) -> None:
    answer = run("recall", {"initiatives": [P], "query": "cache layer", "tags": ["BACKEND"]})
    assert answer["data"]["hits"] == []
    [(field, message)] = _warnings(answer)
    assert field == "tags.0" and "'Backend'" in message


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("cache", ["Backend"]),  # spelled as stored: found, nothing to say
        ("login", ["Backend"]),  # carried as asked; the words left it out: an empty answer says enough
        ("cache", ["database"]),  # no node carries it in any spelling: the same
    ],
)
def test_nothing_is_said_when_the_tag_is_carried_as_asked_or_not_at_all(run: Any, text: str, tags: list[str]) -> None:
    answer = run("search", {"initiatives": [P], "text": text, "filters": {"tags": tags}})
    assert answer["issues"] == []


def test_recall_matches_a_tag_sent_decomposed(run: Any) -> None:
    """`recall` compared the tags as sent: `Café` with its accent apart (a macOS file name, a
    terminal) missed the node `search` finds; both now take the stored form (decision 184)."""
    answer = run("recall", {"initiatives": [P], "query": "cache layer", "tags": ["Cafe\u0301-notes"]})
    assert [h["name"] for h in answer["data"]["hits"]][:1] and answer["issues"] == []
    assert "cache" in answer["data"]["hits"][0]["body"]
