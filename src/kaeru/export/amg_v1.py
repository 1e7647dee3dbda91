"""Version 1 amg archives: what they leave implicit, made explicit before their records are written.

A version 1 archive names an initiative merged away or deleted `#<number>`, with no record of its
own, and tells renames only in its audit records; `vault_io.write_archive` reads such an archive
whole and writes it with the ended initiatives and name histories these functions infer."""

from __future__ import annotations

import re
from typing import Any

from kaeru.export import amg

_V1_ENDED = re.compile(r"^#\d+$")


def v1_slot_only(archive: amg.Archive, v1_ended: dict[amg.InitiativeKey, dict[str, Any]]) -> list[dict[str, Any]]:
    """A version 1 archive's `#<n>` initiatives named by slot revisions only: they are restored when
    a revision naming them is new here, and importing a v1 archive of this very vault (whose ended
    initiatives have their names now) must not add a nameless copy of each."""
    named = {key for r in archive.nodes for key in amg.node_keys(r) if key in v1_ended}
    out: list[dict[str, Any]] = []
    for record in archive.slots:
        key = amg.record_key(record)
        if key in v1_ended and key not in named and v1_ended[key] not in out:
            out.append(v1_ended[key])
    return out


def v1_ended_initiatives(archive: amg.Archive) -> list[dict[str, Any]]:
    """A version 1 archive names an initiative merged away or deleted `#<number>`, without a record:
    such initiatives become ended ones (their names unknown), ended at the last record naming them —
    not live, empty initiatives. Live initiatives get the name histories its audit records tell."""
    if archive.version != 1:
        return []
    live = {r["name"] for r in archive.initiatives}
    last: dict[str, str] = {}
    for record in archive.nodes:
        for name in record["initiatives"]:
            if name not in live and _V1_ENDED.match(name):
                last[name] = max(last.get(name, ""), record["recorded_at"])
    for record in archive.slots:
        name = record["initiative"]
        if name not in live and _V1_ENDED.match(name):
            last[name] = max(last.get(name, ""), record["updated_at"])
    renames = _v1_renames(archive)
    for record in archive.initiatives:  # live: the renames its audit records hold
        if not record.get("names") and renames.get(record["name"]):
            record["names"] = _spans(record["created_at"], renames[record["name"]], record["name"], None)
    ended: list[dict[str, Any]] = [
        {"key": (n, at), "name": n, "created_at": None, "ended_at": at, "names": []} for n, at in sorted(last.items())
    ]
    for record in archive.nodes:  # refer to them as ended from now on
        found = [n for n in record["initiatives"] if n in last]
        if found:
            record["initiatives"] = [n for n in record["initiatives"] if n not in last]
            record["ended_initiatives"] = sorted([n, last[n]] for n in found)
    for record in archive.slots:
        if record["initiative"] in last:
            record["initiative_ended_at"] = last[record["initiative"]]
    return ended


def _v1_renames(archive: amg.Archive) -> dict[str, list[tuple[str, str]]]:
    """The renames `(old name, at)` a version 1 archive's audit records tell of each live
    initiative (by its name there), since the last merge or delete under that name (old SQLite
    handed a freed id out again). Every `initiative` operation recorded `{field: "initiative",
    before: old name, after: ...}`; a merge also `merged_nodes`, a delete `forgotten_nodes`. (Its
    audit records name no ended initiative: those stay `#<n>`, names unknown.)"""
    renames: dict[str, list[tuple[str, str]]] = {}
    for record in archive.audit:
        label = record.get("initiative")
        if not isinstance(label, str) or record["operation"] != "initiative":
            continue
        changes = [c for c in record["changes"] if isinstance(c, dict)]
        ends = bool({c.get("field") for c in changes} & {"merged_nodes", "forgotten_nodes"})
        for change in changes:
            if change.get("field") == "initiative" and isinstance(change.get("before"), str):
                if ends:
                    renames.pop(label, None)
                else:
                    renames.setdefault(label, []).append((change["before"], record["at"]))
    return renames


def _spans(created: str, renames: list[tuple[str, str]], last: str, until: str | None) -> list[dict[str, Any]]:
    """Name spans from `created` through `renames` (old name, at) to `last`, held until `until`."""
    spans: list[dict[str, Any]] = []
    start = created
    for name, at in renames:
        if start < at:
            spans.append({"name": name, "from": start, "to": at})
            start = at
    if until is None or start < until:
        spans.append({"name": last, "from": start, "to": until})
    return spans
