"""What a vault's migrations make, per backend, for `kaeru doctor`'s `schema_objects` check.

An object a migration made and someone dropped since — a table, an index an "unused index" advisor
suggested dropping, the unique constraint that keeps two writers from creating one initiative twice —
is not noticed by `kaeru migrate` (it reads only which migrations ran): every call that needs a lost
table fails, and a lost constraint silently removes a guarantee. The doctor compares the vault's
catalog with the lists here (decision 446).

Kept here, not read from a scratch vault migrated at each run: the doctor only reads, on a role that
may create no database or schema, and its look at a large vault stays a few catalog queries.
tests/cli/test_doctor_schema.py keeps the lists true — a freshly migrated vault's catalog on each
backend must hold exactly these — and says what to paste here when a migration changes them.

Objects are said as `table NAME`, `view NAME`, `trigger NAME`, `unique TABLE(COLUMNS)` and
`primary key TABLE(COLUMNS)` (a constraint by what it keeps unique, not by its name, which a
renamed table keeps from before); indexes by name, with the statement that makes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: What both engines' migrations make, said alike.
_BOTH = frozenset(
    {
        "primary key cursors(id)",
        "primary key edge_revisions(src, dst, edge_type, rev_no)",
        "primary key edges(src, dst, edge_type)",
        "primary key initiative_names(initiative_id, valid_from)",
        "primary key memberships(initiative_id, facet, node_seq)",
        "primary key meta(key)",
        "primary key slot_revisions(initiative_id, slot, rev_no)",
        "primary key slots(initiative_id, slot)",
        "primary key tokens(name)",
        "table audit",
        "table cursors",
        "table edge_revisions",
        "table edges",
        "table initiative_ends",
        "table initiative_names",
        "table initiatives",
        "table memberships",
        "table meta",
        "table node_vectors",
        "table nodes",
        "table past_revisions",
        "table requests",
        "table schema_migrations",
        "table slot_revisions",
        "table slots",
        "table tokens",
        "unique initiatives(name)",
        "unique nodes(id)",
        "unique tokens(digest)",
    }
)
#: Each one missing fails the check.
REQUIRED: dict[str, frozenset[str]] = {
    "sqlite": _BOTH
    | {
        "primary key nodes_fts_config(k)",
        "primary key nodes_fts_idx(segid, term)",
        "primary key requests(request_id, operation, initiative)",
        "table nodes_fts",
        "table nodes_fts_config",
        "table nodes_fts_data",
        "table nodes_fts_docsize",
        "table nodes_fts_idx",
        "table vector_code_clock",
        "table vector_codes",
        "trigger vector_codes_deleted",
        "trigger vector_codes_inserted",
        "trigger vector_codes_moved",
        "trigger vector_codes_recoded",
    },
    "postgres": _BOTH
    | {
        "primary key audit(seq)",
        "primary key initiative_ends(initiative_id)",
        "primary key initiatives(id)",
        "primary key node_vectors(node_id, model)",
        "primary key nodes(seq)",
        "primary key past_revisions(node_seq, rev_no)",
        "primary key requests(initiative, operation, request_id)",
        "primary key schema_migrations(version)",
        "primary key section_counts(initiative_id, facet, shard)",
        "primary key term_stats(term, fields, shard)",
        "primary key text_change_horizon(one)",
        "primary key text_totals(shard)",
        "table section_counts",
        "table term_stats",
        "table text_change_horizon",
        "table text_changes",
        "table text_totals",
        "trigger memberships_section_counts",
        "trigger nodes_term_stats",
        "trigger nodes_text_changes",
        "trigger node_vectors_text_changes",
        "view term_docs",
    },
}
#: Each index by name and the statement that makes it: a missing one warns (a unique one fails).
INDEXES: dict[str, dict[str, str]] = {
    "sqlite": {
        "audit_initiative": "CREATE INDEX audit_initiative ON audit (initiative_id, seq)",
        "cursors_created": "CREATE INDEX cursors_created ON cursors (created_at)",
        "edge_revisions_dst": "CREATE INDEX edge_revisions_dst ON edge_revisions (dst, recorded_at)",
        "edge_revisions_src": "CREATE INDEX edge_revisions_src ON edge_revisions (src, recorded_at)",
        "edges_dst": "CREATE INDEX edges_dst ON edges (dst, edge_type)",
        "edges_verdicts": "CREATE INDEX edges_verdicts ON edges (dst, edge_type) WHERE edge_type IN ('falsifies', 'supersedes') AND retracted = 0",
        "memberships_node": "CREATE INDEX memberships_node ON memberships (node_seq)",
        "node_revisions_key": 'CREATE UNIQUE INDEX node_revisions_key ON "past_revisions" (node_seq, rev_no)',
        "node_vectors_node": "CREATE UNIQUE INDEX node_vectors_node ON node_vectors (node_id, model)",
        "nodes_attention": "CREATE INDEX nodes_attention ON nodes (seq) WHERE retracted = 0 AND (json_type(properties, '$.reminder') IS NOT NULL OR json_type(properties, '$.hygiene') IS NOT NULL)",
        "nodes_created": "CREATE INDEX nodes_created ON nodes (created_at, seq)",
        "nodes_forgotten": "CREATE INDEX nodes_forgotten ON nodes (id) WHERE retracted = 1",
        "nodes_head": "CREATE INDEX nodes_head ON nodes (seq, retracted, node_type, tier, layer, status, id)",
        "nodes_live_name": "CREATE INDEX nodes_live_name ON nodes (name) WHERE retracted = 0",
        "nodes_rules": "CREATE INDEX nodes_rules ON nodes (seq) WHERE retracted = 0 AND node_type = 'concept' AND instr(tags, '\"kind:rule\"') > 0",
        "nodes_type_seq": "CREATE INDEX nodes_type_seq ON nodes (node_type, seq)",
        "vector_codes_version": "CREATE INDEX vector_codes_version ON vector_codes (version)",
    },
    "postgres": {
        "audit_initiative": "CREATE INDEX audit_initiative ON audit USING btree (initiative_id, seq)",
        "cursors_created": "CREATE INDEX cursors_created ON cursors USING btree (created_at)",
        "edge_revisions_dst": "CREATE INDEX edge_revisions_dst ON edge_revisions USING btree (dst, recorded_at)",
        "edge_revisions_src": "CREATE INDEX edge_revisions_src ON edge_revisions USING btree (src, recorded_at)",
        "edges_contradicts": "CREATE INDEX edges_contradicts ON edges USING btree (dst) WHERE ((edge_type = 'contradicts'::text) AND (NOT retracted))",
        "edges_dst": "CREATE INDEX edges_dst ON edges USING btree (dst, edge_type)",
        "edges_supersedes": "CREATE INDEX edges_supersedes ON edges USING btree (dst, src) WHERE ((edge_type = 'supersedes'::text) AND (NOT retracted))",
        "memberships_node": "CREATE INDEX memberships_node ON memberships USING btree (node_seq)",
        "node_revisions_time": "CREATE INDEX node_revisions_time ON past_revisions USING btree (node_seq, recorded_at)",
        "nodes_attention": "CREATE INDEX nodes_attention ON nodes USING btree (seq) WHERE ((NOT retracted) AND ((strpos(properties, '\"reminder\"'::text) > 0) OR (strpos(properties, '\"hygiene\"'::text) > 0)))",
        "nodes_created": "CREATE INDEX nodes_created ON nodes USING btree (created_at, seq)",
        "nodes_forgotten": "CREATE INDEX nodes_forgotten ON nodes USING btree (id) WHERE retracted",
        "nodes_live_name": "CREATE INDEX nodes_live_name ON nodes USING btree (name) WHERE (NOT retracted)",
        "nodes_rules": "CREATE INDEX nodes_rules ON nodes USING btree (seq) WHERE ((NOT retracted) AND (node_type = 'concept'::text) AND ('kind:rule'::text = ANY (tags)))",
        "nodes_stv": "CREATE INDEX nodes_stv ON nodes USING gin (stv)",
        "nodes_tags": "CREATE INDEX nodes_tags ON nodes USING gin (tags)",
        "nodes_tsv": "CREATE INDEX nodes_tsv ON nodes USING gin (tsv)",
        "nodes_type_seq": "CREATE INDEX nodes_type_seq ON nodes USING btree (node_type, seq)",
        "slots_holder": "CREATE INDEX slots_holder ON slots USING btree (node_id)",
        "text_changes_xid": "CREATE INDEX text_changes_xid ON text_changes USING btree (xid)",
    },
}

#: The indexes a statement names (SQLite's `INDEXED BY`): without one, the statement fails instead of
#: running slower, so a missing one fails the check too. Kept true by the same test, which reads
#: the statements' text.
NAMED: dict[str, frozenset[str]] = {
    "sqlite": frozenset({"edges_verdicts", "nodes_forgotten", "nodes_head", "nodes_rules"}),
    "postgres": frozenset(),
}


@dataclass(frozen=True)
class Lacking:
    """What a vault lacks of what its migrations made."""

    #: Tables, views, triggers, unique and primary-key constraints, unique indexes (`index NAME`).
    required: list[str] = field(default_factory=list)
    #: Other indexes by name, with the statement that makes them again: calls answer, slower…
    indexes: dict[str, str] = field(default_factory=dict)
    #: …but for these among them, which statements name (`NAMED`): those fail.
    named: list[str] = field(default_factory=list)

    @property
    def tables(self) -> list[str]:
        """The tables among `required`, by name."""
        return [item.removeprefix("table ") for item in self.required if item.startswith("table ")]


def lacking(backend: str, found: set[str], indexes: set[str]) -> Lacking:
    """What of `REQUIRED[backend]` and `INDEXES[backend]` is not among `found` (objects as said in
    this module's docstring) and `indexes` (index names); objects besides those — an index a DBA
    added — are no concern of the check. A lost table's constraints and indexes went with it: it is
    said once, as the table."""
    required = REQUIRED[backend] - found
    tables = {item.removeprefix("table ") for item in required if item.startswith("table ")}
    said = [item for item in required if not item.startswith(("unique ", "primary key ")) or _table(item) not in tables]
    made = {
        name: statement
        for name, statement in INDEXES[backend].items()
        if name not in indexes and not any(f" ON {t} " in statement or f' ON "{t}" ' in statement for t in tables)
    }
    said += [f"index {name}" for name, statement in made.items() if statement.startswith("CREATE UNIQUE ")]
    return Lacking(
        required=sorted(said, key=_order),
        indexes={
            name: statement for name, statement in sorted(made.items()) if not statement.startswith("CREATE UNIQUE ")
        },
        named=sorted(set(made) & NAMED[backend]),
    )


def _table(constraint: str) -> str:
    """The table of a constraint said as `unique TABLE(COLUMNS)` or `primary key TABLE(COLUMNS)`."""
    return constraint.split("(")[0].rsplit(" ", 1)[-1]


def _order(item: str) -> tuple[int, str]:
    """Tables first (a missing table is what every call that needs it fails on), indexes last."""
    return (0 if item.startswith("table ") else 2 if item.startswith("index ") else 1, item)
