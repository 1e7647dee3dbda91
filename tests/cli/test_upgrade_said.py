"""What a vault written by a newer kaeru tells its person to do: upgrade kaeru the way it is
installed. kaeru-memory is not published on PyPI (docs/clients.md), so the `pip install -U
kaeru-memory` every command said installed nothing of ours — or whatever a stranger published under
that name. The message names the clone this kaeru was installed from, and how to reinstall from it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.backends import VaultSpec
from tests.cli.support import error_object, kaeru, write_notes
from tests.cli.test_doctor import record_future_migration


def _clone_named(message: str) -> Path:
    """The folder the message says to `git pull` in; it must be a checkout of kaeru-memory."""
    assert "pip install -U" not in message and "PyPI" not in message, message
    found = re.search(r"`git pull` in (.+?), then install it again from there", message)
    assert found is not None, message
    folder = Path(found.group(1))
    project = tomllib.loads((folder / "pyproject.toml").read_text())["project"]
    assert project["name"] == "kaeru-memory"
    return folder


def test_every_place_that_says_upgrade_names_the_clone_to_pull(vault: VaultSpec) -> None:
    write_notes(vault, "cli", "written before the upgrade")
    record_future_migration(vault)

    note = kaeru(vault, "note", "-i", "cli", "written by an older kaeru", as_json=True)
    folder = _clone_named(error_object(note, "unavailable", 1))

    migrate = kaeru(vault, "migrate")
    assert migrate.code == 1
    assert _clone_named(migrate.stderr) == folder

    doctor = kaeru(vault, "doctor", as_json=True)
    checks = {c["name"]: c for c in doctor.json()["checks"]}
    assert _clone_named(checks["migrations"]["fix"]) == folder
    assert "pip install -e ." in checks["migrations"]["fix"]
