"""Hygiene reaches a fixed point (the third forced pass moves nothing) and never moves pinned nodes."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaeru.config import Settings
from kaeru.domain.model import DECISION_TAG, EdgeType, Layer, NodeType
from kaeru.service import Service
from kaeru.service.hygiene import CANCELLING, Move, decide
from kaeru.storage.base import SearchQuery, Store
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec, drop_vault, new_vault
from tests.working.conftest import Call, Clock, make_call

LAYERS = ["core", "hot", "warm"]


@contextmanager
def _timed_vault(backend: str, tmp_path: Path) -> Iterator[tuple[Store, Service, Clock]]:
    """A fresh vault with a service on a clock the test moves; dropped afterwards."""
    spec = new_vault(backend, tmp_path)
    store = open_store(spec.settings())
    clock = Clock(datetime(2026, 1, 1, tzinfo=UTC))
    try:
        yield store, Service(store, spec.settings(), clock=clock), clock
    finally:
        store.close()
        drop_vault(spec)


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), size=st.integers(5, 40))
def test_third_pass_moves_nothing_and_pins_hold(backend: str, tmp_path: Path, seed: int, size: int) -> None:
    rng = random.Random(seed)
    with _timed_vault(backend, tmp_path) as (_, service, clock):
        call = make_call(service)
        ids: list[str] = []
        pinned: dict[str, str] = {}
        for i in range(size):
            kind = rng.choice(["observation", "decision", "idea", "concept"])
            layer = rng.choice(LAYERS)
            made = call("note", initiative="h", text=f"node {i} {kind}", kind=kind, options={"layer": layer})
            ids.append(made["data"]["primary"]["id"])
            clock.advance(days=rng.randint(0, 3))
            if ids and rng.random() < 0.3:
                call(
                    "link",
                    initiative="h",
                    **{"from": rng.choice(ids), "to": ids[-1]},
                    edge_type=rng.choice(["refers_to", "supersedes", "derived_from"]),
                    weight=0.8,
                )
            if rng.random() < 0.15:
                call("layer", initiative="h", nodes=[ids[-1]], pin=True)
                pinned[ids[-1]] = layer
        clock.advance(days=45)
        service.hygiene("h")
        service.hygiene("h")
        third = service.hygiene("h")
        assert third == [], f"third pass still moved {third}"
        for node_id, layer in pinned.items():
            assert call("read", initiative="h", node=node_id)["data"]["hits"][0]["layer"] == layer


def test_hygiene_demotes_stale_core_and_reports_once(call: Call, timed: Service, clock: Clock) -> None:
    old = call("note", initiative="h", text="an old core belief", options={"layer": "core"})["data"]["primary"]["id"]
    kept = call("note", initiative="h", text="a pinned core rule of thumb", options={"layer": "core"})["data"][
        "primary"
    ]["id"]
    call("layer", initiative="h", nodes=[kept], pin=True)
    clock.advance(days=40)
    moves = timed.hygiene("h")
    assert [(m.node_id, m.before.value, m.after.value) for m in moves] == [(old, "core", "hot")]
    first = call("context", initiative="h")
    assert any("unchanged in core for 30 days" in n for n in first["data"]["notices"])
    assert call("context", initiative="h")["data"]["notices"] == [], "reported once"


def test_hygiene_keeps_core_under_its_ceiling_and_promotes_well_supported_warm_memory(
    call: Call, timed: Service
) -> None:
    """Above 15 core nodes the least supported (then oldest) go to hot; a warm node that five others
    support is promoted to hot, one that five others contradict is not."""

    def note(text: str, layer: str = "warm") -> str:
        node_id: str = call("note", initiative="h", text=text, options={"layer": layer})["data"]["primary"]["id"]
        return node_id

    def support(target: str, count: int, edge_type: str = "refers_to") -> None:
        for i in range(count):
            source = note(f"evidence {i} about {target}")
            linked = call(
                "link",
                initiative="h",
                **{"from": {"id": source}, "to": {"id": target}},
                edge_type=edge_type,
                weight=0.8,
            )
            assert linked["state"] == "applied", linked

    core = [note(f"core belief number {i}", "core") for i in range(17)]
    support(core[0], 1)  # the oldest, but supported: it stays
    supported = note("the vault keeps one writer at a time")
    support(supported, 5)
    doubted = note("the vault scales to any number of writers")
    support(doubted, 5, "contradicts")

    moves = {m.node_id: (m.before.value, m.after.value, m.reason) for m in timed.hygiene("h")}
    ceiling = [node for node, (_, _, reason) in moves.items() if "ceiling" in reason]
    assert ceiling == core[1:3] and all(moves[n][:2] == ("core", "hot") for n in ceiling)
    assert moves[supported] == ("warm", "hot", "5 supporting links")
    assert doubted not in moves
    layers = {
        h["id"]: h["layer"]
        for h in call("search", initiatives=["h"], filters={"layers": ["core"]}, limit=50)["data"]["hits"]
    }
    assert len(layers) == 15 and core[0] in layers


def test_with_automatic_hygiene_context_tidies_first_and_reports_once(
    store: Store, vault: VaultSpec, clock: Clock
) -> None:
    """`KAERU_HYGIENE=1`: `context` runs a pass before it reads, so a stale core belief is already
    in `hot` and the pass's report is a notice of this very call — once; an unknown initiative is
    still refused as such, not by the pass."""
    settings = Settings.from_env({**vault.env(), "KAERU_HYGIENE": "1"})
    assert settings.hygiene
    call = make_call(Service(store, settings, clock=clock))
    old = call("note", initiative="h", text="an old core belief", options={"layer": "core"})["data"]["primary"]["id"]
    fresh = call("context", initiative="h")
    assert old in [i["id"] for s in fresh["data"]["sections"] if s["name"] == "core" for i in s["items"]]
    assert fresh["data"]["notices"] == [], "nothing to tidy yet"
    clock.advance(days=40)
    tidied = call("context", initiative="h")
    assert old in [i["id"] for s in tidied["data"]["sections"] if s["name"] == "hot" for i in s["items"]]
    assert any("unchanged in core for 30 days" in n for n in tidied["data"]["notices"])
    assert call("context", initiative="h")["data"]["notices"] == [], "reported once"
    unknown = call("context", initiative="nowhere")
    assert unknown["state"] == "rejected" and unknown["issues"][0]["code"] == "unknown_initiative"


def _every_node_moves(store: Store, initiative: str, now: datetime) -> list[Move]:
    """The rules decided over every live, unpinned core, hot and warm member, each with its count
    of supporting links read from all the initiative's inbound edges, and those superseding another
    by a live edge: what a pass must agree with."""
    with store.read() as session:
        scope = session.initiative_by_name(initiative)
        assert scope is not None
        rows, _, _ = session.search(
            SearchQuery(initiative_ids=[scope.id], layers=LAYERS, omit_superseded=False, window=100_000)
        )
        found = session.nodes_by_ids([r.id for r in rows])
        nodes = sorted(
            (n for n in found.values() if not n.pinned and n.node_type != NodeType.BOARD), key=lambda n: n.seq
        )
        inbound = session.inbound([scope.id], [e.value for e in EdgeType])
        support = {n.id: sum(1 for e in inbound.get(n.id, []) if e.edge_type not in CANCELLING) for n in nodes}
        ids = {n.id for n in nodes}
        replacing = frozenset(e.src for e in session.live_edges(list(ids), [EdgeType.SUPERSEDES]) if e.src in ids)
        asked = [n.id for n in nodes if n.layer == Layer.CORE or DECISION_TAG in n.tags or n.id in replacing]
        verdicts = session.verdicts_against(asked)
        holders = frozenset(s.node_id for s in session.slots_of(scope.id) if s.node_id)
    return decide(nodes, support, verdicts, now, holders, replacing)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000))
def test_a_pass_moves_what_the_rules_decide_over_every_node(backend: str, tmp_path: Path, seed: int) -> None:
    """The pass reads only the nodes its index queries call candidates (decision 84); on vaults with
    every rule in play — old and back-dated notes, archival ideas, well-linked warm nodes, verdicts
    and cancelling links, links from forgotten notes, pins, a second initiative — it must move
    exactly what the rules decide over every node, pass after pass."""
    rng = random.Random(seed)
    with _timed_vault(backend, tmp_path) as (store, service, clock):
        run = make_call(service)

        def call(tool: str, **args: object) -> dict[str, object]:
            answer = run(tool, **args)
            assert answer["state"] != "rejected", answer["issues"]
            return answer

        ids: list[str] = []
        for i in range(rng.randint(20, 45)):
            kind = rng.choice(["observation", "decision", "jot", "idea", "concept", "observation"])
            args: dict[str, object] = {"options": {"layer": rng.choice([*LAYERS, "cold"])}}
            if rng.random() < 0.2:  # back-dated: its created_at is older than its place in the log
                args["occurred_at"] = f"2025-12-{rng.randint(1, 28):02d}"
            initiatives = ["h", "other"] if rng.random() < 0.1 else ["h"]
            made = call("note", initiative=initiatives[0], text=f"node {i} {kind}", kind=kind, **args)
            node = made["data"]["primary"]["id"]
            ids.append(node)
            if len(initiatives) > 1:
                call("initiative", initiative="h", action="attach", node={"id": node})
            clock.advance(days=rng.randint(0, 4))
        core_heavy = rng.random() < 0.5  # more core than its ceiling
        for i in range(rng.randint(16, 22) if core_heavy else 0):
            made = call("note", initiative="h", text=f"core belief {i}", kind="concept", options={"layer": "core"})
            ids.append(made["data"]["primary"]["id"])
        # Hubs: two of the notes, and a concept only the promotion rule can move.
        concept = call("note", initiative="h", text="the hub concept", kind="concept", options={"layer": "warm"})
        hubs = [*rng.sample(ids, 2), concept["data"]["primary"]["id"]]
        call("layer", initiative="h", nodes=hubs, layer="warm")
        kinds = ["refers_to", "derived_from", "supersedes", "contradicts", "verifies"]
        links = [(rng.choice(ids), rng.choice(ids), rng.choice(kinds)) for _ in range(rng.randint(10, 30))]
        supporting = ["refers_to", "derived_from", "verifies"]  # hubs: around the promotion threshold
        links += [(s, hub, rng.choice(supporting)) for hub in hubs for s in rng.sample(ids, rng.randint(3, 8))]
        for source, target, edge in links:
            if source != target:
                call("link", initiative="h", **{"from": source, "to": target}, edge_type=edge, weight=0.5)
        forgotten = rng.sample(ids, 3)
        for node in forgotten:
            call("forget", initiative="h", node=node, reason="test")
        for node in rng.sample([i for i in ids if i not in forgotten], 4):
            call("layer", initiative="h", nodes=[node], pin=True)
        for days in (20, 20, 30):
            clock.advance(days=days)
            expected = _every_node_moves(store, "h", clock.moment)
            moved = service.hygiene("h")
            assert sorted(moved, key=lambda m: m.node_id) == sorted(expected, key=lambda m: m.node_id)


def test_automatic_hygiene_runs_at_most_hourly_per_initiative(store: Store, vault: VaultSpec, clock: Clock) -> None:
    """A pass per `context` call would cost every re-entry a pass; its rules count days, so the
    automatic one runs at most once an hour per initiative (decision 84) — `kaeru hygiene` any time."""
    service = Service(store, Settings.from_env({**vault.env(), "KAERU_HYGIENE": "1"}), clock=clock)
    call = make_call(service)

    def section_of(answer: dict[str, Any], node: str) -> str:
        return next(s["name"] for s in answer["data"]["sections"] for i in s["items"] if i["id"] == node)

    belief = call("note", initiative="h", text="we deploy on Fridays", options={"layer": "core"})["data"]["primary"]
    assert section_of(call("context", initiative="h"), belief["id"]) == "core"  # the hour's pass: nothing to do
    call("note", initiative="h", text="we no longer deploy on Fridays", link_to=belief["id"], edge_type="supersedes")
    clock.advance(minutes=30)
    assert section_of(call("context", initiative="h"), belief["id"]) == "core", "no second pass within the hour"
    clock.advance(minutes=31)
    later = call("context", initiative="h")
    # Moved to hot, where `context` shows current nodes only: its successor stands for it there.
    assert _layer(call, belief["id"]) == "hot"
    assert belief["id"] not in {i["id"] for s in later["data"]["sections"] for i in s["items"]}
    assert any("a live verdict replaced or refuted it" in n for n in later["data"]["notices"])
    again = call("note", initiative="h", text="we freeze deploys in December", options={"layer": "core"})
    call(
        "note",
        initiative="h",
        text="no freeze this year",
        link_to=again["data"]["primary"]["id"],
        edge_type="supersedes",
    )
    assert [m.reason for m in service.hygiene("h")] == ["a live verdict replaced or refuted it"], "by hand: at once"


def _layer(call: Call, node: str) -> str:
    return str(call("read", initiative="h", node=node)["data"]["hits"][0]["layer"])


def test_current_decisions_and_slot_holders_stay_within_reach(call: Call, timed: Service, clock: Clock) -> None:
    """Found by a probe of a four-month project: with hygiene on, every decision older than 14 days
    went cold — out of `context` and of default `recall` — while `context` said it was complete. A
    current decision and a slot's holder are what the project knows now; a journal entry ages out."""
    decision = call("note", initiative="h", kind="decision", name="Payment provider", text="We use Stripe for cards.")
    holder = call("note", initiative="h", text="Prod runs PG15 on 12 GB", options={"slot": "prod-state"})
    routine = call("note", initiative="h", text="Fixed the invoice PDF margins today.")
    decision_id, holder_id, routine_id = (n["data"]["primary"]["id"] for n in (decision, holder, routine))
    clock.advance(days=20)
    moved = timed.hygiene("h")
    assert [(m.node_id, m.after.value) for m in moved] == [(routine_id, "cold")]
    assert (_layer(call, decision_id), _layer(call, holder_id)) == ("warm", "warm")
    hits = call("recall", initiatives=["h"], query="which payment provider do we use?")["data"]["hits"]
    assert hits[0]["id"] == decision_id
    # Replaced, a decision is history: it may age out; its successor starts within reach.
    successor = call("evolve", initiative="h", mode="supersede", source=decision_id, new_body="We use Adyen for cards.")
    new_id = successor["data"]["created"][0]["id"]
    clock.advance(days=20)
    moved = timed.hygiene("h")
    assert (decision_id, "cold") in [(m.node_id, m.after.value) for m in moved]
    assert _layer(call, new_id) == "warm"


