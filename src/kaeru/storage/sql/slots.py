"""Slots and their revisions: written once for both engines."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from kaeru.errors import SlotConflict
from kaeru.storage.records import SlotState
from kaeru.storage.sql import rows
from kaeru.storage.sql.db import Part
from kaeru.storage.sql.rows import SLOT_COLS, marks


class SlotQueries(Part):
    def get_slot(self, initiative_id: int, slot: str, *, for_update: bool = False) -> SlotState | None:
        row = self._db.one(
            f"SELECT {SLOT_COLS} FROM slots WHERE initiative_id = ? AND slot = ?"
            f"{self._d.lock(for_update, self._read_only)}",
            (initiative_id, slot),
        )
        return SlotState(*row) if row else None

    def put_slot(self, state: SlotState) -> None:
        values = (state.initiative_id, state.slot, state.node_id, state.rev_no, state.revision, state.updated_at)
        # A free slot has no row to lock, so two writers (PostgreSQL) may both see it free: the first
        # insert wins, and the second (waiting on the key, then seeing a row at the same or a later
        # revision number) writes nothing and is told that the slot moved on — `WriteContext.take_slot`
        # then takes it from the winner. A first revision leaves the winner's row unlocked (DO NOTHING
        # where DO UPDATE locks the row it declines to change): the taker locks the winner's node
        # before its slot, in the order every write locks them (decision 461).
        update = (
            "NOTHING"
            if state.rev_no == 1
            else "UPDATE SET node_id = excluded.node_id, rev_no = excluded.rev_no, revision = excluded.revision, "
            "updated_at = excluded.updated_at WHERE slots.rev_no < excluded.rev_no"
        )
        moved = self._db.one(
            f"INSERT INTO slots ({SLOT_COLS}) VALUES ({marks(6)}) ON CONFLICT (initiative_id, slot) DO {update} "
            "RETURNING 1",
            values,
        )
        if moved is None:
            raise SlotConflict(f"slot {state.slot!r} was taken concurrently; re-read it and retry")
        self._db.run(f"INSERT INTO slot_revisions ({SLOT_COLS}) VALUES ({marks(6)})", values)

    def slots_held_by(self, node_id: str) -> list[SlotState]:
        sql = f"SELECT {SLOT_COLS} FROM slots WHERE node_id = ? ORDER BY initiative_id, slot"
        return [SlotState(*r) for r in self._db.rows(sql, (node_id,))]

    def slot_history(self, initiative_id: int, slot: str) -> list[SlotState]:
        """Every revision of one slot, oldest first."""
        sql = f"SELECT {SLOT_COLS} FROM slot_revisions WHERE initiative_id = ? AND slot = ? ORDER BY rev_no"
        return [SlotState(*r) for r in self._db.rows(sql, (initiative_id, slot))]

    def slots_of(self, initiative_id: int) -> list[SlotState]:
        sql = f"SELECT {SLOT_COLS} FROM slots WHERE initiative_id = ? ORDER BY slot"
        return [SlotState(*r) for r in self._db.rows(sql, (initiative_id,))]

    def held_slots(self, initiative_ids: Sequence[int]) -> dict[int, list[str]]:
        """The slots each of the initiatives has a holder in, by name (one query for them all)."""
        out: dict[int, list[str]] = {i: [] for i in initiative_ids}
        if not initiative_ids:
            return out
        where, params = self._d.in_("initiative_id", initiative_ids)
        sql = f"SELECT initiative_id, slot FROM slots WHERE {where} AND node_id IS NOT NULL AND node_id <> '' ORDER BY initiative_id, slot"
        for initiative_id, slot in self._db.rows(sql, params):
            out[int(initiative_id)].append(slot)
        return out

    def _within(self, initiative_ids: Sequence[int] | None) -> tuple[str, list[int]]:
        return (self._d.true, []) if initiative_ids is None else self._d.in_("initiative_id", initiative_ids)

    def export_slots(self, initiative_ids: Sequence[int] | None) -> Iterator[SlotState]:
        where, params = self._within(initiative_ids)
        sql = f"SELECT {SLOT_COLS} FROM slot_revisions WHERE {where} ORDER BY initiative_id, slot, rev_no"
        return map(rows.slot, self._db.stream(sql, params))
