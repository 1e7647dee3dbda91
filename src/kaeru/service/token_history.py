"""`kaeru token history`: the audit records of the vault's tokens, a change of grants included.

They belong to no initiative, so a search of the audit log (`audit_event`), which reads an
initiative's records, never shows them. A change of grants (`token_grant`, `token_grants`) is
listed with the grants before and after, as a renewal is with its expiry before and after.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kaeru.service.runtime import Runtime
from kaeru.service.token_grants import TOKEN_GRANT
from kaeru.storage.base import AuditRecord

#: The audit operations of the token records, as `token history` says them.
TOKEN_OPERATIONS = {"token_add": "added", "token_renew": "renewed", "token_revoke": "revoked", TOKEN_GRANT: "granted"}


@dataclass(frozen=True, slots=True)
class TokenEvent:
    """One audit record of a token: `operation` is `added`, `renewed`, `revoked` or `granted`;
    `grant` the grant it was made with, had when revoked or has after a change of grants
    (`initiatives`, `read_only`, `expires_at`), None for a renewal; `before` the grant a change of
    grants replaced (None otherwise); `expiry` the renewal's `(before, after)` expiry (None: never),
    None otherwise."""

    at: str
    operation: str
    name: str
    actor: str
    grant: dict[str, Any] | None
    expiry: tuple[str | None, str | None] | None
    before: dict[str, Any] | None = None


def _event(record: AuditRecord) -> TokenEvent:
    """The token record `record` as its history shows it; a damaged record's changes (an archive
    imported before token records were skipped) that are no list of fields name nothing."""
    changes = record.changes if isinstance(record.changes, list) else []
    by_field = {c["field"]: c for c in changes if isinstance(c, dict) and isinstance(c.get("field"), str)}
    named = by_field.get("token", {})
    grant = by_field.get("grant", {})
    after, before = grant.get("after"), grant.get("before")
    expiry = by_field.get("expires_at")
    return TokenEvent(
        record.at,
        TOKEN_OPERATIONS[record.operation],
        str(named.get("after") or named.get("before") or "?"),
        record.actor,
        after if isinstance(after, dict) else None,
        (expiry.get("before"), expiry.get("after")) if expiry is not None else None,
        before if isinstance(before, dict) else None,
    )


def token_history(rt: Runtime, name: str | None, limit: int) -> tuple[list[TokenEvent], bool]:
    """The audit records of the vault's tokens (of the token `name` only, when given), newest first:
    up to `limit` of them, and whether older ones exist. Read from the newest back by statements of
    at most `limit + 1` records (`Session.unowned_audit`); a name is matched exactly, the statement's
    text match (case-blind on SQLite) only narrowing what is read, so another statement reads on
    past the records it let through in excess."""
    wanted = limit + 1
    found: list[TokenEvent] = []
    before: int | None = None
    with rt.store.read() as session:
        while len(found) < wanted:
            step = wanted - len(found)
            naming = json.dumps(name) if name is not None else None
            batch = session.unowned_audit(list(TOKEN_OPERATIONS), step, before, naming)
            found += [e for e in map(_event, (r for _, r in batch)) if name is None or e.name == name]
            if len(batch) < step:
                break
            before = batch[-1][0]
    return found[:limit], len(found) > limit