def test_a_changed_node_starts_its_time_again_and_an_undone_move_stays_undone(
    call: Call, timed: Service, clock: Clock
) -> None:
    """Hygiene aged a node from its creation: a fact corrected two days ago went cold as "older than
    14 days", and a move the agent undid by hand was made again within the hour. A node's time now
    runs from its last revision; the report names each node's id and how to undo or keep it."""
    fact = call("note", initiative="h", text="The production database is 12 GB.")["data"]["primary"]["id"]
    aside = call("note", initiative="h", text="Looked at the slow query log.")["data"]["primary"]["id"]
    clock.advance(days=13)
    call("revise", initiative="h", node=fact, patch={"body": "The production database is 61 GB."})
    clock.advance(days=2)
    assert [(m.node_id, m.after.value) for m in timed.hygiene("h")] == [(aside, "cold")]
    report = call("context", initiative="h")["data"]["notices"]
    assert len(report) == 1 and aside in report[0] and "pin: true" in report[0]
    assert call("layer", initiative="h", nodes=[aside], layer="warm")["state"] == "applied"
    clock.advance(hours=2)
    assert timed.hygiene("h") == [], "the undone move is not made again"
    clock.advance(days=15)
    assert {m.node_id for m in timed.hygiene("h")} == {fact, aside}, "both unchanged for 14 days since"


