"""`kaeru token grant` changes a token's grants keeping its secret, recorded in `token history`;
`--initiative` grants a name that holds a comma, and `token list` shows it unambiguously; `token
list` has a header, `--limit`, `--name` and `--initiative`, says a long grant as a count and shows
times as `token history` does. Both backends, as a person runs the commands."""

from __future__ import annotations

import unicodedata

import pytest

from kaeru.service import Service, grants
from kaeru.storage.base import TokenRecord
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.cli.support import error_object, kaeru

pytestmark = pytest.mark.timeout(300)
UTC = {"KAERU_TIMEZONE": "UTC"}


def _grants_of(vault: VaultSpec, secret: str) -> frozenset[str] | None:
    """What the token `secret` reaches, as the HTTP server reads it for a request."""
    store = open_store(vault.settings())
    try:
        record = grants.verify(store, secret, Service(store, vault.settings()).rt.now())
    finally:
        store.close()
    assert record is not None, "the token is still accepted"
    return grants.principal_of(record).initiatives


def test_grant_changes_a_tokens_initiatives_keeping_its_secret_and_history_says_so(vault: VaultSpec) -> None:
    added = kaeru(vault, "token", "add", "alice", "--initiative", "webshop")
    assert added.code == 0, added.stderr
    secret = added.stdout.strip()

    widened = kaeru(vault, "token", "grant", "alice", "--initiative", "webshop-v2", as_json=True)
    assert widened.json() == {
        "ok": True,
        "name": "alice",
        "initiatives": ["webshop", "webshop-v2"],
        "before": ["webshop"],
        "changed": True,
    }
    assert _grants_of(vault, secret) == {"webshop", "webshop-v2"}
    narrowed = kaeru(vault, "token", "grant", "alice", "--remove", "webshop")
    assert narrowed.code == 0 and "'alice': webshop-v2 (was webshop,webshop-v2); same token" in narrowed.stdout
    replaced = kaeru(vault, "token", "grant", "alice", "--initiative", "infra", "--replace", as_json=True)
    assert replaced.json()["initiatives"] == ["infra"]
    assert _grants_of(vault, secret) == {"infra"}

    history = kaeru(vault, "token", "history", "alice", **UTC).stdout.splitlines()
    assert [line.split("\t")[1] for line in history] == ["granted", "granted", "granted", "added"]
    assert history[0].endswith("\twebshop-v2 → infra") and history[2].endswith("\twebshop → webshop,webshop-v2")
    events = kaeru(vault, "token", "history", "alice", as_json=True).json()["history"]
    assert events[0]["before"]["initiatives"] == ["webshop-v2"] and events[0]["grant"]["initiatives"] == ["infra"]

    # Refused, nothing changed: no such token, no initiative left, an every-initiative token narrowed silently.
    error_object(kaeru(vault, "token", "grant", "nobody", "--initiative", "x", as_json=True), "not_found", 2)
    left = kaeru(vault, "token", "grant", "alice", "--remove", "infra", as_json=True)
    assert "revoke it instead" in error_object(left, "invalid_argument", 2)
    assert kaeru(vault, "token", "add", "root").code == 0
    whole = kaeru(vault, "token", "grant", "root", "--initiative", "web", as_json=True)
    assert "--replace" in error_object(whole, "invalid_argument", 2)
    assert _grants_of(vault, secret) == {"infra"}


def test_a_name_with_a_comma_is_granted_by_initiative_and_listed_quoted(vault: VaultSpec) -> None:
    added = kaeru(vault, "token", "add", "bo", "--initiative", "foo, bar", "--initiative", "baz", as_json=True)
    assert added.json()["initiatives"] == ["foo, bar", "baz"]
    assert _grants_of(vault, added.json()["token"]) == {"foo, bar", "baz"}
    old_style = kaeru(vault, "token", "add", "cy", "--initiatives", "a,b", as_json=True)
    assert old_style.json()["initiatives"] == ["a", "b"]  # kept for the scripts that use it
    lines = kaeru(vault, "token", "list").stdout.splitlines()
    assert lines[1].startswith('bo\t"foo, bar",baz\tread-write\t'), lines
    assert lines[2].startswith("cy\ta,b\tread-write\t"), lines
    history = kaeru(vault, "token", "history", "bo").stdout
    assert '\t"foo, bar",baz; read-write; never expires' in history


