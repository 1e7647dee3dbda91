"""HTTP bearer tokens (decision 15.K1): written once for both engines. Only a token's sha256 is
stored; its grants are a JSON list of initiative names (NULL: every initiative); `expires_at` NULL
never expires."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kaeru.storage.records import TokenRecord
from kaeru.storage.sql.db import Part
from kaeru.storage.sql.rows import marks

_COLS = "name, digest, initiatives, read_only, created_at, last_used, expires_at"


def _token(row: Sequence[Any]) -> TokenRecord:
    grants = tuple(json.loads(row[2])) if row[2] is not None else None
    return TokenRecord(row[0], row[1], grants, bool(row[3]), row[4], row[5], row[6])


class TokenQueries(Part):
    def add_token(self, token: TokenRecord) -> bool:
        """Store a new token; False (nothing written) when its name is taken."""
        grants = json.dumps(list(token.initiatives)) if token.initiatives is not None else None
        return bool(
            self._db.run(
                f"INSERT INTO tokens ({_COLS}) VALUES ({marks(7)}) ON CONFLICT (name) DO NOTHING",
                (
                    token.name,
                    token.digest,
                    grants,
                    self._d.flag(token.read_only),
                    token.created_at,
                    token.last_used,
                    token.expires_at,
                ),
            )
        )

    def token_by_digest(self, digest: str) -> TokenRecord | None:
        row = self._db.one(f"SELECT {_COLS} FROM tokens WHERE digest = ?", (digest,))
        return _token(row) if row else None

    def token_by_name(self, name: str, for_update: bool = False) -> TokenRecord | None:
        """The token `name`; `for_update`: locked until the write commits (PostgreSQL), so a change
        of its grants computed from it is not overwritten by, nor overwrites, a concurrent one."""
        lock = self._d.lock(for_update, self._read_only)
        row = self._db.one(f"SELECT {_COLS} FROM tokens WHERE name = ?{lock}", (name,))
        return _token(row) if row else None

    def list_tokens(self, for_update: bool = False) -> list[TokenRecord]:
        """Every token, by name; `for_update`: each locked until the write commits (PostgreSQL), in
        name order, as `token_by_name` locks one."""
        lock = self._d.lock(for_update, self._read_only)
        return [_token(r) for r in self._db.rows(f"SELECT {_COLS} FROM tokens ORDER BY name{lock}")]

    def delete_token(self, name: str) -> TokenRecord | None:
        """Remove the token `name`; the row removed, or None when there was none."""
        row = self._db.one(f"DELETE FROM tokens WHERE name = ? RETURNING {_COLS}", (name,))
        return _token(row) if row else None

    def set_token_expiry(self, name: str, expires_at: str | None) -> TokenRecord | None:
        """Set when the token `name` stops being accepted (None: never); the row as it now is, or
        None when there is no such token. Its digest, grants and `last_used` stay."""
        row = self._db.one(f"UPDATE tokens SET expires_at = ? WHERE name = ? RETURNING {_COLS}", (expires_at, name))
        return _token(row) if row else None

    def set_token_grants(self, name: str, initiatives: Sequence[str] | None) -> TokenRecord | None:
        """Set the initiatives the token `name` may reach (None: every one); the row as it now is, or
        None when there is no such token. Its digest, and so the secret its holder has, stays."""
        grants = json.dumps(list(initiatives)) if initiatives is not None else None
        row = self._db.one(f"UPDATE tokens SET initiatives = ? WHERE name = ? RETURNING {_COLS}", (grants, name))
        return _token(row) if row else None

    def touch_token(self, name: str, at: str) -> None:
        """Record that the token `name` was used at `at`."""
        self._db.run("UPDATE tokens SET last_used = ? WHERE name = ?", (at, name))

    def has_tokens(self) -> bool:
        return self._db.one("SELECT 1 FROM tokens LIMIT 1") is not None
