"""Slot hand-offs at once (decision 461): on PostgreSQL, whose writers run side by side, every agent's
write lands as it does on SQLite, whose writers take turns (SPEC §2.2, §5).

Each agent has its own store (its own pool of connections), as agents with a server each have; the
calls of a round are released together. Without `expected_slot_revision` a take applies to the
slot's latest revision: agents taking a free slot at once were refused `slot_conflict` ("taken
concurrently", no revision named) but the first. A take while another write hands the slot's holder
on (giving the slot to it again, superseding it, forgetting it) deadlocked: `unavailable`, with
PostgreSQL's process ids. Two writes that lock two nodes in opposite orders still deadlock: the one
PostgreSQL ends is run again by kaeru, not refused.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import psycopg
import pytest

from kaeru.api.requests import parse
from kaeru.domain.model import EdgeType
from kaeru.errors import SlotConflict, Unavailable
from kaeru.service import Service
from kaeru.service.outcomes import MutationOutcome
from kaeru.storage.base import SlotState
from kaeru.storage.factory import open_store
from kaeru.storage.postgres.db import translate
from tests.backends import VaultSpec
from tests.together import together

AGENTS = 4
#: Rounds of each race: enough that PostgreSQL's writers met in most runs before the fix.
ROUNDS = 15
#: Rounds of the race that still deadlocks: each deadlock waits PostgreSQL's `deadlock_timeout`.
CROSSING_ROUNDS = 10
TEAM = "team"


@pytest.fixture
def agents(vault: VaultSpec) -> Iterator[list[Service]]:
    """`AGENTS` services on one vault, each with a store of its own."""
    stores = [open_store(vault.settings()) for _ in range(AGENTS)]
    yield [Service(store, vault.settings()) for store in stores]
    for store in stores:
        store.close()


def _outcome(result: Any) -> MutationOutcome:
    assert not isinstance(result, Exception), repr(result)
    outcome, _ = result
    assert isinstance(outcome, MutationOutcome)
    return outcome


def _note(service: Service, text: str, **options: Any) -> tuple[MutationOutcome, bool]:
    args: dict[str, Any] = {"initiative": TEAM, "text": text}
    if options:
        args["options"] = options
    return service.note(parse("note", args))


def _give(service: Service, slot: str, node: str, **more: Any) -> tuple[MutationOutcome, bool]:
    return service.slot(parse("slot", {"initiative": TEAM, "slot": slot, "node": node, **more}))


def _history(service: Service, slot: str) -> list[SlotState]:
    with service.rt.store.read() as session:
        scope = session.initiative_by_name(TEAM)
        assert scope is not None
        return session.slot_history(scope.id, slot)


def _supersedes(service: Service, src: str, dst: str) -> bool:
    with service.rt.store.read() as session:
        edge = session.get_edge(src, dst, EdgeType.SUPERSEDES)
    return edge is not None and not edge.retracted


def _retracted(service: Service, node_id: str) -> bool:
    with service.rt.store.read() as session:
        node = session.get_node(node_id)
    return node is None or node.retracted


def test_notes_taking_a_free_slot_at_once_all_apply_one_after_the_other(agents: list[Service]) -> None:
    first = agents[0]
    for r in range(ROUNDS):
        slot = f"handoff-{r}"
        results = together(
            [partial(_note, a, f"handoff from agent {i} round {r}", slot=slot) for i, a in enumerate(agents)]
        )
        notes = [_outcome(x).primary for x in results]
        assert all(n is not None for n in notes)
        ids = {n.id for n in notes if n is not None}
        history = _history(first, slot)
        # Every note took the slot in turn, from the one before it, as a take of a held slot does.
        assert [s.rev_no for s in history] == list(range(1, AGENTS + 1)), (r, history)
        assert {s.node_id for s in history} == ids, r
        for before, after in itertools.pairwise(history):
            assert after.node_id is not None and before.node_id is not None
            assert _supersedes(first, after.node_id, before.node_id), (r, before, after)


@pytest.mark.parametrize("tool", ["note", "slot"])
def test_a_compare_and_set_on_a_free_slot_loses_naming_the_current_revision(agents: list[Service], tool: str) -> None:
    first = agents[0]
    for r in range(ROUNDS):
        slot = f"cas-{tool}-{r}"
        if tool == "note":
            calls = [
                partial(_note, a, f"cas from {i} round {r}", slot=slot, expected_slot_revision="0")
                for i, a in enumerate(agents)
            ]
            field = "options.expected_slot_revision"
        else:
            nodes = [_outcome(_note(first, f"candidate {i} round {r}")).primary for i in range(AGENTS)]
            calls = [
                partial(_give, a, slot, n.id, expected_slot_revision="0")
                for a, n in zip(agents, nodes, strict=True)
                if n
            ]
            field = "expected_slot_revision"
        results = together(calls)
        won = [x for x in results if not isinstance(x, Exception)]
        lost = [x for x in results if isinstance(x, Exception)]
        assert len(won) == 1, (r, results)
        current = _outcome(won[0]).slots[0].revision
        assert current != "0"
        for refusal in lost:
            assert isinstance(refusal, SlotConflict), (r, refusal)
            assert refusal.field == field
            assert f"is at revision {current!r}, not '0'" in refusal.message, refusal.message


@pytest.mark.parametrize("move", ["regive", "supersede", "forget"])
def test_a_take_while_the_holder_is_handed_on_applies(agents: list[Service], move: str) -> None:
    """B's note takes the slot while A gives it to its holder X again, supersedes X (the successor
    inherits its slot) or forgets X: both apply, in either order, and B's note or X holds it."""
    a, b = agents[0], agents[1]
    for r in range(ROUNDS):
        slot = f"{move}-{r}"
        x = _outcome(_note(a, f"holder X {r}", slot=slot)).primary
        assert x is not None
        if move == "regive":
            first: Callable[[], Any] = partial(_give, a, slot, x.id)
        elif move == "supersede":
            request = {"initiative": TEAM, "mode": "supersede", "source": x.id, "new_body": f"X refined {r}"}
            first = partial(a.evolve, parse("evolve", request))
        else:
            first = partial(a.forget, parse("forget", {"initiative": TEAM, "node": x.id, "reason": "obsolete"}))
        ra, rb = together([first, partial(_note, b, f"B takes over {r}", slot=slot)])
        successor = _outcome(ra).primary
        taker = _outcome(rb).primary
        assert taker is not None and successor is not None
        holder = _history(a, slot)[-1].node_id
        # B's note holds it, or what A's write gave it to after B's take: X again, or the successor
        # of X, which supersedes X's current version, B's note, and inherits its slot.
        assert holder in (taker.id, x.id if move == "regive" else successor.id), (r, holder)
        assert holder is not None and not _retracted(a, holder)


