"""The secret guard on names and labels (security probe, finding 5): an initiative's name — made by
any write, or by a rename — and a board's column labels and keys are screened as node names are,
and kaeru's own bearer tokens are secrets too. A name is a handle: under `redact` it is refused,
never redacted (decision 352). Both backends."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants
from kaeru.storage.base import Store
from tests.backends import VaultSpec

#: A correctly shaped fake GitHub token (rule github_pat).
SECRET = "ghp_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
#: A secret that is also a valid column key (rule openai_key): lower-case letters, digits and `-`.
KEY_SECRET = "sk-" + "q7w8e9r0t1y2u3i4o5p6"

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


def runner(store: Store, vault: VaultSpec, policy: str) -> Run:
    run: Run = build_server(Service(store, vault.settings(secret_policy=policy))).registry.run
    return run


@pytest.fixture
def run(store: Store, vault: VaultSpec) -> Run:
    return runner(store, vault, "reject")


def names(run: Run) -> list[str]:
    return [i["name"] for i in run("initiatives", {})["data"]["initiatives"]]


def refused(envelope: dict[str, Any], field: str) -> None:
    """`envelope` is a refusal for a secret in `field` that does not say the secret back."""
    assert envelope["state"] == "rejected", envelope
    assert [(i["code"], i["field"]) for i in envelope["issues"]] == [("secret_detected", field)]
    assert SECRET not in json.dumps(envelope) and KEY_SECRET not in json.dumps(envelope)


#: A first write to a new initiative, by every tool that can make one.
FIRST_WRITES: list[tuple[str, dict[str, Any]]] = [
    ("note", {"text": "the pump hums"}),
    ("claim", {"text": "the pump fails when cold"}),
    ("task", {"text": "oil the pump"}),
    ("initiative", {"action": "set_board", "columns": [{"key": "open"}, {"key": "done"}]}),
]


@pytest.mark.parametrize("policy", ["reject", "redact"])
@pytest.mark.parametrize(("tool", "args"), FIRST_WRITES, ids=[t for t, _ in FIRST_WRITES])
def test_a_secret_in_a_new_initiative_name_is_refused_and_nothing_is_made(
    store: Store, vault: VaultSpec, policy: str, tool: str, args: dict[str, Any]
) -> None:
    """Under `reject` and `redact` alike: `secret_detected` on `initiative`, no initiative made (not
    even an empty one), and a later write's did-you-mean cannot offer the name back."""
    run = runner(store, vault, policy)
    assert run("note", {"initiative": "deploy", "text": "the first project"})["state"] == "applied"
    refused(run(tool, {"initiative": f"deploy {SECRET}", **args}), "initiative")
    assert names(run) == ["deploy"]
    made = run("note", {"initiative": "deploy2", "text": "another project"})
    assert made["state"] == "applied" and "new_initiative" in [i["code"] for i in made["issues"]]
    assert SECRET not in json.dumps(made)


def test_attach_to_a_new_initiative_named_with_a_secret_is_refused(run: Run) -> None:
    """`attach` makes its initiative too: the node stays where it was."""
    node = run("note", {"initiative": "deploy", "text": "the pump hums"})["data"]["primary"]["id"]
    refused(run("initiative", {"initiative": f"p {SECRET}", "action": "attach", "node": node}), "initiative")
    assert names(run) == ["deploy"]
    assert run("read", {"initiative": "deploy", "node": node})["data"]["hits"][0]["initiatives"] == ["deploy"]


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_a_rename_or_merge_to_a_secret_is_refused_and_the_names_are_kept(
    store: Store, vault: VaultSpec, policy: str
) -> None:
    run = runner(store, vault, policy)
    for name in ("deploy", "ops"):
        assert run("note", {"initiative": name, "text": f"notes of {name}"})["state"] == "applied"
    refused(run("initiative", {"initiative": "deploy", "action": "rename", "to": f"deploy {SECRET}"}), "to")
    # A merge names an existing initiative: a secret there is refused before it is looked up, so the
    # refusal is the secret's, not a "no initiative named '…'" that would say it back.
    refused(run("initiative", {"initiative": "deploy", "action": "merge", "to": f"ops {SECRET}"}), "to")
    assert sorted(names(run)) == ["deploy", "ops"]
    renamed = run("initiative", {"initiative": "deploy", "action": "rename", "to": "deploy-2026"})
    assert renamed["state"] == "applied"


def test_an_initiative_named_with_a_secret_before_stays_reachable_to_be_renamed(store: Store, vault: VaultSpec) -> None:
    """A vault written under `allow` (or by an older kaeru) may hold such a name: under `reject` it
    is still written to and read by it, and can be renamed to a clean one."""
    leaked = f"deploy {SECRET}"
    assert runner(store, vault, "allow")("note", {"initiative": leaked, "text": "old note"})["state"] == "applied"
    run = runner(store, vault, "reject")
    assert run("note", {"initiative": leaked, "text": "a newer note"})["state"] == "applied"
    assert run("initiative", {"initiative": leaked, "action": "rename", "to": "deploy"})["state"] == "applied"
    assert names(run) == ["deploy"]