def test_list_has_a_header_filters_a_limit_a_count_for_a_long_grant_and_historys_times(vault: VaultSpec) -> None:
    many = [f"proj-{i:03d}" for i in range(40)]
    store = open_store(vault.settings())
    try:
        rt = Service(store, vault.settings()).rt
        grants.add_token(rt, "big", many, False, "owner")
        grants.add_token(rt, "ops-1", ["proj-001"], True, "owner")
        grants.add_token(rt, "ops-2", ["proj-002"], False, "owner")
        grants.add_token(rt, "root", None, False, "owner")
    finally:
        store.close()

    lines = kaeru(vault, "token", "list", **UTC).stdout.splitlines()
    assert lines[0] == "name\tinitiatives\taccess\tcreated\tlast used\texpiry"
    big = lines[1].split("\t")
    assert big[:3] == ["big", "40 initiatives", "read-write"] and len(lines[1]) < 120
    listed = kaeru(vault, "token", "list", as_json=True).json()
    assert listed["tokens"][0]["initiatives"] == many and listed["total"] == 4
    # The same clock as `token history`: the user's zone, to the minute.
    added_at = kaeru(vault, "token", "history", "big", **UTC).stdout.split("\t")[0]
    assert big[3] == added_at and len(added_at) == len("2026-12-07 20:00")

    reaching = kaeru(vault, "token", "list", "--initiative", "proj-001", as_json=True).json()
    assert [t["name"] for t in reaching["tokens"]] == ["big", "ops-1", "root"]
    named = kaeru(vault, "token", "list", "--name", "OPS").stdout.splitlines()
    assert [line.split("\t")[0] for line in named] == ["name", "ops-1", "ops-2"]
    limited = kaeru(vault, "token", "list", "--limit", "2")
    assert [line.split("\t")[0] for line in limited.stdout.splitlines()] == ["name", "big", "ops-1"]
    assert "2 more tokens not shown: --limit 4" in limited.stderr
    page = kaeru(vault, "token", "list", "--limit", "2", as_json=True).json()
    assert [t["name"] for t in page["tokens"]] == ["big", "ops-1"] and page["total"] == 4
    assert kaeru(vault, "token", "list", "--name", "zed").stdout.strip() == "no token matches"


def test_removing_a_name_the_token_lacks_is_refused_and_nothing_changes(vault: VaultSpec) -> None:
    assert kaeru(vault, "token", "add", "alice", "--initiative", "webshop", "--initiative", "infra").code == 0
    # A typo took nothing away and was answered as a success.
    typo = kaeru(vault, "token", "grant", "alice", "--remove", "webshpo", as_json=True)
    assert "no grant 'webshpo' to remove" in error_object(typo, "not_found", 2)
    mixed = kaeru(vault, "token", "grant", "alice", "--remove", "infra", "--remove", "nope", as_json=True)
    assert "no grant 'nope'" in error_object(mixed, "not_found", 2)
    listed = kaeru(vault, "token", "list", as_json=True).json()["tokens"]
    assert listed[0]["initiatives"] == ["webshop", "infra"]
    assert [line.split("\t")[1] for line in kaeru(vault, "token", "history", "alice").stdout.splitlines()] == ["added"]


def test_a_grant_an_older_kaeru_stored_decomposed_is_listed_and_removed_by_its_composed_name(vault: VaultSpec) -> None:
    composed, decomposed = (unicodedata.normalize(form, "café") for form in ("NFC", "NFD"))
    store = open_store(vault.settings())
    try:
        with store.write() as session:  # as an older kaeru stored it: the name as given
            record = TokenRecord("old", grants.digest("kaeru_x"), (decomposed, "bar"), False, "2026-01-01T00:00:00Z")
            assert session.add_token(record)
    finally:
        store.close()
    reaching = kaeru(vault, "token", "list", "--initiative", composed, as_json=True).json()
    assert [t["name"] for t in reaching["tokens"]] == ["old"]
    unchanged = kaeru(vault, "token", "grant", "old", "--initiative", composed, as_json=True).json()
    assert unchanged["changed"] is False  # the same grant, however it was stored
    removed = kaeru(vault, "token", "grant", "old", "--remove", composed, as_json=True).json()
    assert removed["initiatives"] == ["bar"]
