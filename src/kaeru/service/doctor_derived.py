"""`kaeru doctor`'s `derived` check: the tables made from others agree with what they are made from.

`memberships`, `edges` and `slots` are kept beside the nodes and revisions they derive from
(`storage/derived.py`), and reads trust them: an initiative's notes are its memberships, a node's
links its edges. A salvage that copied them raw from a damaged file lost a stretch of one while its
sources held every row — an initiative showed 258 of its 549 notes — and every other check said
healthy. A few scans and sorts of each table and its sources, no lookup per row.
"""

from __future__ import annotations

from typing import Any

from kaeru.service.settings_checks import FAIL, OK, SKIP, Check
from kaeru.storage.derived import disagreement

#: What each derived table is made from, as the check says it.
_SOURCES = {
    "memberships": "the live nodes' initiatives",
    "edges": "the newest edge revisions",
    "slots": "the newest slot revisions",
}


def derived_check(health: Any, objects: Check) -> Check:
    """`health` is a storage `Health` (its engine's SQL is chosen by `backend`); `objects` is the
    `schema_objects` check before it: a table it found missing is not read."""
    if objects.status == FAIL:
        return Check("derived", SKIP, "not checked: the vault lacks what its migrations made")
    differ = disagreement(health)
    if not differ:
        return Check(
            "derived", OK, "memberships, edges and slots agree with the nodes and revisions they are made from"
        )
    said = "; ".join(
        f"{table} lacks {lacking} row(s) that {_SOURCES[table]} make and holds {extra} they do not"
        for table, (lacking, extra) in differ.items()
    )
    fix = (
        "stop every kaeru process, then `kaeru salvage NEW_FOLDER` makes them again from the nodes and revisions "
        "in a new vault (check it with `kaeru --vault NEW_FOLDER doctor`, then use it in this one's place)"
        if health.backend == "sqlite"
        else "`kaeru copy --from THIS_URL --to NEW_URL` writes every revision into a new database, which makes them "
        "again; then point KAERU_DATABASE_URL at the new one"
    )
    return Check(
        "derived", FAIL, f"{said}: reads of initiatives, search, context and the graph miss or invent rows", fix
    )
