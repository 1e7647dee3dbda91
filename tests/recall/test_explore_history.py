"""`recall` with `task_intent: explore_history` lists every version of the matching memories — their
own revisions and their supersession chains, forgotten predecessors included — oldest first, each
marked with its revision, recorded_at and currentness, and pages like any recall."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from kaeru.mcp.server import build_server
from kaeru.service import Service

P = "proj"


class Tools:
    def __init__(self, service: Service):
        self.registry = build_server(service).registry
        self.schema = Draft202012Validator(self.registry.specs["recall"].output_schema)

    def run(self, tool: str, **args: Any) -> dict[str, Any]:
        envelope = self.registry.run(tool, args)
        assert envelope["state"] in ("ok", "applied"), envelope["issues"]
        return envelope

    def recall(self, **args: Any) -> dict[str, Any]:
        envelope = self.run("recall", initiatives=[P], task_intent="explore_history", **args)
        problems = list(self.schema.iter_errors(envelope))
        assert not problems, problems[0].message
        return envelope

    def note(self, text: str) -> str:
        node_id: str = self.run("note", initiative=P, text=text)["data"]["primary"]["id"]
        return node_id

    def revisions(self, node_id: str) -> list[str]:
        """The node's revisions as `trail history` lists them."""
        trail = self.run("trail", initiative=P, node={"id": node_id}, kind="history")
        return [e["node"]["revision"] for e in trail["data"]["entries"] if "node" in e]


def _story(tools: Tools) -> tuple[str, str, str]:
    """A fact revised twice, then superseded by a node that shares none of its words; a neighbour."""
    old = tools.note("the deploy target is the staging cluster in Frankfurt")
    neighbour = tools.note("the coffee machine on floor three broke again")
    tools.run("revise", initiative=P, node={"id": old}, patch={"description": "where releases go"})
    tools.run("revise", initiative=P, node={"id": old}, patch={"name": "deploy target"})
    new = tools.run(
        "evolve", initiative=P, mode="supersede", source={"id": old}, new_body="releases now ship to Dublin production"
    )["data"]["primary"]["id"]
    return old, new, neighbour


def _keys(envelope: dict[str, Any]) -> list[tuple[str, str]]:
    return [(h["id"], h["revision"]) for h in envelope["data"]["hits"]]


def test_every_version_of_the_matches_in_time_order_each_marked(service: Service) -> None:
    tools = Tools(service)
    old, new, neighbour = _story(tools)
    answer = tools.recall(query="staging cluster Frankfurt", limit=50)
    hits = answer["data"]["hits"]
    assert {h["id"] for h in hits} == {old, new}, "the match and its successor; not a temporal neighbour"
    assert neighbour not in {h["id"] for h in hits}
    old_revisions = tools.revisions(old)
    assert len(old_revisions) >= 3
    assert [r for i, r in _keys(answer) if i == old] == old_revisions, "every revision of the match"
    assert [r for i, r in _keys(answer) if i == new] == tools.revisions(new)
    stamps = [(h["recorded_at"], h["id"]) for h in hits]
    assert stamps == sorted(stamps), "oldest first"
    assert all(h["currentness"] == "superseded" for h in hits if h["id"] == old)
    latest_new = [h for h in hits if h["id"] == new][-1]
    assert latest_new["currentness"] == "current"
    assert answer["data"]["total"] == len(hits)
    assert answer["coverage"]["complete"] is True and answer["coverage"]["omitted"] == []
    calls = answer["data"]["next_step"]["calls"]
    assert [c["at"] for c in calls] == [h["recorded_at"] for h in hits], "each read names its revision's moment"
    first = tools.run("read", **calls[0])
    assert first["data"]["hits"][0]["revision"] == hits[0]["revision"]


