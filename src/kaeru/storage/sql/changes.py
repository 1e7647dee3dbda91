"""What happened to memories made earlier, in a window of time: written once for both engines.

A window's own memories are those created in it (`timeline`'s walk through `nodes_created`). A
memory made before it and changed in it — revised, a task done or moved to another column, a claim
given its verdict — was left out: "what happened yesterday" answered nothing, said complete, on a
day whose work was all on existing nodes. Those changes are read from the audit log, which records
every write with its time, its initiative and the nodes it touched, through its index
`audit_initiative (initiative_id, seq)`, newest first, back to the window's start. No index reads
nodes or revisions by the time they were recorded (one would be a migration on both engines); the
log is stamped in order by the vault's clock (decision 404), so the walk stops past the window's
start and reads the records written since it began, at most `most` of them. A clock set back
between two runs stamps a stretch of the log earlier than what precedes it: the walk stops only
after `CHUNK` records in a row older than the window, so a short such stretch does not end it.
An import or a copy appends the audit records it brings, stamped when they were first written,
before its own record: that stretch may be longer than `CHUNK` with the window's earlier changes
below it, so the walk reads past as many records as the import's own record says it wrote.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from kaeru.storage.sql.db import Part

#: The operations that change a memory already made: its text (`revise`, `evolve`), a task's state
#: or column (`task_update`), a claim's verdict or review. A layer, a link or a forget is not news
#: about what the memory says (a forgotten one is not shown anyway).
CHANGES = frozenset({"revise", "evolve", "task_update", "verdict", "review"})
#: How many audit records one statement of the walk reads.
CHUNK = 256
_HIDDEN = ("audit_event", "board")
#: The operations whose record follows the audit records they brought from another vault, stamped
#: when those were first written (export/archive.py `provenance_audit`).
BROUGHT = frozenset({"import", "copy"})
_BROUGHT_SQL = ", ".join(f"'{o}'" for o in sorted(BROUGHT))


def _brought(changes: str | None) -> int | None:
    """How many audit records an import or copy wrote, from its record's `imported.audit` change;
    None when the record does not say (an unreadable or older record)."""
    try:
        found = [c.get("after") for c in json.loads(changes or "[]") if c.get("field") == "imported.audit"]
    except (ValueError, AttributeError):
        return None
    return found[0] if found and isinstance(found[0], int) and found[0] >= 0 else None


class ChangeQueries(Part):
    def changed_in(
        self, initiative_ids: Sequence[int], since: str, until: str, most: int
    ) -> tuple[list[tuple[str, int, str]], bool]:
        """The live, shown members of `initiative_ids` created before `since` and changed in
        [`since`, `until`] by a write through one of these initiatives, each as (the time of its
        latest change in the window, seq, id), in that order; and whether the log was read back to
        `since` (False: more than `most` records of these initiatives were read, or an import's
        record did not say how many it brought, and an older change in the window may be missing).
        Reads at most `most` records, plus for each initiative the run of at most `CHUNK` records
        older than the window that ends its walk: that tail is paid per initiative, so charging it
        to the shared budget would leave the later initiatives of a wide scope unread."""
        latest: dict[str, str] = {}
        charged = 0  # records read, less each initiative's closing run of older ones
        for initiative in dict.fromkeys(initiative_ids):
            before: int | None = None
            older = 0  # records in a row stamped before the window
            allowed = CHUNK  # how long such a run may be before it ends the walk
            unsure = False  # an import's record without its count was read
            done = False
            while not done:
                keyset = "" if before is None else " AND seq < ?"
                rows = self._db.rows(
                    "SELECT seq, at, operation, affected, "
                    f"CASE WHEN operation IN ({_BROUGHT_SQL}) THEN changes END FROM audit "
                    f"WHERE initiative_id = ?{keyset} ORDER BY seq DESC LIMIT ?",
                    [initiative, *([] if before is None else [before]), CHUNK],
                )
                for seq, at, operation, affected, changes in rows:
                    before = seq
                    charged += 1
                    if at < since:
                        older += 1
                        if older <= CHUNK:
                            charged -= 1  # the tail, charged only once a newer record follows it
                    else:
                        charged += min(older, CHUNK)
                        older = 0
                    if operation in BROUGHT and at >= since:
                        # What it brought lies below it; an import before the window brought
                        # records written before it, so before the window too.
                        brought = _brought(changes)
                        allowed += brought or 0
                        unsure = unsure or brought is None
                    if older >= allowed:
                        if unsure:
                            return self._made_before(initiative_ids, latest, since), False
                        done = True
                        break
                    if since <= at <= until and operation in CHANGES:
                        for node_id in json.loads(affected):
                            if at > latest.get(node_id, ""):
                                latest[node_id] = at
                    if charged >= most:
                        return self._made_before(initiative_ids, latest, since), False
                if done or len(rows) < CHUNK:
                    break
        return self._made_before(initiative_ids, latest, since), True

    def _made_before(
        self, initiative_ids: Sequence[int], latest: dict[str, str], since: str
    ) -> list[tuple[str, int, str]]:
        """Of the nodes `latest` names, the live, shown members created before `since`, with their
        time in `latest`, in time order (seq among equals)."""
        found: list[tuple[str, int, str]] = []
        d = self._d
        for chunk in d.chunks(list(latest)):
            ids, params = d.in_("n.id", chunk, "text")
            scope, more = self._member_of(initiative_ids)
            found += [
                (latest[r[1]], int(r[0]), str(r[1]))
                for r in self._db.rows(
                    f"SELECT n.seq, n.id, n.node_type FROM nodes n WHERE {ids} AND n.retracted = {d.false} "
                    f"AND n.created_at < ? AND {scope}",
                    [*params, since, *more],
                )
                if r[2] not in _HIDDEN
            ]
        return sorted(found)