def _columns(run: Run, initiative: str) -> list[dict[str, str]]:
    """The board's columns as `context` shows them."""
    sections = run("context", {"initiative": initiative, "sections": ["tasks"]})["data"]["sections"]
    columns: list[dict[str, str]] = next(s["columns"] for s in sections if s["name"] == "tasks")
    return columns


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_a_secret_in_a_column_key_is_refused(store: Store, vault: VaultSpec, policy: str) -> None:
    """A key is what tasks are filed and moved by: a handle, refused under `redact` too."""
    run = runner(store, vault, policy)
    assert run("task", {"initiative": "deploy", "text": "oil the pump"})["state"] == "applied"
    before = _columns(run, "deploy")
    columns = [{"key": "open"}, {"key": KEY_SECRET, "label": "Doing"}]
    refused(run("initiative", {"initiative": "deploy", "action": "set_board", "columns": columns}), "columns[1].key")
    assert _columns(run, "deploy") == before


def test_a_secret_in_a_column_label_is_refused_under_reject(run: Run) -> None:
    assert run("task", {"initiative": "deploy", "text": "oil the pump"})["state"] == "applied"
    before = _columns(run, "deploy")
    columns = [{"key": "open", "label": "Open"}, {"key": "done", "label": f"done with {SECRET}"}]
    refused(run("initiative", {"initiative": "deploy", "action": "set_board", "columns": columns}), "columns[1].label")
    assert _columns(run, "deploy") == before


def test_a_secret_in_a_column_label_is_redacted_under_redact(store: Store, vault: VaultSpec) -> None:
    """A label is text shown, not a handle: redacted like a body, the rest of it kept."""
    run = runner(store, vault, "redact")
    columns = [{"key": "open", "label": "Open"}, {"key": "done", "label": f"done with {SECRET}"}]
    applied = run("initiative", {"initiative": "deploy", "action": "set_board", "columns": columns})
    assert applied["state"] == "applied"
    assert ("secret_detected", "columns[1].label") in [(i["code"], i["field"]) for i in applied["issues"]]
    assert _columns(run, "deploy") == [
        {"key": "open", "label": "Open"},
        {"key": "done", "label": "done with [REDACTED:github_pat]"},
    ]


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_a_kaeru_token_in_a_note_is_a_secret(store: Store, vault: VaultSpec, policy: str) -> None:
    """The token `kaeru token add` prints (made here by the same code) is caught on its own, not
    only after `token:` or `Bearer`: refused under `reject`, redacted under `redact`."""
    service = Service(store, vault.settings(secret_policy=policy))
    token, _ = grants.add_token(service.rt, "ci", None, False, "test")
    run = build_server(service).registry.run
    text = f"connect the runner with {token} then restart it"
    answer = run("note", {"initiative": "deploy", "text": text})
    if policy == "reject":
        refused(answer, "text")
        assert token not in json.dumps(answer)
        return
    assert answer["state"] == "applied"
    body = run("read", {"initiative": "deploy", "node": answer["data"]["primary"]["id"]})["data"]["hits"][0]["body"]
    assert body == "connect the runner with [REDACTED:kaeru_token] then restart it"


def _held_slots(run: Run, initiative: str) -> dict[str, str]:
    """The slots `context` lists as held in `initiative`: slot name → holder id."""
    answer = run("context", {"initiative": initiative, "sections": ["slots"]})
    sections = {s["name"]: s for s in answer["data"]["sections"]}
    return dict(sections["slots"]["holders"]) if "slots" in sections else {}


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_a_secret_as_a_request_id_is_refused_and_nothing_is_written(
    store: Store, vault: VaultSpec, policy: str
) -> None:
    """A request id is a handle (a retry names the write by it): a secret there is refused under
    `reject` and `redact` alike, as a name is, and the write is not applied (decision 362)."""
    run = runner(store, vault, policy)
    assert run("note", {"initiative": "deploy", "text": "the first project"})["state"] == "applied"
    answer = run("note", {"initiative": "deploy", "text": "the pump hums", "request_id": SECRET})
    assert answer["state"] == "rejected", answer
    assert [(i["code"], i["field"]) for i in answer["issues"]] == [("secret_detected", "request_id")]
    assert SECRET not in answer["issues"][0]["message"]  # the envelope echoes the caller's id; nothing else does
    hits = run("search", {"initiatives": ["deploy"], "text": "pump"})["data"]["hits"]
    assert hits == []
    again = run("note", {"initiative": "deploy", "text": "the pump hums", "request_id": "retry-1"})
    assert again["state"] == "applied"


@pytest.mark.parametrize("policy", ["reject", "redact"])
def test_a_secret_as_a_slot_name_is_refused_and_the_slot_is_not_taken(
    store: Store, vault: VaultSpec, policy: str
) -> None:
    """A slot name fits `^[a-z][a-z0-9_-]*$`, as `sk-…` keys and Slack tokens do: named by `note`'s
    `options.slot` or by `slot`, such a name is refused and no slot is held (decision 362)."""
    run = runner(store, vault, policy)
    node = run("note", {"initiative": "deploy", "text": "the pump hums"})["data"]["primary"]["id"]
    refused(run("slot", {"initiative": "deploy", "slot": KEY_SECRET, "node": node}), "slot")
    noted = run("note", {"initiative": "deploy", "text": "the valve leaks", "options": {"slot": KEY_SECRET}})
    refused(noted, "options.slot")
    assert _held_slots(run, "deploy") == {}
    assert run("search", {"initiatives": ["deploy"], "text": "valve"})["data"]["hits"] == []
    assert run("slot", {"initiative": "deploy", "slot": "current-pump", "node": node})["state"] == "applied"
    assert _held_slots(run, "deploy") == {"current-pump": node}
