"""What recall leaves out unless asked lends nothing and is said when it was the answer.

A year-long project's facts stated once go cold (decision 332): `recall "where is redis"` left the
cold `redis-host` out, as it should without `include_stale`, but its neighbours in time — tasks
written the same week, unrelated to redis — were lifted by it (the temporal channel seeded from
the candidates before the filters) and answered in its place, with the fact itself only counted
in "hits 1 (stale)". A hit the answer will not show now seeds no neighbour, and when the best match
is archived, `next_step` is the same recall with `include_stale: true`.

A rule replaced by a newer one is not in force (`context` leaves it out, and so does recall's rules
channel); found by its words, recall still listed it. It is now suppressed as a released rule is:
counted, and shown with `include_suppressed` (or `include_superseded`, which asks for it). Both
backends, through the tool registry."""

from __future__ import annotations

from typing import Any

from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.recall.helpers import hit_ids, made_id

P = "atlas"
CHATTER = (
    "Task 10: fix email templates",
    "Task 11: refactor CSV import",
    "Deployed atlas v1.0.11 to staging; smoke tests green.",
    "Task 12: add admin audit log",
)


def test_an_archived_match_lifts_no_neighbour_and_is_asked_back(service: Service) -> None:
    run = build_server(service).registry.run

    def note(text: str, **extra: Any) -> str:
        return made_id(run("note", {"initiative": P, "text": text, **extra}))

    before = [note(t) for t in CHATTER[:2]]
    fact = note("Redis runs on cache1.internal, port 6379.", options={"layer": "cold"})
    after = [note(t) for t in CHATTER[2:]]
    asked = {"initiatives": [P], "query": "where is redis"}
    answer = run("recall", asked)
    # The tasks written around the archived fact are not answered for it.
    assert not set(hit_ids(answer)) & {*before, *after}, answer["data"]["hits"]
    assert {"section": "hits", "count": 1, "reason": "stale"} in answer["coverage"]["omitted"]
    # The answer says the best match was left out, with the call that shows it.
    step = answer["data"]["next_step"]
    assert step["tool"] == "recall" and step["calls"] == [{**asked, "include_stale": True}], step
    assert "archived" in compact(answer) and '"include_stale":true' in compact(answer)
    assert hit_ids(run("recall", step["calls"][0]))[0] == fact
    # A match shown still lends to its neighbours: the archived fact moved back to warm.
    assert run("layer", {"initiative": P, "nodes": [fact], "layer": "warm"})["state"] == "applied"
    lifted = run("recall", asked)
    assert hit_ids(lifted)[0] == fact and set(hit_ids(lifted)) & {*before, *after}
    assert lifted["data"]["next_step"]["tool"] == "read"


def test_an_archived_superseded_match_is_not_asked_back(service: Service) -> None:
    """Archived and superseded: no answer to send the caller back for."""
    run = build_server(service).registry.run
    old = made_id(run("note", {"initiative": P, "text": "Redis runs on cache1.internal, redis port 6379 (redis 6)."}))
    assert run("layer", {"initiative": P, "nodes": [old], "layer": "cold"})["state"] == "applied"
    made_id(
        run(
            "note",
            {"initiative": P, "text": "Moved to cache2.internal.", "link_to": {"id": old}, "edge_type": "supersedes"},
        )
    )
    answer = run("recall", {"initiatives": [P], "query": "where is redis"})
    assert {"section": "hits", "count": 1, "reason": "stale"} in answer["coverage"]["omitted"]
    assert (answer["data"]["next_step"] or {}).get("tool") != "recall", answer["data"]["next_step"]
    assert old not in hit_ids(answer)


def test_a_replaced_rule_is_suppressed(service: Service) -> None:
    run = build_server(service).registry.run

    def rule(name: str, text: str, **extra: Any) -> str:
        return made_id(run("note", {"initiative": P, "name": name, "text": text, "kind": "rule", **extra}))

    # Named as a project names its rules: the old one's name answers "what rules apply" as well.
    old = rule("rule-min-python-312", "Code must support Python 3.12 as the minimum version.")
    new = rule(
        "rule-min-python-313",
        "Code must support Python 3.13 as the minimum version.",
        link_to={"id": old},
        edge_type="supersedes",
    )
    other = rule("rule-no-friday-deploys", "Never deploy to production on a Friday.")
    asked = {"initiatives": [P], "query": "what rules apply"}
    answer = run("recall", asked)
    found = hit_ids(answer)
    assert {new, other} <= set(found) and old not in found, found
    assert {"section": "hits", "count": 1, "reason": "suppressed"} in answer["coverage"]["omitted"]
    # Found by its own words too, it is held back.
    assert old not in hit_ids(run("recall", {**asked, "query": "python 3.12 minimum version"}))
    # Asked for, it is shown (and marked superseded).
    for extra in ({"include_suppressed": True}, {"include_superseded": True}):
        hits = run("recall", {**asked, **extra})["data"]["hits"]
        assert [h["currentness"] for h in hits if h["id"] == old] == ["superseded"], extra
