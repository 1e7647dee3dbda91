"""Settings: read once at start-up (flags > environment > defaults) and passed down explicitly."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from pathlib import Path
from typing import Any

from kaeru.domain.tool_set import TOOL_NAMES, ToolSetError, served_tools

SECRET_POLICIES = ("reject", "redact", "allow")
#: The longest replay window: its cut-off stays inside the calendar whatever the clock says.
MAX_REPLAY_DAYS = 365_000
#: The largest value of a PostgreSQL integer setting (`statement_timeout`, `lock_timeout`).
PG_INT_MAX = 2**31 - 1


class SettingError(ValueError):
    """A setting kaeru cannot use. `names` are the variables that hold it, so that `kaeru doctor`
    can report every bad one and still run its checks with each left at its default."""

    def __init__(self, message: str, *names: str) -> None:
        super().__init__(message)
        self.names = names


def _integer(env: Mapping[str, str], name: str, default: int) -> int:
    """The whole number in `name`, or `default` when unset; a value that is not one is named."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise SettingError(f"{name} must be a whole number, not {raw!r}", name) from None


def tool_set(raw: str | None, name: str) -> tuple[str, ...]:
    """The tools `raw` names (`domain.tool_set.served_tools`); a list that names none, or names
    something else, is refused naming `name` (the variable, or the flag)."""
    try:
        return served_tools(raw)
    except ToolSetError as exc:
        raise SettingError(f"{name}: {exc}", "KAERU_TOOLS") from None


def not_utf8(path: Path) -> str | None:
    """`path` shown with its undecodable bytes escaped (`/data/caf\\xe9`) when its name is not UTF-8,
    else None. SQLite takes file names as UTF-8 only, and a folder named in another encoding (a
    Latin-1 `café` from an old disk) reaches Python as bytes it cannot encode back: opening a vault
    there, or backing one up into it, ended in a traceback."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "backslashreplace")
    return None


_ON = ("1", "true", "yes", "on")
_OFF = ("0", "false", "no", "off")


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    """The switch in `name`, or `default` when unset; any other word is named, not read as one side
    (`KAERU_STRUCTURED=of` left structured output on, `KAERU_SEMANTIC=enabled` left the channel off)."""
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _ON or raw in _OFF:
        return raw in _ON
    raise SettingError(f"{name} must be one of {', '.join(_ON)} (on) or {', '.join(_OFF)} (off), not {raw!r}", name)


#: Query parameters of a PostgreSQL URL that hold secrets: the password, and the client key's passphrase.
_SECRET_PARAMETERS = frozenset({"password", "sslpassword"})


def _misread_password(url: str) -> bool:
    """Whether `url` holds an `@` libpq would not read as the end of a user part: a second one in the
    authority, or one after the authority's end (its first `/` or `?`) — a password holding an
    unencoded `@`, `/` or `?`. A literal `@` elsewhere is written `%40` (libpq decodes it)."""
    rest = url.partition("://")[2].partition("#")[0]
    ends = [i for i in (rest.find("/"), rest.find("?")) if i >= 0]
    end = min(ends) if ends else len(rest)
    return rest[:end].count("@") > 1 or "@" in rest[end:]


def url_password_replaced(url: str, replacement: str | None) -> str:
    """`url` with its password — in the user part, or a `password=` or `sslpassword=` parameter —
    replaced by `replacement`, or left out when it is None (the URL libpq then completes from
    `~/.pgpass` or `PGPASSWORD`). Read as libpq reads it: the user part runs to the first `@` before
    the first `/`, so a password may hold `?` or `#`; everything else stays byte for byte as written
    (libpq reads a `+` as a plus: the query is not decoded and encoded again). Both found in review."""
    from urllib.parse import unquote

    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    authority_end = rest.find("/")
    at = rest.find("@", 0, authority_end if authority_end >= 0 else len(rest))
    user_part = ""
    if at >= 0:
        user, colon, _ = rest[:at].partition(":")
        user_part = (f"{user}:{replacement}" if colon and replacement is not None else user) + "@"
        rest = rest[at + 1 :]
    place, question, query = rest.partition("?")
    kept: list[str] = []
    for pair in query.split("&") if question and query else []:
        key = unquote(pair.split("=", 1)[0])
        if key not in _SECRET_PARAMETERS:
            kept.append(pair)
        elif replacement is not None:
            kept.append(f"{pair.split('=', 1)[0]}={replacement}")
    return f"{scheme}://{user_part}{place}" + (f"?{'&'.join(kept)}" if kept else "")


class NoHome(ValueError):
    """The default vault has no home to live in (HOME unset, no password entry)."""


def default_vault_dir(env: Mapping[str, str]) -> Path:
    """The user data dir: `$XDG_DATA_HOME/kaeru` (or `~/.local/share/kaeru`).

    Raises:
        ValueError: there is no home to put it in — HOME unset and the account unknown to the
            password database, as for a container run under an arbitrary uid (decision 189).
    """
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]) / "kaeru"
    home = env.get("HOME")
    if not home:
        try:
            home = str(Path.home())
        except RuntimeError:  # no HOME and no password entry for this uid
            raise NoHome(
                "no home directory for the default vault (HOME is unset and this account has none): "
                "set KAERU_VAULT (or --vault) to the folder the vault should live in"
            ) from None
    return Path(home) / ".local" / "share" / "kaeru"


def _account() -> str:
    """This account, as a name part: its uid, or on Windows (no uids) its login name."""
    if hasattr(os, "getuid"):
        return str(os.getuid())
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment either
        return "user"


def file_in_the_way(folder: Path) -> Path | None:
    """The file that stands where `folder` or one of its parents should be a folder, if any: the
    nearest of them that exists, when it is not a folder. The system's "File exists" or "Not a
    directory" names neither that file nor why (decisions 422, 425)."""
    for place in (folder, *folder.parents):
        try:
            if place.exists():
                return None if place.is_dir() else place
        except OSError:  # a parent the account cannot look into: not a file in the way
            return None
    return None


