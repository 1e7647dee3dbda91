"""PostgreSQL's plans for common words (decision 16.Q1) answer exactly as its plans for rare ones.

A ranked search matches either through the GIN index (`tsv @@ query`) or, for words most nodes
hold, from the term counts its score reads (`bm25.present_sql`); and flags superseded matches
either by a look-up per match or from the ids read once from the edges' side. Every combination
must give the same rows in the same order, the same scores to the bit, the same `total`, the same
omissions and the same superseded successors — and `count_matches` the same count. The workload
(notes from a small vocabulary, so that most words are common; claims, revisions, supersessions,
forgotten nodes, two initiatives) runs once per example through the service.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.api.requests import parse
from kaeru.config import Settings
from kaeru.domain.text import query_tokens, stem
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.base import SearchQuery
from kaeru.storage.postgres.session import PostgresSession
from kaeru.storage.postgres.store import PostgresStore
from tests.backends import postgres_admin_url

pytestmark = pytest.mark.skipif(
    not postgres_admin_url(),
    reason="PostgreSQL not configured: KAERU_TEST_DATABASE_URL is unset (the README's test command sets it)",
)

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "cache", "caching", "zeta", "release", "deploy"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
note = st.tuples(st.just("note"), st.sampled_from(["a", "b"]), text, st.sampled_from(["observation", "idea"]))
step = st.one_of(
    note,
    note,
    note,
    note,
    st.tuples(st.just("claim"), st.sampled_from(["a", "b"]), text, st.sampled_from(["open", "refuted"])),
    st.tuples(st.just("revise"), st.integers(0, 60), st.sampled_from(["body", "name", "description"]), text),
    st.tuples(st.just("supersede"), st.integers(0, 60), text),
    st.tuples(st.just("forget"), st.integers(0, 60)),
)
query = st.fixed_dictionaries(
    {
        "scope": st.sampled_from([("a",), ("b",), ("a", "b")]),
        "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True),
        "match_all": st.booleans(),
        "stemmed": st.booleans(),
        "omit_superseded": st.booleans(),
        "window": st.sampled_from([1, 3, 5000]),
        "count_total": st.booleans(),
        "fields": st.sampled_from([("name", "description", "body", "tags"), ("body",), ("name", "description")]),
        "successors": st.booleans(),
    }
)

_examples = itertools.count()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    yield from _service(tmp_path_factory)


@pytest.fixture
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    yield from _service(tmp_path_factory)


def _service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    from tests.pg import drop_database, fresh_database

    url = fresh_database()
    store = PostgresStore(url)
    vault: Path = tmp_path_factory.mktemp("common-words")
    try:
        yield Service(store, Settings(vault_dir=vault, database_url=url, secret_policy="allow"))
    finally:
        store.close()
        drop_database(url)


def _run(service: Service, scope: str, ids: list[str], op: tuple[Any, ...]) -> None:
    kind = op[0]
    try:
        if kind == "note":
            outcome, _ = service.note(parse("note", {"initiative": f"{scope}-{op[1]}", "text": op[2], "kind": op[3]}))
        elif kind == "claim":
            outcome, _ = service.claim(
                parse(
                    "claim",
                    {
                        "initiative": f"{scope}-{op[1]}",
                        "text": op[2],
                        "initial_status": op[3],
                        "evidence": {"method": "probe"},
                    },
                )
            )
        elif not ids:
            return
        elif kind == "revise":
            node = ids[op[1] % len(ids)]
            outcome, _ = service.revise(
                parse("revise", {"initiative": f"{scope}-a", "node": node, "patch": {op[2]: op[3]}})
            )
        elif kind == "supersede":
            node = ids[op[1] % len(ids)]
            outcome, _ = service.evolve(
                parse("evolve", {"initiative": f"{scope}-b", "mode": "supersede", "source": node, "new_body": op[2]})
            )
        else:
            node = ids[op[1] % len(ids)]
            outcome, _ = service.forget(parse("forget", {"initiative": f"{scope}-a", "node": node, "reason": "test"}))
    except KaeruError:
        return
    if kind in ("note", "claim", "supersede") and outcome.primary is not None:
        ids.append(outcome.primary.id)


def _answer(store: PostgresStore, scope: str, q: dict[str, Any], divisor: int, superseded_ids: int) -> tuple[Any, ...]:
    with store.read() as session:
        assert isinstance(session, PostgresSession)
        session.common_divisor = divisor
        session.superseded_ids = superseded_ids
        found = [session.initiative_by_name(f"{scope}-{s}") for s in q["scope"]]
        scopes = [i.id for i in found if i is not None]
        if not scopes:
            return ()
        tokens = list(dict.fromkeys(stem(w) for w in q["words"])) if q["stemmed"] else list(q["words"])
        successors: list[tuple[int, str]] = []
        made = SearchQuery(
            initiative_ids=scopes,
            tokens=tokens,
            match_all=q["match_all"],
            stemmed=q["stemmed"],
            omit_superseded=q["omit_superseded"],
            window=q["window"],
            count_total=q["count_total"],
            fields=q["fields"],
            superseded_out=successors if q["successors"] else None,
            superseded_head=2,
        )
        count = session.count_matches(made)  # counted on its own, before a search could count it
        rows, total, omitted = session.search(made)
        assert session.count_matches(made) == count  # as the search counted it
    return [(r.id, r.seq, r.score.hex(), r.refuted) for r in rows], total, omitted, successors, count


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=8, max_size=40), queries=st.lists(query, min_size=3, max_size=8))
def test_every_plan_gives_the_same_answer(
    service: Service, steps: list[tuple[Any, ...]], queries: list[dict[str, Any]]
) -> None:
    scope = f"common-{next(_examples)}"
    ids: list[str] = []
    for op in steps:
        _run(service, scope, ids, op)
    store = service.store
    assert isinstance(store, PostgresStore)
    for q in queries:
        rare = _answer(store, scope, q, 0, 0)  # the GIN index, a look-up per match
        assert _answer(store, scope, q, 10**9, 0) == rare, q  # the term counts, a look-up per match
        assert _answer(store, scope, q, 10**9, 10**6) == rare, q  # the term counts, ids read once
        assert _answer(store, scope, q, 0, 10**6) == rare, q  # the GIN index, ids read once (unused)


def test_common_words_take_the_term_counts_plan(fresh: Service) -> None:
    """The plan choice itself: a word most nodes hold is matched from the term counts (and the
    answer is still the GIN plan's), a rare one through the index."""
    scope = "plan-choice"
    for i in range(8):
        fresh.note(parse("note", {"initiative": f"{scope}-a", "text": f"shared words here {'rarest' * (i == 0)}"}))
    store = fresh.store
    assert isinstance(store, PostgresStore)
    with store.read() as session:
        assert isinstance(session, PostgresSession)
        rows, _, docs = session._statistics(SearchQuery(initiative_ids=[1], tokens=["shared", "rarest"]))
        assert session._common_match(SearchQuery(initiative_ids=[1], tokens=["shared"]), rows, docs[:1]) is not None
        assert session._common_match(SearchQuery(initiative_ids=[1], tokens=["rarest"]), rows, docs[1:]) is None
    q = {
        "scope": ("a",),
        "words": query_tokens("shared rarest"),
        "match_all": False,
        "stemmed": False,
        "omit_superseded": True,
        "window": 5000,
        "count_total": True,
        "fields": ("name", "description", "body", "tags"),
        "successors": False,
    }
    assert _answer(store, scope, q, 4, 4096) == _answer(store, scope, q, 0, 0)
