"""A revised note is found by what it says now, not by what it used to say (decision 451).

A note's automatic name is its first body's first words and six characters of its id. Once the
body was revised, those words were no longer the body's first, so the name was indexed as one a
person gave — with a name's weight — and `search` and `recall` still found the memory by its old
words (and its vector still meant them). Found by the semantic probe of session 48."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.service import Service
from tests.schema_checked import checked_calls

P = "revised-names"


@pytest.fixture
def call(service: Service) -> Any:
    return checked_calls(service)


def _found(answer: dict[str, Any]) -> list[str]:
    assert answer["state"] == "ok", answer["issues"]
    return [hit["id"] for hit in answer["data"]["hits"]]


def test_a_revised_note_is_not_found_by_its_old_words_and_is_by_its_new(call: Any) -> None:
    written = call("note", initiative=P, text="we rented an automobile in Porto for the coast road")
    node = written["data"]["primary"]
    call("note", initiative=P, text="the ferry to the islands leaves at nine")
    revised = call(
        "revise", initiative=P, node={"id": node["id"]}, patch={"body": "we bought a sailing boat in Lisbon"}
    )
    assert revised["state"] == "applied", revised["issues"]
    for tool in ("search", "recall"):
        old = (
            call(tool, initiatives=[P], query="rented automobile Porto")
            if tool == "recall"
            else call(tool, initiatives=[P], text="rented automobile Porto")
        )
        assert node["id"] not in _found(old), (tool, old["data"]["hits"])
        new = (
            call(tool, initiatives=[P], query="sailing boat Lisbon")
            if tool == "recall"
            else call(tool, initiatives=[P], text="sailing boat Lisbon")
        )
        assert node["id"] in _found(new), (tool, new["data"]["hits"])


def test_a_name_a_person_gave_is_still_searchable(call: Any) -> None:
    written = call("note", initiative=P, text="the cache is warmed at start", name="warm-cache-policy")
    assert written["state"] == "applied", written["issues"]
    assert written["data"]["primary"]["id"] in _found(call("search", initiatives=[P], text="policy"))
