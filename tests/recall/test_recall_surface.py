"""`recall`'s filters and raw fallback (issue 17, decisions 17.C1–17.C6): `types`, `tags`, `layers` as
search has them, `branch`, the raw passages of stored sources when curated hits run short (and what
a failure there leaves), and `explain` with `multi_hop` refused."""

from __future__ import annotations

from typing import Any

import apsw
import psycopg
import pytest
from jsonschema import Draft202012Validator

from kaeru.api.requests import parse
from kaeru.errors import InvalidArgument
from kaeru.mcp.render import compact
from kaeru.mcp.server import build_server
from kaeru.service import Service
from tests.backends import VaultSpec

P = "proj"
#: A long transcript whose one passage about the lighthouse sits far from its start.
FILLER = " ".join(f"line {i}: the crew checked ropes, sails and the weather board." for i in range(60))
TRANSCRIPT = FILLER + " At dawn the lighthouse keeper logged the storm surge in the harbour. " + FILLER


def note(service: Service, text: str, **extra: Any) -> str:
    outcome, _ = service.note(parse("note", {"initiative": P, "text": text, **extra}))
    assert outcome.primary is not None
    return outcome.primary.id


def task(service: Service, text: str, **extra: Any) -> str:
    outcome, _ = service.task(parse("task", {"initiative": P, "text": text, **extra}))
    assert outcome.primary is not None
    return outcome.primary.id


def recall(service: Service, query: str | None = None, **extra: Any) -> Any:
    args: dict[str, Any] = {"initiatives": [P], **extra}
    if query is not None:
        args["query"] = query
    return service.recall(parse("recall", args))


def ids(outcome: Any) -> list[str]:
    return [h.node.id for h in outcome.hits]


def source(service: Service, text: str = TRANSCRIPT, **extra: Any) -> str:
    return note(service, "harbour log transcript", kind="reference", source=text, **extra)


# --- types, tags, layers: as search's filters ------------------------------------------------------


def test_types_keeps_only_those_types(service: Service) -> None:
    observation = note(service, "the pelican nests by the pier")
    planned = task(service, "count the pelican nests by the pier")
    assert set(ids(recall(service, "pelican nests pier"))) == {observation, planned}
    assert ids(recall(service, "pelican nests pier", types=["task"])) == [planned]
    assert ids(recall(service, "pelican nests pier", types=["task", "concept"])) == [planned]


def test_types_finds_the_best_of_that_type_not_the_filtered_rest_of_the_best(service: Service) -> None:
    # 120 short notes outrank the one long (and older) task on every text channel: without the filter
    # inside the text searches, the task is never a candidate and the filtered answer is empty.
    planned = task(service, "after lunch walk along the whole harbour wall and count every pelican you can see there")
    for i in range(120):
        note(service, f"pelican {i}")
    assert planned not in ids(recall(service, "pelican", limit=50))
    assert ids(recall(service, "pelican", types=["task"])) == [planned]


def test_tags_keeps_memory_carrying_every_tag(service: Service) -> None:
    both = note(service, "the ferry timetable changes in june", tags=["ferry", "summer"])
    one = note(service, "the ferry timetable is posted at the pier", tags=["ferry"])
    note(service, "the ferry timetable was printed on blue paper")
    assert set(ids(recall(service, "ferry timetable", tags=["ferry"]))) == {both, one}
    assert ids(recall(service, "ferry timetable", tags=["ferry", "summer"])) == [both]
    # Derived tags count too, as in search.
    assert ids(recall(service, "ferry timetable", tags=["summer", "kind:observation"])) == [both]


def test_layers_keeps_those_layers_and_naming_cold_admits_it(service: Service) -> None:
    hot = note(service, "the crane on quay four is out of order", options={"layer": "hot"})
    warm = note(service, "the crane on quay four was repaired once")
    cold = note(service, "the crane on quay four was bought in 1990", options={"layer": "cold"})
    assert ids(recall(service, "crane quay four", layers=["hot"])) == [hot]
    assert set(ids(recall(service, "crane quay four", layers=["warm", "cold"]))) == {warm, cold}
    # Without layers, cold memory is stale and left out (include_stale).
    assert set(ids(recall(service, "crane quay four"))) == {hot, warm}
    # A model reading the text is told which argument brings it back ("hits 1 (stale)" alone was not).
    text = compact(build_server(service).registry.run("recall", {"initiatives": [P], "query": "crane quay four"}))
    assert "hits 1 (stale)" in text and "`include_stale: true` brings them back" in text


