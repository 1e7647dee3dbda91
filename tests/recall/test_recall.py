"""`recall`: plans are deterministic, intents change the ranking, risk and budgets are hard limits."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.domain.plans import TEMPORAL_WEIGHT
from kaeru.domain.text import tokens
from kaeru.errors import KaeruError
from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.service.recall.channels import TEMPORAL_WORDS
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.recall.helpers import FILLER

P = "proj"


def note(service: Service, text: str, **extra: Any) -> str:
    outcome, _ = service.note(parse("note", {"initiative": P, "text": text, **extra}))
    assert outcome.primary is not None
    return outcome.primary.id


def ids(outcome: Any) -> list[str]:
    return [h.node.id for h in outcome.hits]


def recall(service: Service, query: str | None = None, **extra: Any) -> Any:
    args: dict[str, Any] = {"initiatives": [P], **extra}
    if query is not None:
        args["query"] = query
    return service.recall(parse("recall", args))


def test_same_inputs_same_plan_and_same_answer(service: Service) -> None:
    for i in range(20):
        note(service, f"connection pool size {i} tuned for the staging database")
    first = recall(service, "database pool size", task_intent="debug_failure", explain=True)
    second = recall(service, "database pool size", task_intent="debug_failure", explain=True)
    assert first.plan.plan_hash == second.plan.plan_hash
    assert first.plan.to_json() == second.plan.to_json()
    assert ids(first) == ids(second)
    other = recall(service, "database pool size", task_intent="explain_decision")
    assert other.plan.plan_hash != first.plan.plan_hash


@pytest.mark.parametrize(
    ("intent", "favoured"),
    [("apply_preference", "rule"), ("explain_decision", "decision"), ("debug_failure", "refuted")],
)
def test_intent_priors_change_the_ranking(service: Service, intent: str, favoured: str) -> None:
    """Two equally relevant nodes: without an intent the newer wins; the intent lifts the older one."""
    text = "the cache layer for the billing service"
    if favoured == "refuted":
        claim, _ = service.claim(parse("claim", {"initiative": P, "text": text, "initial_status": "refuted"}))
        assert claim.primary is not None
        older = claim.primary.id
    else:
        older = note(service, text, kind=favoured)
    newer = note(service, text)
    neutral = recall(service, "cache layer billing service", include_superseded=True)
    assert ids(neutral)[:2] == [newer, older]
    steered = recall(service, "cache layer billing service", task_intent=intent, include_superseded=True)
    assert ids(steered)[:2] == [older, newer]
    assert steered.plan.intent == intent


def test_resume_work_without_a_query_brings_back_work_in_flight(service: Service) -> None:
    for i in range(15):
        note(service, f"background note {i}")
    task, _ = service.task(parse("task", {"initiative": P, "text": "finish the migration runner"}))
    handoff = note(service, "handoff: migration runner half done", options={"slot": "handoff"})
    answer = recall(service, None, task_intent="resume-work")
    top = ids(answer)[:3]
    assert task.primary is not None and task.primary.id in top and handoff in top


@pytest.mark.parametrize("query", ["what is left to do?", "Where did we leave off", "Was ist noch zu tun?"])
def test_a_question_about_open_work_brings_back_open_tasks(service: Service, query: str) -> None:
    """An agent asks about open work in its own words, without `task_intent`: no memory holds
    "left" or "leave off", and the answer was empty. The open tasks come back, a finished one not."""
    for i in range(5):
        note(service, f"background note {i} about the billing service")
    first, _ = service.task(parse("task", {"initiative": P, "text": "finish the migration runner"}))
    second, _ = service.task(parse("task", {"initiative": P, "text": "rotate the staging certificates"}))
    done, _ = service.task(parse("task", {"initiative": P, "text": "write the release notes", "status": "done"}))
    assert first.primary and second.primary and done.primary
    answer = recall(service, query)
    assert set(ids(answer)[:2]) == {first.primary.id, second.primary.id}
    assert done.primary.id not in ids(answer)
    assert answer.plan.intent is None and "tasks" in {c.name for c in answer.plan.channels}
    unrelated = recall(service, "what did the billing service do next summer")
    assert "tasks" not in {c.name for c in unrelated.plan.channels}


@pytest.mark.parametrize("query", ["what is still open?", "what is overdue?", "que reste-t-il à faire ?"])
def test_open_work_asked_otherwise_brings_back_open_tasks_and_claims(service: Service, query: str) -> None:
    """Asked in words outside the first phrase list, the answer was empty and said complete."""
    for i in range(5):
        note(service, f"Ran the full test suite: {400 + i} passed.")
    task, _ = service.task(parse("task", {"initiative": P, "text": "Update the on-call runbook", "due": "2026-01-15"}))
    claim, _ = service.claim(parse("claim", {"initiative": P, "text": "pgbouncer breaks prepared statements"}))
    assert task.primary and claim.primary
    found = ids(recall(service, query))
    assert found[:2] == [task.primary.id, claim.primary.id], found


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("what did we decide?", None),
        ("which decisions were made?", None),
        ("decisions", None),
        ("", "explain_decision"),
    ],
)
def test_a_question_about_decisions_brings_back_the_decisions(service: Service, query: str, intent: str | None) -> None:
    """A decision says what was decided, not that it is one (its kind is a tag, out of the word
    index): "what did we decide?" found nothing, even with `explain_decision`, said complete."""
    made = [
        note(service, "Migrate from MySQL to PostgreSQL 15: we need JSONB.", kind="decision"),
        note(service, "Version the public API in the URL path (/v2/).", kind="decision"),
    ]
    routine = [note(service, f"Routine: reviewed pull request {240 + i}.") for i in range(6)]
    extra = {"task_intent": intent} if intent else {}
    found = ids(recall(service, query or None, **extra))
    assert set(found[:2]) == set(made) and found[0] == made[1], found  # the newest first
    assert not set(found[:2]) & set(routine)


def test_explain_decision_with_words_ranks_the_decision_they_name_first(service: Service) -> None:
    note(service, "Use JWT access tokens of 15 minutes.", kind="decision")
    postgres = note(service, "Migrate from MySQL to PostgreSQL 15: we need JSONB.", kind="decision")
    note(service, "PostgreSQL vacuum ran for a while last night.")
    assert ids(recall(service, "why PostgreSQL", task_intent="explain_decision"))[0] == postgres


def test_risk_high_returns_only_current_memory(service: Service) -> None:
    old = note(service, "the deploy target is the blue cluster")
    service.evolve(
        parse(
            "evolve",
            {"initiative": P, "mode": "supersede", "source": old, "new_body": "the deploy target is the green cluster"},
        )
    )
    refuted, _ = service.claim(
        parse("claim", {"initiative": P, "text": "the deploy target cluster is purple", "initial_status": "refuted"})
    )
    lenient = recall(service, "deploy target cluster", include_superseded=True)
    assert old in ids(lenient) and refuted.primary is not None and refuted.primary.id in ids(lenient)
    strict = recall(service, "deploy target cluster", risk="high")
    assert strict.hits and all(h.currentness.value == "current" for h in strict.hits)
    assert {c.name for c in strict.plan.channels}.isdisjoint({"temporal", "graph", "feedback", "semantic"})
    demoted = recall(service, "deploy target cluster")
    assert ids(demoted)[0] not in (old, refuted.primary.id)


def test_token_budget_is_a_hard_cap(service: Service) -> None:
    for i in range(10):
        note(service, f"incident {i}: " + "the queue consumer stalled under load " * 30)
    answer = recall(service, "queue consumer stalled", token_budget=200, limit=10)
    shown = sum(len(h.body or "") + len(h.node.description or "") for h in answer.hits)
    assert shown <= max(512, 200 * 4)
    assert any(o.reason == "budget" for o in answer.coverage.omitted) or len(answer.hits) == 10


def test_temporal_neighbours_bring_back_the_reply(service: Service) -> None:
    for i in range(30):
        note(service, f"filler turn {i} about lunch plans", occurred_at=f"2024-01-01T10:{i:02d}:00Z")
    asked = note(service, "Alice: what did you decide about the vacation?", occurred_at="2024-01-02T10:00:00Z")
    reply = note(service, "Bob: we booked two weeks in Lisbon", occurred_at="2024-01-02T10:00:05Z")
    with_neighbours = recall(service, "vacation decision")
    # The reply to a question the query asks gets the question's whole share times the channel's
    # weight (more than the lexical channel's since decision 90), so it may rank first.
    assert set(ids(with_neighbours)[:2]) == {asked, reply}
    without = service.recall(
        parse("recall", {"initiatives": [P], "query": "vacation decision"}), disabled=frozenset({"temporal"})
    )
    assert reply not in ids(without)


def test_the_reply_to_a_question_the_query_asks_gets_the_question_s_whole_share(service: Service) -> None:
    """A memory that ends by asking what the query asks is answered by the next one (decision 17.P2):
    that reply gets the question's whole temporal share, not the half an ordinary next neighbour
    gets — so "five years" (no query word) comes back right under the question that asked it."""
    for i, other in enumerate(
        ("my cousin got married in June", "a long drive to the coast", "married friends visited")
    ):
        note(service, f"Carol: {other}", occurred_at=f"2024-01-01T09:{i:02d}:00Z")
    for i in range(30):
        note(service, f"filler turn {i} about lunch plans", occurred_at=f"2024-01-01T10:{i:02d}:00Z")
    asked = note(service, "Alice: Lovely photo! How long have you been married?", occurred_at="2024-01-02T10:00:00Z")
    reply = note(service, "Bob: Five years already, time flies.", occurred_at="2024-01-02T10:00:05Z")
    after = note(service, "Alice: Congratulations to you both.", occurred_at="2024-01-02T10:00:10Z")
    answer = recall(service, "How long have they been married?", explain=True)
    order = ids(answer)
    assert set(order[:2]) == {asked, reply}, "above the three memories that share a word"
    assert "lexical" not in answer.explain[reply]
    # the best hit's own score (more than its whole share, 1), times the channel's weight (17.M1);
    # two memories on, a third of the share
    own = sum(v for k, v in answer.explain[asked].items() if k in ("lexical", "proximity"))
    assert own > 1.0
    assert answer.explain[reply]["temporal"] == pytest.approx(TEMPORAL_WEIGHT * own)
    assert answer.explain[after]["temporal"] == pytest.approx(TEMPORAL_WEIGHT / 3)

    # A question about something else does not make the next memory its answer: half the share.
    for i in range(5):
        note(service, f"filler turn {i} about the garden", occurred_at=f"2024-01-03T10:{i:02d}:00Z")
    other = note(service, "Dan: I was married in Lisbon. Anyone for coffee?", occurred_at="2024-01-04T10:00:00Z")
    nxt = note(service, "Eve: Yes please, black.", occurred_at="2024-01-04T10:00:05Z")
    answer = recall(service, "married in Lisbon", explain=True)
    assert ids(answer)[0] == other
    assert answer.explain[nxt]["temporal"] == pytest.approx(TEMPORAL_WEIGHT / 2)


def test_a_long_neighbour_gets_a_part_of_the_temporal_share(service: Service) -> None:
    """The temporal channel lifts what its own words cannot find: a short memory next to a strong hit
    (a reply) gets its whole due, a long one `TEMPORAL_WORDS` / its length of it — a long memory says
    what it is about in its own words, which the lexical channel has scored already (decision 90)."""
    for i in range(30):
        note(service, f"filler turn {i} about lunch plans", occurred_at=f"2024-01-01T10:{i:02d}:00Z")
    note(service, "Alice: the vacation decision is made", occurred_at="2024-01-02T10:00:00Z")
    short = note(service, "Bob: great, finally", occurred_at="2024-01-02T10:00:05Z")
    for i in range(5):
        note(service, f"filler turn {i} about the garden", occurred_at=f"2024-01-03T09:{i:02d}:00Z")
    note(service, "Carol: the vacation decision is made", occurred_at="2024-01-04T10:00:00Z")
    body = "Dan: " + FILLER * 4
    long = note(service, body, occurred_at="2024-01-04T10:00:05Z")
    words = len(tokens(body))
    assert words > TEMPORAL_WORDS
    answer = recall(service, "vacation decision", explain=True)
    order = ids(answer)
    assert "lexical" not in answer.explain[short] and "lexical" not in answer.explain[long]
    assert answer.explain[short]["temporal"] == pytest.approx(TEMPORAL_WEIGHT / 2)  # next to the best hit
    assert answer.explain[long]["temporal"] == pytest.approx(TEMPORAL_WEIGHT / 2 * TEMPORAL_WORDS / words, abs=1e-6)
    assert order.index(short) < order.index(long)


def test_the_answer_to_the_question_the_query_asks_ranks_above_the_question(service: Service) -> None:
    """The temporal channel weighs `TEMPORAL_WEIGHT` (1.1), more than the lexical channel's 1: the
    memory right after one that asks what the query asks gets that question's whole share times
    1.1, so the answer comes before the question and before a later note that matches the query as
    well as the question does (decision 90, 17.K4)."""
    for i in range(30):
        note(service, f"filler turn {i} about lunch plans", occurred_at=f"2024-01-01T10:{i:02d}:00Z")
    asked = note(service, "Alice: what did you decide about the vacation?", occurred_at="2024-01-02T10:00:00Z")
    reply = note(service, "Bob: we booked two weeks in Lisbon", occurred_at="2024-01-02T10:00:05Z")
    for i in range(5):
        note(service, f"filler turn {i} about the garden", occurred_at=f"2024-01-03T09:{i:02d}:00Z")
    again = note(service, "Carol: what did you decide about the vacation?", occurred_at="2024-01-04T10:00:00Z")
    order = ids(recall(service, "vacation decision"))
    assert order[0] == reply
    assert {asked, again} <= set(order[1:3])


def test_the_temporal_channel_looks_four_memories_on(service: Service) -> None:
    """What a strong hit leads to can come a few memories later (a remark or two in between): the
    temporal channel passes a share to the `TEMPORAL_AFTER` = 4 memories after it (decision 90)."""
    for i in range(30):
        note(service, f"filler turn {i} about lunch plans", occurred_at=f"2024-01-01T10:{i:02d}:00Z")
    note(service, "Alice: the vacation decision is made", occurred_at="2024-01-02T10:00:00Z")
    for k in range(1, 4):
        note(service, f"Bob: one moment, a call {k}", occurred_at=f"2024-01-02T10:00:0{k}Z")
    fourth = note(service, "Bob: so, two weeks in Lisbon in May", occurred_at="2024-01-02T10:00:04Z")
    answer = recall(service, "vacation decision", explain=True)
    assert fourth in ids(answer)
    assert "lexical" not in answer.explain[fourth]
    assert answer.explain[fourth]["temporal"] == pytest.approx(TEMPORAL_WEIGHT / 5)  # four memories on


def test_a_question_further_down_still_brings_its_reply(service: Service) -> None:
    """The reply rule looks past the first strong hits (which pass a share to all their neighbours):
    a memory asking what the query asks, ranked below them, still passes its share to its reply."""
    for i in range(12):  # strong hits, each alone among fillers
        note(service, f"filler before {i}", occurred_at=f"2024-01-0{1 + i % 5}T0{i % 10}:00:00Z")
        note(service, f"the budget approved for quarter {i}", occurred_at=f"2024-02-{10 + i}T10:00:00Z")
        note(service, f"filler after {i} about lunch", occurred_at=f"2024-02-{10 + i}T10:30:00Z")
    asked = note(
        service,
        "Alice: we talked about the weather, the trains, the coffee machine, the new hires and the office move "
        "for an hour. And who approved the budget?",
        occurred_at="2024-03-01T10:00:00Z",
    )
    reply = note(service, "Bob: Grace signed it on Friday.", occurred_at="2024-03-01T10:00:05Z")
    answer = recall(service, "who approved the budget", explain=True, limit=20)
    order = ids(answer)
    assert asked in order and order.index(asked) >= 8, "the question ranks below the first strong hits"
    assert reply in order and answer.explain[reply].get("temporal", 0.0) > 0.0


def test_explain_shows_channel_scores_and_next_step_reads(service: Service) -> None:
    target = note(service, "the schema migration adds a stemmed index")
    answer = recall(service, "schema migrations", explain=True)
    assert answer.explain is not None and "lexical" in answer.explain[target]
    assert answer.next_step is not None and answer.next_step["tool"] == "read"
    assert answer.next_step["calls"][0]["node"] == {"id": target}


def test_explain_and_multi_hop_need_a_query(service: Service) -> None:
    for flag in ("explain", "multi_hop"):
        with pytest.raises(KaeruError) as err:
            recall(service, None, **{flag: True})
        assert err.value.code == "invalid_argument" and err.value.field == "query"


def test_pages_never_repeat_a_hit(service: Service) -> None:
    for i in range(40):
        note(service, f"retry policy variant {i} for the webhook sender")
    seen: list[str] = []
    args: dict[str, Any] = {"initiatives": [P], "query": "webhook retry policy", "limit": 7}
    for _ in range(10):
        page = service.recall(parse("recall", args))
        seen.extend(ids(page))
        if page.continuation is None:
            break
        args = page.continuation.next_arguments
    assert len(seen) == len(set(seen)) and len(seen) >= 40


def test_no_hits_leak_from_other_initiatives(service: Service) -> None:
    note(service, "secret project codename bluebird")
    service.note(parse("note", {"initiative": "other", "text": "codename bluebird lives here too"}))
    answer = recall(service, "codename bluebird")
    assert all(h.initiatives == [P] for h in answer.hits)


def test_recall_over_mcp_validates_its_schema(service: Service) -> None:
    from jsonschema import Draft202012Validator

    note(service, "the vault file lives under the user data dir")
    registry = build_server(service).registry
    envelope = registry.run("recall", {"initiatives": [P], "query": "where is the vault", "explain": True})
    assert envelope["state"] == "ok" and envelope["data"]["hits"]
    assert not list(Draft202012Validator(registry.specs["recall"].output_schema).iter_errors(envelope))
    rejected = registry.run("recall", {"initiatives": [P], "token_budget": 0})
    assert rejected["state"] == "rejected" and rejected["issues"][0]["field"] == "token_budget"


def test_scope_idf_weighs_words_by_their_rarity_in_the_searched_initiative(service: Service) -> None:
    # "gateway" is on every note of this initiative, so it says nothing here, though it is rare in the
    # vault; "eviction" is common elsewhere but names one note here.
    for i in range(30):
        service.note(parse("note", {"initiative": "elsewhere", "text": f"eviction policy {i} for the image store"}))
    for i in range(12):
        note(service, f"gateway log {i}: request routed")
    wanted = note(service, "gateway log: eviction storm")
    loud = note(service, "gateway gateway gateway restarted")
    answer = recall(service, "gateway eviction", explain=True)
    assert ids(answer)[0] == wanted and answer.explain is not None
    assert answer.explain[wanted]["lexical"] > answer.explain[loud]["lexical"]
    assert "scope_idf" in {c.name for c in answer.plan.channels}
    args = {"initiatives": [P], "query": "gateway eviction", "explain": True}
    without = service.recall(parse("recall", args), disabled=frozenset({"scope_idf"}))
    assert "scope_idf" not in {c.name for c in without.plan.channels} and without.explain is not None
    if type(service.rt.store).__name__ == "SqliteStore":
        # FTS5's bm25 weighs words by their rarity in the whole vault, so without the channel the
        # loud note wins. (PostgreSQL's ts_rank has no IDF at all: there only the first half applies.)
        assert without.explain[wanted]["lexical"] < without.explain[loud]["lexical"]


def test_scope_idf_is_planned_for_a_narrow_scope_and_for_the_whole_vault(service: Service) -> None:
    """The plan names `scope_idf` exactly when it runs: for at most half of the vault's initiatives,
    or for all of them (a one-project vault ranks as a project among many do), not in between."""

    def planned(initiatives: list[str]) -> bool:
        answer = service.recall(parse("recall", {"initiatives": initiatives, "query": "gateway eviction"}))
        return "scope_idf" in {c.name for c in answer.plan.channels}

    note(service, "gateway eviction storm")
    assert planned([P])  # the whole vault: its only initiative
    service.note(parse("note", {"initiative": "elsewhere", "text": "gateway eviction policy"}))
    service.note(parse("note", {"initiative": "third", "text": "gateway eviction drill"}))
    assert planned([P])  # one of three
    assert not planned([P, "elsewhere"])  # two of three
    assert planned([P, "elsewhere", "third"])  # the whole vault


def test_a_date_in_the_query_lifts_memory_recorded_that_day(service: Service) -> None:
    on_day = note(service, "deployed the billing service", occurred_at="2024-03-05T15:00:00Z")
    for day in (1, 2, 8, 9, 12):
        note(service, f"deployed the billing service again ({day})", occurred_at=f"2024-03-{day:02d}T15:00:00Z")
    answer = recall(service, "what did we deploy on 5 March 2024?")
    assert ids(answer)[0] == on_day
    assert answer.plan.time_windows == (("2024-03-04T00:00:00.000000Z", "2024-03-06T23:59:59.999999Z"),)
    assert "date" in {c.name for c in answer.plan.channels}
    assert "date" not in {c.name for c in recall(service, "what did we deploy?").plan.channels}


@pytest.mark.parametrize(
    ("text", "windows"),
    [
        ("on 2024-03-05", [("2024-03-04", "2024-03-06")]),
        ("March 5th, 2024 and in May 2023", [("2024-03-04", "2024-03-06"), ("2023-05-01", "2023-05-31")]),
        ("the 5 of March 2024", [("2024-03-04", "2024-03-06")]),
        ("in 2024-02", [("2024-02-01", "2024-02-29")]),
        ("December 2023", [("2023-12-01", "2023-12-31")]),
        ("May I deploy? last week, in 2021, on 2024-13-40", []),
    ],
)
def test_date_windows(text: str, windows: list[tuple[str, str]]) -> None:
    from kaeru.domain.timefmt import date_windows

    assert [(a[:10], b[:10]) for a, b in date_windows(text)] == windows


#: Thursday 2026-03-12, 10:00 UTC.
THURSDAY = datetime(2026, 3, 12, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("what did we decide yesterday?", [("2026-03-11", "2026-03-11")]),
        ("the day before yesterday", [("2026-03-10", "2026-03-10")]),
        ("anything today, or this morning", [("2026-03-12", "2026-03-12"), ("2026-03-12", "2026-03-12")]),
        ("3 days ago", [("2026-03-09", "2026-03-09")]),
        ("a week ago", [("2026-03-02", "2026-03-08")]),
        ("two weeks ago", [("2026-02-23", "2026-03-01")]),
        ("last week", [("2026-03-02", "2026-03-08")]),  # Monday to Sunday
        ("this week", [("2026-03-09", "2026-03-12")]),
        ("in the past 7 days", [("2026-03-05", "2026-03-12")]),
        ("last month and this month", [("2026-02-01", "2026-02-28"), ("2026-03-01", "2026-03-12")]),
        ("on 2024-03-05 and yesterday", [("2024-03-04", "2024-03-06"), ("2026-03-11", "2026-03-11")]),
        ("it lasts a week; yesterdays", []),
    ],
)
def test_relative_days_are_read_against_the_users_today(text: str, days: list[tuple[str, str]]) -> None:
    """Decision 288: "yesterday", "last week" … named no window; they are days of the user's
    calendar, so the plan of one query is the same all day."""
    from kaeru.domain.timefmt import date_windows

    windows = date_windows(text, THURSDAY, UTC)
    assert [(a[:10], b[:10]) for a, b in windows] == days
    assert all(a.endswith("T00:00:00.000000Z") and b.endswith("T23:59:59.999999Z") for a, b in windows)
    assert date_windows(text) == [w for w in windows if w[0] < "2026"]  # without a clock: dates only


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("what did we decide in February?", [("2026-02-01", "2026-02-28")]),
        ("camping in June", [("2025-06-01", "2025-06-30")]),  # June has not come yet this year
        ("the meeting on 10 March", [("2026-03-09", "2026-03-11")]),
        ("the June 14 call with HR", [("2025-06-13", "2025-06-15")]),
        ("reduce stress by May 1", [("2025-04-30", "2025-05-02")]),
        ("between August 11 and August 15 2023", [("2023-08-10", "2023-08-12"), ("2023-08-14", "2023-08-16")]),
        ("born on 29 February", [("2024-02-28", "2024-03-01")]),
        ("what happened last Tuesday", [("2026-03-10", "2026-03-10")]),
        ("last Thursday", [("2026-03-05", "2026-03-05")]),  # today is Thursday: a week ago
        ("on Thursday", [("2026-03-12", "2026-03-12")]),
        ("we may 2 things; march on; in may", []),  # words, not months
        ("split by sep, print in dec, modes in oct, the dec 2 struct, on Friday's release", []),  # review
        ("the server on port 2000 went down in June", [("2025-06-01", "2025-06-30")]),  # 2000: no year named
    ],
)
def test_a_day_or_month_without_its_year_is_the_latest_one(text: str, days: list[tuple[str, str]]) -> None:
    """Decision 342: "in February", "on 10 March", "last Tuesday" named no window, though people name
    days so; each is the latest such day or month up to the user's today (or in a year the query names)."""
    from kaeru.domain.timefmt import date_windows

    assert [(a[:10], b[:10]) for a, b in date_windows(text, THURSDAY, UTC)] == days


