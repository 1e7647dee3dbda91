"""A request id is one caller's (the many-people HTTP probe, session 51; decision 476).

Replay was keyed by initiative, operation and request id, and "the same call" digested only the
arguments (and a limited caller's grant). Two people whose agents both sent `note-1` with the same
text got one note: the second was answered with the first one's stored outcome, `replayed`, and
nothing was written or recorded under their name — also between two tokens limited to the same
initiatives, and between a token that sees everything and the admin. Both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service, grants

Run = Callable[[str, dict[str, Any]], dict[str, Any]]

ANN = grants.Principal("ann")  # every initiative
BEN = grants.Principal("ben")  # every initiative
EVE = grants.Principal("eve", frozenset({"alpha"}))
FAY = grants.Principal("fay", frozenset({"alpha"}))
ADMIN = grants.Principal("the-admin")  # KAERU_AUTH_TOKEN's caller: every initiative, its actor's name

CALL = {"initiative": "alpha", "text": "the invoice total rounds half up", "request_id": "note-1"}


@pytest.fixture
def run(service: Service) -> Run:
    return build_server(service).registry.run


def _as(principal: grants.Principal, run: Run, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    with grants.acting(principal):
        return run(tool, args)


def _history_actors(run: Run, node_id: str) -> list[str]:
    trail = run("trail", {"initiative": "alpha", "node": {"id": node_id}, "kind": "history"})
    return [entry.get("actor") for entry in trail["data"]["entries"]]


@pytest.mark.parametrize(
    ("first", "second"),
    [(ANN, BEN), (EVE, FAY), (ADMIN, ANN)],
    ids=["two-people-with-every-initiative", "two-people-with-one-grant", "the-admin-then-a-person"],
)
def test_another_callers_request_id_is_refused_not_replayed(
    run: Run, first: grants.Principal, second: grants.Principal
) -> None:
    made = _as(first, run, "note", CALL)
    assert made["state"] == "applied" and not made["replayed"]
    other = _as(second, run, "note", CALL)
    # Not the first caller's answer passed off as this one's write …
    assert other["state"] == "rejected" and not other["replayed"], other
    assert [i["code"] for i in other["issues"]] == ["request_id_reused"]
    assert "another caller" in other["issues"][0]["message"]
    # … and the first caller's own retry still replays, writing nothing more.
    again = _as(first, run, "note", CALL)
    assert again["replayed"] and again["data"] == made["data"]
    # With a new id the second caller's note is written, under its own name.
    own = _as(second, run, "note", {**CALL, "request_id": "note-1-b"})
    assert own["state"] == "applied" and not own["replayed"]
    found = run("search", {"initiatives": ["alpha"], "text": "invoice total rounds", "filters": {"current": "all"}})
    assert found["data"]["total"] == 2
    assert _history_actors(run, own["data"]["primary"]["id"]) == [second.name]
    assert _history_actors(run, made["data"]["primary"]["id"]) == [first.name]


def test_the_local_admins_request_ids_replay_as_before(run: Run) -> None:
    """stdio and the CLI (no principal) digest as they always did: stored keys replay after an upgrade."""
    made = run("note", CALL)
    again = run("note", CALL)
    assert again["replayed"] and again["data"] == made["data"]
    assert _as(ANN, run, "note", CALL)["state"] == "rejected"