def test_filters_are_validated_like_search(service: Service) -> None:
    for args, field in (
        ({"types": []}, "types"),
        ({"types": ["audit_event"]}, "types"),
        ({"types": ["task", "task"]}, "types"),
        ({"layers": ["lukewarm"]}, "layers"),
        ({"tags": [""]}, "tags"),
        ({"tags": [f"t{i}" for i in range(33)]}, "tags"),
        ({"branch": "feat auth"}, "branch"),
        ({"branch": ""}, "branch"),
    ):
        with pytest.raises(InvalidArgument) as refused:
            parse("recall", {"initiatives": [P], "query": "x", **args})
        assert (refused.value.field or "").startswith(field), (args, refused.value.field)


# --- branch ---------------------------------------------------------------------------------------


def test_branch_keeps_that_branch_and_memory_without_one(service: Service) -> None:
    on_main = note(service, "the login form posts to the session endpoint", branch="main")
    on_feature = note(service, "the login form posts to the oauth endpoint", branch="feat/auth")
    planned = task(service, "move the login form to the oauth endpoint", branch="feat/auth")
    old = note(service, "the login form was written in 2019")
    assert set(ids(recall(service, "login form"))) == {on_main, on_feature, planned, old}
    assert set(ids(recall(service, "login form", branch="main"))) == {on_main, old}
    assert set(ids(recall(service, "login form", branch="feat/auth"))) == {on_feature, planned, old}
    assert set(ids(recall(service, "login form", branch="release/1.0"))) == {old}
    shown = {h.node.id: h.node.properties.get("branch") for h in recall(service, "login form").hits}
    assert shown[on_main] == "main" and shown[planned] == "feat/auth" and shown[old] is None


# --- explain with multi_hop -----------------------------------------------------------------------


def test_explain_with_multi_hop_is_refused_naming_both(service: Service) -> None:
    note(service, "the harbour master approves every mooring")
    with pytest.raises(InvalidArgument) as refused:
        recall(service, "harbour master", explain=True, multi_hop=True)
    assert refused.value.field == "explain"
    assert "explain" in refused.value.message and "multi_hop" in refused.value.message
    # Each alone is fine.
    assert recall(service, "harbour master", explain=True).explain
    assert recall(service, "harbour master", multi_hop=True).hits


# --- the raw fallback -----------------------------------------------------------------------------


def test_a_cut_source_adds_its_matching_passage_as_a_raw_hit(service: Service) -> None:
    transcript = source(service)
    answer = recall(service, "lighthouse keeper storm", token_budget=600)
    assert ids(answer) == [transcript]
    assert answer.hits[0].body_range is not None  # the curated view is the start of the transcript
    assert answer.raw_hits is not None and [h.id for h in answer.raw_hits] == [transcript]
    passage = answer.raw_hits[0]
    assert "lighthouse keeper logged the storm" in passage.excerpt
    assert TRANSCRIPT[passage.offset :].startswith(passage.excerpt)
    assert passage.offset > 3000 and passage.chars == len(TRANSCRIPT)
    assert passage.matched == ["lighthouse", "keeper", "storm"]
    assert answer.raw_hits_error is None
    # Hits and passages together stay within the budget.
    shown = sum(len(h.body or "") + len(h.node.description or "") for h in answer.hits)
    assert shown + len(passage.excerpt) <= 600 * 4


def test_sources_left_out_by_the_filters_are_searched_raw(service: Service) -> None:
    transcript = source(service)
    planned = task(service, "ask the lighthouse keeper for the storm log")
    answer = recall(service, "lighthouse keeper storm", types=["task"])
    assert ids(answer) == [planned]
    assert answer.raw_hits is not None and [h.id for h in answer.raw_hits] == [transcript]


def test_no_raw_fallback_when_enough_hits_at_high_risk_or_without_sources(service: Service) -> None:
    transcript = source(service, tags=["log"])
    for i in range(3):
        note(service, f"storm warning {i} for the harbour")
    assert recall(service, "storm harbour", limit=3).raw_hits is None  # three curated hits: enough
    assert recall(service, "storm harbour", risk="high").raw_hits is None
    assert recall(service, "storm harbour", risk="low", token_budget=600).raw_hits is not None
    # A source shown whole is not repeated; nothing else matches: the fallback ran and found nothing.
    short = source(service, "the storm bell rang twice")
    answer = recall(service, "bell rang twice")
    assert ids(answer)[:1] == [short] and answer.raw_hits == []
    assert transcript not in ids(answer)