def test_a_node_hygiene_took_out_of_core_stays_within_recall(call: Call, timed: Service, clock: Clock) -> None:
    """A note the agent put in core went core → hot → cold in 46 days, out of every `context` section
    and of recall; once chosen for core, hygiene lowers it no further than warm."""
    goal = call(
        "note", initiative="h", text="Goal: replace the invoicing scripts by December.", options={"layer": "core"}
    )
    goal_id = goal["data"]["primary"]["id"]
    layers = []
    for days in (31, 15, 30):
        clock.advance(days=days)
        timed.hygiene("h")
        layers.append(_layer(call, goal_id))
    assert layers == ["hot", "warm", "warm"]


def test_a_successor_starts_warm_unless_its_source_was_chosen_for_core_or_hot(call: Call) -> None:
    """`evolve supersede` copied its source's layer: a decision replacing one that had aged cold was
    born cold, left out of `context` and `recall` the day it was made."""
    cooled = call("note", initiative="h", kind="decision", text="Use PostgreSQL 15 for the ledger.")
    core = call("note", initiative="h", text="Ship by December.", options={"layer": "core"})
    cooled_id, core_id = cooled["data"]["primary"]["id"], core["data"]["primary"]["id"]
    call("layer", initiative="h", nodes=[cooled_id], layer="cold")
    layers = []
    for source, body in ((cooled_id, "Use PostgreSQL 16 for the ledger."), (core_id, "Ship by January.")):
        made = call("evolve", initiative="h", mode="supersede", source=source, new_body=body)
        layers.append(_layer(call, made["data"]["created"][0]["id"]))
    assert layers == ["warm", "core"]


