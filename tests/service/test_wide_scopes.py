"""A scope of tens of thousands of initiatives (a search across every project of a large vault).

SQLite refuses a statement of more than 32,766 parameters, and a search for a word no search had
seen yet, a prefix search, a timeline anchored by a query and a scoped export each bound the
scope's ids, one parameter an id, several times in one statement: past about 8,200 initiatives
they answered `internal` ("too many SQL variables"). A long list is now one parameter on SQLite,
as it is one array on PostgreSQL. Both backends, every search plan."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kaeru.mcp.server import build_server
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec

#: More initiatives than SQLite's 32,766 parameters, so that even a statement that binds the
#: scope once would have failed.
WIDE = 40_000
OUTSIDE = "elsewhere"
WORD = "zqxlantern"

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


@dataclass
class Wide:
    run: Run
    names: list[str]
    #: The live notes of the scope that say `WORD`: the last initiative's, and the one that
    #: superseded the first initiative's note.
    inside: set[str]
    #: Notes that say it too but that no answer over the scope may hold: the superseded one, and
    #: one in an initiative outside the scope.
    superseded: str
    outside: str


@pytest.fixture
def wide(store: Store, vault: VaultSpec, tmp_path: Path) -> Wide:
    """`WIDE` initiatives and one outside the scope; notes that say `WORD` (a word no search has
    seen) at both ends of the scope and outside it, the first one superseded by a note in the
    middle of the scope."""
    names = [f"w{i:05d}" for i in range(WIDE)]
    with store.write() as session:  # the initiatives alone: a note each would be minutes of writes
        for i, name in enumerate([*names, OUTSIDE]):
            session.create_initiative(name, f"2026-01-01T00:00:{i // 1_000_000:02d}.{i % 1_000_000:06d}Z")
    run = build_server(Service(store, vault.settings(export_root=tmp_path))).registry.run

    def note(initiative: str, text: str) -> str:
        answer = run("note", {"initiative": initiative, "text": text})
        assert answer["state"] == "applied", answer
        node_id: str = answer["data"]["primary"]["id"]
        return node_id

    first, last = note(names[0], f"the {WORD} glows by the door"), note(names[-1], f"a {WORD} for the shed")
    outside = note(OUTSIDE, f"the {WORD} of another project")
    evolved = run(
        "evolve",
        {"initiative": names[WIDE // 2], "mode": "supersede", "source": first, "new_body": f"the {WORD} burns"},
    )
    assert evolved["state"] == "applied", evolved
    return Wide(run, names, {last, evolved["data"]["primary"]["id"]}, first, outside)


def _answered(answer: dict[str, Any]) -> dict[str, Any]:
    assert answer["state"] in ("ok", "applied"), answer["issues"]
    return answer


def _hit_ids(answer: dict[str, Any]) -> set[str]:
    return {hit["id"] for hit in _answered(answer)["data"]["hits"]}


def test_a_first_seen_word_a_prefix_and_a_timeline_read_a_scope_wider_than_sqlites_parameters(wide: Wide) -> None:
    first = wide.run("search", {"initiatives": wide.names, "text": WORD})
    assert _hit_ids(first) == wide.inside and first["data"]["total"] == 2
    prefixed = wide.run("search", {"initiatives": wide.names, "text": WORD[:7], "prefix": True})
    assert _hit_ids(prefixed) == wide.inside and prefixed["data"]["total"] == 2
    everything = wide.run("search", {"initiatives": wide.names, "text": WORD, "filters": {"current": "all"}})
    assert _hit_ids(everything) == {*wide.inside, wide.superseded}
    timeline = _answered(wide.run("timeline", {"initiatives": wide.names, "query": WORD}))
    assert wide.outside not in _hit_ids(timeline) and wide.inside <= _hit_ids(timeline)


#: The knobs each engine's tests lower to force a search plan (`None`: the engine's own value):
#: SQLite's common-word plans (top-k in SQL, the exhaustive plan, ranked in memory; the superseded
#: matches flagged by a look-up per candidate), PostgreSQL's common-word and in-memory plans.
PLANS = {
    "sqlite common, top-k": {"rare_rows": 0, "text_cache": False, "top_k_slack": 0, "superseded_ids": 0},
    "sqlite common, exhaustive": {"rare_rows": 0, "text_cache": False, "top_k": False},
    "sqlite common, in memory": {"rare_rows": 0, "text_cache": True, "few_rows": 0},
    "postgres common": {"common_divisor": 10**9, "text_cache": False, "superseded_ids": 0},
    "postgres in memory": {"common_divisor": 10**9, "text_cache": True},
}


@pytest.fixture(params=list(PLANS))
def plan(request: pytest.FixtureRequest, store: Store, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name: str = request.param
    with store.read() as session:
        engine = type(session)
    if not name.startswith(session._db.dialect.name):
        pytest.skip(f"a plan of the other engine ({name})")
    for knob, value in PLANS[name].items():
        assert hasattr(engine, knob), knob
        monkeypatch.setattr(engine, knob, value)
    yield name


def test_every_search_plan_reads_a_scope_wider_than_sqlites_parameters(plan: str, wide: Wide) -> None:
    # A window of one under two matches: the ranking, the count and the superseded match counted.
    answer = wide.run("search", {"initiatives": wide.names, "text": WORD, "limit": 1})
    assert _hit_ids(answer) < wide.inside and answer["data"]["total"] == 2, plan


def test_an_export_of_a_scope_wider_than_sqlites_parameters_holds_its_notes(wide: Wide) -> None:
    args = {"action": "export", "format": "amg", "path": "wide.amg", "initiatives": wide.names}
    artifact = _answered(wide.run("archive", args))["data"]["artifacts"][0]
    assert artifact["nodes"] == 3 and len(artifact["initiatives"]) == WIDE
    written = Path(artifact["path"]).read_text()
    assert all(node in written for node in [*wide.inside, wide.superseded]) and wide.outside not in written
