"""A link written before edge revisions kept who made them (SQLite migration 023, PostgreSQL 021)
still names its actor in the node's history after the upgrade: the upgrade wrote it into the
revision's own row from the write's audit record (SQLite migration 024, PostgreSQL 022), so the page
names it even once the audit log is gone, beside a link written after the upgrade, which names its
own. Running that migration again changes nothing. Both backends.

The vault is the upgrade fixture of the newest schema without the columns (written by the code of
that version, tests/data/upgrade): its links and their audit records are that code's, every one
written as `agent`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kaeru.service import Service, grants
from kaeru.storage.factory import open_store
from tests.schema_checked import checked_calls
from tests.upgrade.old_vaults import BEFORE, Query, backfill_again, columns, copied_fixture, execute

#: The fixture's node `ferry-departure` in `harbour` and the note that refers to it.
FERRY = "019de2c4-2a80-706c-9af7-5abc7f35fb02"
REFERRER = "019de2c4-c6c0-7558-a6e1-083f0cce6cae"


#: Every edge revision of the vault: its key, number, and who made it.
REVISIONS = "SELECT src, dst, edge_type, rev_no, actor, request_id FROM {schema}edge_revisions ORDER BY 1, 2, 3, 4"


def _no_actor_column(query: Query, schema: str) -> None:
    assert "actor" not in columns(query, schema, "edge_revisions")
    # The old code wrote each link change's audit record as `agent` with no request id.
    written = query(f"SELECT DISTINCT actor, request_id FROM {schema}audit WHERE changes LIKE '%\"edge\"%'")
    assert written == [("agent", None)]


@pytest.mark.parametrize("backend", sorted(BEFORE))
def test_links_of_the_old_code_name_their_actor_from_their_own_rows_after_the_upgrade(
    backend: str, tmp_path: Path
) -> None:
    with copied_fixture(backend, tmp_path, _no_actor_column) as spec:
        store = open_store(spec.settings())  # the pending migrations run here
        try:
            run = checked_calls(Service(store, spec.settings()))
            with grants.acting(grants.Principal("zoe")):
                linked = run(
                    "link",
                    initiative="harbour",
                    action="add",
                    edge_type="causal",
                    weight=0.3,
                    request_id="zoe-links-1",
                    **{"from": {"id": FERRY}, "to": {"id": REFERRER}},
                )
            assert linked["state"] == "applied", linked
        finally:
            store.close()
        # The upgrade named every link of the old code in its own row, as its audit record named it.
        named = execute(spec, REVISIONS)
        assert len(named) == 16
        assert {(r[4], r[5]) for r in named} == {("agent", None), ("zoe", "zoe-links-1")}
        assert [r[4] for r in named].count("zoe") == 1
        # Every link names its actor from its own revision: not even the audit log is needed.
        execute(spec, "DELETE FROM {schema}audit")
        store = open_store(spec.settings())
        try:
            run = checked_calls(Service(store, spec.settings()))
            page = run("trail", initiative="harbour", node={"id": FERRY}, kind="history", limit=50)
        finally:
            store.close()
    assert page["continuation"] is None
    events: list[dict[str, Any]] = [e for e in page["data"]["entries"] if e["kind"] == "edge"]
    # The old code's five link events (added, added, added, removed, and the supersession) and zoe's.
    assert [(e["action"], e.get("actor")) for e in events] == [
        ("added", "agent"),
        ("added", "agent"),
        ("added", "agent"),
        ("removed", "agent"),
        ("added", "agent"),
        ("added", "zoe"),
    ]
    assert events[-1]["request_id"] == "zoe-links-1"


@pytest.mark.parametrize("backend", sorted(BEFORE))
def test_naming_the_old_links_again_changes_nothing(backend: str, tmp_path: Path) -> None:
    with copied_fixture(backend, tmp_path) as spec:
        open_store(spec.settings()).close()  # the pending migrations run here
        upgraded = execute(spec, REVISIONS)
        assert upgraded and all(r[4] == "agent" for r in upgraded)
        backfill_again(spec)
        assert execute(spec, REVISIONS) == upgraded
        # A row that names someone is left as it is; one that names no one is named again.
        execute(spec, "UPDATE {schema}edge_revisions SET actor = 'kept' WHERE rev_no = 2")
        execute(spec, "UPDATE {schema}edge_revisions SET actor = NULL WHERE rev_no = 1")
        backfill_again(spec)
        again = execute(spec, REVISIONS)
        assert [(r[:4], r[4]) for r in again] == [(r[:4], "kept" if r[3] == 2 else "agent") for r in upgraded]