def test_hygiene_reports_are_no_recall_hits(call: Call, timed: Service, clock: Clock) -> None:
    """A report names the nodes it moved, so it matched their words: with `include_stale` it ranked
    above real memory, and without it it was counted among the stale hits left out."""
    aside = call("note", initiative="h", text="Profiled the ledger export job.")["data"]["primary"]["id"]
    clock.advance(days=15)
    assert [m.node_id for m in timed.hygiene("h")] == [aside]
    stale = call("recall", initiatives=["h"], query="ledger export job", include_stale=True)
    assert [h["id"] for h in stale["data"]["hits"]] == [aside]
    default = call("recall", initiatives=["h"], query="ledger export job")
    assert default["coverage"]["omitted"] == [{"section": "hits", "count": 1, "reason": "stale"}]
    asked = call("recall", initiatives=["h"], query="ledger export job", tags=["kind:hygiene"], include_stale=True)
    assert len(asked["data"]["hits"]) == 1 and asked["data"]["hits"][0]["id"] != aside


def test_a_look_at_one_section_leaves_the_report_for_the_agents_re_entry(
    call: Call, timed: Service, clock: Clock
) -> None:
    """The web viewer's board and rules pages read `context` for one section and never show its
    notices: that read marked hygiene's report as shown, so a person opening the board used up the
    report the agent's next re-entry was to give. A report is marked shown by a whole re-entry."""
    aside = call("note", initiative="h", text="Profiled the ledger export job.")["data"]["primary"]["id"]
    clock.advance(days=15)
    assert [m.node_id for m in timed.hygiene("h")] == [aside]
    for section in ("tasks", "rules", "reviews"):
        looked = call("context", initiative="h", sections=[section])
        assert any(aside in n for n in looked["data"]["notices"])
    reentry = call("context", initiative="h")
    assert any(aside in n for n in reentry["data"]["notices"]), "the agent still gets it"
    assert call("context", initiative="h")["data"]["notices"] == [], "once"
