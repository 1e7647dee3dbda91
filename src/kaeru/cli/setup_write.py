"""`kaeru setup --write`: the entry merged into the client's file (decision 449).

The file's own `kaeru` entry is the user's as much as the rest of the file: the README tells people
to add `KAERU_STRUCTURED=off` or `KAERU_SEMANTIC=1` to its `env` by hand, and an entry may point at
another vault. Replacing it whole lost those keys and repointed the entry at this shell's vault with
nothing said. So the `env` keys this setup does not set are kept, and what it changes is said: above
all the vault (`KAERU_VAULT` / `KAERU_DATABASE_URL`), as "the entry pointed at X; it now points at Y".
A client file reached through a symbolic link (dotfiles) is written where the link points, the link
kept; the backup goes beside the file written.

The entry's other settings (Windsurf's `disabled`, `disabledTools`; Codex's `startup_timeout_sec`,
`enabled_tools`) are the user's too: only the keys setup writes (`OWNED`) are replaced. An entry of
that name that is not kaeru's (`--name github` over the GitHub server) is refused, not replaced:
replacing it lost that server and copied its secrets into kaeru's `env` (decision 449). Kaeru's
entry is told by what it runs, not by `kaeru` anywhere in it: a filesystem server serving
`~/src/kaeru-memory` was taken for it (decision 488).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path, PureWindowsPath
from typing import Any

from kaeru.cli.setup_toml import merged_toml
from kaeru.config import url_password_replaced
from kaeru.export.staged import private_copy, staged_file

#: The settings that name the vault a server opens; the URL wins over the folder.
VAULT_KEYS = ("KAERU_DATABASE_URL", "KAERU_VAULT")

#: The variable of Claude Desktop's entry `env` that `mcp-remote` reads the Authorization header from:
#: setup's own, so an entry rewritten to start kaeru itself (or for another transport) leaves it out
#: rather than keeping the token in the file, and it is never printed.
HEADER_ENV = "KAERU_AUTH_HEADER"

#: The keys of an entry setup writes, replaced whatever they held; every other key is the user's.
OWNED = ("type", "command", "args", "env", "url", "serverUrl", "headers", "bearer_token_env_var")
#: The keys of one transport that a client refuses (Codex) or ignores on the other: dropped with it.
STDIO_ONLY = ("cwd", "envFile", "env_vars")
HTTP_ONLY = ("http_headers", "env_http_headers")

#: What a file may begin with that says it is UTF-8 (Windows editors write it); kept as found.
BOM = "\ufeff"


class NameTaken(ValueError):
    """The file holds another server under the name setup was to write."""


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
    settings_kept: list[str] = field(default_factory=list)
    changes: list[dict[str, str]] = field(default_factory=list)
    vault_was: str | None = None
    vault_now: str | None = None
    token_dropped: bool = False

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
        if self.token_dropped:
            lines.append(
                f"left out the entry's {HEADER_ENV}: the token mcp-remote sent, which this entry does not use "
                "(the backup still holds it)"
            )
        if self.settings_kept:
            lines.append(f"kept the entry's own settings: {', '.join(self.settings_kept)}")
        return lines

    def document(self) -> dict[str, Any]:
        """The same for `--json`."""
        vault = {"was": self.vault_was, "now": self.vault_now} if self.vault_was and self.vault_now else None
        return {
            "env_kept": self.kept,
            "env_changed": self.changes,
            "vault_changed": vault,
            "settings_kept": self.settings_kept,
        }


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


def merged(old: Any, server: dict[str, Any], *, keep_env: bool, default_vault: bool = False) -> Written:
    """`server` with the `old` entry's settings that are not setup's (`OWNED`) and its `env` keys
    (`_merged_env`). `default_vault`: the vault `server` names is only this shell's default (its
    XDG_DATA_HOME), not one the user named, so an entry naming its own vault keeps it."""
    if default_vault and isinstance(old, dict) and isinstance(old.get("env"), dict) and _vault_of(old["env"]):
        env = {k: v for k, v in (server.get("env") or {}).items() if k not in VAULT_KEYS}
        server = {k: v for k, v in server.items() if k != "env"} | ({"env": env} if env else {})
    result = _merged_env(old, server, keep_env=keep_env)
    if not isinstance(old, dict):
        return result
    stdio = "command" in old
    dropped = (*OWNED, *(STDIO_ONLY if stdio and "command" not in server else ()))
    dropped += HTTP_ONLY if not stdio and "command" in server else ()
    settings = [k for k in old if k not in dropped and k not in result.server]
    result.server = {**result.server, **{k: old[k] for k in settings}}
    result.settings_kept = settings
    return result


def _merged_env(old: Any, server: dict[str, Any], *, keep_env: bool) -> Written:
    """`server` with the `env` keys of the `old` entry it does not set (when `keep_env`: it starts
    kaeru itself, not an HTTP one), and what changed. A new entry that names a vault drops the old
    one's other vault key (a URL left beside a new folder would still win)."""
    old_env = old.get("env") if isinstance(old, dict) else None
    if not keep_env or not isinstance(old_env, dict) or not old_env:
        return Written(server)
    new_env: dict[str, Any] = dict(server.get("env") or {})
    names_vault = any(key in new_env for key in VAULT_KEYS)
    kept = [k for k in old_env if k not in new_env and k != HEADER_ENV and not (names_vault and k in VAULT_KEYS)]
    env = {k: new_env.get(k, old_env[k]) for k in old_env if k in new_env or k in kept}
    env.update(new_env)
    result = Written({**server, **({"env": env} if env else {})}, kept=kept)
    result.token_dropped = HEADER_ENV in old_env and HEADER_ENV not in new_env
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


