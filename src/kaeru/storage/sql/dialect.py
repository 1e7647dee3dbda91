"""What differs between the two engines' SQL, asked for by the statements written once in `storage/sql/`.

Statements use `?` marks; PostgreSQL's driver wants `%s`, which `render` makes once per distinct text.
Nobody branches on an engine's name: a statement asks its dialect for a list, a boolean, a row lock.
Booleans are spelt as the migrations spelt them: SQLite uses a partial index (`WHERE retracted = 0`)
only for a query that repeats its condition verbatim, so `= FALSE` or `NOT x` would scan.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from kaeru.storage.sql import rows

T = TypeVar("T")

#: How SQLite stores a membership's facet (`<tier>:<layer>`, '' for an audit event): a small integer,
#: so the membership key (initiative, facet, node) and `memberships_node` stay as narrow as the two
#: integers they held before the facet joined the key (decision 16.T1; migration 022 wrote the same
#: codes). Stored values: never renumber one.
FACET_CODES = {
    "": 0,
    "operational:core": 1,
    "operational:hot": 2,
    "operational:warm": 3,
    "operational:cold": 4,
    "operational:frozen": 5,
    "archival:core": 6,
    "archival:hot": 7,
    "archival:warm": 8,
    "archival:cold": 9,
    "archival:frozen": 10,
}
FACET_NAMES = {code: name for name, code in FACET_CODES.items()}


class Dialect:
    name = "sql"
    false = "0"
    true = "1"
    #: The longest `IN (?, …)` list one statement binds (SQLite's parameter limit); arrays need no chunks.
    chunk = 500
    #: A list longer than this is bound as one parameter, a JSON array that `json_each` reads (`in_`,
    #: `overlaps`, a search's tags): SQLite refuses a statement of more than 32,766 parameters, a scope
    #: or a filter is as long as its caller makes it (a search across every initiative of a vault),
    #: and a statement may bind it several times. A short list (the usual scope of one to three
    #: initiatives) keeps its marks, and the plans chosen for it stay as they were.
    listed = 8
    #: A new initiative's id: past every live and ended one, so an id old revisions name is never reused.
    next_initiative_id = ""
    #: Row decoders: the engines store a node's tags and initiatives differently (JSON text, arrays).
    node = staticmethod(rows.node_json)
    #: The condition of the partial index `nodes_attention` (nodes with a reminder or a hygiene
    #: report; decision 16.R1), written exactly as the migration wrote it.
    attention = ""
    #: The condition of the partial index `nodes_rules` (live concepts that may carry `kind:rule`).
    rule = ""
    #: Where that query reads from (SQLite would take the node-type index unless told).
    rule_source = "nodes n"
    #: The forgotten nodes `b` (the partial index `nodes_forgotten`) joined first to their edges `e`:
    #: where dangling edges start (SQLite is told the index and the join order).
    forgotten_source = "nodes b JOIN edges e"
    #: A membership row `m` of a live node (an audit event's facet is the lowest value: '' or 0).
    any_facet = "m.facet > ''"
    #: Whether a scan that tests a few of its rows' tags reads them through the row's own key (SQLite:
    #: the scan stays on the covering `nodes_head`, decision 80) rather than from the row it reads
    #: (PostgreSQL, which hashed such a subquery: a scan of every node's tags, decision 272).
    tags_by_key = False
    #: The column `_member_of` tests a long list of initiatives on (`SqliteDialect`'s says why); a
    #: planner that chooses semi-joins by cost (PostgreSQL's) keeps the plain column.
    long_member_list = "m.initiative_id"

    def render(self, sql: str) -> str:
        return sql

    def facet_key(self, facet: str | None) -> Any:
        """A membership's facet as stored (None: an audit event's)."""
        return facet or ""

    def facet_of(self, stored: Any) -> str:
        """The facet a membership row stores, as text ('' for an audit event's)."""
        return str(stored)

    def in_(self, column: str, values: Sequence[Any], sql_type: str = "bigint") -> tuple[str, list[Any]]:
        """`column` is one of `values`: the clause and its parameters."""
        if len(values) > self.listed:
            return f"{column} IN (SELECT value FROM json_each(?))", [self.items(values)]
        return f"{column} IN ({','.join('?' * len(values))})", list(values)

    def chunks(self, values: Sequence[T]) -> Iterator[list[T]]:
        """`values` without repeats, split so that each `in_` list stays under the parameter limit."""
        unique = list(dict.fromkeys(values))
        for i in range(0, len(unique), self.chunk):
            yield unique[i : i + self.chunk]

    def overlaps(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:
        """The list column `column` (a node's initiatives) holds one of `values`."""
        listed, params = self.in_("j.value", values)
        return f"EXISTS (SELECT 1 FROM json_each({column}) j WHERE {listed})", params

    def lock(self, for_update: bool, read_only: bool) -> str:
        """The row-lock suffix of a read that a write will act on (SQLite's writer holds the file lock)."""
        return ""

    def initiative_lock(self, exclusive: bool) -> str:
        """The row-lock suffix a write reads its initiative with (`hold_initiatives`): none on SQLite,
        whose writer holds the file lock."""
        return ""

    def has_tag(self, column: str, tag: str) -> tuple[str, list[Any]]:
        """The tag list `column` holds exactly `tag`: a substring test of the JSON text first (a
        string compare), the exact test only where it passes."""
        return (
            f"(instr({column}, ?) > 0 AND EXISTS (SELECT 1 FROM json_each({column}) tg WHERE tg.value = ?))",
            [json.dumps(tag), tag],
        )

    def items(self, values: Sequence[Any]) -> Any:
        """A list column's value (a node's tags and initiatives): `json.dumps` of the list, spelt
        directly for a list of integers (a node's initiatives, on every write)."""
        if all(type(v) is int for v in values):
            return "[" + ", ".join(map(str, values)) + "]"
        return json.dumps(list(values))

    def flag(self, value: bool) -> Any:
        return int(value)

    def items_of(self, stored: Any) -> list[Any]:
        return list(json.loads(stored))


class SqliteDialect(Dialect):
    name = "sqlite"
    next_initiative_id = (
        "(SELECT max(m) + 1 FROM (SELECT coalesce(max(id), 0) AS m FROM initiatives "
        "UNION ALL SELECT coalesce(max(initiative_id), 0) FROM initiative_ends "
        "UNION ALL SELECT coalesce(max(initiative_id), 0) FROM initiative_names))"
    )
    attention = (
        "retracted = 0 AND (json_type(properties, '$.reminder') IS NOT NULL "
        "OR json_type(properties, '$.hygiene') IS NOT NULL)"
    )
    rule_source = "nodes n INDEXED BY nodes_rules"
    forgotten_source = "nodes b INDEXED BY nodes_forgotten CROSS JOIN edges e"
    rule = "retracted = 0 AND node_type = 'concept' AND instr(tags, '\"kind:rule\"') > 0"
    any_facet = "m.facet > 0"
    tags_by_key = True
    #: A node's memberships tested against a long list of initiatives: the unary `+` keeps the list
    #: out of the index, which SQLite would otherwise probe once per initiative for every row (152).
    long_member_list = "+m.initiative_id"

    def facet_key(self, facet: str | None) -> Any:
        return FACET_CODES[facet or ""]

    def facet_of(self, stored: Any) -> str:
        return FACET_NAMES[int(stored)]


class PostgresDialect(Dialect):
    name = "postgres"
    false = "FALSE"
    true = "TRUE"
    chunk = 1 << 62
    # Ids of live and ended initiatives come from one sequence: never handed out twice.
    next_initiative_id = "nextval(pg_get_serial_sequence('initiatives', 'id'))"
    node = staticmethod(rows.node_arrays)
    rule = "NOT retracted AND node_type = 'concept' AND 'kind:rule' = ANY(tags)"
    attention = "NOT retracted AND (strpos(properties, '\"reminder\"') > 0 OR strpos(properties, '\"hygiene\"') > 0)"

    def __init__(self) -> None:
        self._rendered: dict[str, str] = {}

    def render(self, sql: str) -> str:
        try:
            return self._rendered[sql]
        except KeyError:
            if len(self._rendered) > 4096:  # statements are few; a bound only guards against a leak
                self._rendered.clear()
            text = self._rendered[sql] = sql.replace("%", "%%").replace("?", "%s")
            return text

    def in_(self, column: str, values: Sequence[Any], sql_type: str = "bigint") -> tuple[str, list[Any]]:
        return f"{column} = ANY(?::{sql_type}[])", [list(values)]

    def overlaps(self, column: str, values: Sequence[int]) -> tuple[str, list[Any]]:
        return f"{column} && ?::bigint[]", [list(values)]

    def lock(self, for_update: bool, read_only: bool) -> str:
        # A read snapshot cannot lock rows (and has no need to); writes lock what they will change.
        return " FOR UPDATE" if for_update and not read_only else ""

    def initiative_lock(self, exclusive: bool) -> str:
        # KEY SHARE: writers into one initiative never wait for each other (their `last_activity`
        # update takes NO KEY UPDATE, which it does not conflict with); a merge, delete or rename
        # (UPDATE) waits for them to commit, and they for it.
        return " FOR UPDATE" if exclusive else " FOR KEY SHARE"

    def has_tag(self, column: str, tag: str) -> tuple[str, list[Any]]:
        return f"? = ANY({column})", [tag]

    def items(self, values: Sequence[Any]) -> Any:
        return list(values)

    def flag(self, value: bool) -> Any:
        return bool(value)

    def items_of(self, stored: Any) -> list[Any]:
        return list(stored)


SQLITE = SqliteDialect()
POSTGRES = PostgresDialect()
