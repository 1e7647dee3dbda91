"""One name, two encodings (decision 184): `café` typed as `e` + a combining accent (a macOS file
name, a terminal) and as one code point (a model), `プロジェクト` with its voiced marks apart or
composed, look the same and are the same initiative, node name, tag and grant — including a name an
older kaeru stored in the decomposed form."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest

from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.records import TokenRecord

NAMES = ["café", "プロジェクト", "Ångström-notes"]


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@pytest.fixture
def run(service: Service) -> Any:
    registry: ToolRegistry = build_server(service).registry
    return registry.run


def _codes(envelope: dict[str, Any]) -> list[str]:
    return [issue["code"] for issue in envelope["issues"]]


@pytest.mark.parametrize("name", NAMES)
def test_both_forms_of_a_name_are_one_initiative(run: Any, name: str) -> None:
    assert nfd(name) != nfc(name)  # the two forms really differ
    first = run("note", {"initiative": nfd(name), "text": "the first note, from a terminal"})
    assert first["state"] == "applied" and "new_initiative" in _codes(first)
    second = run("note", {"initiative": nfc(name), "text": "the second note, from a model"})
    assert second["state"] == "applied" and "new_initiative" not in _codes(second)
    listed = run("initiatives", {})["data"]["initiatives"]
    assert [i["name"] for i in listed] == [nfc(name)]
    for form in (nfd(name), nfc(name)):
        found = run("search", {"text": "note", "initiatives": [form]})
        assert found["data"]["total"] == 2, form


def test_a_node_name_and_a_tag_answer_to_either_form(run: Any) -> None:
    made = run(
        "note",
        {
            "initiative": "web",
            "text": "the menu lists the café's hours",
            "name": nfd("café-hours"),
            "tags": [nfd("topic:café")],
        },
    )
    assert made["state"] == "applied"
    made_id = made["data"]["primary"]["id"]
    for ref in ({"initiative": "web", "name": nfc("café-hours")}, nfd("café-hours"), nfc("café-hours")):
        read = run("read", {"initiative": "web", "node": ref})
        assert read["state"] == "ok", (ref, read["issues"])
        (node,) = read["data"]["hits"]
        assert node["id"] == made_id
    assert node["name"] == nfc("café-hours") and nfc("topic:café") in node["tags"]
    tagged = run("search", {"initiatives": ["web"], "filters": {"tags": [nfd("topic:café")]}})
    assert [h["id"] for h in tagged["data"]["hits"]] == [made_id]


def test_an_initiative_an_older_kaeru_stored_decomposed_is_found_and_not_split(service: Service, run: Any) -> None:
    legacy = nfd("café")
    with service.store.write() as session:  # what a kaeru before decision 184 wrote
        session.create_initiative(legacy, "2026-11-01T00:00:00.000000Z")
    written = run("note", {"initiative": nfc("café"), "text": "written after the upgrade"})
    assert written["state"] == "applied" and "new_initiative" not in _codes(written)
    assert [i["name"] for i in run("initiatives", {})["data"]["initiatives"]] == [legacy]
    assert run("search", {"text": "upgrade", "initiatives": [nfc("café")]})["data"]["total"] == 1
    assert run("context", {"initiative": nfc("café")})["state"] == "ok"


def test_a_grant_made_in_either_form_admits_both(service: Service, run: Any) -> None:
    run("note", {"initiative": "café", "text": "a granted note"})
    run("note", {"initiative": "other", "text": "a note outside the grant"})
    record = TokenRecord("old-token", "0" * 64, (nfd("café"),), False, "2026-11-01T00:00:00.000000Z")
    with grants.acting(grants.principal_of(record)):
        for form in (nfd("café"), nfc("café")):
            found = run("search", {"text": "note", "initiatives": [form]})
            assert found["state"] == "ok" and found["data"]["total"] == 1, form
        assert [i["name"] for i in run("initiatives", {})["data"]["initiatives"]] == [nfc("café")]
        refused = run("search", {"text": "note", "initiatives": ["other"]})
        assert refused["state"] == "rejected" and _codes(refused) == ["forbidden"]
