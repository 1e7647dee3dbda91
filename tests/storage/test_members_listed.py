"""A small scope's members listed for the plan (decision 147): `reflect`'s orphans and newest members
of a tier, and a search without words, read a project of few members from its memberships instead of
walking the vault in seq order — the same answers as the walk (`FEW_MEMBERS` 0), on both engines."""

from __future__ import annotations

from typing import Any

import pytest

from kaeru.api.requests import parse
from kaeru.service import Service
from kaeru.storage.base import SearchQuery
from kaeru.storage.sql import db


def _answers(service: Service) -> list[Any]:
    store = service.rt.store
    with store.read() as session:
        ids = {n: session.initiative_by_name(n) for n in ("quiet", "busy")}
        assert all(ids.values())
        quiet, busy = ids["quiet"].id, ids["busy"].id  # type: ignore[union-attr]
        out: list[Any] = []
        for scope in ([quiet], [busy], [quiet, busy]):
            out.append(session.orphans(scope, 50))
            out.append(session.orphans(scope, 3, unless=(("task",), "kind:hygiene")))
            for window in (2, 50):
                q = SearchQuery(initiative_ids=scope, types=["task"], window=window, omit_superseded=False)
                rows, total, _ = session.search(q)
                out.append(([r.id for r in rows], total, session.count_matches(q)))
        for tier in ("operational", "archival"):
            out.append(session.member_heads(quiet, tier, 5))
    return out


def test_a_small_scope_listed_answers_as_the_walk(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):  # the quiet project first: every later note walks past it
        service.note(parse("note", {"initiative": "quiet", "text": f"ledger entry {i}", "kind": "observation"}))
        service.task(parse("task", {"initiative": "quiet", "text": f"reconcile ledger {i}"}))
    linked = service.note(parse("note", {"initiative": "quiet", "text": "ledger summary", "kind": "decision"}))[0]
    for i in range(40):
        service.note(parse("note", {"initiative": "busy", "text": f"crane shift {i}", "kind": "observation"}))
        if i % 8 == 0:
            service.task(parse("task", {"initiative": "busy", "text": f"inspect crane {i}"}))
    assert linked.primary is not None
    listed = _answers(service)
    monkeypatch.setattr(db, "FEW_MEMBERS", 0)  # every scope walked
    assert _answers(service) == listed
    assert listed[0] and listed[2][0]  # the quiet project has orphans and tasks to find
