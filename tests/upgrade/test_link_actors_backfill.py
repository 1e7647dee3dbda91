"""The upgrade's backfill (SQLite migration 024, PostgreSQL 022) names each edge revision that names
no one as the write that made it: two people add, remove, re-add and reweight the same links with the
same weights, so only the window of each revision (from its time to its link's next revision's) tells
whose record it is. Their revisions' actors and request ids are cleared, as a vault written before
edge revisions kept them has them, and the backfill writes back exactly what the writes recorded;
run again, it changes nothing. Both backends."""

from __future__ import annotations

from typing import Any

from kaeru.service import Service, grants
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
