"""The tables a vault derives from others, said as statements: how each is made from its sources
(`kaeru salvage` rebuilds them so) and how far it differs from them (`kaeru doctor`'s `derived`).

- `memberships`: one row per live node and initiative in its `initiatives`, with its facet (tier
  and layer; 0 or '' for an audit event) — what `put_node`'s `_move_memberships` keeps.
- `edges`: the newest revision of each edge (`put_edge` writes both).
- `slots`: the newest revision of each slot of a live initiative (`put_slot` writes both; a deleted
  initiative's slots go, their revisions stay).

Nothing but those writes changes them, so a difference means damage: a page of the table lost (a
salvage that copied it raw lost every row between its first and last damaged key) or a write that
half happened. Reads trust them — `context`, `initiatives` and `search` read an initiative's notes
from `memberships`, the graph its edges from `edges` — and said nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaeru.storage.sql.dialect import FACET_CODES

if TYPE_CHECKING:
    from kaeru.storage.health import Health

_FACET_CODE = (
    "CASE WHEN n.node_type = 'audit_event' THEN 0 ELSE CASE n.tier || ':' || n.layer "
    + " ".join(f"WHEN '{name}' THEN {code}" for name, code in FACET_CODES.items() if name)
    + " END END"
)
_EDGE_KEY = "src, dst, edge_type"
_EDGE_REST = "weight, properties, created_at, recorded_at, retracted"
_SLOT_REST = "node_id, revision, updated_at"
_LIVE_SLOTS = "initiative_id IN (SELECT id FROM initiatives)"

#: Per derived table of a SQLite vault at the newest schema, the statement that fills it (empty)
#: from its sources. SQLite takes a bare column of an aggregate query holding `max()` from the row
#: that holds the maximum: each edge's and slot's newest revision whole.
SQLITE_REBUILD = {
    "memberships": (
        "INSERT INTO memberships (initiative_id, facet, node_seq) "
        f"SELECT DISTINCT j.value, {_FACET_CODE}, n.seq FROM nodes n, json_each(n.initiatives) j "
        "WHERE n.retracted = 0 AND json_valid(n.initiatives) ORDER BY 1, 2, 3"
    ),
    "edges": (
        f"INSERT INTO edges ({_EDGE_KEY}, rev_no, {_EDGE_REST}) "
        f"SELECT {_EDGE_KEY}, max(rev_no), {_EDGE_REST} FROM edge_revisions GROUP BY {_EDGE_KEY}"
    ),
    "slots": (
        f"INSERT INTO slots (initiative_id, slot, rev_no, {_SLOT_REST}) "
        f"SELECT initiative_id, slot, max(rev_no), {_SLOT_REST} FROM slot_revisions WHERE {_LIVE_SLOTS} "
        "GROUP BY initiative_id, slot"
    ),
}

#: Per table and engine: (the rows its sources make, the rows it holds), as the same columns — the
#: key and revision number only for edges and slots (a revision is never rewritten in place).
_COMPARED = {
    "memberships": {
        "sqlite": (
            f"SELECT j.value, {_FACET_CODE}, n.seq FROM nodes n, json_each(n.initiatives) j "
            "WHERE n.retracted = 0 AND json_valid(n.initiatives)",
            "SELECT initiative_id, facet, node_seq FROM memberships",
        ),
        "postgres": (
            "SELECT i, CASE WHEN n.node_type = 'audit_event' THEN '' ELSE n.tier || ':' || n.layer END, n.seq "
            "FROM nodes n CROSS JOIN LATERAL unnest(n.initiatives) AS i WHERE NOT n.retracted",
            "SELECT initiative_id, coalesce(facet, ''), node_seq FROM memberships",
        ),
    },
    "edges": {
        "": (
            f"SELECT {_EDGE_KEY}, max(rev_no) FROM edge_revisions GROUP BY {_EDGE_KEY}",
            f"SELECT {_EDGE_KEY}, rev_no FROM edges",
        )
    },
    "slots": {
        "": (
            f"SELECT initiative_id, slot, max(rev_no) FROM slot_revisions WHERE {_LIVE_SLOTS} GROUP BY initiative_id, slot",
            "SELECT initiative_id, slot, rev_no FROM slots",
        )
    },
}


def disagreement(health: Health) -> dict[str, tuple[int, int]]:
    """Per derived table that differs from its sources: (rows its sources make that it lacks, rows
    it holds that they do not make). Empty when every one agrees. A few scans and sorts of each
    table and its sources, no per-row lookups from Python."""
    found: dict[str, tuple[int, int]] = {}
    for table, by_engine in _COMPARED.items():
        made, held = by_engine.get(health.backend) or by_engine[""]
        ((lacking,),) = health._rows(f"SELECT count(*) FROM ({made} EXCEPT {held}) d")
        ((extra,),) = health._rows(f"SELECT count(*) FROM ({held} EXCEPT {made}) d")
        if lacking or extra:
            found[table] = (int(lacking), int(extra))
    return found