def test_writes_locking_two_nodes_in_opposite_orders_all_apply_once(agents: list[Service]) -> None:
    """Two syntheses of the same sources named in opposite orders lock them in those orders: the
    one PostgreSQL ends to break the deadlock is run again, whole, and applies once; a replay of
    its request_id answers what it wrote."""
    a, b = agents[0], agents[1]
    for r in range(CROSSING_ROUNDS):
        p, q = (_outcome(_note(a, f"source {s} round {r}")).primary for s in "pq")
        assert p is not None and q is not None

        def synthesise(service: Service, sources: list[str], key: str, r: int = r) -> tuple[MutationOutcome, bool]:
            args = {"initiative": TEAM, "mode": "synthesise", "sources": sources, "new_body": f"sum {key} {r}"}
            return service.evolve(parse("evolve", {**args, "request_id": f"{key}-{r}"}))

        calls = [partial(synthesise, a, [p.id, q.id], "pq"), partial(synthesise, b, [q.id, p.id], "qp")]
        results = together(calls)
        for call, result in zip(calls, results, strict=True):
            written = _outcome(result)
            replayed, again = call()
            assert again and replayed.primary == written.primary


def test_a_deadlock_is_said_in_kaerus_words() -> None:
    """What the caller reads when the re-runs ran out: retryable, without PostgreSQL's process ids."""
    said = translate(
        psycopg.errors.DeadlockDetected(
            "deadlock detected\nDETAIL: Process 19399 waits for ShareLock on transaction 812; blocked by process 19401."
        )
    )
    assert isinstance(said, Unavailable) and said.retryable
    assert "two writes waited for each other" in said.message
    assert "19399" not in said.message and "Process" not in said.message
    serial = translate(psycopg.errors.SerializationFailure("could not serialize access due to concurrent update"))
    assert isinstance(serial, Unavailable) and "two writes" in serial.message
