"""Replay: a `request_id` makes a mutation apply exactly once per (initiative, operation, request_id)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.errors import KaeruError
from kaeru.service import Service
from kaeru.storage.base import Store
from tests.backends import VaultSpec
from tests.service.support import primary
from tests.working.conftest import Clock

P = "replay-lab"


def count(service: Service, word: str, initiative: str = P) -> int:
    return service.search(
        parse("search", {"initiatives": [initiative], "text": word, "filters": {"current": "all"}})
    ).total


def test_same_request_id_and_arguments_replays(service: Service) -> None:
    """A retry with the same key and arguments returns the stored outcome, replayed, and writes nothing."""
    args = {"initiative": P, "text": "lighthouse capture", "request_id": "req-1"}
    first, replayed_first = service.note(parse("note", args))
    second, replayed_second = service.note(parse("note", dict(args)))
    assert (replayed_first, replayed_second) == (False, True)
    assert primary(second) == primary(first)
    assert second.created == first.created
    assert second.state == first.state == "applied"
    assert count(service, "lighthouse") == 1


def test_replay_returns_the_original_warnings(service: Service) -> None:
    """The stored response is returned as it was, including the new_initiative warning."""
    args = {"initiative": P, "text": "x", "request_id": "req-1"}
    first, _ = service.note(parse("note", args))
    second, _ = service.note(parse("note", args))
    assert [i.code for i in second.issues] == [i.code for i in first.issues] == ["new_initiative"]


def test_same_request_id_different_arguments_is_refused(service: Service) -> None:
    """Reusing a key for different arguments is request_id_reused, and nothing is written."""
    service.note(parse("note", {"initiative": P, "text": "lighthouse one", "request_id": "req-1"}))
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "lighthouse two", "request_id": "req-1"}))
    assert err.value.code == "request_id_reused"
    assert err.value.field == "request_id"
    assert not err.value.retryable
    assert count(service, "lighthouse") == 1


@pytest.mark.parametrize("extra", [{"kind": "idea"}, {"tags": ["t"]}, {"name": "n"}])
def test_any_argument_difference_counts(service: Service, extra: dict[str, Any]) -> None:
    """Any added argument makes it a different call."""
    service.note(parse("note", {"initiative": P, "text": "lighthouse", "request_id": "req-1"}))
    with pytest.raises(KaeruError) as err:
        service.note(parse("note", {"initiative": P, "text": "lighthouse", "request_id": "req-1", **extra}))
    assert err.value.code == "request_id_reused"


def test_argument_order_does_not_matter(service: Service) -> None:
    """The same arguments in another key order are the same call."""
    first, _ = service.note(
        parse("note", {"initiative": P, "text": "lighthouse", "tags": ["a"], "request_id": "req-1"})
    )
    second, replayed = service.note(
        parse("note", {"request_id": "req-1", "tags": ["a"], "text": "lighthouse", "initiative": P})
    )
    assert replayed
    assert primary(second) == primary(first)


def test_key_is_scoped_by_initiative(service: Service) -> None:
    """The same request_id in another initiative is a different key and applies."""
    a, _ = service.note(parse("note", {"initiative": "proj-a", "text": "lighthouse", "request_id": "req-1"}))
    b, replayed = service.note(parse("note", {"initiative": "proj-b", "text": "lighthouse", "request_id": "req-1"}))
    assert not replayed
    assert primary(a) != primary(b)


def test_key_is_scoped_by_operation(service: Service) -> None:
    """The same request_id for a different operation is a different key and applies."""
    service.note(parse("note", {"initiative": P, "text": "lighthouse note", "request_id": "req-1"}))
    outcome, replayed = service.claim(
        parse("claim", {"initiative": P, "text": "lighthouse claim", "request_id": "req-1"})
    )
    assert not replayed
    assert outcome.state == "applied"
    assert count(service, "lighthouse") == 2


def test_rejected_call_is_not_stored(service: Service) -> None:
    """A rejected call does not burn its key: the corrected retry with the same key applies."""
    service.note(parse("note", {"initiative": P, "text": "target", "name": "target"}))
    with pytest.raises(KaeruError) as err:
        service.note(
            parse("note", {"initiative": P, "text": "lighthouse", "link_to": "targett", "request_id": "req-1"})
        )
    assert err.value.code == "not_found"
    fixed, replayed = service.note(
        parse("note", {"initiative": P, "text": "lighthouse", "link_to": "target", "request_id": "req-1"})
    )
    assert not replayed
    assert fixed.state == "applied"
    assert count(service, "lighthouse") == 1


def test_rejected_call_can_be_retried_identically(service: Service) -> None:
    """A call rejected for a reason that went away succeeds when retried with the same key and arguments."""
    args = {"initiative": P, "text": "lighthouse", "link_to": "later-target", "request_id": "req-1"}
    service.note(parse("note", {"initiative": P, "text": "anchor"}))
    with pytest.raises(KaeruError):
        service.note(parse("note", args))
    service.note(parse("note", {"initiative": P, "text": "now it exists", "name": "later-target"}))
    outcome, replayed = service.note(parse("note", args))
    assert not replayed and outcome.state == "applied"


def test_revise_replay_applies_once(service: Service) -> None:
    """A replayed revise creates no second revision."""
    created, _ = service.note(parse("note", {"initiative": P, "text": "v1"}))
    node = primary(created)
    args = {"initiative": P, "node": node, "patch": {"body": "v2"}, "request_id": "rev-1"}
    first, _ = service.revise(parse("revise", args))
    revision = service.read(parse("read", {"initiative": P, "node": node})).hits[0].node.revision
    second, replayed = service.revise(parse("revise", args))
    assert replayed
    assert second.primary == first.primary
    assert service.read(parse("read", {"initiative": P, "node": node})).hits[0].node.revision == revision


def test_replay_wins_over_a_later_state_change(service: Service) -> None:
    """A replayed revise is not re-applied even after another change to the node."""
    created, _ = service.note(parse("note", {"initiative": P, "text": "v1"}))
    node = primary(created)
    service.revise(parse("revise", {"initiative": P, "node": node, "patch": {"body": "v2"}, "request_id": "rev-1"}))
    service.revise(parse("revise", {"initiative": P, "node": node, "patch": {"body": "v3"}}))
    _, replayed = service.revise(
        parse("revise", {"initiative": P, "node": node, "patch": {"body": "v2"}, "request_id": "rev-1"})
    )
    assert replayed
    assert service.read(parse("read", {"initiative": P, "node": node})).hits[0].node.body == "v3"


def test_claim_replay_creates_no_second_experiment(service: Service) -> None:
    """A replayed claim with a method creates neither a second hypothesis nor a second experiment."""
    args = {
        "initiative": P,
        "text": "lighthouse theory",
        "initial_status": "supported",
        "evidence": {"method": "lighthouse experiment"},
        "request_id": "c-1",
    }
    first, _ = service.claim(parse("claim", args))
    second, replayed = service.claim(parse("claim", args))
    assert replayed
    assert second.created == first.created
    assert second.evidence == first.evidence
    assert count(service, "lighthouse") == 2


def test_replay_of_a_slot_take_does_not_take_again(service: Service) -> None:
    """Replaying a slot take does not supersede the holder that came after it."""
    args = {"initiative": P, "text": "first", "options": {"slot": "handoff"}, "request_id": "s-1"}
    service.claim(parse("claim", args))
    later, _ = service.claim(parse("claim", {"initiative": P, "text": "second", "options": {"slot": "handoff"}}))
    _, replayed = service.claim(parse("claim", args))
    assert replayed
    view = service.read(parse("read", {"initiative": P, "node": primary(later)})).hits[0]
    assert view.currentness.value == "current"


def test_without_request_id_every_call_applies(service: Service) -> None:
    """No key, no replay: identical calls are separate captures — the second says it repeats the
    first (decision 291: a retry without a key writes the memory twice)."""
    args = {"initiative": P, "text": "lighthouse"}
    a, _ = service.note(parse("note", args))
    b, replayed = service.note(parse("note", args))
    assert not replayed
    assert primary(a) != primary(b)
    assert count(service, "lighthouse") == 2
    assert "duplicate_call" not in [i.code for i in a.issues]
    repeated = [i for i in b.issues if i.code == "duplicate_call"]
    assert len(repeated) == 1 and primary(a) in repeated[0].message and "request_id" in repeated[0].message


def test_only_the_same_call_soon_after_is_said_to_repeat(store: Store, vault: VaultSpec) -> None:
    """Another text, another initiative, another actor, a keyed call, a first node forgotten, or
    ten minutes passed: no warning (decision 291)."""
    clock = Clock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    service = Service(store, vault.settings(), clock=clock)

    def codes(args: dict[str, Any], actor: str | None = None) -> list[str]:
        outcome, _ = service.note(parse("note", {"initiative": P, **args}), actor=actor)
        return [i.code for i in outcome.issues if i.code == "duplicate_call"]

    assert codes({"text": "the tests pass"}) == []
    assert codes({"text": "the tests pass again"}) == []
    assert codes({"text": "the tests pass", "initiative": "other"}) == []
    assert codes({"text": "the tests pass"}, actor="someone-else") == []
    assert codes({"text": "the tests pass", "request_id": "k1"}) == []
    assert codes({"text": "the tests pass"}) == ["duplicate_call"]  # the first, still live
    clock.advance(minutes=11)
    assert codes({"text": "the tests pass"}) == []  # then itself, ten minutes later
    last = service.note(parse("note", {"initiative": P, "text": "the build is green"}))[0]
    service.forget(parse("forget", {"initiative": P, "node": primary(last), "reason": "a retry's twin"}))
    assert codes({"text": "the build is green"}) == []
    assert codes({"text": "the tests pass"}) == ["duplicate_call"]


def test_concurrent_duplicates_apply_exactly_once(service: Service) -> None:
    """The same keyed call from several threads at once applies once; the others are replays of it."""
    import threading

    args = {"initiative": P, "text": "lighthouse race", "request_id": "race-1"}
    service.note(parse("note", {"initiative": P, "text": "anchor"}))
    results: list[tuple[str, bool]] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def worker() -> None:
        try:
            barrier.wait()
            outcome, replayed = service.note(parse("note", dict(args)))
            results.append((primary(outcome), replayed))
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert len(results) == 6
    assert len({node for node, _ in results}) == 1
    assert sum(not replayed for _, replayed in results) == 1
    assert count(service, "lighthouse") == 1