def test_a_forgotten_predecessor_is_still_listed_marked_retracted(service: Service) -> None:
    tools = Tools(service)
    old, new, _ = _story(tools)
    tools.run("forget", initiative=P, node={"id": old}, reason="obsolete")
    answer = tools.recall(query="Dublin production", limit=50)
    hits = answer["data"]["hits"]
    assert {h["id"] for h in hits} == {old, new}
    assert [h["revision"] for h in hits if h["id"] == old] == tools.revisions(old)
    assert hits[[h["id"] for h in hits].index(new) - 1]["currentness"] in ("superseded", "retracted")
    assert [h for h in hits if h["id"] == old][-1]["currentness"] == "retracted"


def test_explore_history_pages_without_repeating_or_skipping(service: Service) -> None:
    tools = Tools(service)
    _story(tools)
    whole = tools.recall(query="staging cluster Frankfurt", limit=50)
    page = tools.recall(query="staging cluster Frankfurt", limit=3)
    total = whole["data"]["total"]
    assert total >= 4, "three revisions of the fact and its successor"
    assert page["data"]["total"] == total
    assert page["coverage"]["omitted"] == [{"section": "hits", "count": total - 3, "reason": "limit"}]
    seen = _keys(page)
    while page["continuation"] is not None:
        args = page["continuation"]["next_arguments"]
        page = tools.recall(**{k: v for k, v in args.items() if k not in ("initiatives", "task_intent")})
        seen += _keys(page)
    assert seen == _keys(whole)


def test_each_revision_names_its_initiatives_as_they_were_then(service: Service) -> None:
    """A revision recorded before a rename shows the old name (as `read at=` of it does); the flag
    says the names are exact; the suggested read goes through the initiative's name today."""
    tools = Tools(service)
    fact = tools.note("the harbour ferry leaves at nine")
    tools.run("revise", initiative=P, node={"id": fact}, patch={"description": "ferry times"})
    assert tools.run("initiative", initiative=P, action="rename", to="harbour")["state"] == "applied"
    tools.run("revise", initiative="harbour", node={"id": fact}, patch={"description": "ferry timetable"})
    answer = tools.run("recall", initiatives=["harbour"], task_intent="explore_history", query="harbour ferry")
    hits = answer["data"]["hits"]
    assert [h["initiatives"] for h in hits] == [[P], [P], ["harbour"]]
    assert all(h["metadata_is_current"] is True for h in hits)
    for hit, call in zip(hits, answer["data"]["next_step"]["calls"], strict=True):
        assert call["initiative"] == "harbour"
        read = tools.run("read", **call)["data"]["hits"][0]
        assert (read["revision"], read["initiatives"], read["metadata_is_current"]) == (
            hit["revision"],
            hit["initiatives"],
            hit["metadata_is_current"],
        )


def test_every_suggested_read_succeeds_even_for_a_forget(service: Service) -> None:
    """The revision that records a forget cannot be read as of its moment (the node is gone then):
    it gets no call; every call that is suggested answers ok with the revision it names."""
    tools = Tools(service)
    old = tools.note("the deploy target is Frankfurt staging")
    tools.run("evolve", initiative=P, mode="supersede", source={"id": old}, new_body="deploy target is now Dublin")
    tools.run("forget", initiative=P, node={"id": old}, reason="obsolete")
    answer = tools.recall(query="deploy target", limit=50)
    hits = answer["data"]["hits"]
    assert any(h["currentness"] == "retracted" for h in hits if h["id"] == old)
    calls = answer["data"]["next_step"]["calls"]
    assert len(calls) == len(hits) - 1, "one call per revision, but none for the forget"
    readable = [(h["id"], h["revision"]) for h in hits if not (h["id"] == old and h["currentness"] == "retracted")]
    for (node_id, revision), call in zip(readable, calls, strict=True):
        envelope = service_read(tools, call)
        assert envelope["state"] == "ok", envelope["issues"]
        assert (envelope["data"]["hits"][0]["id"], envelope["data"]["hits"][0]["revision"]) == (node_id, revision)


def service_read(tools: Tools, call: dict[str, Any]) -> dict[str, Any]:
    envelope: dict[str, Any] = tools.registry.run("read", call)
    return envelope