def another_server(old: Any, name: str, server: dict[str, Any]) -> str | None:
    """What the entry `old` under `name` runs, when it is not kaeru's; None when it is (or none is).

    Kaeru's entry is recognised by its structure (`_is_kaerus`), or as the one at the URL setup
    writes now. `kaeru` anywhere in it is not enough: a filesystem server serving
    `/home/u/src/kaeru-memory` was taken for kaeru's, replaced, and its `GITHUB_TOKEN` copied into
    kaeru's `env` and printed. An entry under the name `kaeru`, the one setup writes by default, is
    taken as kaeru's: an HTTP entry with no token whose server moved names nothing else of kaeru."""
    if not isinstance(old, dict) or not old or name == "kaeru" or _is_kaerus(old):
        return None
    url = _url_of(old)
    if url is not None and url == _url_of(server):
        return None
    if isinstance(old.get("command"), str):
        args = old.get("args")
        ran = " ".join(str(part) for part in [old["command"], *(args if isinstance(args, list) else [])])
        return f"it runs `{ran if len(ran) <= 80 else ran[:77] + '...'}`"
    return f"it reaches {url}" if url else "it is not kaeru's entry"


#: The programs that run a Python package's script by the package's name or a path to it.
LAUNCHERS = ("uvx", "uv", "pipx")
#: The package spec of kaeru in a launcher's arguments: `kaeru-memory`, `kaeru_memory-0.1.0-….whl`,
#: `./kaeru-memory`, `kaeru-memory[postgres]`, `--from=kaeru-memory`.
_PACKAGE = re.compile(r"(?:^|[/\\=])kaeru[-_]memory(?![A-Za-z0-9])", re.IGNORECASE)
#: A variable an entry reads in a header or an argument: `${NAME}` (`${env:NAME}` in VS Code's syntax).
_REFERENCE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


def _program(command: str) -> str:
    """The program a command names, without its folder (either slash) or `.exe`, in lower case."""
    base = PureWindowsPath(command).name.lower()
    return base[: -len(".exe")] if base.endswith(".exe") else base


def _is_kaerus(entry: dict[str, Any]) -> bool:
    """Whether `entry` runs kaeru or is set up for it: the `kaeru` script (any folder, `.exe`),
    `python -m kaeru`, a launcher (`uvx`, `uv`, `pipx`) given the `kaeru` script or the
    `kaeru-memory` package, or a `KAERU_` variable it sets or reads (its `env`, a header, Codex's
    `bearer_token_env_var`)."""
    command = entry.get("command")
    raw = entry.get("args")
    args = [a for a in raw if isinstance(a, str)] if isinstance(raw, list) else []
    program = _program(command) if isinstance(command, str) else ""
    if program == "kaeru" or "-mkaeru" in args:
        return True
    if any(a == "-m" and b == "kaeru" for a, b in pairwise(args)):
        return True
    if program in LAUNCHERS and any(a == "kaeru" or _PACKAGE.search(a) for a in args):
        return True
    return any(variable.startswith("KAERU_") for variable in _variables(entry, args))


