"""Initiatives, their name history and the vault's secret: written once for both engines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kaeru.domain.model import NameSpan
from kaeru.domain.naming import forms
from kaeru.errors import Internal, Unavailable
from kaeru.storage.records import EndedInitiative, Initiative, ListedInitiative
from kaeru.storage.sql import rows
from kaeru.storage.sql.db import DuplicateKey, Part
from kaeru.storage.sql.rows import INITIATIVE_COLS

_BY_NAME = f"SELECT {INITIATIVE_COLS} FROM initiatives WHERE name = ?"
_OPEN_NAME = (
    "INSERT INTO initiative_names (initiative_id, name, valid_from, valid_to) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (initiative_id, valid_from) DO UPDATE SET name = excluded.name, valid_to = excluded.valid_to"
)
_CLOSE_NAME = "UPDATE initiative_names SET valid_to = ? WHERE initiative_id = ? AND valid_to IS NULL"


def _after(key: tuple[str, str] | None) -> tuple[str, list[str]]:
    """Initiatives after (last_activity, name) `key` in the order most active first, then by name."""
    if key is None:
        return "1 = 1", []
    return "(last_activity < ? OR (last_activity = ? AND name > ?))", [key[0], key[0], key[1]]


class InitiativeQueries(Part):
    _secret: bytes | None

    def vault_secret(self) -> bytes:
        if self._secret is not None:
            return self._secret
        row = self._db.one("SELECT value FROM meta WHERE key = 'secret'")
        if row is None:
            raise Internal("vault has no secret; was it migrated?")
        return bytes.fromhex(row[0])

    def initiative_by_name(self, name: str) -> Initiative | None:
        row = self._db.one(_BY_NAME, (name,))
        if row:
            return rows.initiative(row)
        return self._spelled_otherwise([name]).get(name)

    def initiatives_by_names(self, names: Sequence[str]) -> dict[str, Initiative]:
        """The initiatives of `names` that exist, by name: one statement a chunk of names, where a
        search across 1,000 projects made 1,000 round trips (decision 152)."""
        found: dict[str, Initiative] = {}
        for chunk in self._d.chunks(names):
            where, params = self._d.in_("name", chunk, "text")
            for row in self._db.rows(f"SELECT {INITIATIVE_COLS} FROM initiatives WHERE {where}", params):
                initiative = rows.initiative(row)
                found[initiative.name] = initiative
        missing = [name for name in names if name not in found]
        return found | self._spelled_otherwise(missing) if missing else found

    def _spelled_otherwise(self, names: Sequence[str]) -> dict[str, Initiative]:
        """The initiatives stored under the decomposed form (NFD) of `names` (composed, NFC, as names
        arrive since decision 184): a vault written before it — or an archive exported from one —
        may hold `café` as `e` + a combining accent. One indexed look-up; names that have no other
        form (ASCII) are not asked."""
        wanted = {other: name for name in names for other in forms(name)[1:]}
        found: dict[str, Initiative] = {}
        for chunk in self._d.chunks(list(wanted)):
            where, params = self._d.in_("name", chunk, "text")
            for row in self._db.rows(f"SELECT {INITIATIVE_COLS} FROM initiatives WHERE {where}", params):
                initiative = rows.initiative(row)
                found[wanted[initiative.name]] = initiative
        return found

    def initiative_ids_named(self, names: Sequence[str]) -> dict[str, set[int]]:
        """The ids of the live initiatives that answer to `names` (canonical), by name: stored under
        the name or its decomposed form (NFD, decision 184) — both, as two initiatives, in a vault an
        older kaeru split. Only those names' rows, through the name index: a token's grants are a few
        names, and reading every initiative to find them made each call of a token limited to some
        initiatives cost as much as the vault had initiatives."""
        wanted = {form: name for name in names for form in forms(name)}
        found: dict[str, set[int]] = {}
        for chunk in self._d.chunks(list(wanted)):
            where, params = self._d.in_("name", chunk, "text")
            for initiative_id, name in self._db.rows(f"SELECT id, name FROM initiatives WHERE {where}", params):
                found.setdefault(wanted[name], set()).add(int(initiative_id))
        return found

    def initiative_names(self, ids: Sequence[int]) -> dict[int, str]:
        if not ids:
            return {}
        where, params = self._d.in_("id", sorted(set(ids)))
        return {r[0]: r[1] for r in self._db.rows(f"SELECT id, name FROM initiatives WHERE {where}", params)}

    def all_initiatives(self) -> list[Initiative]:
        return [rows.initiative(r) for r in self._db.rows(f"SELECT {INITIATIVE_COLS} FROM initiatives ORDER BY name")]

    def initiative_name_list(self) -> list[str]:
        """Every live initiative's name, for a did-you-mean: the names alone (making every
        initiative's row into a record was most of what a new initiative's note cost), in no
        particular order (a did-you-mean ranks them itself; PostgreSQL would sort them for nothing)."""
        return [r[0] for r in self._db.rows("SELECT name FROM initiatives")]

    def former_name_spans(self, name: str) -> list[tuple[str, str]]:
        """The live initiatives that once held `name` and hold another now: (its name now, when it
        stopped holding `name`), by initiative id and then in time order."""
        found = self._db.rows(
            "SELECT i.name, n.valid_to FROM initiative_names n JOIN initiatives i ON i.id = n.initiative_id "
            "WHERE n.name = ? AND n.valid_to IS NOT NULL AND i.name <> n.name ORDER BY n.initiative_id, n.valid_from",
            (name,),
        )
        return [(r[0], r[1]) for r in found]

    def initiatives_with_property(self, key: str) -> list[tuple[str, dict[str, Any]]]:
        """(name, properties) of the live initiatives whose properties hold `key`, in name order.
        Properties are JSON text on both engines: the key as JSON spells it narrows the scan (a
        superset: `_` and `%` match any letters), the exact test runs here. The few found are put in
        order here (by code point, as both engines order names): SQLite would otherwise walk the
        name index and look up every initiative's row from it."""
        found = self._db.rows(
            "SELECT name, properties FROM initiatives WHERE properties LIKE ?", (f"%{json.dumps(key)}%",)
        )
        holding = ((name, rows.json_object(properties)) for name, properties in sorted(found))
        return [(name, properties) for name, properties in holding if key in properties]

    def ended_named(self, name: str) -> list[EndedInitiative]:
        """The initiatives merged away or deleted whose last name was `name`, oldest end first."""
        found = self._db.rows(
            "SELECT initiative_id, name, created_at, ended_at FROM initiative_ends WHERE name = ? "
            "ORDER BY ended_at, initiative_id",
            (name,),
        )
        return [EndedInitiative(*r) for r in found]

    def initiatives_by_activity(
        self, after: tuple[str, str] | None = None, limit: int | None = None
    ) -> list[ListedInitiative]:
        """Initiatives most active first (`last_activity` descending, then name), only those after
        the key (last_activity, name) `after`, at most `limit` of them: the order and the cut in SQL
        (names compare by code point on both engines: PostgreSQL's columns are COLLATE "C")."""
        where, params = _after(after)
        cut = "" if limit is None else f" LIMIT {int(limit)}"
        sql = (
            "SELECT id, name, created_at, last_activity FROM initiatives "
            f"WHERE {where} ORDER BY last_activity DESC, name{cut}"
        )
        return list(map(ListedInitiative._make, self._db.rows(sql, params)))

    def initiatives_by_activity_among(self, ids: Sequence[int], limit: int | None = None) -> list[ListedInitiative]:
        """The initiatives of `ids` in the order of `initiatives_by_activity` (most active first,
        then by name), at most `limit` of them: what a token limited to some initiatives may list,
        read by their ids alone where listing every initiative and keeping the granted ones read
        the whole table."""
        if not ids:
            return []
        where, params = self._d.in_("id", sorted(set(ids)))
        cut = "" if limit is None else f" LIMIT {int(limit)}"
        sql = (
            "SELECT id, name, created_at, last_activity FROM initiatives "
            f"WHERE {where} ORDER BY last_activity DESC, name{cut}"
        )
        return list(map(ListedInitiative._make, self._db.rows(sql, params)))

    def count_initiatives(self, after: tuple[str, str] | None = None) -> int:
        """How many initiatives there are (only those after the key `after`, as `initiatives_by_activity`)."""
        where, params = _after(after)
        row = self._db.one(f"SELECT count(*) FROM initiatives WHERE {where}", params)
        return int(row[0]) if row else 0

    def create_initiative(self, name: str, now: str) -> Initiative:
        return self._insert_initiative(name, now, now, {})[0]

    def claim_initiative(self, name: str, now: str) -> tuple[Initiative, bool]:
        """Create the initiative `name`, or take the one a concurrent writer committed meanwhile:
        the initiative, and whether this call inserted it. Only the writer that inserted it may say
        it created a new initiative (decision 218: on PostgreSQL every racing writer said so)."""
        return self._insert_initiative(name, now, now, {})

    def restore_initiative(
        self, name: str, created_at: str, last_activity: str, properties: dict[str, Any]
    ) -> Initiative:
        """Create an initiative with its original timestamps (import), or return the existing one."""
        existing = self.initiative_by_name(name)  # (spares PostgreSQL's sequence an id)
        return existing or self._insert_initiative(name, created_at, last_activity, properties)[0]

    def _insert_initiative(
        self, name: str, created_at: str, last_activity: str, properties: dict[str, Any]
    ) -> tuple[Initiative, bool]:
        """The initiative, and whether this statement inserted it (False: a concurrent writer did)."""
        # A concurrent creator of the same name (PostgreSQL) makes this wait on the unique index, then
        # do nothing: its committed row is then the initiative both calls meant.
        row = self._db.one(
            "INSERT INTO initiatives (id, name, created_at, last_activity, properties) "
            f"VALUES (({self._d.next_initiative_id}), ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING "
            f"RETURNING {INITIATIVE_COLS}",
            (name, created_at, last_activity, rows.sorted_json(properties)),
        )
        inserted = row is not None
        if row is not None:
            self._db.run(_OPEN_NAME, (row[0], name, created_at, None))
        else:
            row = self._db.one(_BY_NAME, (name,))
        if row is None:
            raise Unavailable(f"initiative {name!r} was created and removed concurrently; retry")
        return rows.initiative(row), inserted

    def hold_initiative_named(self, name: str, exclusive: bool = False) -> Initiative | None:
        """`initiative_by_name`, its row held as `hold_initiatives` holds it, in the same statement
        (a write's round trips stay as many); None when there is none, or it ended while this write
        waited for the write that ended it."""
        row = self._db.one(_BY_NAME + self._d.initiative_lock(exclusive), (name,))
        if row:
            return rows.initiative(row)
        other = self._spelled_otherwise([name]).get(name)
        return other if other is not None and self.hold_initiatives([other.id], exclusive) else None

    def hold_initiatives(self, initiative_ids: Sequence[int], exclusive: bool = False) -> bool:
        """Lock the rows of the initiatives a write works in, in id order, until it commits; whether
        every one of them still exists (decision 301). Without it, on PostgreSQL, a merge read its
        members while a note was being written into it, and two opposite merges each moved their
        nodes into an initiative the other ended: acknowledged memory in no live initiative.
        `exclusive` for a merge, delete or rename; shared for any other write."""
        lock = self._d.initiative_lock(exclusive)
        return all(
            self._db.one(f"SELECT id FROM initiatives WHERE id = ?{lock}", (i,)) is not None
            for i in sorted(set(initiative_ids))
        )

    def touch_initiative(self, initiative_id: int, now: str) -> None:
        # Its outcome is not read: sent with the next statement (decision 16.P2); a lock wait or an
        # error surfaces there, in the same transaction.
        self._db.send(
            "UPDATE initiatives SET last_activity = ? WHERE id = ? AND last_activity < ?", (now, initiative_id, now)
        )

    def set_initiative_properties(self, initiative_id: int, properties: dict[str, Any]) -> None:
        """Replace the initiative's bookkeeping properties (e.g. when hygiene last ran by itself)."""
        self._db.run(
            "UPDATE initiatives SET properties = ? WHERE id = ?", (rows.sorted_json(properties), initiative_id)
        )

    def rename_initiative(self, initiative_id: int, name: str, at: str) -> None:
        """Rename, closing the old name's span and opening the new one's at `at` (after the current
        name's start: the caller stamps it so)."""
        try:
            self._db.run("UPDATE initiatives SET name = ? WHERE id = ?", (name, initiative_id))
        except DuplicateKey as exc:
            # The service checked the name was free; another transaction took it since. A retry re-checks.
            raise Unavailable(f"initiative {name!r} was created concurrently; retry") from exc
        self._db.run(_CLOSE_NAME, (at, initiative_id))
        self._db.run(_OPEN_NAME, (initiative_id, name, at, None))

    def delete_initiative(self, initiative_id: int, at: str) -> None:
        """Drop the initiative row and its slots (nodes must already have left it); its name history
        ends at `at` and it is remembered among the ended initiatives."""
        row = self._db.one("SELECT name, created_at FROM initiatives WHERE id = ?", (initiative_id,))
        self._db.run("DELETE FROM slots WHERE initiative_id = ?", (initiative_id,))
        self._db.run("DELETE FROM initiatives WHERE id = ?", (initiative_id,))
        if row is None:
            return
        self._db.run(_CLOSE_NAME, (at, initiative_id))
        self._db.run(
            "INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at) VALUES (?, ?, ?, ?)",
            (initiative_id, row[0], row[1], at),
        )

    def name_history(self, initiative_ids: Sequence[int] | None) -> dict[int, list[NameSpan]]:
        """The names each initiative (live or ended; all when None) held, in time order."""
        where, params = self._d.true, list[int]()
        if initiative_ids is not None:
            if not initiative_ids:
                return {}
            where, params = self._d.in_("initiative_id", sorted(set(initiative_ids)))
        out: dict[int, list[NameSpan]] = {}
        for initiative_id, name, valid_from, valid_to in self._db.rows(
            f"SELECT initiative_id, name, valid_from, valid_to FROM initiative_names WHERE {where} "
            "ORDER BY initiative_id, valid_from",
            params,
        ):
            out.setdefault(int(initiative_id), []).append(NameSpan(name, valid_from, valid_to))
        return out

    def ended_initiatives(self) -> list[EndedInitiative]:
        """Initiatives merged away or deleted, oldest end first."""
        found = self._db.rows(
            "SELECT initiative_id, name, created_at, ended_at FROM initiative_ends ORDER BY ended_at, initiative_id"
        )
        return [EndedInitiative(*r) for r in found]

    def member_ids(self, initiative_id: int) -> list[str]:
        """Ids of every live node in the initiative, oldest first."""
        found = self._db.rows(
            "SELECT n.id FROM memberships m JOIN nodes n ON n.seq = m.node_seq "
            f"WHERE m.initiative_id = ? AND n.retracted = {self._d.false} ORDER BY n.seq",
            (initiative_id,),
        )
        return [r[0] for r in found]

    def clear_slots(self, initiative_id: int) -> None:
        """Drop the current slots of an initiative (their revisions stay): an ended one imported."""
        self._db.run("DELETE FROM slots WHERE initiative_id = ?", (initiative_id,))

    def restore_name_history(self, initiative_id: int, spans: Sequence[NameSpan]) -> None:
        """Replace an initiative's name history with `spans` (import into a vault that had none of it)."""
        self._db.run("DELETE FROM initiative_names WHERE initiative_id = ?", (initiative_id,))
        for span in spans:
            self._db.run(_OPEN_NAME, (initiative_id, span.name, span.valid_from, span.valid_to))

    def restore_ended_initiative(self, ended: EndedInitiative, spans: Sequence[NameSpan]) -> tuple[int, bool]:
        """The id of the ended initiative with this name and end (import), created with `spans` when
        missing; True when it was created."""
        row = self._db.one(
            "SELECT initiative_id FROM initiative_ends WHERE name = ? AND ended_at = ? ORDER BY initiative_id",
            (ended.name, ended.ended_at),
        )
        if row is not None:
            return int(row[0]), False
        found = self._db.one(f"SELECT {self._d.next_initiative_id}")
        assert found is not None
        initiative_id = int(found[0])
        self._db.run(
            "INSERT INTO initiative_ends (initiative_id, name, created_at, ended_at) VALUES (?, ?, ?, ?)",
            (initiative_id, ended.name, ended.created_at, ended.ended_at),
        )
        self.restore_name_history(initiative_id, spans)
        return initiative_id, True