def test_a_relative_day_is_the_users_day() -> None:
    """In Los Angeles at 18:00 on the 11th (02:00 UTC on the 12th) yesterday is the 10th there."""
    from zoneinfo import ZoneInfo

    from kaeru.domain.timefmt import date_windows

    evening = datetime(2026, 3, 12, 2, 0, tzinfo=UTC)
    assert date_windows("yesterday", evening, ZoneInfo("America/Los_Angeles")) == [
        ("2026-03-10T07:00:00.000000Z", "2026-03-11T06:59:59.999999Z")
    ]


def test_a_question_about_yesterday_finds_what_happened_then(store: Store, vault: VaultSpec) -> None:
    clocked = Service(store, vault.settings(), clock=lambda: THURSDAY)
    days = {
        ago: note(clocked, f"we decided to change the {topic}", occurred_at=f"{ago}d ago")
        for ago, topic in ((1, "deploy window"), (3, "review rota"), (9, "branch naming"), (20, "release cadence"))
    }
    answer = recall(clocked, "what did we decide yesterday?")
    assert ids(answer)[0] == days[1]
    assert answer.plan.time_windows == (("2026-03-11T00:00:00.000000Z", "2026-03-11T23:59:59.999999Z"),)
    assert ids(recall(clocked, "what did we decide last week?"))[0] == days[9]  # Tuesday the 3rd
    # No word of the question is in any memory: the day it names is the answer.
    assert ids(recall(clocked, "anything happening yesterday?"))[:1] == [days[1]]


@pytest.mark.parametrize("query", ["Was the Hetzner invoice overdue?", "is the staging window still open"])
def test_a_subject_asked_with_an_open_work_phrase_is_answered_by_its_words(service: Service, query: str) -> None:
    """ "overdue", "still open" beside a subject's words added every open task to the answer,
    above what the words found (review, session 38): the words' memories answer, tasks only lean."""
    invoice = note(service, "The Hetzner invoice for November was paid late, on the 20th.")
    window = note(service, "The staging window stays open until Friday.")
    for text in ("Refactor the billing module", "Rotate the staging certificates"):
        service.task(parse("task", {"initiative": P, "text": text}))
    found = ids(recall(service, query))
    assert found[0] == (invoice if "Hetzner" in query else window)
    plan = recall(service, query).plan
    assert not {"tasks", "slots", "claims"} & {c.name for c in plan.channels}
