"""A link written before edge revisions kept who made them (SQLite migration 023, PostgreSQL 021)
still names its actor in the node's history after the upgrade, read from the write's audit record;
a link written after it names its own from its revision, beside them on the same page, even when
its audit record is gone. Both backends.

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
from tests.upgrade.old_vaults import BEFORE, Query, columns, copied_fixture, execute

#: The fixture's node `ferry-departure` in `harbour` and the note that refers to it.
FERRY = "019de2c4-2a80-706c-9af7-5abc7f35fb02"
REFERRER = "019de2c4-c6c0-7558-a6e1-083f0cce6cae"


def _no_actor_column(query: Query, schema: str) -> None:
    assert "actor" not in columns(query, schema, "edge_revisions")


@pytest.mark.parametrize("backend", sorted(BEFORE))
def test_links_of_the_old_code_name_their_actor_from_the_audit_after_the_upgrade(backend: str, tmp_path: Path) -> None:
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
        # Zoe's link names her from its own revision: not even its audit record is needed.
        execute(spec, "DELETE FROM {schema}audit WHERE actor = 'zoe'")
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
