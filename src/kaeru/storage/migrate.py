"""Numbered `.sql` migrations per backend, applied once each and recorded in `schema_migrations`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from kaeru.errors import Unavailable

_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def load_migrations(package: str) -> list[Migration]:
    """The migrations shipped in `package` (e.g. `kaeru.storage.sqlite.migrations`), in order."""
    found: list[Migration] = []
    for entry in resources.files(package).iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations in {package} are not numbered 001..N: {versions}")
    return found


def newest_version(package: str) -> int:
    """The number of the newest migration shipped in `package`, from the file names alone."""
    versions = [int(m.group(1)) for e in resources.files(package).iterdir() if (m := _NAME.match(e.name))]
    return max(versions, default=0)


class VaultTooNew(Unavailable):
    """The vault was migrated by a newer kaeru: this one would write rows that break its invariants."""

    retryable = False


def refuse_newer(applied: set[int], known: list[Migration], where: str) -> None:
    """Raise `VaultTooNew` when `applied` holds a migration newer than every one in `known`.

    An older kaeru writing into a newer schema could leave out what the newer code relies on (a name
    history, an index row), so it refuses to open the vault at all rather than corrupt it quietly.
    """
    newest_known = known[-1].version if known else 0
    newer = sorted(v for v in applied if v > newest_known)
    if newer:
        raise VaultTooNew(
            f"the {where} vault is at migration {newer[-1]}, newer than this kaeru knows ({newest_known}): "
            "upgrade kaeru (pip install -U kaeru-memory) before using it"
        )
