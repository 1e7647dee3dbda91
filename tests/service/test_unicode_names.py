"""One name, two encodings (decision 184): `café` typed as `e` + a combining accent (a macOS file
name, a terminal) and as one code point (a model), `プロジェクト` with its voiced marks apart or
composed, look the same and are the same initiative, node name, tag and grant — including a name an
older kaeru stored in the decomposed form."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import apsw
import psycopg
import pytest

from kaeru.mcp.adapter import ToolRegistry
from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.records import TokenRecord
from tests.backends import VaultSpec
from tests.cli.support import kaeru

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


def _store_decomposed(vault: VaultSpec, node_id: str, name: str, tags: list[str]) -> None:
    """What a kaeru before decision 184 (or an archive it exported) stored: the name and tags as sent."""
    if vault.backend == "sqlite":
        conn = apsw.Connection(str(vault.settings().sqlite_path))
        conn.set_busy_timeout(10_000)
        conn.execute("UPDATE nodes SET name = ?, tags = ? WHERE id = ?", (name, json.dumps(tags), node_id))
        conn.close()
    else:
        assert vault.database_url
        with psycopg.connect(vault.database_url, autocommit=True) as conn:
            conn.execute("UPDATE nodes SET name = %s, tags = %s WHERE id = %s", (name, tags, node_id))


def test_a_node_name_and_tag_an_older_kaeru_stored_decomposed_answer_to_either_form(vault: VaultSpec, run: Any) -> None:
    made = run("note", {"initiative": "web", "text": "the menu lists the hours", "name": "hours", "tags": ["x"]})
    node_id = made["data"]["primary"]["id"]
    _store_decomposed(vault, node_id, nfd("café-hours"), ["kind:observation", nfd("topic:café")])
    for ref in (nfd("café-hours"), nfc("café-hours"), {"initiative": "web", "name": nfc("café-hours")}):
        read = run("read", {"initiative": "web", "node": ref})
        assert read["state"] == "ok" and read["data"]["hits"][0]["id"] == node_id, (ref, read["issues"])
    for form in (nfd("topic:café"), nfc("topic:café")):
        tagged = run("search", {"initiatives": ["web"], "filters": {"tags": [form]}})
        assert [h["id"] for h in tagged["data"]["hits"]] == [node_id], form


def test_an_initiative_stored_decomposed_is_renamed_to_its_composed_form(service: Service, run: Any) -> None:
    with service.store.write() as session:
        session.create_initiative(nfd("café"), "2026-11-01T00:00:00.000000Z")
    renamed = run("initiative", {"action": "rename", "initiative": nfd("café"), "to": nfc("café")})
    assert renamed["state"] == "applied", renamed["issues"]
    assert [i["name"] for i in run("initiatives", {})["data"]["initiatives"]] == [nfc("café")]


def test_a_name_the_contract_accepts_is_not_refused_for_growing_in_nfc(run: Any) -> None:
    grows = "\u0958" * 100  # each becomes two code points in NFC: 200 characters
    assert len(nfc(grows)) == 200
    written = run("note", {"initiative": grows, "text": "a note", "tags": [grows]})
    assert written["state"] == "applied", written["issues"]


def test_a_prefix_in_either_form_lists_the_initiative(run: Any) -> None:
    run("note", {"initiative": nfc("Café-menus"), "text": "a note"})
    for prefix in (nfd("café"), nfc("CAFÉ"), nfd("CAFÉ-m")):
        listed = run("initiatives", {"prefix": prefix})["data"]["initiatives"]
        assert [i["name"] for i in listed] == [nfc("Café-menus")], prefix


def test_twins_an_older_kaeru_split_are_named_by_the_doctor_and_joined_as_it_says(
    vault: VaultSpec, service: Service, run: Any
) -> None:
    with service.store.write() as session:  # the older kaeru's split: one project, two initiatives
        session.create_initiative(nfd("café"), "2026-11-01T00:00:00.000000Z")
        session.create_initiative(nfc("café"), "2026-11-02T00:00:00.000000Z")
    run("note", {"initiative": nfc("café"), "text": "a note in the composed one"})
    with service.store.write() as session:
        twin = session.initiative_by_name(nfd("café"))
        assert twin is not None and twin.name == nfd("café")

    def names_check() -> dict[str, str]:
        checks = {c["name"]: c for c in kaeru(vault, "doctor", as_json=True).json()["checks"]}
        return checks["names"]

    assert names_check()["status"] == "warn"
    # The doctor's fix, step by step.
    assert run("initiative", {"action": "rename", "initiative": nfc("café"), "to": "cafe-tmp"})["state"] == "applied"
    merged = run("initiative", {"action": "merge", "initiative": nfc("café"), "to": "cafe-tmp"})
    assert merged["state"] == "applied", merged["issues"]
    assert run("initiative", {"action": "rename", "initiative": "cafe-tmp", "to": nfc("café")})["state"] == "applied"
    assert [i["name"] for i in run("initiatives", {})["data"]["initiatives"]] == [nfc("café")]
    assert names_check()["status"] == "ok"


@pytest.mark.parametrize("name", ["\u200b", "\u202e", "\u200e\u200f", "\u3164", "\u2060 \u2800", "\ufeff"])
def test_an_initiative_name_that_draws_nothing_is_refused_and_nothing_is_created(run: Any, name: str) -> None:
    """A zero-width space or a direction override pasted as a project name passed the blank check
    (`str.strip` keeps it) and made an initiative that lists as empty and cannot be typed back
    (decision 240); a rename to one is refused the same way."""
    refused = run("note", {"initiative": name, "text": "a note"})
    assert refused["state"] == "rejected", refused
    issue = refused["issues"][0]
    assert issue["code"] == "invalid_argument" and issue["field"] == "initiative", issue
    assert f"U+{ord(name[0]):04X}" in issue["message"], issue
    assert run("initiatives", {})["data"]["initiatives"] == []
    run("note", {"initiative": "visible", "text": "a note"})
    renamed = run("initiative", {"action": "rename", "initiative": "visible", "to": name})
    assert renamed["state"] == "rejected" and renamed["issues"][0]["field"] == "to", renamed
    assert [i["name"] for i in run("initiatives", {})["data"]["initiatives"]] == ["visible"]


@pytest.mark.parametrize("name", ["👨\u200d👩\u200d👧", "\u200fשלום", "a\u200bb"])
def test_a_name_with_format_characters_among_visible_ones_is_kept(run: Any, name: str) -> None:
    """Joiners in an emoji sequence, a direction mark before a Hebrew word: characters that draw
    nothing alone are part of names that draw something."""
    written = run("note", {"initiative": name, "text": "a note"})
    assert written["state"] == "applied" and "new_initiative" in _codes(written), written["issues"]
