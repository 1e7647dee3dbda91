"""`kaeru setup --write`: the entry merged into the client's file (decision 449).

The file's own `kaeru` entry is the user's as much as the rest of the file: the README tells people
to add `KAERU_STRUCTURED=off` or `KAERU_SEMANTIC=1` to its `env` by hand, and an entry may point at
another vault. Replacing it whole lost those keys and repointed the entry at this shell's vault with
nothing said. So the `env` keys this setup does not set are kept, and what it changes is said: above
all the vault (`KAERU_VAULT` / `KAERU_DATABASE_URL`), as "the entry pointed at X; it now points at Y".
A client file reached through a symbolic link (dotfiles) is written where the link points, the link
kept; the backup goes beside the file written.
"""

from __future__ import annotations

import errno
import json
import os
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kaeru.config import url_password_replaced
from kaeru.export.staged import private_copy, staged_file

#: The settings that name the vault a server opens; the URL wins over the folder.
VAULT_KEYS = ("KAERU_DATABASE_URL", "KAERU_VAULT")


@dataclass
class Written:
    """What `write` did: `changed` (the file now holds `server`), `backup` (the previous content),
    `target` (the file written: a symbolic link's target), and what of the old entry was kept or
    changed."""

    server: dict[str, Any]
    changed: bool = False
    backup: Path | None = None
    target: Path | None = None
    kept: list[str] = field(default_factory=list)
    changes: list[dict[str, str]] = field(default_factory=list)
    vault_was: str | None = None
    vault_now: str | None = None

    def said(self) -> list[str]:
        """What the human output says of the old entry, a line each."""
        lines = []
        if self.vault_was and self.vault_now:
            lines.append(f"the entry pointed at {self.vault_was}; it now points at {self.vault_now}")
        elif self.vault_was:
            lines.append(
                f"the entry keeps its vault {self.vault_was}: this shell names none (--vault, KAERU_VAULT or "
                "KAERU_DATABASE_URL would)"
            )
        lines += [f"{c['key']} was {c['was']}; it is {c['now']} now" for c in self.changes]
        if self.kept:
            lines.append(f"kept from the entry: {', '.join(self.kept)}")
        return lines

    def document(self) -> dict[str, Any]:
        """The same for `--json`."""
        vault = {"was": self.vault_was, "now": self.vault_now} if self.vault_was and self.vault_now else None
        return {"env_kept": self.kept, "env_changed": self.changes, "vault_changed": vault}


def _vault_of(env: dict[str, Any]) -> str | None:
    """The vault an entry's `env` names, as said (a URL without its password), or None (the default)."""
    url = env.get("KAERU_DATABASE_URL")
    if isinstance(url, str) and url:
        return url_password_replaced(url, None)
    folder = env.get("KAERU_VAULT")
    return folder if isinstance(folder, str) and folder else None


def _same_place(a: str, b: str) -> bool:
    if "://" in a or "://" in b:
        return a == b
    return os.path.realpath(os.path.expanduser(a)) == os.path.realpath(os.path.expanduser(b))


def merged(old: Any, server: dict[str, Any], *, keep_env: bool) -> Written:
    """`server` with the `env` keys of the `old` entry it does not set (when `keep_env`: it starts
    kaeru itself, not an HTTP one), and what changed. A new entry that names a vault drops the old
    one's other vault key (a URL left beside a new folder would still win)."""
    old_env = old.get("env") if isinstance(old, dict) else None
    if not keep_env or not isinstance(old_env, dict) or not old_env:
        return Written(server)
    new_env: dict[str, Any] = dict(server.get("env") or {})
    names_vault = any(key in new_env for key in VAULT_KEYS)
    kept = [k for k in old_env if k not in new_env and not (names_vault and k in VAULT_KEYS)]
    env = {k: new_env.get(k, old_env[k]) for k in old_env if k in new_env or k in kept}
    env.update(new_env)
    result = Written({**server, "env": env}, kept=kept)
    result.changes = [
        {"key": k, "was": str(old_env[k]), "now": str(v)}
        for k, v in new_env.items()
        if k in old_env and k not in VAULT_KEYS and old_env[k] != v
    ]
    was = _vault_of(old_env)
    if was is not None and names_vault:
        now = _vault_of(new_env)
        if now is not None and not _same_place(was, now):
            result.vault_was, result.vault_now = was, now
    elif was is not None:
        result.vault_was = was
    return result


def write(path: Path, client: str, name: str, server: dict[str, Any], *, keep_env: bool) -> Written:
    """Merge the entry into `path` (a symbolic link's target). Raises ValueError on a file that does
    not parse, or that setup cannot edit (it is left as it is)."""
    from kaeru.cli.setup import document, merged_toml, strict_json  # the formats, beside the command

    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    if target.is_symlink():  # what realpath could not follow to its end: a loop of links
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
    existing = target.read_text(encoding="utf-8") if target.exists() else None
    if client == "codex":
        tables: dict[str, Any] = {}
        if existing is not None:
            try:
                tables = tomllib.loads(existing)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"{path} is not valid TOML ({exc}); it was left as it is") from exc
        servers = tables.get("mcp_servers")
        old = servers.get(name) if isinstance(servers, dict) else None
        result = merged(old, server, keep_env=keep_env)
        new = merged_toml(existing or "", name, result.server)
        try:
            tomllib.loads(new)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(
                f"{path} holds its [mcp_servers.{name}] entry in a form setup cannot edit (an inline table "
                f"`{name} = {{ … }}` under [mcp_servers], or dotted keys `mcp_servers.{name}.… = …`); it was "
                f"left as it is: write that entry as a [mcp_servers.{name}] table, or delete it, and run again "
                f"(or put the printed table in yourself) ({exc})"
            ) from exc
    else:
        data: Any = {}
        if existing is not None and existing.strip():
            try:
                data = json.loads(strict_json(existing))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path} is not valid JSON ({exc}); it was left as it is") from exc
            if not isinstance(data, dict):
                raise ValueError(f"{path} does not hold a JSON object; it was left as it is")
        key = next(iter(document(client, name, server)))
        servers = data.get(key)
        if servers is not None and not isinstance(servers, dict):
            raise ValueError(f"{path}: {key!r} is not an object; it was left as it is")
        result = merged((servers or {}).get(name), server, keep_env=keep_env)
        if (servers or {}).get(name) == result.server:
            return result
        data[key] = {**(servers or {}), name: result.server}
        new = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if existing == new:
        return result
    if existing is not None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        backup = target.with_name(f"{target.name}.bak-{stamp}")
        n = 1
        while backup.exists():
            n += 1
            backup = target.with_name(f"{target.name}.bak-{stamp}-{n}")
        private_copy(target, backup)
        result.backup = backup
    # A client's configuration often holds other servers' keys and is kept private (0600): the new
    # content is written to a file only its owner can read, which then takes the old file's mode
    # and its place (decision 177).
    with staged_file(target) as written:
        written.write(new.encode("utf-8"))
    result.changed, result.target = True, target
    return result
