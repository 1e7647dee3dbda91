"""The upgrade's backfill (SQLite migration 024, PostgreSQL 022) names each edge revision that names
no one as the write that made it: two people add, remove, re-add and reweight the same links with the
same weights, so only the window of each revision (from its time to its link's next revision's) tells
whose record it is. Their revisions' actors and request ids are cleared, as a vault written before
edge revisions kept them has them, and the backfill writes back exactly what the writes recorded;
run again, it changes nothing. A record stamped ahead of a later one naming the same change names
only what it falls first on; the same holds when a pass holds two revisions and writes one at a time.
Both backends."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kaeru.domain.timefmt import fmt, parse_ts
from kaeru.service import Service, grants
from kaeru.storage import link_actors
from kaeru.storage.factory import open_store
from tests.backends import VaultSpec
from tests.schema_checked import checked_calls
from tests.upgrade.old_vaults import backfill_again, execute

P = "shared"
ANN = grants.Principal("ann")
BEN = grants.Principal("ben")
REVISIONS = "SELECT src, dst, edge_type, rev_no, actor, request_id FROM {schema}edge_revisions ORDER BY 1, 2, 3, 4"


def _written_by_two(spec: VaultSpec) -> None:
    store = open_store(spec.settings())
    try:
        run = checked_calls(Service(store, spec.settings()))

        def act(who: grants.Principal, tool: str, **args: Any) -> dict[str, Any]:
            with grants.acting(who):
                answer = run(tool, initiative=P, **args)
            assert answer["state"] == "applied", answer
            return answer

        ids = {n: act(ANN, "note", name=n, text=f"note {n}")["data"]["primary"]["id"] for n in "ABC"}

        def link(who: grants.Principal, action: str, src: str, dst: str, **more: Any) -> None:
            ends = {"from": {"id": ids[src]}, "to": {"id": ids[dst]}}
            act(who, "link", action=action, edge_type="refers_to", **ends, **more)

        link(ANN, "add", "A", "B", weight=0.5, request_id="ann-1")
        link(BEN, "add", "C", "A", weight=0.5)
        link(BEN, "remove", "A", "B", request_id="ben-1")
        link(BEN, "add", "A", "B", weight=0.5, request_id="ben-2")  # the same change as ann's first
        link(ANN, "reweight", "A", "B", weight=0.8)
        link(BEN, "remove", "C", "A")
        link(ANN, "reweight", "A", "B", weight=0.5, request_id="ann-2")
        link(ANN, "remove", "A", "B")
        link(ANN, "add", "C", "A", weight=0.5, request_id="ann-3")
    finally:
        store.close()


def test_the_backfill_names_each_revision_as_its_write_did(vault: VaultSpec) -> None:
    spec = vault
    _written_by_two(spec)
    written = execute(spec, REVISIONS)
    assert len(written) == 9  # six of A → B, three of C → A
    assert {r[4] for r in written} == {"ann", "ben"}
    execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL, request_id = NULL")
    backfill_again(spec)
    assert execute(spec, REVISIONS) == written
    backfill_again(spec)
    assert execute(spec, REVISIONS) == written


def test_a_revision_no_record_names_stays_without_an_actor(vault: VaultSpec) -> None:
    spec = vault
    _written_by_two(spec)
    written = execute(spec, REVISIONS)
    execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL, request_id = NULL")
    execute(spec, "DELETE FROM {schema}audit WHERE actor = 'ben'")
    backfill_again(spec)
    # Ann's revisions are named; ben's, whose records are gone, are not credited to ann.
    assert execute(spec, REVISIONS) == [(*r[:4], None, None) if r[4] == "ben" else r for r in written]


def test_a_record_stamped_ahead_names_no_later_revision(vault: VaultSpec) -> None:
    spec = vault
    _written_by_two(spec)
    written = execute(spec, REVISIONS)
    # Ann's first write's record is stamped ahead (as a write whose other node was stamped ahead is),
    # just past ben's record of re-adding A → B with the same weight, before ann reweights it: both
    # fall in the window of ben's revision, and ann's was written first.
    [(ben_at,)] = execute(spec, "SELECT at FROM {schema}audit WHERE request_id = 'ben-2'")
    ahead = fmt(parse_ts(ben_at) + timedelta(microseconds=1))
    [(reweighted,)] = execute(spec, "SELECT MIN(recorded_at) FROM {schema}edge_revisions WHERE weight = 0.8")
    assert ahead < reweighted
    execute(spec, f"UPDATE {{schema}}audit SET at = '{ahead}' WHERE request_id = 'ann-1'")
    execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL, request_id = NULL")
    backfill_again(spec)
    # Ben's revision is named by the record stamped first in its window, his own; ann's first
    # revision, whose record is stamped past its window, names no one.
    assert execute(spec, REVISIONS) == [(*r[:4], None, None) if r[5] == "ann-1" else r for r in written]


@pytest.mark.parametrize("per_pass", [1, 2])
def test_tiny_passes_and_writes_name_the_same(vault: VaultSpec, monkeypatch: pytest.MonkeyPatch, per_pass: int) -> None:
    spec = vault
    _written_by_two(spec)
    written = execute(spec, REVISIONS)
    monkeypatch.setattr(link_actors, "PER_PASS", per_pass)
    monkeypatch.setattr(link_actors, "WRITE_ROWS", 1)
    execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL, request_id = NULL")
    backfill_again(spec)
    assert execute(spec, REVISIONS) == written
    execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL, request_id = NULL")
    execute(spec, "DELETE FROM {schema}audit WHERE actor = 'ben'")
    backfill_again(spec)
    assert execute(spec, REVISIONS) == [(*r[:4], None, None) if r[4] == "ben" else r for r in written]