def expanded(path: str, name: str) -> Path:
    """`path` with a leading `~` made the home directory.

    Raises:
        ValueError: it starts with `~` and there is no home to expand it to.
    """
    try:
        return Path(path).expanduser()
    except RuntimeError:
        raise SettingError(
            f"{name} starts with ~ but this account has no home directory: give a full path",
            *([name] if name.startswith("KAERU_") else []),
        ) from None


@dataclass(frozen=True)
class Settings:
    vault_dir: Path
    database_url: str | None = None
    secret_policy: str = "reject"
    replay_days: int = 7
    cursor_hours: int = 24
    actor: str = "agent"
    http_host: str = "127.0.0.1"
    http_port: int = 9876
    auth_token: str | None = None
    #: `kaeru serve --http` over TLS (KAERU_TLS_CERT, KAERU_TLS_KEY: PEM files; both or neither).
    tls_cert: Path | None = None
    tls_key: Path | None = None
    allowed_hosts: tuple[str, ...] = ()
    busy_timeout_ms: int = 30_000
    #: PostgreSQL: a statement running longer than this is cancelled, a retryable `unavailable` (0: never).
    pg_statement_timeout_ms: int = 30_000
    #: The bound of the in-memory copies broad searches rank from, per store (decision 129): 64 MiB
    #: holds ~60 common words at 1M nodes; a server on a large vault asked many different words
    #: trades memory for speed with a larger one (0: SQL ranks every search). Only `kaeru serve` and
    #: `kaeru ui` use it; a command that makes one call opens its store with 0 (decision 268).
    search_cache_mb: int = 64
    export_root: Path | None = None
    #: Automatic, reversible layer tidying before `context` (opt-in: KAERU_HYGIENE=1).
    hygiene: bool = False
    #: The optional semantic channel (KAERU_SEMANTIC=1 and the `[semantic]` extra installed).
    semantic: bool = False
    #: The text block of a tool result: `compact` (for a model) or `json` (the envelope) (KAERU_TEXT).
    text: str = "compact"
    #: Whether results carry `structuredContent` and tools list `outputSchema` (KAERU_STRUCTURED=off
    #: drops both, so clients that prefer structured output show their model the compact text).
    structured: bool = True
    #: The IANA time zone whose calendar "today" is in (KAERU_TIMEZONE): the day a task is
    #: overdue, a reminder due, a rule still in force, the day a bare date names and the zone of a
    #: time written without an offset. Empty: the machine's own (decisions 188, 342).
    timezone: str = ""
    #: The tools `kaeru serve` offers (KAERU_TOOLS, `--tools`: names and presets, decision 439);
    #: every tool by default.
    tools: tuple[str, ...] = TOOL_NAMES
    extra: dict[str, Any] = field(default_factory=dict)

    def zone(self) -> tzinfo | None:
        """`timezone` as a `tzinfo`, or None for the machine's own (what `astimezone()` takes).

        Raises:
            ValueError: not a time zone the system knows.
        """
        if not self.timezone:
            return None
        from zoneinfo import ZoneInfo

        try:
            return ZoneInfo(self.timezone)
        except (KeyError, ValueError, OSError) as exc:  # not found (a KeyError), malformed, unreadable
            raise SettingError(
                f"KAERU_TIMEZONE must be an IANA time zone name such as Europe/Paris or UTC, not {self.timezone!r}",
                "KAERU_TIMEZONE",
            ) from exc

    @property
    def sqlite_path(self) -> Path:
        return self.vault_dir / "vault.sqlite3"

    @classmethod
    def despite(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> tuple[Settings, list[SettingError]]:
        """The settings with every unusable variable left at its default, and what was wrong with
        each: for `kaeru doctor`, which reports them all and still checks the vault, where every
        other command stops at the first (a bad KAERU_HYGIENE made the doctor itself refuse to run).

        Raises:
            ValueError: a problem no variable can be dropped for (no home for the default vault).
        """
        remaining = dict(os.environ if env is None else env)
        problems: list[SettingError] = []
        while True:
            try:
                return cls.from_env(remaining, **overrides), problems
            except SettingError as exc:
                if not any(name in remaining for name in exc.names):
                    raise
                problems.append(exc)
                for name in exc.names:
                    remaining.pop(name, None)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from `env` (default: the process environment), then explicit overrides.

        Raises:
            ValueError: a setting has an invalid value.
        """
        env = os.environ if env is None else env
        given = overrides.get("vault_dir")
        if env.get("KAERU_VAULT"):
            vault = expanded(env["KAERU_VAULT"], "KAERU_VAULT")
        elif given is not None:  # a --vault given on the command line needs no home
            vault = given
        else:
            try:
                vault = default_vault_dir(env)
            except NoHome:
                if not env.get("KAERU_DATABASE_URL"):
                    raise
                # A PostgreSQL vault needs no folder but the default one exports go to (decision 189).
                vault = Path(tempfile.gettempdir()) / f"kaeru-{_account()}"
        settings = cls(
            vault_dir=vault,
            database_url=env.get("KAERU_DATABASE_URL") or None,
            secret_policy=env.get("KAERU_SECRET_POLICY", "reject").strip().lower(),
            replay_days=_integer(env, "KAERU_REPLAY_DAYS", 7),
            actor=env.get("KAERU_ACTOR", "agent"),
            http_host=env.get("KAERU_HOST", "").strip() or "127.0.0.1",
            http_port=_integer(env, "KAERU_PORT", 9876),
            auth_token=env.get("KAERU_AUTH_TOKEN") or None,
            tls_cert=expanded(env["KAERU_TLS_CERT"], "KAERU_TLS_CERT") if env.get("KAERU_TLS_CERT") else None,
            tls_key=expanded(env["KAERU_TLS_KEY"], "KAERU_TLS_KEY") if env.get("KAERU_TLS_KEY") else None,
            allowed_hosts=tuple(h.strip() for h in env.get("KAERU_ALLOWED_HOSTS", "").split(",") if h.strip()),
            busy_timeout_ms=_integer(env, "KAERU_BUSY_TIMEOUT_MS", 30_000),
            pg_statement_timeout_ms=_integer(env, "KAERU_PG_STATEMENT_TIMEOUT_MS", 30_000),
            search_cache_mb=_integer(env, "KAERU_SEARCH_CACHE_MB", 64),
            # Expanded as KAERU_VAULT is: a client passes `env` without a shell, and `~/exports`
            # was a folder named `~` under the server's working directory.
            export_root=expanded(env["KAERU_EXPORT_ROOT"], "KAERU_EXPORT_ROOT")
            if env.get("KAERU_EXPORT_ROOT")
            else None,
            hygiene=_flag(env, "KAERU_HYGIENE", False),
            semantic=_flag(env, "KAERU_SEMANTIC", False),
            text=env.get("KAERU_TEXT", "compact").strip().lower(),
            structured=_flag(env, "KAERU_STRUCTURED", True),
            timezone=env.get("KAERU_TIMEZONE", "").strip(),
            tools=tool_set(env.get("KAERU_TOOLS"), "KAERU_TOOLS"),
        )
        settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
        settings.validate()
        return settings

    def validate(self) -> None:
        if self.text not in ("compact", "json"):
            raise SettingError("KAERU_TEXT must be compact or json", "KAERU_TEXT")
        if self.secret_policy not in SECRET_POLICIES:
            raise SettingError(
                f"KAERU_SECRET_POLICY must be one of {', '.join(SECRET_POLICIES)}", "KAERU_SECRET_POLICY"
            )
        if not 1 <= self.replay_days <= MAX_REPLAY_DAYS:
            # Past a thousand years the cut-off falls before the calendar and every write failed.
            raise SettingError(
                f"KAERU_REPLAY_DAYS must be 1 to {MAX_REPLAY_DAYS} (a thousand years: keep them all)",
                "KAERU_REPLAY_DAYS",
            )
        if (self.tls_cert is None) != (self.tls_key is None):
            raise SettingError(
                "KAERU_TLS_CERT and KAERU_TLS_KEY (--tls-cert, --tls-key) go together",
                "KAERU_TLS_CERT",
                "KAERU_TLS_KEY",
            )
        if not 0 <= self.http_port <= 65535:
            raise SettingError("KAERU_PORT must be a port number, 0 to 65535", "KAERU_PORT")
        if self.busy_timeout_ms < 0:
            raise SettingError("KAERU_BUSY_TIMEOUT_MS must be 0 or more", "KAERU_BUSY_TIMEOUT_MS")
        if not 0 <= self.search_cache_mb <= 1 << 20:
            raise SettingError("KAERU_SEARCH_CACHE_MB must be 0 (no copies) to 1048576", "KAERU_SEARCH_CACHE_MB")
        if not 0 <= self.pg_statement_timeout_ms <= PG_INT_MAX:
            # PostgreSQL's settings are 32-bit: a larger one failed every connection, said only as
            # a pool timeout 30 s later.
            raise SettingError(
                f"KAERU_PG_STATEMENT_TIMEOUT_MS must be 0 (no timeout) to {PG_INT_MAX}", "KAERU_PG_STATEMENT_TIMEOUT_MS"
            )
        if self.timezone:
            self.zone()  # raises for a name the system's time zone database lacks
        if self.database_url and not self.database_url.startswith(("postgresql://", "postgres://")):
            raise SettingError("KAERU_DATABASE_URL must be a postgresql:// URL", "KAERU_DATABASE_URL")
        if self.database_url and _misread_password(self.database_url):
            # libpq ends the user part at the first `@` and the host at the first `/` or `?`: the
            # rest of such a password was read as a host, port or database, and shown in its
            # errors, the doctor's report and `setup`'s client files.
            raise SettingError(
                "KAERU_DATABASE_URL holds an '@' that does not end its user part: a password with '@', '/', '?', "
                "':' or '%' must be percent-encoded in the URL (%40, %2F, %3F, %3A, %25)",
                "KAERU_DATABASE_URL",
            )