def _variables(entry: dict[str, Any], args: list[str]) -> list[str]:
    """The names of the variables `entry` sets or reads: its `env` keys, Codex's `env_vars`,
    `bearer_token_env_var` and `env_http_headers`, and the `${NAME}` in its headers and arguments."""
    names: list[str] = []
    env = entry.get("env")
    names += [str(k) for k in env] if isinstance(env, dict) else []
    passed = entry.get("env_vars")
    names += [str(v) for v in passed] if isinstance(passed, list) else []
    bearer = entry.get("bearer_token_env_var")
    names += [bearer] if isinstance(bearer, str) else []
    headers = entry.get("env_http_headers")
    names += [str(v) for v in headers.values()] if isinstance(headers, dict) else []
    texts = [*args, *(str(v) for v in entry["headers"].values())] if isinstance(entry.get("headers"), dict) else args
    return names + [found for text in texts for found in _REFERENCE.findall(text)]


def _url_of(entry: dict[str, Any]) -> str | None:
    """The URL an entry reaches: its `url`/`serverUrl`, or the one it passes `mcp-remote`."""
    for key in ("url", "serverUrl"):
        if isinstance(entry.get(key), str):
            return str(entry[key])
    args = entry.get("args")
    found = (
        [a for a in args if isinstance(a, str) and a.startswith(("http://", "https://"))]
        if isinstance(args, list)
        else []
    )
    return found[0] if found else None


def write(
    path: Path,
    client: str,
    name: str,
    server: dict[str, Any],
    *,
    keep_env: bool,
    default_vault: bool = False,
    private: bool = False,
) -> Written:
    """Merge the entry into `path` (a symbolic link's target). Raises ValueError on a file that does
    not parse, that setup cannot edit, or that it may not write (read-only), and NameTaken on another
    server under `name`: the file is left as it is. `private`: the entry holds a token, so the file
    is its owner's only (`_made_private`), also when it already held the entry."""
    from kaeru.cli.setup import document, strict_json  # the formats, beside the command

    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    if target.is_symlink():  # what realpath could not follow to its end: a loop of links
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
    found = target.read_text(encoding="utf-8") if target.exists() else None
    # A byte order mark is not JSON (nor TOML): read past it, and written back as it was found.
    bom = BOM if found is not None and found.startswith(BOM) else ""
    existing = found[len(bom) :] if found is not None else None
    same = False
    if client == "codex":
        tables: dict[str, Any] = {}
        if existing is not None:
            try:
                tables = tomllib.loads(existing)
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(f"{path} is not valid TOML ({exc}); it was left as it is") from exc
        servers = tables.get("mcp_servers")
        old = servers.get(name) if isinstance(servers, dict) else None
        _refuse_another(path, old, name, server)
        result = merged(old, server, keep_env=keep_env, default_vault=default_vault)
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
        _refuse_another(path, (servers or {}).get(name), name, server)
        result = merged((servers or {}).get(name), server, keep_env=keep_env, default_vault=default_vault)
        # The entry as it is: the file is not written again (not even to drop its comments).
        same = (servers or {}).get(name) == result.server
        data[key] = {**(servers or {}), name: result.server}
        new = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    new = bom + new
    if same or found == new:
        if private and found is not None:
            _made_private(target)
        return result
    if found is not None and not target.stat().st_mode & stat.S_IWUSR:
        # Renaming the new content onto it would succeed (the folder is writable) and undo the mode
        # the user set to keep the file as it is; as root, writing would succeed too.
        raise ValueError(
            f"{path} is read-only; it was left as it is: `chmod u+w {path}` and run again, or put the "
            "printed entry in yourself"
        )
    if private and found is not None:
        _made_private(target)  # before the backup copies its mode and the new content takes it
    if found is not None:
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
    # (made private above when it holds a token) and its place (decision 177).
    with staged_file(target) as written:
        written.write(new.encode("utf-8"))
    result.changed, result.target = True, target
    return result


def _made_private(target: Path) -> None:
    """`target` readable by its owner only (0600 from 0644), before anything holding the token is
    written: made so after the new file was in place, it was readable by all for a moment, and a
    chmod that failed there ended in a traceback after the write."""
    mode = stat.S_IMODE(target.stat().st_mode)
    if mode & 0o077:
        target.chmod(mode & 0o700)


def _refuse_another(path: Path, old: Any, name: str, server: dict[str, Any]) -> None:
    runs = another_server(old, name, server)
    if runs is not None:
        raise NameTaken(
            f"{path} already holds a server named {name!r} that is not kaeru ({runs}); it was left as it "
            f"is: give kaeru a name of its own with --name (e.g. --name kaeru), or remove that entry first"
        )