def _break_layer(vault: VaultSpec, node_id: str) -> None:
    """Damage one stored row behind kaeru's back (what a bug or a bad restore may leave)."""
    sql = f"UPDATE nodes SET layer = 'molten' WHERE id = '{node_id}'"
    if vault.backend == "sqlite":
        conn = apsw.Connection(str(vault.settings().sqlite_path))
        conn.set_busy_timeout(10_000)  # the open store's checkpointer may hold the lock a moment
        conn.execute(sql)
        conn.close()
    else:
        assert vault.database_url
        with psycopg.connect(vault.database_url, autocommit=True) as conn:
            conn.execute(sql.encode())


def test_a_failing_raw_fallback_keeps_the_curated_hits(service: Service, vault: VaultSpec) -> None:
    transcript = source(service)
    for i in range(8):  # apart in time, so the task's temporal neighbours never reach the transcript
        note(service, f"crew roster {i}")
    planned = task(service, "ask the lighthouse keeper for the storm log", tags=["ask"])
    _break_layer(vault, transcript)
    answer = recall(service, "lighthouse keeper storm", tags=["ask"])
    assert ids(answer) == [planned]
    assert answer.raw_hits is None
    assert answer.raw_hits_error is not None and answer.raw_hits_error.startswith("internal:")


def test_recall_over_mcp_returns_raw_hits_in_its_schema_and_text(service: Service) -> None:
    transcript = source(service)
    registry = build_server(service).registry
    envelope = registry.run("recall", {"initiatives": [P], "query": "lighthouse keeper", "token_budget": 600})
    assert envelope["state"] == "ok"
    assert not list(Draft202012Validator(registry.specs["recall"].output_schema).iter_errors(envelope))
    raw = envelope["data"]["raw_hits"]
    assert [h["id"] for h in raw] == [transcript] and "lighthouse keeper" in raw[0]["excerpt"]
    text = compact(envelope)
    assert "raw_hits: 1 passages of stored sources" in text
    assert f"read body_offset={raw[0]['offset']}" in text
    refused = registry.run("recall", {"initiatives": [P], "query": "lighthouse", "explain": True, "multi_hop": True})
    assert refused["state"] == "rejected" and refused["issues"][0]["field"] == "explain"
    assert "multi_hop" in refused["issues"][0]["message"]
    assert not list(Draft202012Validator(registry.specs["recall"].output_schema).iter_errors(refused))


def test_the_passage_is_where_most_query_words_meet() -> None:
    from kaeru.service.recall.raw import best_passage

    body = "storm " + "x " * 400 + "the keeper saw the storm from the lighthouse " + "y " * 400 + "keeper"
    offset, matched = best_passage(body, ["lighthouse", "keeper", "storm"], 120)
    assert body[offset : offset + 120].count("lighthouse") == 1 and "keeper saw the storm" in body[offset:]
    assert offset > 700 and matched == ["lighthouse", "keeper", "storm"]
    # Whole words only, any case; nothing found: the start.
    assert best_passage("Keepers of the STORM", ["keeper", "storm"], 80) == (0, ["storm"])
    assert best_passage("calm seas", ["storm"], 80) == (0, [])


def test_a_query_of_only_emoji_says_it_can_match_nothing(service: Service) -> None:
    """Emoji and punctuation are not indexed: `recall` and `search` for them say so on `query` /
    `text` instead of answering an empty list that reads as "nothing was ever noted"; a query with
    a word beside the emoji is answered as usual."""
    note(service, "deploy 🚀 went fine on friday")
    for query in ("🚀", "🐛 !!", "✅"):
        result = recall(service, query, explain=False)
        assert result.hits == []
        assert [(i.code, i.field) for i in result.issues] == [("invalid_argument", "query")], query
        assert "emoji" in result.issues[0].message
        found = service.search(parse("search", {"initiatives": [P], "text": query}))
        assert [(i.code, i.field) for i in found.issues] == [("invalid_argument", "text")], query
    worded = recall(service, "🚀 deploy", explain=False)
    assert len(worded.hits) == 1 and not worded.issues
