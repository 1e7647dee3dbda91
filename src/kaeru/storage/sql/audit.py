"""The audit log, vectors and cursors: written once for both engines."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from kaeru.storage.records import AuditRecord
from kaeru.storage.sql import rows
from kaeru.storage.sql.rows import AUDIT_COLS
from kaeru.storage.sql.slots import SlotQueries

#: `json.dumps(value, sort_keys=True, default=str)` with the encoder built once (every write audits).
_changes_json = json.JSONEncoder(sort_keys=True, default=str).encode


def _containing(text: str) -> str:
    """A LIKE pattern (escaped by backslash) that holds `text` anywhere."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class AuditQueries(SlotQueries):
    def append_audit(self, record: AuditRecord) -> None:
        # Nothing reads its outcome and no writer can collide with it: sent with the next statement
        # (PostgreSQL's pipeline; decision 16.P2).
        self._db.send(
            "INSERT INTO audit (at, operation, actor, request_id, initiative_id, affected, changes) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                record.at,
                record.operation,
                record.actor,
                record.request_id,
                record.initiative_id,
                json.dumps(record.affected),
                _changes_json(record.changes) if record.changes else "[]",
            ),
        )

    def newest_stamp(self) -> str | None:
        """When the vault's newest write was stamped: its last audit record's time, read by the
        record's key (one probe of its primary key, no row written). A write is stamped after it
        (`Runtime.write_time`), so that the vault's recorded order never goes back when a machine's
        clock was put back between two writers' sessions (PostgreSQL's session answers None: its
        writers share the server's clock)."""
        row = self._db.one("SELECT at FROM audit ORDER BY seq DESC LIMIT 1", ())
        return str(row[0]) if row else None

    def audit_records(self, initiative_ids: Sequence[int], limit: int) -> list[tuple[int, AuditRecord]]:
        """The newest audit records of these initiatives, with their sequence numbers, newest first."""
        if not initiative_ids:
            return []
        where, params = self._d.in_("initiative_id", initiative_ids)
        found = self._db.rows(
            f"SELECT {AUDIT_COLS} FROM audit WHERE {where} ORDER BY seq DESC LIMIT ?", [*params, limit]
        )
        return [(r[0], rows.audit(r)) for r in found]

    def unowned_audit(
        self, operations: Sequence[str], limit: int, before: int | None = None, naming: str | None = None
    ) -> list[tuple[int, AuditRecord]]:
        """The newest audit records of these operations that belong to no initiative (the vault's own:
        its tokens, an import that brought none), with their sequence numbers, newest first; only
        those older than sequence number `before`, and whose changes hold the text `naming`, when
        given (as the records hold it, JSON text; SQLite's LIKE ignores ASCII case, so the caller
        matches exactly). `audit_initiative (initiative_id, seq)` holds these records' entries
        together, in their order: SQLite walks them from the newest and stops at `limit`; PostgreSQL's
        planner reads them all through it and sorts them: the vault's own records, however many the
        initiatives hold."""
        if not operations:
            return []
        where, params = self._d.in_("operation", operations, "text")
        if before is not None:
            where, params = f"{where} AND seq < ?", [*params, before]
        if naming is not None:
            where, params = f"{where} AND changes LIKE ? ESCAPE '\\'", [*params, _containing(naming)]
        found = self._db.rows(
            f"SELECT {AUDIT_COLS} FROM audit WHERE initiative_id IS NULL AND {where} ORDER BY seq DESC LIMIT ?",
            [*params, limit],
        )
        return [(r[0], rows.audit(r)) for r in found]

    def audit_by_seq(self, seqs: Sequence[int]) -> dict[int, AuditRecord]:
        if not seqs:
            return {}
        where, params = self._d.in_("seq", seqs)
        return {
            r[0]: rows.audit(r)
            for r in self._db.rows(f"SELECT {AUDIT_COLS} FROM audit WHERE {where} ORDER BY seq", params)
        }

    def audit_naming(self, node_id: str, since: str, until: str | None) -> list[AuditRecord]:
        """The audit records stamped at `since` or later (and at `until` or earlier, when given)
        whose changes name `node_id`, in the order of their stamps (then written): what a history
        page reads the actors of its link events from when their edge revisions name none (imported
        without them, or written before edge revisions kept them and named by no record when the
        vault was upgraded; each write's audit record names the links it changed,
        `WriteContext.changes_log`). No index holds a record's time or the nodes it names, so this
        reads the audit log through once; the id is matched as the records hold it (JSON text), and
        a record that names it otherwise (a body quoting it) is the caller's to skip."""
        quoted = json.dumps(node_id)[1:-1]  # as `_changes_json` writes it (ASCII, escaped)
        pattern = _containing(quoted)
        bound, params = (" AND at <= ?", [until]) if until is not None else ("", [])
        found = self._db.rows(
            f"SELECT {AUDIT_COLS} FROM audit WHERE at >= ?{bound} AND changes LIKE ? ESCAPE '\\' ORDER BY at, seq",
            [since, *params, pattern],
        )
        return [rows.audit(r) for r in found]

    def export_audit(self, initiative_ids: Sequence[int] | None) -> Iterator[AuditRecord]:
        where, params = self._within(initiative_ids)
        return map(rows.audit, self._db.stream(f"SELECT {AUDIT_COLS} FROM audit WHERE {where} ORDER BY seq", params))

    # --- vectors (optional semantic channel) ---------------------------------------------------
    # `put_vector`, `vector_candidates` and `nearest_vectors` are each engine's own (declared on
    # `SqlSession`; sqlite/vectors.py, postgres/vectors.py).
    def vector_digests(self, model: str) -> dict[str, str]:
        """node id → digest of the text its stored vector was computed from."""
        return {
            r[0]: r[1] for r in self._db.rows("SELECT node_id, text_sha FROM node_vectors WHERE model = ?", (model,))
        }

    # --- cursors ----------------------------------------------------------------------------
    def load_cursor(self, cursor_id: str) -> list[str] | None:
        row = self._db.one("SELECT items FROM cursors WHERE id = ?", (cursor_id,))
        return list(json.loads(row[0])) if row else None

    def purge_cursors(self, before: str) -> int:
        return self._db.run("DELETE FROM cursors WHERE created_at < ?", (before,))
