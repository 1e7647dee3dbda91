"""Name who made each edge revision written before migration 021 gave edge revisions `actor` and
`request_id`, from the audit record of the write that made it (decision 493; SQLite migration 024).

Until then a history page matched such a revision's audit record each time it showed it, and no index
reaches an audit record by the links it names: every such page read the audit log through. This
matches every one once, by the rule that fallback applies (`storage.link_actors`), and writes the
actor into the revision's own row; a revision no record names stays NULL (the page's fallback still
tries it, and says its actor is unknown). Only NULL rows are written, so running it again changes
nothing. A large vault's upgrade takes one pass over the audit log: `kaeru serve` on stdio applies it
on a thread of its own (`migrate.BackgroundUpgrade`), as every pending migration.
"""

from __future__ import annotations

from typing import Any

from kaeru.storage.link_actors import backfill
from kaeru.storage.postgres.db import PgDb


def up(conn: Any) -> None:
    """`conn` is the migrating psycopg connection, inside the migration's transaction."""
    backfill(PgDb(conn))
